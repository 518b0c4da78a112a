import { useState } from "react";
import type { LorebookEntry, SelectiveLogic } from "../../bindings";
import { RoleSelect } from "../../app/RoleSelect";
import { editPreset, editPresetFor, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { MacroTextarea } from "../../components/MacroTextarea";
import { StrategyEditor } from "../../components/StrategyEditor";
import { TagInput } from "../../components/TagInput";
import { WhatFires } from "./WhatFires";
import { EntryList } from "./EntryList";
import {
  DEFAULTS,
  addEntry,
  addSectionEntry,
  entriesOf,
  removeEntry,
  setBookSetting,
  setEntryStrategy,
  updateEntry,
} from "./lorebook";

const LOGIC: SelectiveLogic[] = ["andAny", "andAll", "notAny", "notAll"];

/** The preset's lorebook (RULES 6, 9.6): its settings, its entries, and what fires for this
 * session. */
export function LorebookEditor() {
  const t = useT();
  const preset = useApp((s) => s.preset);
  const fired = useApp((s) => s.preview?.result.lorebook ?? null);
  const [selected, setSelected] = useState<number | null>(null);
  if (!preset) return null;
  const book = preset.lorebook;
  const entries = entriesOf(preset);
  const activeIds = new Set(fired?.activated.map((a) => a.entryId) ?? []);
  const cutIds = new Set(fired?.cut.map((c) => c.entryId) ?? []);
  const entry = selected !== null ? entries[selected] : undefined;
  const num = (v: string, min: number, max: number) => Math.min(max, Math.max(min, Math.round(Number(v) || 0)));

  return (
    <div className="lorebook" data-testid="lorebook">
      <header className="editor-head">
        <div>
          <h2>{t("lore.title")}</h2>
          <p className="muted">{t("lore.intro")}</p>
        </div>
        <div className="editor-head-actions">
          <button
            type="button"
            data-testid="add-entry-section"
            title={t("lore.addSectionHint")}
            onClick={() => {
              const added = editPresetFor((p) => addSectionEntry(p, t("lore.newSection")));
              if (added) setSelected(added.index);
            }}
          >
            + {t("lore.addSection")}
          </button>
          <button
            type="button"
            className="primary"
            data-testid="add-entry"
            onClick={() => {
              const added = editPresetFor((p) => addEntry(p, t("lore.newEntry")));
              if (added) setSelected(added.index);
            }}
          >
            + {t("lore.addEntry")}
          </button>
        </div>
      </header>
      <fieldset className="lore-settings">
        <legend>{t("lore.settings")}</legend>
        <div className="field-row">
          <label>
            {t("lore.scanDepth")}
            <input
              type="number"
              min={0}
              max={1000}
              value={book?.scanDepth ?? DEFAULTS.scanDepth}
              onChange={(e) => editPreset((p) => setBookSetting(p, "scanDepth", num(e.target.value, 0, 1000)))}
            />
          </label>
          <label>
            {t("lore.budget")}
            <input
              type="number"
              min={0}
              max={100}
              value={book?.tokenBudget ?? DEFAULTS.tokenBudget}
              onChange={(e) => editPreset((p) => setBookSetting(p, "tokenBudget", num(e.target.value, 0, 100)))}
            />
          </label>
          {(["recursive", "caseSensitive", "matchWholeWords"] as const).map((key) => (
            <label key={key} className="check">
              <input
                type="checkbox"
                checked={book?.[key] ?? DEFAULTS[key]}
                onChange={(e) => editPreset((p) => setBookSetting(p, key, e.target.checked))}
              />
              {t(`lore.${key}`)}
            </label>
          ))}
        </div>
      </fieldset>
      <WhatFires />
      <EntryList preset={preset} selected={selected} onSelect={setSelected} activeIds={activeIds} cutIds={cutIds} />
      {entries.length === 0 && <p className="muted">{t("lore.empty")}</p>}
      {entry && selected !== null && (
        <EntryEditor
          key={entry.id}
          entry={entry}
          index={selected}
          onRemove={() => {
            setSelected(null);
            editPreset((p) => removeEntry(p, selected));
          }}
        />
      )}
    </div>
  );
}

function EntryEditor({ entry, index, onRemove }: { entry: LorebookEntry; index: number; onRemove: () => void }) {
  const t = useT();
  const set = (change: Partial<LorebookEntry>, coalesce?: string) =>
    editPreset((p) => updateEntry(p, index, change), coalesce);
  return (
    <div className="message-editor" data-testid="entry-editor">
      <div className="field-row">
        <label>
          {t("editor.name")}
          <input value={entry.name ?? ""} onChange={(e) => set({ name: e.target.value }, `entry-name:${entry.id}`)} />
        </label>
        <label>
          {t("editor.role")}
          <RoleSelect value={entry.role ?? "system"} onChange={(role) => set({ role })} />
        </label>
        <label>
          {t("lore.order")}
          <input
            type="number"
            value={entry.order ?? 100}
            onChange={(e) => set({ order: Math.round(Number(e.target.value) || 0) })}
          />
        </label>
        <label>
          {t("lore.probability")}
          <input
            type="number"
            min={0}
            max={100}
            placeholder="100"
            value={entry.probability ?? ""}
            onChange={(e) =>
              set({
                probability:
                  e.target.value === "" ? null : Math.min(100, Math.max(0, Math.round(Number(e.target.value)))),
              })
            }
          />
        </label>
        <button type="button" className="danger" onClick={onRemove}>
          {t("lore.remove")}
        </button>
      </div>
      <label className="check">
        <input type="checkbox" checked={!!entry.constant} onChange={(e) => set({ constant: e.target.checked })} />
        {t("lore.constantLong")}
      </label>
      <div className="field-col">
        <span className="field-label">{t("lore.keys")}</span>
        <TagInput
          label={t("lore.keys")}
          placeholder={t("lore.keyHint")}
          testId="entry-keys"
          values={entry.keys ?? []}
          onChange={(keys) => set({ keys })}
        />
      </div>
      <div className="field-row">
        <div className="field-col grow">
          <span className="field-label">{t("lore.secondaryKeys")}</span>
          <TagInput
            label={t("lore.secondaryKeys")}
            values={entry.secondaryKeys ?? []}
            onChange={(secondaryKeys) => set({ secondaryKeys })}
          />
        </div>
        <label>
          {t("lore.logic")}
          <select
            value={entry.selectiveLogic ?? "andAny"}
            onChange={(e) => set({ selectiveLogic: e.target.value as SelectiveLogic })}
          >
            {LOGIC.map((l) => (
              <option key={l} value={l}>
                {t(`lore.logic.${l}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label className="content-field">
        {t("editor.content")}
        <MacroTextarea
          value={entry.content ?? ""}
          testId="entry-content"
          onChange={(content) => set({ content }, `entry-content:${entry.id}`)}
        />
      </label>
      <StrategyEditor
        strategy={entry.strategy}
        listLabel={t("lore.mode.default")}
        onChange={(mode, values) => editPreset((p) => setEntryStrategy(p, index, mode, values))}
      />
    </div>
  );
}
