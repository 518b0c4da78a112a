import { useState } from "react";
import { cancelImport, confirmImport, useApp } from "../../app/store";
import { useT } from "../../app/useT";

/** What a file would bring in, and what could not be mapped, before anything is saved. */
export function ImportDialog() {
  const t = useT();
  const pending = useApp((s) => s.pendingImport);
  const presets = useApp((s) => s.presets);
  const current = useApp((s) => s.preset?.id ?? null);
  const [into, setInto] = useState<string | null>(null);
  if (!pending) return null;
  const { preview, error } = pending;
  const target = into ?? current ?? presets[0]?.id ?? null;
  return (
    <div className="dialog-backdrop">
      <div role="dialog" aria-modal="true" className="dialog import-dialog" data-testid="import-dialog" aria-label={t("import.title")}>
        <h2>{t("import.title")}</h2>
        <p className="muted file-path">{pending.path}</p>
        {!preview && !error && (
          <p className="progress" role="status">
            <span className="spinner" aria-hidden="true" /> {t("import.reading")}
          </p>
        )}
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {preview && (
          <>
            <p data-testid="import-summary">
              {t("import.summary", { format: preview.format, kind: preview.kind, name: preview.name })}
            </p>
            {preview.needsPreset && (
              <label>
                {t("import.into")}
                <select value={target ?? ""} onChange={(e) => setInto(e.target.value)}>
                  {presets.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.name}
                    </option>
                  ))}
                </select>
              </label>
            )}
            {preview.notMapped.length === 0 ? (
              <p className="muted">{t("import.allMapped")}</p>
            ) : (
              <details open>
                <summary>{t("import.notMapped", { count: preview.notMapped.length })}</summary>
                <ul className="not-mapped">
                  {preview.notMapped.map((n, i) => (
                    <li key={i}>
                      <code>{n.item}</code>: {n.message}
                    </li>
                  ))}
                </ul>
              </details>
            )}
          </>
        )}
        <div className="dialog-actions">
          <button type="button" onClick={cancelImport}>
            {t("presets.cancel")}
          </button>
          <button
            type="button"
            className="primary"
            data-testid="confirm-import"
            disabled={!preview}
            onClick={() => void confirmImport(preview?.needsPreset ? target : null)}
          >
            {t("import.confirm")}
          </button>
        </div>
      </div>
    </div>
  );
}
