// The live preview: one build at a time for the preset as edited, the newest request after it,
// then the compared model's build. Also the start-up guard against a preset whose preview
// brings the app down.
import type { PreviewRequest } from "../bindings";
import { api, errorMessage } from "./api";
import { markPainted, withStoredHistory } from "./previewParts";
import { SETTINGS, set, state } from "./state";

/**
 * The preset `ui.opening` names until its preview returns. Were the app to die in that preview
 * (a preset that makes the backend crash), the next start does not open it again.
 */
let guarded: string | null = null;

/** Names `id` in `ui.opening` until its next preview returns. */
export async function guardOpening(id: string, write: boolean) {
  guarded = id;
  // Without the mark the app still opens; only the guard is lost.
  if (write) await api.setSetting(SETTINGS.opening, id).catch(() => {});
}

export function resetPreviewing() {
  guarded = null;
  previewRunning = false;
  previewAgain = false;
  compareRunning = false;
  compareAgain = false;
  editStamp = null;
}

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
    if (guarded === request.preset.id) {
      // It came back: the next start may open it.
      guarded = null;
      void api.setSetting(SETTINGS.opening, "").catch(() => {});
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
