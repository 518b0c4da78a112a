// Export through the native save dialog (SPEC 7, 9): the open preset in one of four formats, or
// the open session as native JSON. What the export dialog shows lives here, apart from the app's
// store: it is the state of one dialog, not of the documents.
import { useSyncExternalStore } from "react";
import { save } from "@tauri-apps/plugin-dialog";
import type { AgentPreset, ExportFormat, NotMapped } from "../../bindings";
import { api, errorMessage } from "../../app/api";
import { flushSave, getState } from "../../app/store";

export const EXPORT_FORMATS: readonly ExportFormat[] = [
  "native",
  "sillyTavernPreset",
  "sillyTavernCard",
  "sillyTavernWorldInfo",
];

export interface ExportState {
  target: { kind: "preset" | "session"; id: string; name: string };
  format: ExportFormat;
  /** Choosing the format, writing the file, then its report or its error. */
  phase: "choosing" | "writing" | "done" | "failed";
  path: string | null;
  notMapped: NotMapped[];
  error: string | null;
}

let state: ExportState | null = null;
const listeners = new Set<() => void>();

function set(next: ExportState | null) {
  state = next;
  listeners.forEach((l) => l());
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function useExport(): ExportState | null {
  return useSyncExternalStore(subscribe, () => state);
}

export function getExportState(): ExportState | null {
  return state;
}

/** Why `preset` has nothing to write in `format`, or null when it has. */
export function unavailable(preset: AgentPreset, format: ExportFormat): "export.noCharacter" | "export.noLorebook" | null {
  if (format === "sillyTavernCard" && !preset.character) return "export.noCharacter";
  if (format === "sillyTavernWorldInfo" && !preset.lorebook) return "export.noLorebook";
  return null;
}

const SUFFIX: Record<ExportFormat, string> = {
  native: ".json",
  sillyTavernPreset: ".st-preset.json",
  sillyTavernCard: ".card.json",
  sillyTavernWorldInfo: ".world-info.json",
};

/** The file name the save dialog proposes: `<id>.st-preset.json` and the like. */
export function defaultFileName(id: string, format: ExportFormat): string {
  const safe = id.replace(/[\\/:*?"<>|\s]+/g, "-") || "export";
  return safe + SUFFIX[format];
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
  if (state && state.phase === "choosing") set({ ...state, format });
}

/** From a failed preset export back to the choice of format. */
export function backToFormats() {
  if (state && state.phase === "failed" && state.target.kind === "preset") {
    const preset = getState().preset;
    const format = preset && unavailable(preset, state.format) ? "native" : state.format;
    set({ ...state, format, phase: "choosing", path: null, error: null });
  }
}

export function closeExport() {
  set(null);
}

/** The native save dialog; null when the user cancels it. */
async function askPath(defaultPath: string, title: string, filterName: string): Promise<string | null> {
  const path = await save({ title, defaultPath, filters: [{ name: filterName, extensions: ["json"] }] });
  return typeof path === "string" ? path : null;
}

/**
 * The dialog's Export button: the save dialog, then the file. A failure is shown in the dialog;
 * a cancelled save dialog leaves it as it was.
 */
export async function saveAndExport(labels: { title: string; filter: string }) {
  const current = state;
  if (!current) return;
  const { target, format } = current;
  let path: string | null;
  try {
    path = await askPath(defaultFileName(target.id, format), labels.title, labels.filter);
  } catch (e) {
    set({ ...current, phase: "failed", error: errorMessage(e) });
    return;
  }
  if (path === null) return;
  try {
    if (target.kind === "preset") await exportPresetTo(format, path);
    else await exportSessionTo(target.id, path);
  } catch {
    // exportPresetTo has put the error into the dialog.
  }
}

/**
 * Writes the open preset, as it is edited now, to `path` in `format`, shows the report and
 * returns what the format could not hold. The end-to-end tests call it with a path of their own.
 */
export async function exportPresetTo(format: ExportFormat, path: string): Promise<NotMapped[]> {
  await flushSave();
  const preset = getState().preset;
  if (!preset) throw new Error("no preset is open");
  const target = { kind: "preset" as const, id: preset.id, name: preset.name };
  set({ target, format, phase: "writing", path, notMapped: [], error: null });
  try {
    const notMapped = await api.exportPreset(preset, format, path);
    if (state?.path === path) set({ target, format, phase: "done", path, notMapped, error: null });
    return notMapped;
  } catch (e) {
    if (state?.path === path) set({ target, format, phase: "failed", path, notMapped: [], error: errorMessage(e) });
    throw e;
  }
}

/** Asks where to write the open session, then writes it as native JSON and shows where. */
export async function startSessionExport(labels: { title: string; filter: string }) {
  const session = getState().session;
  if (!session) return;
  const path = await askPath(defaultFileName(session.id, "native"), labels.title, labels.filter);
  if (path === null) return;
  try {
    await exportSessionTo(session.id, path);
  } catch {
    // Shown in the dialog.
  }
}

/** Writes stored session `id` to `path` and shows the result. */
export async function exportSessionTo(id: string, path: string): Promise<void> {
  const session = getState().session;
  const target = { kind: "session" as const, id, name: session?.id === id ? (session.title ?? id) : id };
  const format: ExportFormat = "native";
  set({ target, format, phase: "writing", path, notMapped: [], error: null });
  try {
    await api.exportSession(id, path);
    if (state?.path === path) set({ target, format, phase: "done", path, notMapped: [], error: null });
  } catch (e) {
    if (state?.path === path) set({ target, format, phase: "failed", path, notMapped: [], error: errorMessage(e) });
    throw e;
  }
}

// The end-to-end tests call what the dialog calls once the save dialog has returned a path.
const hooks = globalThis as {
  __promptloomExport?: typeof exportPresetTo;
  __promptloomExportSession?: typeof exportSessionTo;
};
hooks.__promptloomExport = exportPresetTo;
hooks.__promptloomExportSession = exportSessionTo;
