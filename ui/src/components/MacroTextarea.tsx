// The content editor with `{{macros}}` highlighted: recipe steps, library templates and lorebook
// entries use it.
import { useRef, type MouseEvent } from "react";
import { useApp } from "../app/store";
import { useT } from "../app/useT";
import { lastValueOf } from "../features/macros/MacrosView";

/** A textarea over a mirror that colours `{{macros}}`; the two scroll together. */
export function MacroTextarea({
  value,
  onChange,
  testId = "editor-content",
  label,
}: {
  value: string;
  onChange: (v: string) => void;
  testId?: string;
  /** The accessible name, when no visible label wraps the field. */
  label?: string;
}) {
  const mirror = useRef<HTMLDivElement>(null);
  const hover = useLastValue(mirror);
  return (
    <div className="macro-area">
      <div className="macro-mirror" ref={mirror} aria-hidden="true">
        {macroParts(value).map((part, i) =>
          part.macro ? (
            <mark key={i} className="macro">
              {part.text}
            </mark>
          ) : (
            <span key={i}>{part.text}</span>
          ),
        )}
        {"\n"}
      </div>
      <textarea
        value={value}
        spellCheck={false}
        data-testid={testId}
        aria-label={label}
        onChange={(e) => onChange(e.target.value)}
        onMouseMove={hover}
        onScroll={(e) => {
          if (mirror.current) mirror.current.scrollTop = e.currentTarget.scrollTop;
        }}
      />
    </div>
  );
}

/**
 * Hovering a highlighted macro shows what it became the last time a build was traced (the Macros
 * view, RULES 4.6) as the field's title; nothing when no build was traced. The field lies over
 * the highlights, so the pointer is matched against the highlights' boxes.
 */
function useLastValue(mirror: React.RefObject<HTMLDivElement | null>) {
  const t = useT();
  const trace = useApp((s) => s.macroTrace);
  return (e: MouseEvent<HTMLTextAreaElement>) => {
    const field = e.currentTarget;
    if (!trace) return field.removeAttribute("title");
    let title: string | null = null;
    for (const mark of mirror.current?.querySelectorAll("mark.macro") ?? []) {
      const inside = [...mark.getClientRects()].some(
        (r) => e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom,
      );
      if (!inside) continue;
      const written = mark.textContent ?? "";
      const value = lastValueOf(trace, written);
      if (value !== null) title = t("macros.lastValue", { written, value: value === "" ? t("macros.empty") : value });
      break;
    }
    if (title === null) field.removeAttribute("title");
    else if (field.title !== title) field.title = title;
  };
}

/** Splits content into text and `{{macro}}` parts, for highlighting. */
export function macroParts(content: string): { text: string; macro: boolean }[] {
  const parts: { text: string; macro: boolean }[] = [];
  const re = /\{\{[^{}]*\}\}/g;
  let last = 0;
  for (const m of content.matchAll(re)) {
    const at = m.index ?? 0;
    if (at > last) parts.push({ text: content.slice(last, at), macro: false });
    parts.push({ text: m[0], macro: true });
    last = at + m[0].length;
  }
  if (last < content.length) parts.push({ text: content.slice(last), macro: false });
  return parts;
}
