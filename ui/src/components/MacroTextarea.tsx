// The content editor with `{{macros}}` highlighted: recipe steps, library templates and lorebook
// entries use it.
import { useRef } from "react";

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
        onScroll={(e) => {
          if (mirror.current) mirror.current.scrollTop = e.currentTarget.scrollTop;
        }}
      />
    </div>
  );
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
