import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { About } from "../bindings";
import { CopyButton } from "../components/CopyButton";
import { api, errorMessage } from "./api";
import { startTour } from "./store";
import { useT } from "./useT";

/** The header's About button and, when it is open, the dialog; the focus comes back to the
 * button when it closes. */
export function AboutButton() {
  const t = useT();
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const close = () => {
    setOpen(false);
    button.current?.focus();
  };
  return (
    <>
      <button type="button" ref={button} data-testid="about-button" title={t("about.title")} onClick={() => setOpen(true)}>
        ⓘ {t("about.button")}
      </button>
      {open && (
        <AboutDialog
          onClose={close}
          onTour={() => {
            // The tour takes the focus from the button, and gives it back when it ends.
            close();
            startTour();
          }}
        />
      )}
    </>
  );
}

/**
 * The version the app was built as (the line `promptloom --version` prints), and its one
 * setting of its own, where the database lives: the app has no settings page, so this is it.
 */
export function AboutDialog({ onClose, onTour }: { onClose: () => void; onTour: () => void }) {
  const t = useT();
  const [about, setAbout] = useState<About | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [folderError, setFolderError] = useState<string | null>(null);
  const [opening, setOpening] = useState(false);
  const dialog = useRef<HTMLDivElement>(null);

  useEffect(() => {
    api.about().then(setAbout, (e) => setError(errorMessage(e)));
  }, []);

  const openFolder = async () => {
    setOpening(true);
    try {
      await api.openDatabaseFolder();
      setFolderError(null);
    } catch (e) {
      setFolderError(errorMessage(e));
    } finally {
      setOpening(false);
    }
  };

  // Escape closes; Tab goes round the dialog's own controls.
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      onClose();
    } else if (e.key === "Tab" && dialog.current) {
      const focusable = [...dialog.current.querySelectorAll<HTMLElement>("button:not(:disabled)")];
      const first = focusable[0];
      const last = focusable.at(-1);
      if (!first || !last) return;
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first.focus();
      }
    }
  };

  return (
    <div className="dialog-backdrop">
      <div
        ref={dialog}
        role="dialog"
        aria-modal="true"
        aria-labelledby="about-title"
        className="dialog about-dialog"
        data-testid="about-dialog"
        onKeyDown={onKeyDown}
      >
        <h2 id="about-title">{t("app.title")}</h2>
        {error && (
          <p className="error" role="alert">
            {t("about.failed", { message: error })}
          </p>
        )}
        {about && (
          <>
            <p className="about-version">
              {t("about.version")}{" "}
              <code data-testid="about-version" title={about.commit ? t("about.commit", { commit: about.commit }) : undefined}>
                {about.versionLine}
              </code>
            </p>
            {about.dirty && (
              <p className="warn-text about-dirty" data-testid="about-dirty">
                {t("about.dirty")}
              </p>
            )}
            <h3>{t("about.settings")}</h3>
            <p className="about-label">{t("about.database")}</p>
            <code className="about-path file-path" data-testid="about-database-path">
              {about.databasePath}
            </code>
            <div className="about-path-actions">
              <CopyButton text={about.databasePath} testId="about-copy-path" />
              <button type="button" data-testid="about-open-folder" disabled={opening} onClick={() => void openFolder()}>
                {t("about.openFolder")}
              </button>
            </div>
            {folderError && (
              <p className="error" role="alert" data-testid="about-folder-error">
                {t("about.folderFailed", { message: folderError })}
              </p>
            )}
          </>
        )}
        <div className="dialog-actions">
          <button type="button" data-testid="about-tour" onClick={onTour}>
            {t("about.tour")}
          </button>
          <button type="button" className="primary" autoFocus data-testid="about-close" onClick={onClose}>
            {t("export.close")}
          </button>
        </div>
      </div>
    </div>
  );
}
