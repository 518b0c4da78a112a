import { useState } from "react";
import type { ConnectionView, ExactCount, Preview, ProviderFormat } from "../../bindings";
import { api, errorMessage } from "../../app/api";
import { previewRequest } from "../../app/store";
import { useT } from "../../app/useT";
import { useSend } from "./sending";

/**
 * The connection a count is asked of: the chosen one when it can count this model's requests,
 * else the first that can; one that can counts the model's provider format (the backend says
 * which format a connection's API counts) and has a key. None: there is nothing to ask.
 */
export function countingConnection(
  connections: ConnectionView[],
  chosen: string | null,
  format: ProviderFormat,
): string | null {
  const able = connections.filter((c) => c.hasKey && c.counts === format);
  return (able.find((c) => c.connection.name === chosen) ?? able[0])?.connection.name ?? null;
}

type Asked = { preview: Preview; connection: string } & (
  | { state: "counting" }
  | { state: "counted"; count: ExactCount }
  | { state: "failed"; message: string }
);

/**
 * "Count exactly", beside an estimated total: the provider's own count of the request Send would
 * send, asked only when the user clicks (the backend keeps counts per content, so asking again
 * for the same request makes no request). What it says belongs to the build it was asked for: a
 * new build shows the button again.
 */
export function CountExactly({ preview }: { preview: Preview }) {
  const t = useT();
  const connections = useSend((s) => s.connections);
  const chosen = useSend((s) => s.connection);
  const [asked, setAsked] = useState<Asked | null>(null);
  const connection = countingConnection(connections, chosen, preview.providerFormat);
  // Exact already, or text completion (neither counting API takes a prompt string): nothing to ask.
  if (preview.exact || preview.result.prompt || !connection) return null;
  const shown = asked?.preview === preview && asked.connection === connection ? asked : null;

  const count = () => {
    const request = previewRequest();
    if (!request) return;
    setAsked({ preview, connection, state: "counting" });
    api.countExactly(request, connection).then(
      (c) => setAsked((a) => (a?.preview === preview ? { preview, connection, state: "counted", count: c } : a)),
      (e) => setAsked((a) => (a?.preview === preview ? { preview, connection, state: "failed", message: errorMessage(e) } : a)),
    );
  };

  if (shown?.state === "counted") {
    const c = shown.count;
    const difference = c.tokens - c.counted;
    return (
      <span className="exact-count" data-testid="exact-count">
        <strong>{t("count.result", { tokens: c.tokens, provider: c.provider })}</strong>{" "}
        <span className="muted" data-testid="exact-count-difference">
          {difference === 0
            ? t("count.same")
            : t("count.difference", { difference: `${difference > 0 ? "+" : "−"}${Math.abs(difference)}` })}
          {c.cached && ` · ${t("count.cached")}`}
        </span>
      </span>
    );
  }
  return (
    <span className="exact-count">
      <button
        type="button"
        className="small"
        data-testid="count-exactly"
        disabled={shown?.state === "counting"}
        title={t("count.help", { connection })}
        onClick={count}
      >
        {shown?.state === "counting" ? t("count.counting") : t("count.button")}
      </button>
      {shown?.state === "failed" && (
        <span className="error" role="alert" data-testid="exact-count-error">
          {t("count.failed", { message: shown.message })}
        </span>
      )}
    </span>
  );
}
