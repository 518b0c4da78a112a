import { useState } from "react";
import { useT } from "../app/useT";

/** Why `id` cannot name a template or recipe, or null. `current` is the id it replaces. */
export function idProblem(id: string, taken: string[], current?: string): "empty" | "spaces" | "taken" | null {
  if (id.trim() === "") return "empty";
  if (/[\s#]/.test(id)) return "spaces";
  if (id !== current && taken.includes(id)) return "taken";
  return null;
}

/** An id edited as a draft: committed on Enter or blur when it is free and well formed, put
 * back otherwise; what is wrong with it shows while it is typed. */
export function IdField({
  label,
  id,
  taken,
  testId,
  onCommit,
}: {
  label: string;
  id: string;
  taken: string[];
  testId: string;
  onCommit: (id: string) => void;
}) {
  const t = useT();
  const [draft, setDraft] = useState(id);
  const problem = idProblem(draft, taken, id);
  const commit = () => {
    if (problem || draft === id) return setDraft(id);
    onCommit(draft);
  };
  return (
    <>
      <label>
        {label}
        <input
          value={draft}
          data-testid={testId}
          aria-invalid={problem ? true : undefined}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => e.key === "Enter" && commit()}
        />
      </label>
      {problem && (
        <p className="error field-error id-problem" role="alert">
          {t(`library.idProblem.${problem}`)}
        </p>
      )}
    </>
  );
}
