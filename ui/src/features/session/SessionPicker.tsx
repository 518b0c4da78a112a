import { useState } from "react";
import { createSession, deleteSession, openSession, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { useRunner } from "../../app/useRunner";
import { ConfirmDialog } from "../../app/ConfirmDialog";
import { SessionEditor } from "./SessionEditor";
import { startSessionExport } from "../presets/exporting";

/** Chooses the session the preview builds over, and opens the small session editor. */
export function SessionPicker() {
  const t = useT();
  const sessions = useApp((s) => s.sessions);
  const session = useApp((s) => s.session);
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [error, run] = useRunner();

  return (
    <div className="session-picker">
      <label>
        {t("preview.session")}
        <select
          value={session?.id ?? ""}
          data-testid="session-select"
          onChange={(e) => run(openSession(e.target.value || null))}
        >
          <option value="">{t("preview.noSession")}</option>
          {sessions.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      </label>
      {session && (
        <span className="muted">{t("preview.messages", { count: session.messages.length })}</span>
      )}
      <button
        type="button"
        data-testid="new-session"
        onClick={() => run(createSession(t("preview.newSessionTitle")).then(() => setEditing(true)))}
      >
        + {t("preview.newSession")}
      </button>
      {session && (
        <button type="button" data-testid="edit-session" onClick={() => setEditing(!editing)}>
          {editing ? t("preview.doneEditing") : t("preview.editSession")}
        </button>
      )}
      {session && (
        <button
          type="button"
          data-testid="export-session"
          onClick={() => run(startSessionExport({ title: t("export.saveTitle"), filter: t("export.filter") }))}
        >
          {t("export.sessionButton")}
        </button>
      )}
      {session && editing && (
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          {t("session.deleteSession")}
        </button>
      )}
      {error && <p className="error" role="alert">{error}</p>}
      {session && editing && <SessionEditor />}
      {confirming && session && (
        <ConfirmDialog
          message={t("session.confirmDelete", { name: session.title ?? session.id })}
          confirm={t("presets.delete")}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            setEditing(false);
            run(deleteSession(session.id));
          }}
        />
      )}
    </div>
  );
}
