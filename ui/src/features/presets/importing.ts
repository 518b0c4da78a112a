// Import (RULES 9.7): a file chosen in the shell's open dialog or dropped on the window, what it
// holds, then the import itself. The page never holds a path, only the number the shell gave the
// file. What the import dialog shows lives here, apart from the app's store, as the export
// dialog's does in `exporting.ts` (`app/dialogState.ts`).
import type { ChosenFile, DialogText, ImportPreview, LorebookChoice, Said } from "../../bindings";
import { api, errorMessage } from "../../app/api";
import { dialogState, useDialog } from "../../app/dialogState";
import {
  flushSave,
  flushSession,
  openPreset,
  openSession,
  refreshPresets,
  refreshSessions,
} from "../../app/store";

/** A file chosen for import, then what it would bring in, then what the import did. */
export interface ImportState {
  file: ChosenFile;
  preview: ImportPreview | null;
  error: string | null;
  importing: boolean;
  /** Once imported: what the import did beyond the mapping, in English; the dialog shows it until
   * OK. */
  notes: string[] | null;
  /** The same notes as codes with parameters, said in the UI's language. */
  notesSaid: Said[];
}

const dialog = dialogState<ImportState>();
const set = dialog.set;

export function useImport(): ImportState | null {
  return useDialog(dialog);
}

export function getImportState(): ImportState | null {
  return dialog.get();
}

/** The native open dialog, then what the chosen file holds. */
export async function chooseImport(text: DialogText) {
  const file = await api.chooseImportFile(text);
  if (file) await inspectImport(file);
}

/** Reads chosen `file` for import and shows what it holds; nothing is saved until `confirmImport`. */
export async function inspectImport(file: ChosenFile) {
  set({ file, preview: null, error: null, importing: false, notes: null, notesSaid: [] });
  try {
    patchImport(file.id, { preview: await api.inspectImport(file.id) });
  } catch (e) {
    patchImport(file.id, { error: errorMessage(e) });
  }
}

/** Changes the pending import of file `id`; another file may have been dropped meanwhile. */
function patchImport(id: number, patch: Partial<ImportState>) {
  const pending = dialog.get();
  if (pending?.file.id === id) set({ ...pending, ...patch });
}

export function cancelImport() {
  set(null);
}

/**
 * Saves the pending import (into preset `into` for world info and regex scripts; `lorebook` says
 * what world info does to a lorebook there) and opens what it made. When the import did more
 * than the mapping, the dialog stays to say what.
 */
export async function confirmImport(into: string | null, lorebook: LorebookChoice = "replace") {
  const pending = dialog.get();
  if (!pending || pending.importing || pending.notes) return;
  const id = pending.file.id;
  patchImport(id, { importing: true, error: null });
  try {
    await flushSave();
    await flushSession();
    const outcome = await api.importFile(id, into, lorebook);
    // Imported: from here on the dialog cannot import it again.
    patchImport(id, { notes: outcome.notes, notesSaid: outcome.notesSaid });
    if (outcome.kind === "session") {
      await refreshSessions();
      await openSession(outcome.id);
    } else {
      await refreshPresets();
      await openPreset(outcome.id);
    }
    if (outcome.notes.length > 0) patchImport(id, { importing: false });
    else if (dialog.get()?.file.id === id) set(null);
  } catch (e) {
    patchImport(id, { importing: false, error: errorMessage(e) });
  }
}
