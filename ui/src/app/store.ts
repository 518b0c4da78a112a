// The app's one store for server state: the preset and session being edited, the lists, the
// preview, and the undo history. Components read it with `useApp` and change it only through the
// actions below, so autosave, undo and the live preview follow every edit. Its state is in
// state.ts, autosave in saving.ts, the preview in previewing.ts; components import all from here.
// The import and export dialogs keep what they show apart (dialogState.ts, features/presets/).
import type { OpenedPreset, Session } from "../bindings";
import { asChat, asPreset, type Chat, type Preset } from "./model";
import type { Language } from "../i18n";
import { api, errorMessage } from "./api";
import {
  initial,
  resetState,
  set,
  SETTINGS,
  state,
  type EditorMode,
  type Snapshot,
  type Theme,
} from "./state";
import { closeDialogs } from "./dialogState";
import { guardOpening, requestPreview, resetPreviewing } from "./previewing";
import { flushSave, flushSession, presetSaver, resetSaving, sessionSaver } from "./saving";

export { getState, subscribe, useApp } from "./state";
export type { AppState, ChangesMode, EditorMode, MacroMark, PreviewTab, Theme } from "./state";
export {
  markMacro,
  previewRequest,
  requestPreview,
  setChangesMode,
  setPreviewTab,
  setCompareModel,
  setGenerationType,
  setInput,
  setModel,
  setPrefill,
} from "./previewing";
export { flushSave, flushSession, keepMine, retrySaves, saveBeforeClose } from "./saving";

/** For tests: back to the state before `start`. */
export function resetForTests() {
  held = null;
  resetSaving();
  resetState();
  resetPreviewing();
  closeDialogs();
  lastCoalesce = null;
}

// ---- start ----------------------------------------------------------------------------------

export async function start() {
  try {
    const [presets, sessions, models] = await Promise.all([
      api.listPresets(),
      api.listSessions(),
      api.knownModels(),
    ]);
    const read = async (key: string) => (await api.getSetting(key)) ?? null;
    const [presetId, sessionId, model, theme, language, editorMode, opening, tourSeen] = await Promise.all([
      read(SETTINGS.preset),
      read(SETTINGS.session),
      read(SETTINGS.model),
      read(SETTINGS.theme),
      read(SETTINGS.language),
      read(SETTINGS.editorMode),
      read(SETTINGS.opening),
      read(SETTINGS.tourSeen),
    ]);
    set({
      presets,
      sessions,
      models,
      model: model ?? initial.model,
      theme: theme === "dark" ? "dark" : "light",
      language: language === "zh-CN" ? "zh-CN" : "en",
      editorMode: editorMode === "advanced" ? "advanced" : "simple",
      // The first start shows the tour, over the same render as the panes it points at.
      tour: tourSeen === null ? 0 : null,
      ready: true,
    });
    const firstPreset = presets.find((p) => p.id === presetId) ?? presets[0];
    const firstSession = sessions.find((s) => s.id === sessionId) ?? sessions[0];
    if (firstSession) await openSession(firstSession.id, false);
    if (firstPreset && opening === firstPreset.id) {
      // Its preview never returned last time: the user opens it again when they choose to.
      await guardOpening(firstPreset.id, false);
      set({ crashNotice: firstPreset.name });
    } else if (firstPreset) {
      await guardOpening(firstPreset.id, true);
      await openPreset(firstPreset.id);
      return;
    }
    requestPreview();
  } catch (e) {
    set({ fatal: errorMessage(e), ready: true });
  }
}

export function dismissCrashNotice() {
  set({ crashNotice: null });
}

// ---- the first-run tour ---------------------------------------------------------------------

/** The tour's steps: the library and recipe, the preview, the import. */
export const TOUR_STEPS = 3;

/** Shows the tour from its first step (at the first start, or asked for from the About dialog). */
export function startTour() {
  set({ tour: 0 });
}

/** Shows step `step` of the tour; past the last one the tour ends as finished. */
export function showTourStep(step: number) {
  if (step >= TOUR_STEPS) endTour();
  else set({ tour: Math.max(0, step) });
}

/** Closes the tour, finished or skipped; it is not shown at start again. */
export function endTour() {
  set({ tour: null });
  void api.setSetting(SETTINGS.tourSeen, "1");
}

// ---- presets --------------------------------------------------------------------------------

export async function openPreset(id: string) {
  await flushSave();
  load(await api.getPreset(id));
  void api.setSetting(SETTINGS.preset, id);
}

/** Shows `opened` as the preset being edited, with no undo history. */
function load({ preset, revision }: OpenedPreset) {
  set({
    preset: asPreset(preset),
    revision,
    conflict: null,
    crashNotice: null,
    selectedStep: null,
    recipeId: null,
    workbenchRecipe: null,
    beforeEdit: null,
    undo: [],
    redo: [],
  });
  requestPreview();
}

export async function refreshPresets() {
  set({ presets: await api.listPresets() });
}

export async function createPreset(name: string) {
  await flushSave();
  const preset = await api.createPreset(name);
  await refreshPresets();
  await openPreset(preset.id);
}

export async function duplicatePreset(id: string, name: string) {
  await flushSave();
  const copy = await api.duplicatePreset(id, name);
  await refreshPresets();
  await openPreset(copy.id);
}

export async function renamePreset(id: string, name: string) {
  if (state.preset?.id === id) {
    // The open preset is renamed by its own save, over its revision: a rename in the backend
    // would be a save of another writer, and the next autosave a conflict.
    set({ preset: { ...state.preset, name } });
    presetSaver.schedule();
    await flushSave();
    return;
  }
  await flushSave();
  await api.renamePreset(id, name);
  await refreshPresets();
}

export async function deletePreset(id: string) {
  const open = state.preset?.id === id;
  const edited = open && presetSaver.pending();
  if (open) {
    // Its unsaved edit goes with it, and no retry may write it back after the delete.
    presetSaver.discard();
    await presetSaver.settle();
  } else await flushSave();
  try {
    await api.deletePreset(id);
  } catch (e) {
    if (edited) presetSaver.schedule();
    throw e;
  }
  await refreshPresets();
  if (open) {
    const next = state.presets[0];
    if (next) await openPreset(next.id);
    else set({ preset: null, revision: null, preview: null, undo: [], redo: [] });
  }
}

export async function restoreBuiltins() {
  await flushSave();
  await api.restoreBuiltinPresets();
  await refreshPresets();
  if (state.preset) await openPreset(state.preset.id);
}

/**
 * Changes the preset being edited. Edits with the same `coalesce` key in quick succession (typing
 * in one field) make one undo step.
 */
export function editPreset(change: (p: Preset) => Preset, coalesce?: string) {
  const before = state.preset;
  if (!before) return;
  const after = change(before);
  if (after === before) return;
  const now = Date.now();
  const merge =
    coalesce !== undefined &&
    lastCoalesce?.key === coalesce &&
    now - lastCoalesce.at < 1000 &&
    state.undo.length > 0;
  lastCoalesce = coalesce !== undefined ? { key: coalesce, at: now } : null;
  set({
    preset: after,
    undo: merge ? state.undo : [...state.undo, { kind: "preset" as const, value: before }].slice(-200),
    redo: [],
    // Typing in one field is one edit: "Last edit" compares with the preset before it began.
    ...(merge ? {} : { beforeEdit: before }),
  });
  presetSaver.schedule();
  requestPreview();
}

/**
 * `editPreset` for an edit that also says what it made (the id or index of a new item); returns
 * that, or null when no preset is open.
 */
export function editPresetFor<T extends { preset: Preset }>(change: (p: Preset) => T): T | null {
  let made: T | null = null;
  editPreset((p) => {
    made = change(p);
    return made.preset;
  });
  return made;
}

let lastCoalesce: { key: string; at: number } | null = null;

/** After a conflict: the stored preset replaces the unsaved edit, and the undo history goes. */
export async function reloadPreset() {
  const conflict = state.conflict;
  if (!conflict) return;
  const opened = await api.getPreset(conflict.id);
  presetSaver.discard();
  load(opened);
}

export function selectStep(index: number | null) {
  set({ selectedStep: index });
}

// ---- sessions -------------------------------------------------------------------------------

export async function refreshSessions() {
  set({ sessions: await api.listSessions() });
}

export async function openSession(id: string | null, preview = true) {
  await flushSession();
  if (id === null) {
    set({ session: null });
  } else {
    set({ session: asChat(await api.getSession(id)) });
    void api.setSetting(SETTINGS.session, id);
  }
  if (preview) requestPreview();
}

/** A new chat for the open preset: it opens with the character's greeting, read from the saved preset. */
export async function createSession(title: string) {
  await flushSession();
  await flushSave();
  const session = await api.createSession(title, state.preset?.id ?? null);
  await refreshSessions();
  await openSession(session.id);
}

export async function deleteSession(id: string) {
  const open = state.session?.id === id;
  const edited = open && sessionSaver.pending();
  if (open) {
    // As for a preset: its unsaved edit goes with it.
    sessionSaver.discard();
    await sessionSaver.settle();
  }
  try {
    await api.deleteSession(id);
  } catch (e) {
    if (edited) sessionSaver.schedule();
    throw e;
  }
  const sessions = await api.listSessions();
  set({ sessions });
  if (open) await openSession(sessions[0]?.id ?? null);
}

/** Changes the session being edited; it is saved at once (the preview reads the stored one). */
export async function editSession(change: (s: Chat) => Chat, coalesce?: string) {
  const before = state.session;
  if (!before) return;
  const after = change(before);
  const now = Date.now();
  const merge =
    coalesce !== undefined && lastCoalesce?.key === coalesce && now - lastCoalesce.at < 1000;
  lastCoalesce = coalesce !== undefined ? { key: coalesce, at: now } : null;
  set({
    session: after,
    undo: merge ? state.undo : [...state.undo, { kind: "session" as const, value: before }].slice(-200),
    redo: [],
  });
  if (held?.id === before.id) {
    held.edits.push(change);
    return;
  }
  await saveSessionNow();
}

/**
 * Edits of the session a reply is arriving into: shown at once, and written once the reply is
 * stored, each made again over the session as the backend stored it. So the reply and every
 * edit are kept, whichever comes first.
 */
let held: { id: string; edits: ((s: Chat) => Chat)[] } | null = null;

/** From now on, edits of session `id` wait for {@link releaseSessionEdits}. */
export function holdSessionEdits(id: string) {
  held = { id, edits: [] };
}

/** Whether edits of session `id` are waiting for a reply (undo waits too). */
export function sessionEditsHeld(id: string | undefined): boolean {
  return held !== null && held.id === id;
}

/**
 * The send is over: `stored` is the session as the backend stored it with the reply (null when
 * the send failed and stored nothing). The held edits are made over it and written.
 */
export async function releaseSessionEdits(stored: Session | null, clearInput: boolean) {
  const h = held;
  held = null;
  if (!h) return;
  const open = state.session?.id === h.id;
  if (!stored) {
    // Nothing was stored: the session is as it was, and the open one shows the edits already.
    if (open && h.edits.length) await saveSessionNow();
    if (open || !h.edits.length) return;
  }
  const base = stored ?? (await api.getSession(h.id).catch(() => null));
  if (!base) return;
  const chat = h.edits.reduce((s, edit) => edit(s), asChat(base));
  if (open) {
    set({ session: chat, ...(clearInput && stored ? { input: "" } : {}) });
    if (h.edits.length) await saveSessionNow();
    else requestPreview();
  } else if (h.edits.length) {
    await api.saveSession(chat).catch(() => {});
  }
}

/**
 * The session as the backend stored it after a send or a flip of replies: it replaces the open
 * one (when it is still the open one) and the preview is built over it; `clearInput` empties the
 * next user message, which the send put into the session.
 */
export function showStoredSession(stored: Session, clearInput: boolean) {
  if (state.session?.id !== stored.id) return;
  set({ session: asChat(stored), ...(clearInput ? { input: "" } : {}) });
  requestPreview();
}

/**
 * The session's summary as the backend now keeps it (made, edited or restored in the summary
 * editor, RULES 5.15): shown and previewed without an undo step or a save, since the backend
 * wrote it already.
 */
export function showSummary(sessionId: string, summary: string | null) {
  if (state.session?.id !== sessionId) return;
  set({ session: { ...state.session, summary } });
  requestPreview();
}

/** Writes the session; a failure is shown and retried by the saver. */
async function saveSessionNow() {
  sessionSaver.schedule();
  await sessionSaver.flush().catch(() => {});
}

// ---- undo / redo ----------------------------------------------------------------------------

function current(kind: Snapshot["kind"]): Snapshot | null {
  if (kind === "preset") return state.preset ? { kind, value: state.preset } : null;
  return state.session ? { kind, value: state.session } : null;
}

function apply(snapshot: Snapshot) {
  lastCoalesce = null;
  if (snapshot.kind === "preset") {
    set({ preset: snapshot.value, beforeEdit: state.preset });
    presetSaver.schedule();
    requestPreview();
  } else {
    // The summary is the backend's (made, edited or restored in the summary editor, RULES 9.9):
    // an undo of another edit keeps the one in use, else it would save an old one over it.
    const summary = state.session?.id === snapshot.value.id ? state.session.summary : snapshot.value.summary;
    set({ session: { ...snapshot.value, summary } });
    void saveSessionNow();
  }
}

export function undo() {
  const snapshot = state.undo[state.undo.length - 1];
  if (!snapshot || (snapshot.kind === "session" && sessionEditsHeld(state.session?.id))) return;
  const now = current(snapshot.kind);
  set({ undo: state.undo.slice(0, -1), redo: now ? [...state.redo, now] : state.redo });
  apply(snapshot);
}

export function redo() {
  const snapshot = state.redo[state.redo.length - 1];
  if (!snapshot || (snapshot.kind === "session" && sessionEditsHeld(state.session?.id))) return;
  const now = current(snapshot.kind);
  set({ redo: state.redo.slice(0, -1), undo: now ? [...state.undo, now] : state.undo });
  apply(snapshot);
}

// ---- settings -------------------------------------------------------------------------------

export function setTheme(theme: Theme) {
  set({ theme });
  void api.setSetting(SETTINGS.theme, theme);
}

export function setEditorMode(editorMode: EditorMode) {
  set({ editorMode });
  void api.setSetting(SETTINGS.editorMode, editorMode);
}

export function openWorkbenchRecipe(id: string | null) {
  set({ workbenchRecipe: id });
}

export function setLanguage(language: Language) {
  set({ language });
  void api.setSetting(SETTINGS.language, language);
}
