import type { ChatMessage } from "../../bindings";
import type { Chat } from "../../app/model";
import { editSession, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { RoleSelect } from "../../app/RoleSelect";
import { ReplyMeta } from "../send/ReplyMeta";
import { AuthorsNoteEditor } from "./AuthorsNoteEditor";
import { MemoryIndex } from "./MemoryIndex";
import { SummaryEditor } from "./SummaryEditor";

/** Long sessions show their newest messages; older ones are edited in a file or by import. */
const SHOWN = 50;

/** A small editor of the chosen session: title, user profile, author's note, and its messages. */
export function SessionEditor() {
  const t = useT();
  const session = useApp((s) => s.session);
  if (!session) return null;
  const first = Math.max(0, session.messages.length - SHOWN);
  const change = (f: (s: Chat) => Chat, key?: string) => void editSession(f, key);
  const setMessage = (i: number, patch: Partial<ChatMessage>, key?: string) =>
    change(
      (s) => ({ ...s, messages: s.messages.map((m, j) => (j === i ? { ...m, ...patch } : m)) }),
      key,
    );

  return (
    <div className="session-editor" data-testid="session-editor">
      <div className="field-row">
        <label>
          {t("session.title")}
          <input
            value={session.title ?? ""}
            onChange={(e) => change((s) => ({ ...s, title: e.target.value }), "title")}
          />
        </label>
      </div>
      <fieldset>
        <legend>{t("session.userProfile")}</legend>
        <div className="field-row">
          <label>
            {t("session.userName")}
            <input
              value={session.userProfile?.name ?? ""}
              data-testid="user-name"
              onChange={(e) =>
                change(
                  (s) => ({
                    ...s,
                    userProfile: e.target.value || s.userProfile?.content
                      ? { name: e.target.value, content: s.userProfile?.content ?? null }
                      : null,
                  }),
                  "user-name",
                )
              }
            />
          </label>
          <label className="grow">
            {t("session.userContent")}
            <input
              value={session.userProfile?.content ?? ""}
              onChange={(e) =>
                change(
                  (s) => ({
                    ...s,
                    userProfile: { name: s.userProfile?.name ?? "User", content: e.target.value || null },
                  }),
                  "user-content",
                )
              }
            />
          </label>
        </div>
      </fieldset>
      <AuthorsNoteEditor session={session} change={change} />
      <SummaryEditor key={`summary-${session.id}`} sessionId={session.id} />
      <MemoryIndex key={`memory-${session.id}`} sessionId={session.id} />
      {session.messages.length === 0 && <p className="muted">{t("session.empty")}</p>}
      {first > 0 && <p className="muted">… {first}</p>}
      <ol className="session-messages" start={first}>
        {session.messages.slice(first).map((m, k) => {
          const i = first + k;
          return (
            <li key={i} data-testid={`session-message-${i}`}>
              <RoleSelect
                value={m.role}
                withTool
                label={t("editor.role")}
                onChange={(role) => setMessage(i, { role })}
              />
              <textarea
                value={m.content}
                rows={2}
                aria-label={t("editor.content")}
                onChange={(e) => setMessage(i, { content: e.target.value }, `message:${i}`)}
              />
              <button
                type="button"
                className="icon danger"
                aria-label={t("session.delete")}
                title={t("session.delete")}
                onClick={() => change((s) => ({ ...s, messages: s.messages.filter((_, j) => j !== i) }))}
              >
                ✕
              </button>
              <ReplyMeta message={m} at={i} />
            </li>
          );
        })}
      </ol>
      <button
        type="button"
        data-testid="add-session-message"
        onClick={() =>
          change((s) => {
            const last = s.messages[s.messages.length - 1];
            const role = last?.role === "user" ? "assistant" : "user";
            return { ...s, messages: [...s.messages, { role, content: "" }] };
          })
        }
      >
        + {t("session.addMessage")}
      </button>
    </div>
  );
}
