// The live preview: one build at a time for the preset as edited, the newest request after it,
// then the compared model's build; the edit-to-paint timings the end-to-end test reads. Also the
// start-up guard against a preset whose preview brings the app down.
import type { AgentPreset, GenerationType, Preview, PresetEdit, PreviewRequest } from "../bindings";
import type { Chat } from "./model";
import { api, CommandError, errorMessage } from "./api";
import { presetChanges } from "./presetChanges";
import { withStoredHistory } from "../features/preview/storedHistory";
import { SETTINGS, set, state, type ChangesMode, type MacroMark, type PreviewTab } from "./state";

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
  draft = null;
  lastChangesMode = "lastTurn";
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

/** "Start reply with" (RULES 5.14): kept for the sends that follow, as the input is not. */
export function setPrefill(prefill: string) {
  set({ prefill });
  requestPreview();
}

/** Shows the context of another kind of generation in the preview (RULES 5.14). */
export function setGenerationType(generationType: GenerationType) {
  if (generationType === state.generationType) return;
  set({ generationType });
  requestPreview();
}

/** Compares the preview with a build for `model` in the Messages view; null stops comparing. The
 * Changes view goes. */
export function setCompareModel(model: string | null) {
  if (model === state.compareModel) return;
  // The previous model's build is not shown as this one's.
  set({
    compareModel: model,
    comparePreview: null,
    compareError: null,
    ...(model !== null ? { changesMode: null, previewTab: "messages" as const } : {}),
  });
  if (model !== null) requestCompare();
}

/** The mode the Changes view had when it was closed: it opens in it again. */
let lastChangesMode: ChangesMode = "lastTurn";

/** Shows the Changes view in `mode` (RULES 9.8); null hides it (the Messages view shows). Comparing stops. */
export function setChangesMode(mode: ChangesMode | null) {
  if (mode !== null) {
    setCompareModel(null);
    lastChangesMode = mode;
    set({ changesMode: mode, previewTab: "changes" });
  } else {
    set({ changesMode: null, ...(state.previewTab === "changes" ? { previewTab: "messages" as const } : {}) });
  }
}

/**
 * Shows one view of the preview (RULES 9.4). The Changes view opens in its last mode and stops
 * comparing; the Macros view asks the next builds for the macro trace, and only it does, so that
 * the live preview pays nothing for the trace otherwise.
 */
export function setPreviewTab(tab: PreviewTab) {
  const was = state.previewTab;
  if (tab === was) return;
  if (tab === "changes") return setChangesMode(lastChangesMode);
  set({ previewTab: tab, changesMode: null, ...(tab !== "messages" ? { macroMark: null } : {}) });
  if (tab === "macros") requestPreview();
}

/** Marks an expansion of the trace in its message: the Messages view shows, opened at it. */
export function markMacro(mark: MacroMark) {
  set({ macroMark: mark, previewTab: "messages", changesMode: null });
  setCompareModel(null);
}

/**
 * What the preview builds: the preset as edited, the stored session, the model, the input, the
 * kind of generation and the prefill. A send builds the same request for its own `kind`, so the
 * preview of that kind is what is sent.
 */
export function previewRequest(kind: GenerationType = state.generationType): PreviewRequest | null {
  const { preset, session, model, input, prefill } = state;
  if (!preset) return null;
  return {
    preset,
    sessionId: session?.id ?? null,
    model,
    input: input || null,
    contextWindow: null,
    reserve: null,
    generationType: kind,
    prefill: prefill || null,
  };
}

/**
 * Builds `request` and puts back the stored history it left out from `session`, the session the
 * request was made with. Null when the user opened another session meanwhile: the answer is not
 * that session's, and the caller builds again. The live preview (`live`) sends the preset as
 * changes to the one it sent last.
 */
async function build(request: PreviewRequest, session: Chat | null, live = false): Promise<Preview | null> {
  let answer: Preview;
  try {
    answer = live ? await previewDraft(request) : await api.preview(request);
  } catch (e) {
    if (switched(request)) return null;
    throw e;
  }
  return switched(request) ? null : withStoredHistory(answer, session);
}

/** The preset the backend keeps for the live preview (`preview_draft`) as of its last answer, and
 * its number; null when it may keep another (none yet, an edit that failed): the next edit sends
 * the whole preset. */
let draft: { preset: AgentPreset; revision: number } | null = null;
let revisions = 0;

async function previewDraft(request: PreviewRequest): Promise<Preview> {
  const { preset, ...rest } = request;
  const base = draft;
  const changes = base ? presetChanges(base.preset, preset) : null;
  draft = null;
  const revision = ++revisions;
  const edit: PresetEdit =
    base && changes ? { kind: "changes", base: base.revision, revision, changes } : { kind: "whole", revision, preset };
  try {
    const answer = await api.previewDraft({ ...rest, edit });
    draft = { preset, revision };
    return answer;
  } catch (e) {
    // The backend keeps another draft (it started again): the whole preset, once.
    if (edit.kind === "changes" && e instanceof CommandError && e.code === "stale_draft") return previewDraft(request);
    throw e;
  }
}

/** Whether the session open now is not the one `request` names. */
const switched = (request: PreviewRequest) => (state.session?.id ?? null) !== request.sessionId;

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
    const session = state.session;
    const asked = previewRequest();
    if (!asked) break;
    const request: PreviewRequest = state.previewTab === "macros" ? { ...asked, traceMacros: true } : asked;
    try {
      const sent = performance.now();
      const preview = await build(request, session, true);
      const received = performance.now();
      if (preview) {
        set({
          preview,
          previewError: null,
          recipeId: preview.result.recipe ?? null,
          ...(preview.macros ? { macroTrace: preview.macros } : {}),
        });
        if (stamp !== null) markPainted(stamp, sent, received, preview.buildMs ?? 0);
      } else {
        // Built for the session left meanwhile: the one open now is built next.
        previewAgain = true;
        editStamp ??= stamp;
      }
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
    const session = state.session;
    const request = previewRequest();
    if (model === null || !request) break;
    try {
      const preview = await build({ ...request, model }, session);
      if (!preview) compareAgain = true;
      else if (state.compareModel === model) set({ comparePreview: preview, compareError: null });
    } catch (e) {
      if (state.compareModel === model) set({ compareError: errorMessage(e) });
    }
  } while (compareAgain);
  compareRunning = false;
}

// ---- timings --------------------------------------------------------------------------------

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
