import { useState } from "react";
import { createSession, deleteSession, openSession, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { ConfirmDialog } from "../../app/ConfirmDialog";
import { Icon } from "../../components/Icon";
import { SessionEditor } from "./SessionEditor";
import { startSessionExport } from "../presets/exporting";

/** Runs a session action, its failure shown under the header (useRunner's `run`). */
type Run = (work: Promise<unknown>) => void;

/** The session the preview builds over, in the preview's header; its message count beside it. */
export function SessionSelect({ run }: { run: Run }) {
  const t = useT();
  const sessions = useApp((s) => s.sessions);
  const session = useApp((s) => s.session);
  const count = session && t("preview.messages", { count: session.messages.length });
  // A long name is cut in the narrow field: the whole name shows when the pointer rests on it.
  const name = sessions.find((s) => s.id === session?.id)?.name;
  return (
    <label className="head-field head-session">
      <span className="head-label">
        {t("preview.session")}
        {count && (
          <span className="head-note" data-testid="session-count">
            {" "}· {count}
          </span>
        )}
      </span>
      <select
        value={session?.id ?? ""}
        title={name}
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
  );
}

/** New session, Edit session and Export session…: icon buttons of the preview's header. */
export function SessionButtons({ editing, setEditing, run }: { editing: boolean; setEditing: (on: boolean) => void; run: Run }) {
  const t = useT();
  const hasSession = useApp((s) => s.session !== null);
  const editLabel = editing ? t("preview.closeSessionEditor") : t("preview.editSession");
  return (
    <>
      <button
        type="button"
        className="head-icon"
        data-testid="new-session"
        aria-label={t("preview.newSession")}
        title={t("preview.newSession")}
        onClick={() => run(createSession(t("preview.newSessionTitle")).then(() => setEditing(true)))}
      >
        <Icon name="plus" />
      </button>
      {hasSession && (
        <button
          type="button"
          className={editing ? "head-icon on" : "head-icon"}
          data-testid="edit-session"
          aria-label={editLabel}
          aria-expanded={editing}
          aria-controls={editing ? "session-editor-panel" : undefined}
          title={editLabel}
          onClick={() => setEditing(!editing)}
        >
          <Icon name={editing ? "done" : "edit"} />
        </button>
      )}
      {hasSession && (
        <button
          type="button"
          className="head-icon"
          data-testid="export-session"
          aria-label={t("export.sessionButton")}
          title={t("export.sessionButton")}
          onClick={() => run(startSessionExport({ title: t("export.saveTitle"), filter: t("export.filter") }))}
        >
          <Icon name="export" />
        </button>
      )}
    </>
  );
}

/** The session's editor, a panel under the header's row while Edit session is on, with Delete. */
export function SessionPanel({ setEditing, run }: { setEditing: (on: boolean) => void; run: Run }) {
  const t = useT();
  const session = useApp((s) => s.session);
  const [confirming, setConfirming] = useState(false);
  if (!session) return null;
  return (
    <div className="session-panel" id="session-editor-panel" role="region" aria-label={t("preview.editSession")}>
      <div className="session-panel-head">
        <strong>{t("preview.editSession")}</strong>
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          {t("session.deleteSession")}
        </button>
        <button type="button" onClick={() => setEditing(false)}>
          {t("preview.doneEditing")}
        </button>
      </div>
      <SessionEditor />
      {confirming && (
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
