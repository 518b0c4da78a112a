// The state of one dialog (the import, the export), kept apart from the app's store: it is what
// one dialog shows, not the documents, so it has no undo and no autosave. Null is closed.
import { useSyncExternalStore } from "react";

export interface DialogState<T> {
  /** Read live: an action that awaited sees what the dialog shows now. */
  get(): T | null;
  set(next: T | null): void;
  subscribe(listener: () => void): () => void;
}

/** Every dialog made, so that the tests' reset closes them all. */
const dialogs: DialogState<unknown>[] = [];

export function dialogState<T>(): DialogState<T> {
  let state: T | null = null;
  const listeners = new Set<() => void>();
  const dialog: DialogState<T> = {
    get: () => state,
    set(next) {
      state = next;
      listeners.forEach((l) => l());
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
  dialogs.push(dialog as DialogState<unknown>);
  return dialog;
}

/** For components: what `dialog` shows, rendered again on every change. */
export function useDialog<T>(dialog: DialogState<T>): T | null {
  return useSyncExternalStore(dialog.subscribe, dialog.get);
}

/** For tests: every dialog closed. */
export function closeDialogs() {
  dialogs.forEach((d) => d.set(null));
}
