import type { AuthorsNote, NotePosition } from "../../bindings";
import type { Chat } from "../../app/model";
import { RoleSelect } from "../../app/RoleSelect";
import { useT } from "../../app/useT";

const POSITIONS: NotePosition[] = ["before_prompt", "in_prompt", "in_chat"];

/** A note with every field filled: the session's, or SillyTavern's defaults (RULES 5.11.2). */
export function fullNote(note: AuthorsNote | null | undefined): Required<AuthorsNote> {
  return {
    content: note?.content ?? "",
    position: note?.position ?? "in_chat",
    depth: note?.depth ?? 4,
    role: note?.role ?? "system",
    interval: note?.interval ?? 1,
  };
}

/** A whole number from a number field, at least 0; none when the field is not one. */
function count(text: string): number | null {
  const n = Number(text);
  return text.trim() !== "" && Number.isInteger(n) && n >= 0 ? n : null;
}

/** The session's author's note: its text, where it goes, its depth and role, and its interval. */
export function AuthorsNoteEditor({
  session,
  change,
}: {
  session: Chat;
  change: (f: (s: Chat) => Chat, key?: string) => void;
}) {
  const t = useT();
  const note = fullNote(session.authorsNote);
  const set = (patch: Partial<AuthorsNote>, key?: string) =>
    change((s) => ({ ...s, authorsNote: { ...fullNote(s.authorsNote), ...patch } }), key);
  return (
    <fieldset data-testid="authors-note">
      <legend>{t("session.authorsNote")}</legend>
      <p className="muted">{t("session.noteHelp")}</p>
      {/* In a row, so the label stands above a textarea as wide as the fieldset. */}
      <div className="field-row">
        <label className="grow">
          {t("session.noteContent")}
          <textarea
            value={note.content}
            rows={3}
            data-testid="note-content"
            onChange={(e) => set({ content: e.target.value }, "note-content")}
          />
        </label>
      </div>
      <div className="field-row">
        <label>
          {t("session.notePosition")}
          <select
            value={note.position}
            data-testid="note-position"
            onChange={(e) => set({ position: e.target.value as NotePosition })}
          >
            {POSITIONS.map((p) => (
              <option key={p} value={p}>
                {t(`session.notePosition.${p}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("session.noteDepth")}
          <input
            type="number"
            min={0}
            value={note.depth}
            disabled={note.position !== "in_chat"}
            data-testid="note-depth"
            onChange={(e) => {
              const depth = count(e.target.value);
              if (depth !== null) set({ depth }, "note-depth");
            }}
          />
        </label>
        <label>
          {t("session.noteRole")}
          <RoleSelect value={note.role} testId="note-role" onChange={(role) => set({ role })} />
        </label>
        <label>
          {t("session.noteInterval")}
          <input
            type="number"
            min={0}
            value={note.interval}
            data-testid="note-interval"
            onChange={(e) => {
              const interval = count(e.target.value);
              if (interval !== null) set({ interval }, "note-interval");
            }}
          />
        </label>
      </div>
    </fieldset>
  );
}
