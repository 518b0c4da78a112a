// Summaries made in the background after a reply (RULES 5.15, 9.9): the shell says when one
// starts and how it ended; the session's summary follows the one made, and the summary editor
// shows "Summarizing…" meanwhile, or the error with its code.
import { useSyncExternalStore } from "react";
import type { SummaryUpdate } from "../../bindings";
import { events } from "../../bindings";
import { showSummary } from "../../app/store";

export interface AutoSummaryState {
  running: boolean;
  /** Why the last one failed, with its code; null after one that worked. */
  error: string | null;
  /** Counts the summaries made: the editor reads the list again when it changes. */
  made: number;
}

const idle: AutoSummaryState = { running: false, error: null, made: 0 };
let bySession: Record<string, AutoSummaryState> = {};
const listeners = new Set<() => void>();

/** What `update` makes of a session's state. */
export function nextAutoSummary(state: AutoSummaryState, update: SummaryUpdate): AutoSummaryState {
  if (update.running) return { ...state, running: true, error: null };
  if (update.error) return { ...state, running: false, error: `${update.error.message} (${update.error.code})` };
  return { running: false, error: null, made: state.made + 1 };
}

/** Hears one update: the session's state, and its summary when one was made. */
export function hearSummaryUpdate(update: SummaryUpdate) {
  bySession = { ...bySession, [update.sessionId]: nextAutoSummary(autoSummaryOf(update.sessionId), update) };
  if (update.summary) showSummary(update.sessionId, update.summary.text);
  listeners.forEach((l) => l());
}

export function autoSummaryOf(sessionId: string): AutoSummaryState {
  return bySession[sessionId] ?? idle;
}

export function useAutoSummary(sessionId: string): AutoSummaryState {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    () => autoSummaryOf(sessionId),
  );
}

/** Subscribes to the shell's updates; the cleanup ends it. */
export function listenToSummaryUpdates() {
  return events.summaryUpdate.listen((e) => hearSummaryUpdate(e.payload));
}

export function resetAutoSummaryForTests() {
  bySession = {};
}
