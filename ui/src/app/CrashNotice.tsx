import { dismissCrashNotice, useApp } from "./store";
import { useT } from "./useT";

/** Why no preset was opened at start: the app closed while previewing it the last time. */
export function CrashNotice() {
  const t = useT();
  const name = useApp((s) => s.crashNotice);
  if (name === null) return null;
  return (
    <div className="notice" role="status" data-testid="crash-notice">
      <p>{t("app.crashNotice", { name })}</p>
      <button type="button" data-testid="crash-notice-dismiss" onClick={dismissCrashNotice}>
        {t("app.dismiss")}
      </button>
    </div>
  );
}
