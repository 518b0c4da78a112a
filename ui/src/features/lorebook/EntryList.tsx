import { useCallback } from "react";
import type { LorebookEntry } from "../../bindings";
import type { Preset } from "../../app/model";
import { editPreset } from "../../app/store";
import { useT } from "../../app/useT";
import { modeOf } from "../../components/strategy";
import { ListTools } from "../../components/lists/ListTools";
import { SectionHead } from "../../components/lists/SectionHead";
import { foldedOf, toggleFolded, useListView } from "../../components/lists/listView";
import { lastListOf, type ItemShape, type SectionRow } from "../../components/lists/sectionedList";
import { entriesOf, setEntriesEnabled, updateEntry } from "./lorebook";

/** An entry of the list and its position in the book. */
interface EntryItem {
  entry: LorebookEntry;
  index: number;
}

const haystacks = new WeakMap<LorebookEntry, string>();
const shape: ItemShape<EntryItem> = {
  key: (e) => e.entry.id,
  name: (e) => e.entry.name ?? undefined,
  enabled: (e) => e.entry.enabled !== false,
  haystack: ({ entry: e }) => {
    let text = haystacks.get(e);
    if (text === undefined) {
      text = [e.name, e.id, e.content, ...(e.keys ?? []), ...(e.secondaryKeys ?? [])].filter(Boolean).join("\n").toLowerCase();
      haystacks.set(e, text);
    }
    return text;
  },
};
const items = new WeakMap<LorebookEntry[], EntryItem[]>();
const last = lastListOf(shape);

/**
 * The lorebook's entries as a long list (issue 39): filtered by words or "enabled only", in
 * sections that an entry named as a header starts, folded, switched on or off a section at a
 * time, with what is on counted.
 */
export function EntryList({
  preset,
  selected,
  onSelect,
  activeIds,
  cutIds,
}: {
  preset: Preset;
  selected: number | null;
  onSelect: (index: number) => void;
  activeIds: ReadonlySet<string>;
  cutIds: ReadonlySet<string>;
}) {
  const t = useT();
  const view = useListView("entries");
  const entries = entriesOf(preset);
  let all = items.get(entries);
  if (!all) items.set(entries, (all = entries.map((entry, index) => ({ entry, index }))));
  const list = last(all, { query: view.query, enabledOnly: view.enabledOnly, grouping: "sections", folded: foldedOf(view, preset.id) });
  const presetId = preset.id;
  const onFold = useCallback((key: string) => toggleFolded("entries", presetId, key), [presetId]);
  if (entries.length === 0) return null;
  const rowOf = (item: EntryItem) => (
    <EntryRow key={item.entry.id} item={item} selected={selected === item.index} onSelect={onSelect} active={activeIds.has(item.entry.id)} cut={cutIds.has(item.entry.id)} />
  );
  return (
    <>
      <ListTools listId="entries" list={list} presetId={preset.id} filterLabel={t("lore.filter")} />
      <ol className="entries" data-testid="entries">
        {list.rows.map((row) =>
          row.kind === "item" ? (
            rowOf(row.item)
          ) : (
            <EntrySection key={`section:${row.key}`} section={row} selected={row.header !== null && selected === row.header.index} onFold={onFold} onSelect={onSelect} />
          ),
        )}
      </ol>
      {list.rows.length === 0 && (
        <p className="muted" data-testid="entries-none-match">
          {t("lore.noneMatch")}
        </p>
      )}
    </>
  );
}

function EntrySwitch({ entry, index }: { entry: LorebookEntry; index: number }) {
  const t = useT();
  return (
    <label className="switch" title={t("recipe.enabled")}>
      <input
        type="checkbox"
        checked={entry.enabled !== false}
        aria-label={`${t("recipe.enabled")}: ${entry.name || entry.id}`}
        onChange={(ev) => editPreset((p) => updateEntry(p, index, { enabled: ev.target.checked }))}
      />
      <span aria-hidden="true" />
    </label>
  );
}

function EntrySection({
  section,
  selected,
  onFold,
  onSelect,
}: {
  section: SectionRow<EntryItem>;
  selected: boolean;
  onFold: (key: string) => void;
  onSelect: (index: number) => void;
}) {
  const header = section.header;
  const indices = section.items.map((i) => i.index);
  const classes = ["section", "step", "entry", selected ? "selected" : "", header?.entry.enabled === false ? "off" : ""];
  return (
    <li className={classes.filter(Boolean).join(" ")} data-testid={`entry-section-${section.key}`} data-entry-id={header?.entry.id}>
      <SectionHead
        section={section}
        controls={header && <EntrySwitch entry={header.entry} index={header.index} />}
        onFold={onFold}
        onTitle={header ? () => onSelect(header.index) : undefined}
        onSwitchAll={(enabled) => editPreset((p) => setEntriesEnabled(p, indices, enabled))}
      />
    </li>
  );
}

function EntryRow({
  item: { entry: e, index },
  selected,
  onSelect,
  active,
  cut,
}: {
  item: EntryItem;
  selected: boolean;
  onSelect: (index: number) => void;
  active: boolean;
  cut: boolean;
}) {
  const t = useT();
  const classes = ["step", "entry", selected ? "selected" : "", e.enabled === false ? "disabled" : "", active ? "fired" : "", cut ? "cut" : ""];
  return (
    <li data-entry-id={e.id} className={classes.filter(Boolean).join(" ")}>
      <EntrySwitch entry={e} index={index} />
      <button type="button" className="step-body" onClick={() => onSelect(index)}>
        <span className="step-title">
          <strong>{e.name || e.id}</strong>
          {e.constant && <span className="tag tag-constant">{t("lore.constant")}</span>}
          {active && <span className="tag tag-fired">{t("lore.fired")}</span>}
          {cut && <span className="tag tag-cut">{t("lore.cut")}</span>}
        </span>
        <span className="summary">{(e.keys ?? []).join(", ") || "—"}</span>
      </button>
      <span className="tags">
        <StrategyTag entry={e} />
        <span className="tag">#{e.order ?? 100}</span>
      </span>
    </li>
  );
}

function StrategyTag({ entry: e }: { entry: LorebookEntry }) {
  const mode = modeOf(e.strategy);
  if (mode === "depth") return <span className="tag tag-depth">Depth: {e.strategy?.depth}</span>;
  if (mode === "anchor") {
    return (
      <span className="tag tag-anchor">
        ⚓ {e.strategy?.anchorPosition === "before" ? "↑" : "↓"} {e.strategy?.anchorTarget}
      </span>
    );
  }
  return null;
}
