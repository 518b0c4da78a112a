import { useEffect, useRef } from "react";
import { useApp } from "../../app/store";
import { useSay, useT } from "../../app/useT";
import {
  EXPORT_FORMATS,
  backToFormats,
  chooseFormat,
  closeExport,
  saveAndExport,
  unavailable,
  useExport,
  type ExportState,
} from "./exporting";

/** The format of an export, then where it went and what the format could not hold (RULES 7.5). */
export function ExportDialog() {
  const t = useT();
  const current = useExport();
  const open = current !== null;
  const busy = current?.phase === "exporting";
  // Escape closes the dialog wherever the focus is (a disabled button may have dropped it).
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && !busy && closeExport();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [open, busy]);
  if (!current) return null;
  const title =
    current.target.kind === "preset"
      ? t("export.title", { name: current.target.name })
      : t("export.sessionTitle", { name: current.target.name });
  return (
    <div className="dialog-backdrop">
      <div
        role="dialog"
        aria-modal="true"
        className="dialog export-dialog"
        data-testid="export-dialog"
        aria-label={title}
      >
        <h2>{title}</h2>
        {current.phase === "choosing" || current.phase === "exporting" ? (
          <FormatChoice current={current} />
        ) : (
          <Outcome current={current} />
        )}
      </div>
    </div>
  );
}

function FormatChoice({ current }: { current: ExportState }) {
  const t = useT();
  const preset = useApp((s) => s.preset);
  // The save dialog is open, or the file is being written.
  const busy = current.phase === "exporting";
  const blocked = preset ? unavailable(preset, current.format) : null;
  return (
    <>
      <fieldset className="export-formats">
        <legend>{t("export.format")}</legend>
        {EXPORT_FORMATS.map((format) => {
          const reason = preset ? unavailable(preset, format) : null;
          return (
            <label key={format} className={reason ? "export-format disabled" : "export-format"}>
              <input
                type="radio"
                name="export-format"
                value={format}
                data-testid={`export-format-${format}`}
                checked={current.format === format}
                autoFocus={current.format === format}
                disabled={reason !== null}
                onChange={() => chooseFormat(format)}
              />
              <span className="export-format-text">
                <span>{t(`export.format.${format}`)}</span>
                <span className={reason ? "muted export-reason" : "muted"}>
                  {reason ? t(reason) : t(`export.hint.${format}`)}
                </span>
              </span>
            </label>
          );
        })}
      </fieldset>
      {busy && (
        <p className="progress" role="status">
          <span className="spinner" aria-hidden="true" /> {t("export.exporting")}
        </p>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={closeExport} disabled={busy}>
          {t("presets.cancel")}
        </button>
        <button
          type="button"
          className="primary"
          data-testid="export-save"
          disabled={busy || blocked !== null}
          onClick={() => void saveAndExport({ title: t("export.saveTitle"), filter: t("export.filter") })}
        >
          {t("export.save")}
        </button>
      </div>
    </>
  );
}

function Outcome({ current }: { current: ExportState }) {
  const t = useT();
  const say = useSay();
  const close = useRef<HTMLButtonElement>(null);
  // Close takes the focus once the export is over.
  useEffect(() => {
    close.current?.focus();
  }, [current.phase]);
  return (
    <>
      <p className="muted">{t(`export.format.${current.format}`)}</p>
      {current.phase === "failed" && (
        <p className="error" role="alert" data-testid="export-error">
          {t("export.failed", { message: current.error ?? "" })}
        </p>
      )}
      {current.phase === "done" && (
        <div data-testid="export-report" className="export-report">
          <p className="file-path">
            {t("export.written")}: <code data-testid="export-path">{current.path}</code>
          </p>
          {current.notMapped.length === 0 ? (
            <p className="muted">{t("export.allExported")}</p>
          ) : (
            <details open>
              <summary>{t("export.notExported", { count: current.notMapped.length })}</summary>
              <ul className="not-mapped" data-testid="export-not-mapped">
                {current.notMapped.map((n, i) => (
                  <li key={i}>
                    <code>{n.item}</code>: {say(n.said, n.message)}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </div>
      )}
      <div className="dialog-actions">
        {current.phase === "failed" && current.target.kind === "preset" && (
          <button type="button" onClick={backToFormats}>
            {t("export.back")}
          </button>
        )}
        <button
          type="button"
          className="primary"
          ref={close}
          data-testid="export-close"
          onClick={closeExport}
        >
          {t("export.close")}
        </button>
      </div>
    </>
  );
}
