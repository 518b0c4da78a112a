import { useState } from "react";

/** A list of short strings edited as tags: Enter or a comma adds, × or Backspace removes. */
export function TagInput({
  values,
  onChange,
  label,
  placeholder,
  testId,
}: {
  values: string[];
  onChange: (values: string[]) => void;
  label: string;
  placeholder?: string;
  testId?: string;
}) {
  const [draft, setDraft] = useState("");
  const add = () => {
    const tag = draft.trim();
    setDraft("");
    if (tag && !values.includes(tag)) onChange([...values, tag]);
  };
  return (
    <div className="tag-input" data-testid={testId}>
      {values.map((v) => (
        <span key={v} className="tag tag-key">
          {v}
          <button
            type="button"
            className="tag-remove"
            aria-label={`${label}: ${v} ×`}
            onClick={() => onChange(values.filter((x) => x !== v))}
          >
            ×
          </button>
        </span>
      ))}
      <input
        value={draft}
        aria-label={label}
        placeholder={placeholder}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={add}
        onKeyDown={(e) => {
          if (e.key === "Enter" || e.key === ",") {
            e.preventDefault();
            add();
          } else if (e.key === "Backspace" && draft === "" && values.length > 0) {
            onChange(values.slice(0, -1));
          }
        }}
      />
    </div>
  );
}
