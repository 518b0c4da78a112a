// Where an expansion of the macro trace (RULES 4.6) is in the message its text became, and the
// message list opened at it. The trace gives the macro's byte offset in the text it was read
// from; the message holds that text with the macros before it expanded, perhaps changed again by
// processors, so the place is worked out, checked against the output, and else looked for.
import type { TracedMacro } from "../../bindings";
import { ROW_HEIGHT, WINDOW_FROM } from "../preview/MessageList";

const encoder = new TextEncoder();
const bytes = (s: string) => encoder.encode(s).length;

/** The span (UTF-16 indices) of expansion `index`'s output in `content`, the text of the message
 * it names; null when it cannot be found there. An empty output is a zero-width span. */
export function spanOf(expansions: TracedMacro[], index: number, content: string): { start: number; end: number } | null {
  const m = expansions[index];
  if (!m || m.message == null) return null;
  let guess: number | null = null;
  if (m.depth === 0) {
    // The outputs of the macros before it in the same text moved it by what they added or took.
    let shift = 0;
    for (let i = 0; i < index; i++) {
      const e = expansions[i]!;
      if (e.depth === 0 && e.position === m.position && e.message === m.message && e.offset < m.offset && !e.kept) {
        shift += bytes(e.output) - bytes(e.written);
      }
    }
    guess = charIndex(content, m.offset + shift);
  }
  if (guess !== null && content.startsWith(m.output, guess)) return { start: guess, end: guess + m.output.length };
  if (m.output === "") return guess !== null ? { start: guess, end: guess } : null;
  // Looked for: the occurrence nearest the place worked out.
  let best: number | null = null;
  let from = content.indexOf(m.output);
  for (let n = 0; from >= 0 && n < 1000; n++) {
    if (best === null || Math.abs(from - (guess ?? 0)) < Math.abs(best - (guess ?? 0))) best = from;
    from = content.indexOf(m.output, from + 1);
  }
  return best === null ? null : { start: best, end: best + m.output.length };
}

/** The UTF-16 index of byte `offset` of `text` in UTF-8; null past its end or inside a character. */
function charIndex(text: string, offset: number): number | null {
  let at = 0;
  for (let i = 0; i <= text.length; ) {
    if (at === offset) return i;
    if (at > offset || i === text.length) return null;
    const code = text.codePointAt(i)!;
    at += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    i += code > 0xffff ? 2 : 1;
  }
  return null;
}

/** `text` with `start..end` marked (a caret where the span is empty). */
export function MarkedText({ text, start, end }: { text: string; start: number; end: number }) {
  return (
    <>
      {text.slice(0, start)}
      <mark className={start === end ? "macro-mark empty" : "macro-mark"} data-testid="macro-mark">
        {text.slice(start, end)}
      </mark>
      {text.slice(end)}
    </>
  );
}

/**
 * Scrolls the preview to message `index` of the list inside `holder`, then to the mark in it
 * once it is painted (a long list renders only the rows near the view). Returns the cleanup.
 */
export function revealMark(holder: HTMLElement | null, index: number, count: number): () => void {
  const scroller = holder?.closest(".preview") as HTMLElement | null;
  if (holder && scroller && count > WINDOW_FROM) {
    scroller.scrollTop = holder.offsetTop + index * ROW_HEIGHT - scroller.clientHeight / 3;
  }
  let frames = 0;
  let frame = 0;
  const look = () => {
    const mark = holder?.querySelector('[data-testid="macro-mark"]');
    if (mark) (mark as HTMLElement).scrollIntoView?.({ block: "center" });
    else if (++frames < 20) frame = requestAnimationFrame(look);
  };
  frame = requestAnimationFrame(look);
  return () => cancelAnimationFrame(frame);
}
