// A long list in sections (issue 39): the recipe's steps, the lorebook's entries, the pipeline's
// processors. Filtered by words or "enabled only", sections folded, what is on counted. A section
// starts at an item whose name is drawn as a header (`=== Core ===`, `sectionTitleOf`), or the
// list is grouped by a category each item names. Pure: each list renders the rows this returns.
import { sectionTitleOf } from "./sectionTitle";

export type Grouping = "sections" | "category";

/** What the list reads of an item. */
export interface ItemShape<T> {
  /** Stable while the list changes: a header item's key is its section's. */
  key(item: T): string;
  /** The name that makes an item a section's header; none groups by category only. */
  name?(item: T): string | undefined;
  enabled(item: T): boolean;
  /** The item's words, lower case, for the filter. */
  haystack(item: T): string;
  category?(item: T): string | undefined;
}

export interface SectionRow<T> {
  kind: "section";
  /** Stable while the list changes: the header item's key, or `category:<name>`. */
  key: string;
  title: string;
  /** The item drawn as this section's header (sections grouping), else null. */
  header: T | null;
  /** The section's items, its header not among them: what its count counts and its switch switches. */
  items: T[];
  enabled: number;
  total: number;
  folded: boolean;
}

export interface ItemRow<T> {
  kind: "item";
  item: T;
}

export type ListRow<T> = SectionRow<T> | ItemRow<T>;

export interface ListOptions {
  query: string;
  enabledOnly: boolean;
  grouping: Grouping;
  folded: ReadonlySet<string>;
}

export interface SectionedList<T> {
  rows: ListRow<T>[];
  /** Items switched on, of all (headers included). */
  enabled: number;
  total: number;
  /** Items the filter lets through (folded ones included). */
  matching: number;
}

/** The key of the section that holds the items without a category. */
export const NO_CATEGORY = "category:";

interface Group<T> {
  key: string;
  title: string;
  header: T | null;
  items: T[];
}

function groupsOf<T>(items: readonly T[], shape: ItemShape<T>, grouping: Grouping): Group<T>[] {
  if (grouping === "category" || !shape.name) {
    const byName = new Map<string, Group<T>>();
    const none: Group<T> = { key: NO_CATEGORY, title: "", header: null, items: [] };
    for (const item of items) {
      const name = shape.category?.(item);
      if (!name) {
        none.items.push(item);
        continue;
      }
      let group = byName.get(name);
      if (!group) byName.set(name, (group = { key: `category:${name}`, title: name, header: null, items: [] }));
      group.items.push(item);
    }
    const groups = [...byName.values()];
    // Without any category there is nothing to group by: one list, no section rows.
    return groups.length === 0 ? [none] : none.items.length > 0 ? [...groups, none] : groups;
  }
  const groups: Group<T>[] = [{ key: "", title: "", header: null, items: [] }];
  for (const item of items) {
    const name = shape.name(item);
    const title = name ? sectionTitleOf(name) : null;
    if (title !== null) groups.push({ key: shape.key(item), title, header: item, items: [] });
    else groups.at(-1)!.items.push(item);
  }
  return groups;
}

/** The rows of the list: each section's row (none for the items before the first header, nor
 * for a list of one group), then its items unless it is folded. A text filter shows the items
 * it finds in a folded section too; a section with nothing to show is left out. */
export function sectionedList<T>(items: readonly T[], shape: ItemShape<T>, options: ListOptions): SectionedList<T> {
  const query = options.query.trim().toLowerCase();
  // Every word of the filter, anywhere in the item: "memory pacing" finds "🧠 Memory: pacing".
  const words = query.split(/\s+/).filter(Boolean);
  const has = (text: string) => words.every((w) => text.includes(w));
  const groups = groupsOf(items, shape, options.grouping);
  const sectioned = groups.length > 1 || groups[0]!.header !== null;
  const rows: ListRow<T>[] = [];
  let matching = 0;
  const passes = (item: T) => (!options.enabledOnly || shape.enabled(item)) && (!query || has(shape.haystack(item)));
  for (const group of groups) {
    const shown = group.items.filter(passes);
    matching += shown.length;
    const titleMatches = !!query && has(group.title.toLowerCase());
    const folded = options.folded.has(group.key) && !(query && shown.length > 0);
    // The items before the first header have no row of their own.
    if (sectioned && group.key !== "") {
      const empty = shown.length === 0 && !titleMatches;
      if (!(empty && (query || options.enabledOnly))) {
        rows.push({
          kind: "section",
          key: group.key,
          title: group.title,
          header: group.header,
          items: group.items,
          enabled: group.items.filter((i) => shape.enabled(i)).length,
          total: group.items.length,
          folded: options.folded.has(group.key),
        });
      }
    }
    if (!folded) for (const item of shown) rows.push({ kind: "item", item });
  }
  const enabled = items.filter((i) => shape.enabled(i)).length;
  return { rows, enabled, total: items.length, matching };
}

/** `sectionedList`, worked out again only when its items or options change: the list and the
 * tools above it ask for the same rows in one render. */
export function lastListOf<T>(shape: ItemShape<T>) {
  let last: { items: readonly T[]; options: ListOptions; list: SectionedList<T> } | null = null;
  return (items: readonly T[], options: ListOptions): SectionedList<T> => {
    const o = last?.options;
    if (
      last &&
      last.items === items &&
      o!.query === options.query &&
      o!.enabledOnly === options.enabledOnly &&
      o!.grouping === options.grouping &&
      o!.folded === options.folded
    ) {
      return last.list;
    }
    last = { items, options, list: sectionedList(items, shape, options) };
    return last.list;
  };
}
