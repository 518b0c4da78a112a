// The check against a model's own Jinja chat template (RULES 5.12): what the user pasted and what
// the last check found. Kept apart from the app's store like a dialog's state (no undo, no
// autosave): the pasted template belongs to this window, not to the preset.
import { useSyncExternalStore } from "react";
import type { JinjaCheck } from "../../bindings";
import { api, errorMessage } from "../../app/api";
import { previewRequest } from "../../app/store";

export interface CheckState {
  chatTemplate: string;
  bos: string;
  eos: string;
  /** The panel is open. */
  open: boolean;
  running: boolean;
  /** What the last check found; null before the first and after an error. */
  result: JinjaCheck | null;
  /** Why the last check could not be made, in the engine's words. */
  error: string | null;
}

const initial: CheckState = {
  chatTemplate: "",
  bos: "",
  eos: "",
  open: false,
  running: false,
  result: null,
  error: null,
};

let state: CheckState = initial;
const listeners = new Set<() => void>();

function update(patch: Partial<CheckState>) {
  state = { ...state, ...patch };
  listeners.forEach((l) => l());
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function useCheck<T>(select: (s: CheckState) => T): T {
  return useSyncExternalStore(subscribe, () => select(state));
}

export function getCheckState(): CheckState {
  return state;
}

/** For tests: nothing pasted, nothing checked. */
export function resetChecking() {
  state = initial;
  again = false;
}

/** What the user typed into the panel; the last finding stays until the next check. */
export function setCheckInput(patch: Partial<Pick<CheckState, "chatTemplate" | "bos" | "eos" | "open">>) {
  update(patch);
}

let again = false;

/**
 * Checks the current build (the preset as edited, the session, the model) against the pasted
 * template. One check at a time: asked for while one runs, one more follows with what is
 * current then.
 */
export async function runCheck() {
  if (state.running) {
    again = true;
    return;
  }
  update({ running: true });
  try {
    do {
      again = false;
      const request = previewRequest();
      if (!request || !state.chatTemplate.trim()) {
        update({ result: null, error: null });
        break;
      }
      try {
        const result = await api.checkChatTemplate(request, state.chatTemplate, state.bos, state.eos);
        update({ result, error: null });
      } catch (e) {
        update({ result: null, error: errorMessage(e) });
      }
    } while (again);
  } finally {
    update({ running: false });
  }
}

/** After a rebuild: a check whose finding is shown is made again, so that the finding is this
 * build's. */
export function recheckAfterBuild() {
  if (state.open && (state.result !== null || state.error !== null)) void runCheck();
}
