import { retrySaves, useApp } from "./store";
import { useT } from "./useT";

/** The autosave indicator. A failed save says when it is tried again, and can be tried now. */
export function SaveState() {
  const t = useT();
  const save = useApp((s) => s.save);
  const text =
    save.state === "saved"
      ? t("app.saved")
      : save.state === "saving"
        ? t("app.saving")
        : save.retryIn === null
          ? t("app.saveFailed", { message: save.message })
          : t("app.saveRetrying", { message: save.message, seconds: save.retryIn });
  return (
    <span className="save-area">
      <span className={`save-state save-${save.state}`} data-testid="save-state" role="status">
        {text}
      </span>
      {save.state === "failed" && save.retryIn !== null && (
        <button type="button" className="link" data-testid="save-retry" onClick={retrySaves}>
          {t("app.retryNow")}
        </button>
      )}
    </span>
  );
}
