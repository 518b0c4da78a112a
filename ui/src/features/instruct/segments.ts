// The prompt string of a text-completion build (RULES 5.12) as the preview shows it: the engine
// gives its spans as UTF-8 byte offsets, JavaScript indexes strings by UTF-16 code units, and
// every conversion between the two lives here, where the tests can hold it to multi-byte text.
import type { RenderedPrompt, SpanSource } from "../../bindings";

/** UTF-8 bytes of the code point `cp` (a lone surrogate counts as the three bytes WTF-8 gives it). */
function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/**
 * The UTF-16 index of each UTF-8 byte offset of `offsets` into `text`. An offset inside a
 * character goes to that character's start (`floor`) or the next one's (`ceil`); one past the
 * end is the text's length.
 */
export function byteOffsetsToIndices(text: string, offsets: readonly number[], round: "floor" | "ceil" = "floor"): number[] {
  const order = offsets.map((_, k) => k).sort((a, b) => offsets[a]! - offsets[b]!);
  const out = new Array<number>(offsets.length);
  let index = 0;
  let byte = 0;
  for (const k of order) {
    const offset = offsets[k]!;
    while (index < text.length) {
      const cp = text.codePointAt(index)!;
      const next = byte + utf8Length(cp);
      if (next > offset) break;
      byte = next;
      index += cp > 0xffff ? 2 : 1;
    }
    // `byte` is the start of the character at `index`, at or before `offset`.
    out[k] = byte < offset && round === "ceil" && index < text.length ? index + (text.codePointAt(index)! > 0xffff ? 2 : 1) : index;
  }
  return out;
}

/** UTF-8 bytes of `text`. */
export function byteLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i)!;
    n += utf8Length(cp);
    if (cp > 0xffff) i++;
  }
  return n;
}

/** A part of the prompt string in UTF-16 indices, with who wrote it. */
export interface Segment {
  start: number;
  end: number;
  text: string;
  source: SpanSource;
}

/**
 * The prompt string cut at its spans. The segments cover the string exactly, in order: a part no
 * span names (which the engine never sends) is the template's, so that what is shown is always
 * the whole string.
 */
export function segmentsOf(prompt: Pick<RenderedPrompt, "prompt" | "spans">): Segment[] {
  const text = prompt.prompt;
  const bounds = byteOffsetsToIndices(
    text,
    prompt.spans.flatMap((s) => [s.start, s.end]),
  );
  const segments: Segment[] = [];
  let at = 0;
  const push = (start: number, end: number, source: SpanSource) => {
    if (end > start) segments.push({ start, end, text: text.slice(start, end), source });
  };
  prompt.spans.forEach((span, k) => {
    const start = Math.max(at, bounds[2 * k]!);
    const end = Math.max(start, bounds[2 * k + 1]!);
    push(at, start, { kind: "template" });
    push(start, end, span.source);
    at = end;
  });
  push(at, text.length, { kind: "template" });
  return segments;
}

/** A part of a segment's text: a special token, or the text between them. */
export interface Piece {
  text: string;
  special: boolean;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The matcher of `tokens`, longest first (so `<|im_start|>` is one token, not a shorter one
 * inside it); null when there are none. */
export function specialTokenPattern(tokens: readonly string[]): RegExp | null {
  const distinct = [...new Set(tokens.filter((t) => t.length > 0))].sort((a, b) => b.length - a.length);
  return distinct.length > 0 ? new RegExp(distinct.map(escapeRegExp).join("|"), "g") : null;
}

/** `text` cut at every occurrence of a special token: the pieces join to `text` exactly. */
export function markSpecial(text: string, pattern: RegExp | null): Piece[] {
  if (!pattern) return text ? [{ text, special: false }] : [];
  const pieces: Piece[] = [];
  let at = 0;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    if (m.index > at) pieces.push({ text: text.slice(at, m.index), special: false });
    pieces.push({ text: m[0], special: true });
    at = m.index + m[0].length;
  }
  if (at < text.length) pieces.push({ text: text.slice(at), special: false });
  return pieces;
}

/** A run of text as shown: plain, a line break, or white space at the end of a line. */
export interface Run {
  text: string;
  kind: "text" | "newline" | "trailing";
}

/**
 * Which UTF-16 positions of `text` are spaces or tabs at the end of a line (before a line break
 * or at the end of the string): invisible, and often what makes two strings differ.
 */
export function trailingWhitespace(text: string): Uint8Array {
  const flags = new Uint8Array(text.length);
  let atLineEnd = true;
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text[i];
    if (c === "\n") atLineEnd = true;
    else if (c === " " || c === "\t") {
      if (atLineEnd) flags[i] = 1;
    } else atLineEnd = false;
  }
  return flags;
}

/** `text`, which starts at `start` of the string `flags` was made for, as runs: each line break
 * its own run, white space at a line's end apart from the rest. The runs join to `text`. */
export function runsOf(text: string, start: number, flags: Uint8Array): Run[] {
  const runs: Run[] = [];
  let from = 0;
  let kind: Run["kind"] | null = null;
  const close = (to: number) => {
    if (kind && to > from) runs.push({ text: text.slice(from, to), kind });
    from = to;
  };
  for (let i = 0; i < text.length; i++) {
    const k: Run["kind"] = text[i] === "\n" ? "newline" : flags[start + i] ? "trailing" : "text";
    if (k !== kind || k === "newline") {
      close(i);
      kind = k;
    }
  }
  close(text.length);
  return runs;
}

/** A string with its control characters written as escapes (`\n`, `\t`, `\u{1b}`), for stop
 * sequences and other short texts whose white space matters. */
export function escapeText(text: string): string {
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\\") out += "\\\\";
    else if (cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp < 0xa0) || cp === 0x200b || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
      out += `\\u{${cp.toString(16)}}`;
    else out += ch;
  }
  return out;
}

/** One side of a difference as shown: some text before it, what differs, some text after. */
export interface DiffSide {
  before: string;
  changed: string;
  after: string;
  /** Text was left out before `before`, inside `changed` (it was long) or after `after`. */
  cutBefore: boolean;
  cutChanged: boolean;
  cutAfter: boolean;
}

export interface Difference {
  ours: DiffSide;
  theirs: DiffSide;
  /** Where the first difference is, counted in characters: line and column from 1. */
  line: number;
  column: number;
}

const isLowSurrogate = (s: string, i: number) => {
  const c = s.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff;
};

/**
 * Where `ours` and `theirs` differ, around the engine's `firstDifference` (a UTF-8 byte offset,
 * which can fall inside a character when two characters share their first bytes): what both
 * share before it (`context` characters of it), what differs on each side (up to the text they
 * share again at their ends, at most `longest` characters shown), and what follows.
 */
export function differenceAt(ours: string, theirs: string, firstDifference: number, context = 80, longest = 400): Difference {
  const at = byteOffsetsToIndices(ours, [firstDifference], "floor")[0]!;
  // The shared end, not reaching into the shared start, and not splitting a surrogate pair.
  let tail = 0;
  while (
    tail < ours.length - at &&
    tail < theirs.length - at &&
    ours.charCodeAt(ours.length - 1 - tail) === theirs.charCodeAt(theirs.length - 1 - tail)
  ) {
    tail++;
  }
  while (tail > 0 && isLowSurrogate(ours, ours.length - tail)) tail--;
  const side = (text: string): DiffSide => {
    const end = text.length - tail;
    let from = Math.max(0, at - context);
    if (from > 0 && isLowSurrogate(text, from)) from--;
    let shown = Math.min(end, at + longest);
    if (shown < end && isLowSurrogate(text, shown)) shown++;
    let until = Math.min(text.length, end + context);
    if (until < text.length && isLowSurrogate(text, until)) until++;
    return {
      before: text.slice(from, at),
      changed: text.slice(at, shown),
      after: text.slice(end, until),
      cutBefore: from > 0,
      cutChanged: shown < end,
      cutAfter: until < text.length,
    };
  };
  const head = ours.slice(0, at);
  const lineStart = head.lastIndexOf("\n") + 1;
  return {
    ours: side(ours),
    theirs: side(theirs),
    line: head.split("\n").length,
    column: [...head.slice(lineStart)].length + 1,
  };
}
