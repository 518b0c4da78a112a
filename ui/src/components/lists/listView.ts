// How each long list is shown (issue 39): its filter, "enabled only", the grouping and the folded
// sections. Not part of the preset (no undo, no autosave); kept apart from the app's store like a
// dialog's state, so that it outlives a switch to another tab.
import { useSyncExternalStore } from "react";
import type { Grouping } from "./sectionedList";

/** The lists that have tools: the recipe's steps, the lorebook's entries, the pipeline. */
export type ListId = "steps" | "entries" | "processors";

export interface ListView {
  query: string;
  enabledOnly: boolean;
  grouping: Grouping;
  /** Folded sections by key, per preset id. */
  folded: ReadonlyMap<string, ReadonlySet<string>>;
}

const NONE: ReadonlySet<string> = new Set();
const FIRST: ListView = { query: "", enabledOnly: false, grouping: "sections", folded: new Map() };
let views: Record<ListId, ListView> = { steps: FIRST, entries: FIRST, processors: FIRST };
const listeners = new Set<() => void>();

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function setListView(list: ListId, change: Partial<ListView>) {
  views = { ...views, [list]: { ...views[list], ...change } };
  listeners.forEach((l) => l());
}

export function useListView(list: ListId): ListView {
  return useSyncExternalStore(subscribe, () => views[list]);
}

export function foldedOf(v: ListView, presetId: string): ReadonlySet<string> {
  return v.folded.get(presetId) ?? NONE;
}

/** Folds the section `key` of the preset's list, or unfolds it. */
export function toggleFolded(list: ListId, presetId: string, key: string) {
  const next = new Set(foldedOf(views[list], presetId));
  if (!next.delete(key)) next.add(key);
  setListView(list, { folded: new Map(views[list].folded).set(presetId, next) });
}

/** Folds exactly the sections `keys` of the preset's list (none: all unfolded). */
export function setFolded(list: ListId, presetId: string, keys: Iterable<string>) {
  setListView(list, { folded: new Map(views[list].folded).set(presetId, new Set(keys)) });
}

/** For tests: back to the first view. */
export function resetListView() {
  views = { steps: FIRST, entries: FIRST, processors: FIRST };
}
