// How the recipe list is shown (issue 39): its filter, "enabled only", the grouping and the
// folded sections. Not part of the preset (no undo, no autosave); kept apart from the app's
// store like a dialog's state, so that it outlives a switch to another tab.
import { useSyncExternalStore } from "react";
import type { Grouping } from "./recipeList";

export interface ListView {
  query: string;
  enabledOnly: boolean;
  grouping: Grouping;
  /** Folded sections by key, per preset id. */
  folded: ReadonlyMap<string, ReadonlySet<string>>;
}

const NONE: ReadonlySet<string> = new Set();
let view: ListView = { query: "", enabledOnly: false, grouping: "sections", folded: new Map() };
const listeners = new Set<() => void>();

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function setListView(change: Partial<ListView>) {
  view = { ...view, ...change };
  listeners.forEach((l) => l());
}

export function useListView(): ListView {
  return useSyncExternalStore(subscribe, () => view);
}

export function foldedOf(v: ListView, presetId: string): ReadonlySet<string> {
  return v.folded.get(presetId) ?? NONE;
}

/** Folds the section `key` of the preset, or unfolds it. */
export function toggleFolded(presetId: string, key: string) {
  const next = new Set(foldedOf(view, presetId));
  if (!next.delete(key)) next.add(key);
  setListView({ folded: new Map(view.folded).set(presetId, next) });
}

/** Folds exactly the sections `keys` of the preset (none: all unfolded). */
export function setFolded(presetId: string, keys: Iterable<string>) {
  setListView({ folded: new Map(view.folded).set(presetId, new Set(keys)) });
}

/** For tests: back to the first view. */
export function resetListView() {
  view = { query: "", enabledOnly: false, grouping: "sections", folded: new Map() };
}
