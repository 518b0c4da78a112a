// The app's one store for server state: the preset and session being edited, the lists, the
// preview, and the undo history. Components read it with `useApp` and change it only through the
// actions below, so autosave, undo and the live preview follow every edit.
import { useSyncExternalStore } from "react";
import type { BuiltMessage, ImportPreview, ListItem, Preview, PreviewRequest, Source } from "../bindings";
import { asChat, asPreset, type Chat, type Preset } from "./model";
import type { Language } from "../i18n";
import { api, errorMessage } from "./api";

export type Theme = "light" | "dark";
export type EditorMode = "simple" | "advanced";
type Snapshot =
  | { kind: "preset"; value: Preset }
  | { kind: "session"; value: Chat };

export interface AppState {
  ready: boolean;
  fatal: string | null;
  presets: ListItem[];
  preset: Preset | null;
  sessions: ListItem[];
  session: Chat | null;
  models: string[];
  model: string;
  input: string;
  preview: Preview | null;
  previewError: string | null;
  /** The second model the preview compares with, or null when it does not compare (SPEC 9). */
  compareModel: string | null;
  /** The same build for `compareModel`, rebuilt after every edit right after `preview`. */
  comparePreview: Preview | null;
  compareError: string | null;
  /** The recipe the last successful build used: simple mode edits it. */
  recipeId: string | null;
  selectedStep: number | null;
  save: { state: "saved" | "saving" | "failed"; message?: string };
  undo: Snapshot[];
  redo: Snapshot[];
  theme: Theme;
  language: Language;
  /** Simple mode edits the recipe that applies to the model; advanced mode every recipe. */
  editorMode: EditorMode;
  /** The recipe open in the advanced workbench. */
  workbenchRecipe: string | null;
  /** A file being read for import, then what it would bring in, shown before anything is saved. */
  pendingImport: { path: string; preview: ImportPreview | null; error: string | null } | null;
}

const initial: AppState = {
  ready: false,
  fatal: null,
  presets: [],
  preset: null,
  sessions: [],
  session: null,
  models: [],
  model: "gpt-4o",
  input: "",
  preview: null,
  previewError: null,
  compareModel: null,
  comparePreview: null,
  compareError: null,
  recipeId: null,
  selectedStep: null,
  save: { state: "saved" },
  undo: [],
  redo: [],
  theme: "light",
  language: "en",
  editorMode: "simple",
  workbenchRecipe: null,
  pendingImport: null,
};

let state: AppState = initial;
const listeners = new Set<() => void>();

function set(patch: Partial<AppState>) {
  state = { ...state, ...patch };
  listeners.forEach((l) => l());
}

export function getState(): AppState {
  return state;
}

export function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useApp<T>(select: (s: AppState) => T): T {
  return useSyncExternalStore(subscribe, () => select(state));
}

/** For tests: back to the state before `start`. */
export function resetForTests() {
  state = initial;
  lastCoalesce = null;
  previewRunning = false;
  previewAgain = false;
  compareRunning = false;
  compareAgain = false;
  clearTimeout(saveTimer);
}

// ---- start ----------------------------------------------------------------------------------

const SETTINGS = {
  preset: "ui.preset",
  session: "ui.session",
  model: "ui.model",
  theme: "ui.theme",
  language: "ui.language",
  editorMode: "ui.editorMode",
};

export async function start() {
  try {
    const [presets, sessions, models] = await Promise.all([
      api.listPresets(),
      api.listSessions(),
      api.knownModels(),
    ]);
    const read = async (key: string) => (await api.getSetting(key)) ?? null;
    const [presetId, sessionId, model, theme, language, editorMode] = await Promise.all([
      read(SETTINGS.preset),
      read(SETTINGS.session),
      read(SETTINGS.model),
      read(SETTINGS.theme),
      read(SETTINGS.language),
      read(SETTINGS.editorMode),
    ]);
    set({
      presets,
      sessions,
      models,
      model: model ?? initial.model,
      theme: theme === "dark" ? "dark" : "light",
      language: language === "zh-CN" ? "zh-CN" : "en",
      editorMode: editorMode === "advanced" ? "advanced" : "simple",
      ready: true,
    });
    const firstPreset = presets.find((p) => p.id === presetId) ?? presets[0];
    const firstSession = sessions.find((s) => s.id === sessionId) ?? sessions[0];
    if (firstSession) await openSession(firstSession.id, false);
    if (firstPreset) await openPreset(firstPreset.id);
    else requestPreview();
  } catch (e) {
    set({ fatal: errorMessage(e), ready: true });
  }
}

// ---- presets --------------------------------------------------------------------------------

export async function openPreset(id: string) {
  await flushSave();
  const preset = asPreset(await api.getPreset(id));
  set({ preset, selectedStep: null, recipeId: null, workbenchRecipe: null, undo: [], redo: [] });
  void api.setSetting(SETTINGS.preset, id);
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
  await flushSave();
  await api.renamePreset(id, name);
  if (state.preset?.id === id) set({ preset: { ...state.preset, name } });
  await refreshPresets();
}

export async function deletePreset(id: string) {
  await flushSave();
  await api.deletePreset(id);
  await refreshPresets();
  if (state.preset?.id === id) {
    const next = state.presets[0];
    if (next) await openPreset(next.id);
    else set({ preset: null, preview: null, undo: [], redo: [] });
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
  });
  scheduleSave();
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
let saveTimer: ReturnType<typeof setTimeout> | undefined;
let savePending = false;

function scheduleSave() {
  savePending = true;
  set({ save: { state: "saving" } });
  clearTimeout(saveTimer);
  saveTimer = setTimeout(() => void flushSave(), 400);
}

/** Writes the edited preset now if an autosave is pending. */
export async function flushSave() {
  clearTimeout(saveTimer);
  if (!savePending || !state.preset) return;
  savePending = false;
  const preset = state.preset;
  try {
    await api.savePreset(preset);
    set({ save: { state: "saved" } });
    const listed = state.presets.find((p) => p.id === preset.id);
    if (listed && listed.name !== preset.name) await refreshPresets();
  } catch (e) {
    set({ save: { state: "failed", message: errorMessage(e) } });
  }
}

export function selectStep(index: number | null) {
  set({ selectedStep: index });
}

// ---- sessions -------------------------------------------------------------------------------

export async function openSession(id: string | null, preview = true) {
  if (id === null) {
    set({ session: null });
  } else {
    set({ session: asChat(await api.getSession(id)) });
    void api.setSetting(SETTINGS.session, id);
  }
  if (preview) requestPreview();
}

export async function createSession(title: string) {
  const session = await api.createSession(title);
  set({ sessions: await api.listSessions() });
  await openSession(session.id);
}

export async function deleteSession(id: string) {
  await api.deleteSession(id);
  const sessions = await api.listSessions();
  set({ sessions });
  if (state.session?.id === id) await openSession(sessions[0]?.id ?? null);
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
  await writeSession(after);
}

async function writeSession(session: Chat) {
  set({ save: { state: "saving" } });
  try {
    await api.saveSession(session);
    set({ save: { state: "saved" } });
    const listed = state.sessions.find((s) => s.id === session.id);
    if (listed && listed.name !== (session.title ?? session.id)) {
      set({ sessions: await api.listSessions() });
    }
  } catch (e) {
    set({ save: { state: "failed", message: errorMessage(e) } });
  }
  requestPreview();
}

// ---- undo / redo ----------------------------------------------------------------------------

function current(kind: Snapshot["kind"]): Snapshot | null {
  if (kind === "preset") return state.preset ? { kind, value: state.preset } : null;
  return state.session ? { kind, value: state.session } : null;
}

function apply(snapshot: Snapshot) {
  lastCoalesce = null;
  if (snapshot.kind === "preset") {
    set({ preset: snapshot.value });
    scheduleSave();
    requestPreview();
  } else {
    set({ session: snapshot.value });
    void writeSession(snapshot.value);
  }
}

export function undo() {
  const snapshot = state.undo[state.undo.length - 1];
  if (!snapshot) return;
  const now = current(snapshot.kind);
  set({ undo: state.undo.slice(0, -1), redo: now ? [...state.redo, now] : state.redo });
  apply(snapshot);
}

export function redo() {
  const snapshot = state.redo[state.redo.length - 1];
  if (!snapshot) return;
  const now = current(snapshot.kind);
  set({ redo: state.redo.slice(0, -1), undo: now ? [...state.undo, now] : state.undo });
  apply(snapshot);
}

// ---- preview --------------------------------------------------------------------------------

export function setModel(model: string) {
  set({ model });
  void api.setSetting(SETTINGS.model, model);
  requestPreview();
}

export function setInput(input: string) {
  set({ input });
  requestPreview();
}

/** Compares the preview with a build for `model`; null stops comparing. */
export function setCompareModel(model: string | null) {
  if (model === state.compareModel) return;
  // The previous model's build is not shown as this one's.
  set({ compareModel: model, comparePreview: null, compareError: null });
  if (model !== null) requestCompare();
}

/** What the preview builds: the preset as edited, the stored session, the model, the input. */
export function previewRequest(): PreviewRequest | null {
  const { preset, session, model, input } = state;
  if (!preset) return null;
  return {
    preset,
    sessionId: session?.id ?? null,
    model,
    input: input || null,
    contextWindow: null,
    reserve: null,
  };
}

let previewRunning = false;
let previewAgain = false;
/** When the newest edit happened, for the keystroke-to-preview measurement. */
let editStamp: number | null = null;

/** Rebuilds the preview; while one build runs, the newest request waits and the rest are skipped. */
export function requestPreview() {
  editStamp ??= performance.now();
  if (previewRunning) {
    previewAgain = true;
    return;
  }
  void runPreview();
}

async function runPreview() {
  previewRunning = true;
  do {
    previewAgain = false;
    const stamp = editStamp;
    editStamp = null;
    const request = previewRequest();
    if (!request) break;
    try {
      const sent = performance.now();
      const preview = withStoredHistory(await api.preview(request), state.session);
      const received = performance.now();
      set({ preview, previewError: null, recipeId: preview.result.recipe ?? null });
      if (stamp !== null) markPainted(stamp, sent, received, preview.buildMs ?? 0);
    } catch (e) {
      set({ previewError: errorMessage(e) });
    }
    // The compared build follows on its own: the next edit's preview never waits for it.
    if (!previewAgain) requestCompare();
  } while (previewAgain);
  previewRunning = false;
}

let compareRunning = false;
let compareAgain = false;

/** Rebuilds the compared model's preview from the newest request, one build at a time. */
function requestCompare() {
  if (state.compareModel === null) return;
  if (compareRunning) {
    compareAgain = true;
    return;
  }
  void runCompare();
}

async function runCompare() {
  compareRunning = true;
  do {
    compareAgain = false;
    const model = state.compareModel;
    const request = previewRequest();
    if (model === null || !request) break;
    try {
      const preview = withStoredHistory(await api.preview({ ...request, model }), state.session);
      if (state.compareModel === model) set({ comparePreview: preview, compareError: null });
    } catch (e) {
      if (state.compareModel === model) set({ compareError: errorMessage(e) });
    }
  } while (compareAgain);
  compareRunning = false;
}

/**
 * Puts back the history messages the backend left out because they went into the build exactly
 * as stored in this session: each run says where it goes and its tokens.
 */
export function withStoredHistory(preview: Preview, session: Chat | null): Preview {
  if (preview.elided.length === 0) return preview;
  const sent = preview.result.messages;
  const messages: BuiltMessage[] = [];
  let next = 0;
  for (const run of preview.elided) {
    while (messages.length < run.at && next < sent.length) messages.push(sent[next++]!);
    run.tokens.forEach((tokens, k) => {
      const historyIndex = run.historyIndex + k;
      const stored = session?.messages[historyIndex];
      const source: Source = { kind: "history", placement: { mode: "list" }, historyIndex };
      if (stored?.id) source.messageId = stored.id;
      const message: BuiltMessage = { role: stored?.role ?? "user", content: stored?.content ?? "", tokens, source };
      if (stored?.name) message.name = stored.name;
      messages.push(message);
    });
  }
  while (next < sent.length) messages.push(sent[next++]!);
  return { ...preview, result: { ...preview.result, messages } };
}

/** One edit-to-painted-preview time and its parts, in milliseconds (docs/PERFORMANCE.md). */
export interface PreviewTiming {
  total: number;
  /** Waiting for the build before it (one build runs at a time). */
  queued: number;
  /** The command's round trip, the build included. */
  roundTrip: number;
  build: number;
  /** From the result's arrival to the frame after it was painted. */
  render: number;
}

/** Read by the end-to-end test; the newest 1,000. */
const samples: PreviewTiming[] = [];
function markPainted(stamp: number, sent: number, received: number, build: number) {
  // The frame callback runs before the paint; the task after it, once the frame is out.
  requestAnimationFrame(() =>
    setTimeout(() => {
      const now = performance.now();
      samples.push({
        total: now - stamp,
        queued: sent - stamp,
        roundTrip: received - sent,
        build,
        render: now - received,
      });
      if (samples.length > 1000) samples.shift();
    }, 0),
  );
}
(globalThis as { __promptloomPreviewTimes?: PreviewTiming[] }).__promptloomPreviewTimes = samples;

// ---- import ---------------------------------------------------------------------------------

/** Reads `path` for import and shows what it holds; nothing is saved until `confirmImport`. */
export async function inspectImport(path: string) {
  set({ pendingImport: { path, preview: null, error: null } });
  try {
    const preview = await api.inspectImport(path);
    if (state.pendingImport?.path === path) set({ pendingImport: { path, preview, error: null } });
  } catch (e) {
    if (state.pendingImport?.path === path) {
      set({ pendingImport: { path, preview: null, error: errorMessage(e) } });
    }
  }
}

// The end-to-end tests call what the dialog and a dropped file call, with a path of their own.
(globalThis as { __promptloomInspectImport?: typeof inspectImport }).__promptloomInspectImport = inspectImport;

export function cancelImport() {
  set({ pendingImport: null });
}

/** Saves the pending import (into preset `into` for world info and regex scripts) and opens it. */
export async function confirmImport(into: string | null) {
  const pending = state.pendingImport;
  if (!pending) return;
  try {
    await flushSave();
    const outcome = await api.importFile(pending.path, into);
    set({ pendingImport: null });
    if (outcome.kind === "session") {
      set({ sessions: await api.listSessions() });
      await openSession(outcome.id);
    } else {
      await refreshPresets();
      await openPreset(outcome.id);
    }
  } catch (e) {
    set({ pendingImport: { ...pending, error: errorMessage(e) } });
  }
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
