// The app's state and its one writer, `set`, for the store's modules (store.ts, saving.ts,
// previewing.ts). Components read it with `useApp` and change it only through the store's actions.
import { useSyncExternalStore } from "react";
import type { GenerationType, ListItem, MacroTrace, Preview } from "../bindings";
import type { Chat, Preset } from "./model";
import type { Language } from "../i18n";
import type { SaveStatus } from "./saver";

export type Theme = "light" | "dark";
export type EditorMode = "simple" | "advanced";
/** What the Changes view compares the preview with (RULES 9.8): the session's previous turn,
 * the preset before its last edit, or two builds the user picks. */
export type ChangesMode = "lastTurn" | "lastEdit" | "pick";
/** The views of the preview pane, one tab each (RULES 9.4). */
export type PreviewTab = "messages" | "prompt" | "changes" | "request" | "macros" | "lorebook";
/** An expansion of the macro trace marked in its message: the message and the span of its output. */
export interface MacroMark {
  /** The expansion's number in the trace. */
  expansion: number;
  message: number;
  start: number;
  end: number;
}
export type Snapshot =
  | { kind: "preset"; value: Preset }
  | { kind: "session"; value: Chat };

export interface AppState {
  ready: boolean;
  fatal: string | null;
  presets: ListItem[];
  preset: Preset | null;
  /** The stored revision `preset` was read or last saved at; its saves name it. Null saves over any. */
  revision: number | null;
  sessions: ListItem[];
  session: Chat | null;
  models: string[];
  model: string;
  input: string;
  /** "Start reply with": the text the reply begins with (RULES 5.14); empty is none. */
  prefill: string;
  /** The kind of generation the preview shows the context of (RULES 5.14); each send button
   * builds its own kind with the same options. */
  generationType: GenerationType;
  preview: Preview | null;
  previewError: string | null;
  /** The second model the preview compares with, or null when it does not compare (RULES 9.4). */
  compareModel: string | null;
  /** The same build for `compareModel`, rebuilt after every edit right after `preview`. */
  comparePreview: Preview | null;
  compareError: string | null;
  /** The Changes view's mode, or null when the preview does not show it; never on with Compare. */
  changesMode: ChangesMode | null;
  /** The preview's view shown. */
  previewTab: PreviewTab;
  /** The newest macro trace (RULES 4.6): builds carry one only while the Macros view is open; the
   * editor's hover reads the last one after it closed. */
  macroTrace: MacroTrace | null;
  /** The expansion the Macros view marked in the message list, if any. */
  macroMark: MacroMark | null;
  /**
   * The preset as it was before its last edit (a run of typing in one field is one edit, as for
   * undo): "Last edit" builds the preview's request with it, against the request as it is now.
   */
  beforeEdit: Preset | null;
  /** The recipe the last successful build used: simple mode edits it. */
  recipeId: string | null;
  selectedStep: number | null;
  save: SaveStatus;
  /** Another program saved the open preset since it was read: the user chooses whose version stays. */
  conflict: { id: string; name: string } | null;
  /** The preset not opened at start because the app closed while previewing it last time. */
  crashNotice: string | null;
  /** The step of the first-run tour shown (0 to 2), or null when the tour is not shown. */
  tour: number | null;
  undo: Snapshot[];
  redo: Snapshot[];
  theme: Theme;
  language: Language;
  /** Simple mode edits the recipe that applies to the model; advanced mode every recipe. */
  editorMode: EditorMode;
  /** The recipe open in the advanced workbench. */
  workbenchRecipe: string | null;
}

export const initial: AppState = {
  ready: false,
  fatal: null,
  presets: [],
  preset: null,
  revision: null,
  sessions: [],
  session: null,
  models: [],
  model: "gpt-4o",
  input: "",
  prefill: "",
  generationType: "normal",
  preview: null,
  previewError: null,
  compareModel: null,
  comparePreview: null,
  compareError: null,
  changesMode: null,
  previewTab: "messages",
  macroTrace: null,
  macroMark: null,
  beforeEdit: null,
  recipeId: null,
  selectedStep: null,
  save: { state: "saved" },
  conflict: null,
  crashNotice: null,
  tour: null,
  undo: [],
  redo: [],
  theme: "light",
  language: "en",
  editorMode: "simple",
  workbenchRecipe: null,
};

/** Read live: importers see every change. */
export let state: AppState = initial;
const listeners = new Set<() => void>();

export function set(patch: Partial<AppState>) {
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

export function resetState() {
  state = initial;
}

/** The settings the UI keeps, by key. */
export const SETTINGS = {
  preset: "ui.preset",
  session: "ui.session",
  model: "ui.model",
  theme: "ui.theme",
  language: "ui.language",
  editorMode: "ui.editorMode",
  /** The connection chosen in the preview for sending. */
  connection: "ui.connection",
  /** The preset whose preview at start has not returned yet: set before, cleared after. */
  opening: "ui.opening",
  /** Set once the first-run tour was finished or skipped: it is not shown at start again. */
  tourSeen: "ui.tourSeen",
};
