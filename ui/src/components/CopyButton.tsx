import { useState } from "react";
import { useT } from "../app/useT";

/** Copies `text` exactly: the clipboard API where the page may use it, else a selection. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try {
      return document.execCommand("copy");
    } catch {
      return false;
    } finally {
      area.remove();
    }
  }
}

/** A button that copies `text` and says for a moment whether it did. */
export function CopyButton({ text, testId }: { text: string; testId: string }) {
  const t = useT();
  const [done, setDone] = useState<"copied" | "failed" | null>(null);
  return (
    <button
      type="button"
      data-testid={testId}
      onClick={() => {
        void copyText(text).then((ok) => {
          setDone(ok ? "copied" : "failed");
          setTimeout(() => setDone(null), 2000);
        });
      }}
    >
      {done === "copied" ? t("prompt.copied") : done === "failed" ? t("prompt.copyFailed") : t("prompt.copy")}
    </button>
  );
}
