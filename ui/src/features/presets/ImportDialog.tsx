import { useEffect, useState } from "react";
import type { LorebookChoice, Said } from "../../bindings";
import { useApp } from "../../app/store";
import { useSay, useT } from "../../app/useT";
import { LorebookChoiceField, useLorebookSize } from "./LorebookChoice";
import { cancelImport, confirmImport, useImport, type ImportState } from "./importing";

/** What a file would bring in, and what could not be mapped, before anything is saved. */
export function ImportDialog() {
  const pending = useImport();
  // Another file starts with the dialog's choices as they first are.
  return pending ? <ImportFile key={pending.file.id} pending={pending} /> : null;
}

function ImportFile({ pending }: { pending: ImportState }) {
  const t = useT();
  const { importing, notes } = pending;
  // Escape closes the dialog, except while the import is under way.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && !importing && cancelImport();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [importing]);
  return (
    <div className="dialog-backdrop">
      <div role="dialog" aria-modal="true" className="dialog import-dialog" data-testid="import-dialog" aria-label={t("import.title")}>
        <h2>{t("import.title")}</h2>
        <p className="muted file-path">{pending.file.name}</p>
        {notes !== null && !importing ? <Done notes={notes} said={pending.notesSaid} error={pending.error} /> : <Report pending={pending} />}
      </div>
    </div>
  );
}

/** What an import can create; the backend names it by one of these. */
const KINDS: string[] = [
  "preset",
  "character",
  "lorebook",
  "regexRules",
  "session",
  "worldInfoSettings",
  "instructTemplate",
  "systemPrompt",
] satisfies Kind[];
type Kind =
  | "preset"
  | "character"
  | "lorebook"
  | "regexRules"
  | "session"
  | "worldInfoSettings"
  | "instructTemplate"
  | "systemPrompt";

/** What the file holds, the preset it goes into, and the Import button. */
function Report({ pending }: { pending: ImportState }) {
  const t = useT();
  const say = useSay();
  const presets = useApp((s) => s.presets);
  const current = useApp((s) => s.preset?.id ?? null);
  const [into, setInto] = useState<string | null>(null);
  const [lorebook, setLorebook] = useState<LorebookChoice>("replace");
  const { preview, error, importing } = pending;
  const target = into ?? current ?? presets[0]?.id ?? null;
  const worldInfo = preview?.kind === "lorebook";
  const entries = useLorebookSize(worldInfo ? target : null);
  // World info waits for the count: the user must see that a lorebook is there before replacing it.
  const counting = worldInfo && target !== null && entries === null;
  const targetName = presets.find((p) => p.id === target)?.name ?? target ?? "";
  return (
    <>
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
            {t("import.summary", {
              format: say(preview.formatSaid, preview.format),
              kind: KINDS.includes(preview.kind) ? t(`import.kind.${preview.kind as Kind}`) : preview.kind,
              name: preview.nameSaid ? say(preview.nameSaid, preview.name) : preview.name,
            })}
          </p>
          {preview.needsPreset && (
            <label>
              {t("import.into")}
              <select value={target ?? ""} disabled={importing} onChange={(e) => setInto(e.target.value)}>
                {presets.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          {worldInfo && entries !== null && entries > 0 && (
            <LorebookChoiceField
              presetName={targetName}
              entries={entries}
              choice={lorebook}
              disabled={importing}
              onChange={setLorebook}
            />
          )}
          {preview.notMapped.length === 0 ? (
            <p className="muted">{t("import.allMapped")}</p>
          ) : (
            <details open>
              <summary>{t("import.notMapped", { count: preview.notMapped.length })}</summary>
              <ul className="not-mapped">
                {preview.notMapped.map((n, i) => (
                  <li key={i}>
                    <code>{n.item}</code>: {say(n.said, n.message)}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </>
      )}
      {importing && (
        <p className="progress" role="status">
          <span className="spinner" aria-hidden="true" /> {t("import.importing")}
        </p>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={cancelImport} disabled={importing}>
          {t("presets.cancel")}
        </button>
        <button
          type="button"
          className="primary"
          data-testid="confirm-import"
          disabled={!preview || importing || counting}
          onClick={() => void confirmImport(preview?.needsPreset ? target : null, entries ? lorebook : "replace")}
        >
          {t("import.confirm")}
        </button>
      </div>
    </>
  );
}

/** After the import: what it did beyond the mapping, until the user has read it. */
function Done({ notes, said, error }: { notes: string[]; said: Said[]; error: string | null }) {
  const t = useT();
  const say = useSay();
  return (
    <>
      <p role="status">{t("import.done")}</p>
      {notes.length > 0 && (
        <>
          <p id="import-notes-title">{t("import.notes")}</p>
          {/* Focusable, so that a long list scrolls from the keyboard. */}
          <ul className="import-notes" data-testid="import-notes" tabIndex={0} aria-labelledby="import-notes-title">
            {notes.map((note, i) => (
              <li key={i}>{said[i] ? say(said[i], note) : note}</li>
            ))}
          </ul>
        </>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="dialog-actions">
        <button type="button" className="primary" autoFocus data-testid="import-ok" onClick={cancelImport}>
          {t("import.ok")}
        </button>
      </div>
    </>
  );
}
