// What changed between two contexts (RULES 9.8), as the Changes view asks and shows it: what the
// preview's build is compared with in each mode, the first difference's cause in words, and a
// changed message's pieces made short enough to show. Pure functions, tested alone.
import type { Against, ChangeOp, PreviewRequest, TextChange } from "../../bindings";
import type { ChangesMode } from "../../app/state";
import type { Chat, Preset } from "../../app/model";
import type { MessageKey } from "../../i18n";
import { swipePosition } from "../send/sending";

export const MODES: readonly ChangesMode[] = ["lastTurn", "lastEdit", "pick"];

/** What "Pick two" compares the preview with: another session, another model, another swipe. */
export type Pick =
  | { kind: "session"; sessionId: string | null }
  | { kind: "model"; model: string }
  | { kind: "swipe"; position: number | null };

/** What to compare with, or why there is nothing to compare with yet. */
export type Asked = { ok: true; against: Against } | { ok: false; missing: "noSession" | "noEdit" | "noPick" };

/**
 * The left side of the comparison for `mode`; the right side is always `request`, the preview's.
 * "Last edit" builds the same request with the preset as it was before its last edit.
 */
export function againstFor(mode: ChangesMode, pick: Pick, request: PreviewRequest, beforeEdit: Preset | null): Asked {
  switch (mode) {
    case "lastTurn":
      return request.sessionId === null
        ? { ok: false, missing: "noSession" }
        : { ok: true, against: { kind: "previousTurn" } };
    case "lastEdit":
      return beforeEdit === null
        ? { ok: false, missing: "noEdit" }
        : { ok: true, against: { kind: "request", request: { ...request, preset: beforeEdit } } };
    case "pick":
      if (pick.kind === "session" && pick.sessionId !== null) {
        return { ok: true, against: { kind: "request", request: { ...request, sessionId: pick.sessionId } } };
      }
      if (pick.kind === "model" && pick.model.trim() !== "") {
        return { ok: true, against: { kind: "request", request: { ...request, model: pick.model.trim() } } };
      }
      if (pick.kind === "swipe" && pick.position !== null) {
        return { ok: true, against: { kind: "swipe", position: pick.position } };
      }
      return { ok: false, missing: "noPick" };
  }
}

/**
 * The newest reply's swipes: where the shown one stands among all its replies (0 the oldest) and
 * how many there are; null when the session's newest reply has no other.
 */
export function newestSwipes(session: Chat | null): { shown: number; count: number } | null {
  const messages = session?.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "assistant") continue;
    const others = m.swipes?.length ?? 0;
    return others > 0 ? { shown: swipePosition(m), count: others + 1 } : null;
  }
  return null;
}

/** Whether `session` has a user message, so a turn before its newest one. */
export function hasEarlierTurn(session: Chat | null): boolean {
  return session?.messages.some((m) => m.role === "user") ?? false;
}

/** The first difference's cause (`macro:random`, `lorebook:dragons`, `limiter`…) as a sentence. */
export function causeText(cause: string): { key: MessageKey; vars: Record<string, string> } {
  const at = cause.indexOf(":");
  const kind = at < 0 ? cause : cause.slice(0, at);
  const name = at < 0 ? "" : cause.slice(at + 1);
  switch (kind) {
    case "macro":
      return { key: "changes.cause.macro", vars: { name } };
    case "lorebook":
      return { key: "changes.cause.lorebook", vars: { name } };
    case "depth-injection":
      return { key: "changes.cause.depthInjection", vars: { name } };
    case "limiter":
      return { key: "changes.cause.limiter", vars: {} };
    case "history":
      return { key: "changes.cause.history", vars: {} };
    case "template":
      return { key: "changes.cause.template", vars: {} };
    default:
      return { key: "changes.cause.other", vars: {} };
  }
}

/** A piece of a changed message as the view shows it: a long one keeps its head and its tail. */
export interface ShownPiece {
  op: ChangeOp;
  head: string;
  /** Characters left out after the head; 0 when the piece is whole. */
  hidden: number;
  tail: string;
}

/** Characters an equal piece keeps on each side of what it leaves out. */
export const KEEP_EQUAL = 80;
/** Characters a deleted or inserted piece keeps on each side. */
export const KEEP_CHANGED = 600;

/**
 * `changes` made short: an equal piece longer than it needs keeps `keep` characters next to each
 * change around it (the first piece only its end, the last only its start), a deleted or inserted
 * one `keepChanged` at each end, so a huge message is a few lines around what changed.
 */
export function shortenPieces(changes: readonly TextChange[], keep = KEEP_EQUAL, keepChanged = KEEP_CHANGED): ShownPiece[] {
  return changes.map((c, i) => {
    const chars = Array.from(c.text);
    if (c.op !== "equal") return cut(c.op, chars, keepChanged, keepChanged);
    const first = i === 0 && changes.length > 1;
    const last = i === changes.length - 1 && changes.length > 1;
    return cut(c.op, chars, first ? 0 : keep, last ? 0 : keep);
  });
}

function cut(op: ChangeOp, chars: string[], head: number, tail: number): ShownPiece {
  // Leaving out a few characters saves nothing: then the piece is whole.
  if (chars.length <= head + tail + 20) return { op, head: chars.join(""), hidden: 0, tail: "" };
  return {
    op,
    head: chars.slice(0, head).join(""),
    hidden: chars.length - head - tail,
    tail: tail > 0 ? chars.slice(-tail).join("") : "",
  };
}

/** One side's pieces of a changed message: the left keeps what was deleted, the right what came in. */
export function sidePieces(changes: readonly TextChange[], side: "left" | "right"): TextChange[] {
  const drop: ChangeOp = side === "left" ? "insert" : "delete";
  return changes.filter((c) => c.op !== drop);
}
