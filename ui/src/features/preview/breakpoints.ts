// Where the preview marks an Anthropic body's cache breakpoints (RULES 5.13), and whether what
// each one caches is the same as in the session's previous turn.
import type { BreakpointCheck, CacheBreakpoint } from "../../bindings";

export interface BreakpointMark {
  /** The depth it was asked at; null for the one after the system part. */
  depth: number | null;
  /** Whether every message up to it is as in the previous turn; null when that is not known. */
  stable: boolean | null;
}

/** The marks by the index of the message each one follows. `checks` are the previous turn's
 * comparison of the same breakpoints, when there is one. */
export function breakpointMarks(
  breakpoints: readonly CacheBreakpoint[] | undefined,
  checks: readonly BreakpointCheck[] | undefined,
): Map<number, BreakpointMark> {
  const marks = new Map<number, BreakpointMark>();
  for (const b of breakpoints ?? []) {
    const depth = b.depth ?? null;
    const check = checks?.find((c) => c.messageIndex === b.messageIndex && (c.depth ?? null) === depth);
    marks.set(b.messageIndex, { depth, stable: check ? check.stable : null });
  }
  return marks;
}
