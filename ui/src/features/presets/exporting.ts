// Export (RULES 7.5, 9.7): the open preset in one of four formats, or the open session as native
// JSON. Rust asks where with the native save dialog (it proposes the file name) and writes the
// file; the page never names a path. What the export dialog shows lives here, apart from the app's
// store: it is the state of one dialog, not of the documents (`app/dialogState.ts`, as for the
// import dialog in `importing.ts`).
import type { AgentPreset, DialogText, ExportFormat, NotMapped } from "../../bindings";
import { api, errorMessage } from "../../app/api";
import { dialogState, useDialog } from "../../app/dialogState";
import { flushSession, getState } from "../../app/store";

export const EXPORT_FORMATS: readonly ExportFormat[] = [
  "native",
  "sillyTavernPreset",
  "sillyTavernCard",
  "sillyTavernWorldInfo",
];

export interface ExportState {
  target: { kind: "preset" | "session"; id: string; name: string };
  format: ExportFormat;
  /** Choosing the format; the save dialog and the write under way; then the report or the error. */
  phase: "choosing" | "exporting" | "done" | "failed";
  path: string | null;
  notMapped: NotMapped[];
  error: string | null;
}

const dialog = dialogState<ExportState>();
const set = dialog.set;

export function useExport(): ExportState | null {
  return useDialog(dialog);
}

export function getExportState(): ExportState | null {
  return dialog.get();
}

/** Why `preset` has nothing to write in `format`, or null when it has. */
export function unavailable(preset: AgentPreset, format: ExportFormat): "export.noCharacter" | "export.noLorebook" | null {
  if (format === "sillyTavernCard" && !preset.character) return "export.noCharacter";
  if (format === "sillyTavernWorldInfo" && !preset.lorebook) return "export.noLorebook";
  return null;
}

/** Opens the export dialog for the open preset. */
export function startPresetExport() {
  const preset = getState().preset;
  if (!preset) return;
  set({
    target: { kind: "preset", id: preset.id, name: preset.name },
    format: "native",
    phase: "choosing",
    path: null,
    notMapped: [],
    error: null,
  });
}

export function chooseFormat(format: ExportFormat) {
  const state = dialog.get();
  if (state && state.phase === "choosing") set({ ...state, format });
}

/** From a failed preset export back to the choice of format. */
export function backToFormats() {
  const state = dialog.get();
  if (state && state.phase === "failed" && state.target.kind === "preset") {
    const preset = getState().preset;
    const format = preset && unavailable(preset, state.format) ? "native" : state.format;
    set({ ...state, format, phase: "choosing", path: null, error: null });
  }
}

export function closeExport() {
  set(null);
}

/**
 * The dialog's Export button: the preset as it is edited now, in the chosen format, where the user
 * says. A cancelled save dialog goes back to the choice of format; a failure is shown.
 */
export async function saveAndExport(text: DialogText) {
  const current = dialog.get();
  const preset = getState().preset;
  if (!current || current.phase !== "choosing" || current.target.kind !== "preset" || !preset) return;
  const asking: ExportState = { ...current, phase: "exporting" };
  set(asking);
  try {
    const exported = await api.exportPreset(preset, current.format, text);
    // Closed meanwhile: nothing to show.
    if (dialog.get() !== asking) return;
    if (exported === null) set(current);
    else set({ ...current, phase: "done", path: exported.path, notMapped: exported.notMapped });
  } catch (e) {
    if (dialog.get() === asking) set({ ...current, phase: "failed", error: errorMessage(e) });
  }
}

/** The session's Export button: where to write the open session, then where it went. */
export async function startSessionExport(text: DialogText) {
  const session = getState().session;
  if (!session) return;
  const base: ExportState = {
    target: { kind: "session", id: session.id, name: session.title ?? session.id },
    format: "native",
    phase: "exporting",
    path: null,
    notMapped: [],
    error: null,
  };
  try {
    // The file is written from the stored session: its last edit first.
    await flushSession();
    const exported = await api.exportSession(session.id, text);
    if (exported !== null) set({ ...base, phase: "done", path: exported.path, notMapped: exported.notMapped });
  } catch (e) {
    set({ ...base, phase: "failed", error: errorMessage(e) });
  }
}
