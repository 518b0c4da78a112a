// World info imported into a preset that has a lorebook already: say so, and let the user replace
// it or merge into it.
import { useEffect, useState } from "react";
import type { LorebookChoice } from "../../bindings";
import { api } from "../../app/api";
import { useApp } from "../../app/store";
import { useT } from "../../app/useT";

const CHOICES = [
  { value: "replace", label: "import.lorebookReplace", hint: "import.lorebookReplaceHint" },
  { value: "merge", label: "import.lorebookMerge", hint: "import.lorebookMergeHint" },
] as const;

/**
 * How many entries the lorebook of preset `id` has: the open preset's as edited (it is saved
 * before the import), any other's as stored. Null while it is read, or without a preset.
 */
export function useLorebookSize(id: string | null): number | null {
  const open = useApp((s) => (s.preset !== null && s.preset.id === id ? (s.preset.lorebook?.entries?.length ?? 0) : null));
  const [stored, setStored] = useState<{ id: string; count: number } | null>(null);
  const read = id !== null && open === null;
  useEffect(() => {
    if (!read || id === null) return;
    let live = true;
    api.getPreset(id).then(
      (opened) => live && setStored({ id, count: opened.preset.lorebook?.entries?.length ?? 0 }),
      // Unreadable: the import itself will say what is wrong with it.
      () => live && setStored({ id, count: 0 }),
    );
    return () => {
      live = false;
    };
  }, [id, read]);
  if (id === null) return null;
  return open ?? (stored?.id === id ? stored.count : null);
}

export function LorebookChoiceField({
  presetName,
  entries,
  choice,
  disabled,
  onChange,
}: {
  presetName: string;
  entries: number;
  choice: LorebookChoice;
  disabled: boolean;
  onChange: (choice: LorebookChoice) => void;
}) {
  const t = useT();
  return (
    <div className="lorebook-choice">
      <p className="warn-text" data-testid="import-lorebook-exists">
        {entries === 1
          ? t("import.lorebookExistsOne", { name: presetName })
          : t("import.lorebookExists", { name: presetName, count: entries })}
      </p>
      <fieldset className="export-formats">
        <legend>{t("import.lorebookChoice")}</legend>
        {CHOICES.map((c) => (
          <label key={c.value} className="export-format">
            <input
              type="radio"
              name="import-lorebook"
              value={c.value}
              id={`import-lorebook-${c.value}`}
              data-testid={`import-lorebook-${c.value}`}
              checked={choice === c.value}
              disabled={disabled}
              onChange={() => onChange(c.value)}
            />
            <span className="export-format-text">
              <span>{t(c.label)}</span>
              <span className="muted">{t(c.hint)}</span>
            </span>
          </label>
        ))}
      </fieldset>
    </div>
  );
}
