import { keepMine, reloadPreset, useApp } from "./store";
import { useT } from "./useT";
import { useRunner } from "./useRunner";

/** Another program saved the open preset since it was read: whose version stays? */
export function ConflictDialog() {
  const conflict = useApp((s) => s.conflict);
  // A new conflict starts without the last one's error.
  return conflict ? <ConflictChoice key={conflict.id} name={conflict.name} /> : null;
}

function ConflictChoice({ name }: { name: string }) {
  const t = useT();
  const [error, run] = useRunner();
  return (
    <div className="dialog-backdrop">
      <div
        role="alertdialog"
        aria-modal="true"
        className="dialog conflict-dialog"
        data-testid="save-conflict"
        aria-labelledby="conflict-title"
        aria-describedby="conflict-message"
      >
        <h2 id="conflict-title">{t("conflict.title")}</h2>
        <p id="conflict-message">{t("conflict.message", { name })}</p>
        <dl className="conflict-choices">
          <dt>{t("conflict.reload")}</dt>
          <dd className="muted">{t("conflict.reloadHint")}</dd>
          <dt>{t("conflict.keep")}</dt>
          <dd className="muted">{t("conflict.keepHint")}</dd>
        </dl>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" autoFocus data-testid="conflict-reload" onClick={() => run(reloadPreset())}>
            {t("conflict.reload")}
          </button>
          <button type="button" className="primary" data-testid="conflict-keep" onClick={() => run(keepMine())}>
            {t("conflict.keep")}
          </button>
        </div>
      </div>
    </div>
  );
}
