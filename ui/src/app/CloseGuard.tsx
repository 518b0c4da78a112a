import { useEffect, useState } from "react";
import { getCurrentWindow } from "@tauri-apps/api/window";
import { saveBeforeClose } from "./store";
import { useT } from "./useT";
import { ConfirmDialog } from "./ConfirmDialog";
import { listenInEffect } from "./tauriListen";

/** Saves what is pending before the window closes, and asks when it cannot be saved. */
export function CloseGuard() {
  const t = useT();
  const [unsaved, setUnsaved] = useState<string | null>(null);
  useEffect(
    () =>
      listenInEffect(() =>
        getCurrentWindow().onCloseRequested(async (event) => {
          const failure = await saveBeforeClose();
          if (failure === null) return;
          // Called before the handler returns, or the window goes.
          event.preventDefault();
          setUnsaved(failure);
        }),
      ),
    [],
  );
  if (unsaved === null) return null;
  return (
    <ConfirmDialog
      message={t("app.closeUnsaved", { message: unsaved })}
      confirm={t("app.closeAnyway")}
      cancel={t("app.keepOpen")}
      onCancel={() => setUnsaved(null)}
      onConfirm={() => {
        setUnsaved(null);
        closeNow();
      }}
    />
  );
}

function closeNow() {
  try {
    void getCurrentWindow()
      .destroy()
      .catch(() => {});
  } catch {
    // Outside the app window there is none to close.
  }
}
