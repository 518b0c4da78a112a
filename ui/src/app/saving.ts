// Saving what the user edits: the open preset after a quiet time, over the revision it was read
// at, and the open session at once. A failed save keeps the edit, says so and retries; a conflict
// (another program saved the preset) waits for the user. The indicator shows both.
import { api, CommandError, errorMessage } from "./api";
import { translate } from "../i18n";
import { combineStatus, createSaver, type SaveStatus } from "./saver";
import { requestPreview } from "./previewing";
import { set, state } from "./state";

let presetStatus: SaveStatus = { state: "saved" };
let sessionStatus: SaveStatus = { state: "saved" };
const showStatus = () => set({ save: combineStatus(presetStatus, sessionStatus) });
const isConflict = (e: unknown) => e instanceof CommandError && e.code === "conflict";

/** Autosave of the open preset, 400 ms after the last edit, over the revision it was read at. */
function makePresetSaver() {
  return createSaver({
    quiet: 400,
    halts: isConflict,
    onStatus: (s) => {
      presetStatus = s;
      showStatus();
    },
    write: async () => {
      const preset = state.preset;
      if (!preset) return;
      try {
        const revision = await api.savePreset(preset, state.revision);
        if (state.preset?.id === preset.id) set({ revision });
      } catch (e) {
        if (isConflict(e)) set({ conflict: { id: preset.id, name: preset.name } });
        throw e;
      }
      const listed = state.presets.find((p) => p.id === preset.id);
      if (listed && listed.name !== preset.name) {
        set({ presets: await api.listPresets().catch(() => state.presets) });
      }
    },
  });
}

/** The open session, written at once: the preview reads the stored one. */
function makeSessionSaver() {
  return createSaver({
    quiet: 0,
    halts: () => false,
    onStatus: (s) => {
      sessionStatus = s;
      showStatus();
    },
    write: async () => {
      const session = state.session;
      if (!session) return;
      await api.saveSession(session);
      requestPreview();
      const listed = state.sessions.find((s) => s.id === session.id);
      if (listed && listed.name !== (session.title ?? session.id)) {
        set({ sessions: await api.listSessions().catch(() => state.sessions) });
      }
    },
  });
}

/** Read live by store.ts; `resetSaving` makes new ones. */
export let presetSaver = makePresetSaver();
export let sessionSaver = makeSessionSaver();

export function resetSaving() {
  presetSaver.discard();
  sessionSaver.discard();
  presetSaver = makePresetSaver();
  sessionSaver = makeSessionSaver();
}

/** What stays where it is because its last edit is not stored says why. */
function notDone(e: unknown): Error {
  return new Error(translate(state.language, "app.unsavedFirst", { message: errorMessage(e) }));
}

/** Writes the edited preset now if an edit is pending; throws when it cannot be stored. */
export async function flushSave() {
  try {
    await presetSaver.flush();
  } catch (e) {
    throw notDone(e);
  }
}

export async function flushSession() {
  try {
    await sessionSaver.flush();
  } catch (e) {
    throw notDone(e);
  }
}

/** The "Retry now" of a failed save: tries at once instead of waiting. */
export function retrySaves() {
  void presetSaver.flush().catch(() => {});
  void sessionSaver.flush().catch(() => {});
}

/** Before the window closes: writes what is pending; why it could not, or null. */
export async function saveBeforeClose(): Promise<string | null> {
  const results = await Promise.allSettled([presetSaver.flush(), sessionSaver.flush()]);
  const failed = results.find((r) => r.status === "rejected");
  return failed ? errorMessage(failed.reason) : null;
}

/** After a conflict: the edit is saved over what the other program stored. */
export async function keepMine() {
  if (!state.conflict) return;
  set({ conflict: null, revision: null });
  presetSaver.resume();
  // A failure other than a conflict is shown and retried like any.
  await presetSaver.flush().catch(() => {});
}
