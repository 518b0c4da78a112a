import { useRef, useState } from "react";

/** A list of short strings edited as tags: Enter or a comma adds, × or Backspace removes. A
 * `validate` that answers with a message refuses the tag and shows why; `invalid` marks tags
 * already there that are wrong. */
export function TagInput({
  values,
  onChange,
  label,
  placeholder,
  testId,
  validate,
  invalid,
}: {
  values: string[];
  onChange: (values: string[]) => void;
  label: string;
  placeholder?: string;
  testId?: string;
  validate?: (tag: string) => Promise<string | null> | string | null;
  invalid?: Record<string, string>;
}) {
  const [draft, setDraft] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  // While a tag is being validated, Enter then blur must not add it twice.
  const checking = useRef<string | null>(null);
  const add = async () => {
    const tag = draft.trim();
    if (!tag || values.includes(tag)) return setDraft("");
    if (checking.current === tag) return;
    checking.current = tag;
    const refused = validate ? await validate(tag) : null;
    checking.current = null;
    if (refused) return setProblem(refused);
    setProblem(null);
    // Only what was validated leaves the field; anything typed meanwhile stays.
    setDraft((d) => (d.trim() === tag ? "" : d));
    onChange([...values, tag]);
  };
  return (
    <div className="tag-input-wrap">
      <div className="tag-input" data-testid={testId}>
        {values.map((v) => (
          <span
            key={v}
            className={invalid?.[v] ? "tag tag-key tag-invalid" : "tag tag-key"}
            title={invalid?.[v]}
          >
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
          aria-invalid={problem ? true : undefined}
          placeholder={placeholder}
          onChange={(e) => {
            setDraft(e.target.value);
            setProblem(null);
          }}
          onBlur={() => void add()}
          onKeyDown={(e) => {
            if (e.key === "Enter" || e.key === ",") {
              e.preventDefault();
              void add();
            } else if (e.key === "Backspace" && draft === "" && values.length > 0) {
              onChange(values.slice(0, -1));
            }
          }}
        />
      </div>
      {problem && (
        <p className="error field-error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
