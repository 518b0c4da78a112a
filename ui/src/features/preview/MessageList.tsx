import { useEffect, useLayoutEffect, useRef, useState, type ReactNode } from "react";

/** Every collapsed row of the preview is this tall (CSS `.built-message` plus the gap). */
export const ROW_HEIGHT = 64;
/** Up to this many rows are all in the page; a longer context renders the rows in view. */
export const WINDOW_FROM = 120;
const OVERSCAN = 12;

/**
 * The preview's message list. A long context (a 1,000-message session) keeps only the rows near
 * the view in the page, so that a keystroke re-lays out a screenful, not the whole history.
 * Rows are of one height except the open one, which is measured.
 */
export function MessageList({
  count,
  open,
  renderRow,
}: {
  count: number;
  open: number | null;
  renderRow: (index: number, style?: React.CSSProperties, measure?: (el: HTMLElement | null) => void) => ReactNode;
}) {
  const list = useRef<HTMLOListElement>(null);
  const [view, setView] = useState({ top: 0, height: 800 });
  const [openHeight, setOpenHeight] = useState(ROW_HEIGHT);
  const windowed = count > WINDOW_FROM;

  useEffect(() => {
    if (!windowed) return;
    const el = list.current;
    const scroller = el?.closest(".preview") as HTMLElement | null;
    if (!el || !scroller) return;
    const update = () =>
      setView({ top: scroller.scrollTop - el.offsetTop, height: scroller.clientHeight });
    update();
    scroller.addEventListener("scroll", update, { passive: true });
    window.addEventListener("resize", update);
    return () => {
      scroller.removeEventListener("scroll", update);
      window.removeEventListener("resize", update);
    };
  }, [windowed]);

  const measured = useRef<HTMLElement | null>(null);
  useLayoutEffect(() => {
    if (windowed && open !== null && measured.current) {
      setOpenHeight(Math.max(ROW_HEIGHT, measured.current.offsetHeight + 4));
    }
  }, [windowed, open, count, view]);

  if (!windowed) {
    return (
      <ol className="built" data-testid="preview-messages" data-count={count}>
        {Array.from({ length: count }, (_, i) => renderRow(i))}
      </ol>
    );
  }

  const extra = open !== null ? openHeight - ROW_HEIGHT : 0;
  const topOf = (i: number) => i * ROW_HEIGHT + (open !== null && i > open ? extra : 0);
  const first = Math.max(0, Math.floor(view.top / ROW_HEIGHT) - OVERSCAN - (extra > 0 ? Math.ceil(extra / ROW_HEIGHT) : 0));
  const last = Math.min(count, Math.ceil((view.top + view.height) / ROW_HEIGHT) + OVERSCAN);
  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) {
    rows.push(
      renderRow(
        i,
        { position: "absolute", top: topOf(i), left: 0, right: 0 },
        i === open ? (el) => (measured.current = el) : undefined,
      ),
    );
  }
  if (open !== null && (open < first || open >= last)) measured.current = null;
  return (
    <ol
      ref={list}
      className="built windowed"
      data-testid="preview-messages"
      data-count={count}
      style={{ height: count * ROW_HEIGHT + extra }}
    >
      {rows}
    </ol>
  );
}
