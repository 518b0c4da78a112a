// Sending: the connections, the one chosen, and the reply arriving. Kept apart from the app's
// store like a dialog's state (no undo, no autosave); the session a send stores goes into the
// app's store through `releaseSessionEdits` (or `showStoredSession`), which rebuild the preview.
import { useSyncExternalStore } from "react";
import { Channel } from "@tauri-apps/api/core";
import type { ChatMessage, ConnectionView, SendEvent, Sent } from "../../bindings";
import { api, CommandError, errorMessage } from "../../app/api";
import {
  flushSession,
  holdSessionEdits,
  previewRequest,
  releaseSessionEdits,
  setInput,
  showStoredSession,
} from "../../app/store";
import { SETTINGS, state as appState } from "../../app/state";

/**
 * What a send button asks for (RULES 5.14): the next reply, a new one in place of the last
 * (Regenerate), more of the last reply, or the user's next message, which goes into the message
 * box.
 */
export type SendKind = "normal" | "regenerate" | "continue" | "impersonate";

export interface SendState {
  connections: ConnectionView[];
  /** Why the list could not be read. */
  listError: string | null;
  /** The connection the preview sends through, by name; null when none is chosen. */
  connection: string | null;
  sending: boolean;
  /** What the send under way asks for; null when nothing is being sent. */
  sendingKind: SendKind | null;
  /** The reply's text as it arrives, its prefill (or a continuation's joiner) first; null when
   * nothing is arriving. */
  streamed: string | null;
  error: string | null;
  /** The error is of a reply that arrived and was kept in a file, not stored in the session. */
  notStored: boolean;
  /** The connections dialog is open. */
  dialogOpen: boolean;
}

const initial: SendState = {
  connections: [],
  listError: null,
  connection: null,
  sending: false,
  sendingKind: null,
  streamed: null,
  error: null,
  notStored: false,
  dialogOpen: false,
};

let state: SendState = initial;
const listeners = new Set<() => void>();

function update(patch: Partial<SendState>) {
  state = { ...state, ...patch };
  listeners.forEach((l) => l());
}

export function getSendState(): SendState {
  return state;
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function useSend<T>(select: (s: SendState) => T): T {
  return useSyncExternalStore(subscribe, () => select(state));
}

/** For tests: back to nothing loaded. */
export function resetSending() {
  state = initial;
  loaded = null;
  flipping = false;
}

let loaded: Promise<void> | null = null;

/** Reads the connections and the remembered choice, once. */
export function loadConnections(): Promise<void> {
  loaded ??= (async () => {
    const remembered = await api.getSetting(SETTINGS.connection).catch(() => null);
    await refreshConnections();
    const known = state.connections.some((c) => c.connection.name === remembered);
    update({ connection: known ? remembered : (state.connections[0]?.connection.name ?? null) });
  })();
  return loaded;
}

export async function refreshConnections() {
  try {
    const connections = await api.listConnections();
    const still = connections.some((c) => c.connection.name === state.connection);
    update({
      connections,
      listError: null,
      connection: still ? state.connection : (connections[0]?.connection.name ?? null),
    });
  } catch (e) {
    update({ listError: errorMessage(e) });
  }
}

export function chooseConnection(name: string | null) {
  update({ connection: name, error: null });
  void api.setSetting(SETTINGS.connection, name ?? "").catch(() => {});
}

export function openConnections(open: boolean) {
  update({ dialogOpen: open });
}

/**
 * Sends the preview's build, made for `kind`, through the chosen connection: the request the
 * preview shows for that kind (RULES 5.14). The reply streams into `streamed`; the stored session
 * then replaces the open one, and an impersonation's text goes into the message box. A failure
 * is shown and changes nothing.
 */
export async function send(kind: SendKind) {
  const connection = state.connection;
  if (state.sending || !connection) return;
  update({ sending: true, sendingKind: kind, streamed: "", error: null, notStored: false });
  const before = appState.session?.messages.length ?? 0;
  const regenerate = kind === "regenerate";
  let sent: Sent | null = null;
  try {
    // The backend builds over the stored session: an edit still being written goes first.
    await flushSession();
    const preview = previewRequest(regenerate ? "normal" : kind);
    if (!preview) throw new Error("no preset is open");
    // Edits made while the reply arrives are written after it, over the session it is stored in.
    if (preview.sessionId) holdSessionEdits(preview.sessionId);
    const events = new Channel<SendEvent>();
    events.onmessage = (event) => {
      if (!state.sending) return;
      if (event.kind === "started") update({ streamed: event.start });
      else update({ streamed: (state.streamed ?? "") + event.text });
    };
    sent = await api.sendMessage({ preview, connection, regenerate }, events);
    update({ sending: false, sendingKind: null, streamed: null });
  } catch (e) {
    // A reply that arrived but could not be stored is not "not sent": it is said apart.
    const notStored = e instanceof CommandError && e.code === "reply_not_stored";
    update({ sending: false, sendingKind: null, streamed: null, error: errorMessage(e), notStored });
  }
  // The input went into the session only when a turn was added (a stop before any text adds
  // none; a continuation and an impersonation take no input).
  const added = (sent?.session.messages?.length ?? 0) > before;
  await releaseSessionEdits(sent?.session ?? null, kind === "normal" && added);
  // The user's next message, written by the model, is theirs to edit and send.
  if (kind === "impersonate" && sent?.text) setInput(sent.text);
}

export function stop() {
  void api.stopSending().catch((e) => update({ error: errorMessage(e) }));
}

/**
 * Where a message's shown reply stands among all its replies in order (0-based), as stored:
 * `swipeAt`, or last when it has none.
 */
export function swipePosition(message: ChatMessage): number {
  const others = message.swipes?.length ?? 0;
  return Math.min(message.swipeAt ?? others, others);
}

let flipping = false;

/** Shows the reply one step before (-1) or after (+1) the one message `at` shows. */
export async function flipSwipe(at: number, step: -1 | 1) {
  const session = appState.session;
  const message = session?.messages[at];
  // One flip at a time: the next one starts from where this one ends.
  if (flipping || !session || !message?.swipes?.length) return;
  const count = message.swipes.length + 1;
  const q = swipePosition(message) + step;
  if (q < 0 || q >= count) return;
  flipping = true;
  try {
    const stored = await api.chooseSwipe(session.id, at, q);
    update({ error: null });
    showStoredSession(stored, false);
  } catch (e) {
    update({ error: errorMessage(e) });
  } finally {
    flipping = false;
  }
}
