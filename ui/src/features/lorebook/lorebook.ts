// The lorebook of a preset (RULES 6) as the editor changes it: pure functions from preset to
// preset, recorded by the store like every other edit.
import type { Preset } from "../../app/model";
import type { ActivatedEntry, Lorebook, LorebookEntry } from "../../bindings";
import { strategyFor, type InjectionMode, type StrategyValues } from "../../components/strategy";

/** The defaults of RULES 6.1, shown where a lorebook leaves a setting out. */
export const DEFAULTS = {
  scanDepth: 2,
  tokenBudget: 25,
  recursive: true,
  caseSensitive: false,
  matchWholeWords: true,
} as const;

export function entriesOf(preset: Preset): LorebookEntry[] {
  return preset.lorebook?.entries ?? [];
}

function withBook(preset: Preset, change: (book: Lorebook) => Lorebook): Preset {
  return { ...preset, lorebook: change(preset.lorebook ?? { entries: [] }) };
}

export function setBookSetting<K extends keyof typeof DEFAULTS>(
  preset: Preset,
  key: K,
  value: (typeof DEFAULTS)[K] extends boolean ? boolean : number,
): Preset {
  return withBook(preset, (book) => ({ ...book, [key]: value }));
}

/** Adds an enabled entry with a fresh id; returns the preset and the entry's position. */
export function addEntry(preset: Preset, name: string): { preset: Preset; index: number } {
  const taken = new Set(entriesOf(preset).map((e) => e.id));
  let id = "entry";
  for (let n = 2; taken.has(id); n++) id = `entry-${n}`;
  const entry: LorebookEntry = { id, name, keys: [], content: "", enabled: true, order: 100 };
  const index = entriesOf(preset).length;
  return {
    preset: withBook(preset, (book) => ({ ...book, entries: [...(book.entries ?? []), entry] })),
    index,
  };
}

export function updateEntry(preset: Preset, index: number, change: Partial<LorebookEntry>): Preset {
  return withBook(preset, (book) => ({
    ...book,
    entries: (book.entries ?? []).map((e, i) => (i === index ? { ...e, ...change } : e)),
  }));
}

/** Switches the entries at `indices` (a whole section) on or off, as one edit. */
export function setEntriesEnabled(preset: Preset, indices: number[], enabled: boolean): Preset {
  const at = new Set(indices);
  return withBook(preset, (book) => ({
    ...book,
    entries: (book.entries ?? []).map((e, i) => (at.has(i) && (e.enabled !== false) !== enabled ? { ...e, enabled } : e)),
  }));
}

/** Adds a section by hand (issue 39): an entry named as a header, `=== name ===`, with no keys
 * and switched off, so it never fires; returns the preset and its position. */
export function addSectionEntry(preset: Preset, name: string): { preset: Preset; index: number } {
  const taken = new Set(entriesOf(preset).map((e) => e.id));
  let id = "section";
  for (let n = 2; taken.has(id); n++) id = `section-${n}`;
  const entry: LorebookEntry = { id, name: `=== ${name} ===`, keys: [], content: "", enabled: false, order: 100 };
  const index = entriesOf(preset).length;
  return {
    preset: withBook(preset, (book) => ({ ...book, entries: [...(book.entries ?? []), entry] })),
    index,
  };
}

export function removeEntry(preset: Preset, index: number): Preset {
  return withBook(preset, (book) => ({
    ...book,
    entries: (book.entries ?? []).filter((_, i) => i !== index),
  }));
}

/** Sets an entry's placement; list order is written as no strategy. */
export function setEntryStrategy(
  preset: Preset,
  index: number,
  mode: InjectionMode,
  values: StrategyValues,
): Preset {
  const entry = entriesOf(preset)[index];
  const strategy = strategyFor(mode, values, entry?.strategy?.order);
  return withBook(preset, (book) => ({
    ...book,
    entries: (book.entries ?? []).map((e, i) => {
      if (i !== index) return e;
      const next = { ...e };
      if (strategy) next.strategy = strategy;
      else delete next.strategy;
      return next;
    }),
  }));
}

/** Why an entry fired, for people. */
export function activationText(entry: ActivatedEntry): { kind: string; key?: string; where?: string } {
  const r = entry.reason;
  if (r.kind === "constant") return { kind: "constant" };
  if (r.kind === "recursion") return { kind: "recursion", key: r.key, where: r.fromEntry };
  if (r.kind === "sticky") return { kind: "sticky", where: String(r.messagesAgo) };
  const at = r.historyIndex;
  return { kind: "key", key: r.key, where: at === undefined || at === null ? undefined : `#${at}` };
}
