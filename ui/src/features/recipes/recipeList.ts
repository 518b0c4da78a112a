// The recipe list of a big preset (issue 39): steps in sections, filtered by text or "enabled
// only", sections folded. A section starts at a step whose name is drawn as a header
// (`=== Core ===`, `sectionTitleOf`); "Add section" makes such a step by hand. Or the list is
// grouped by the category the authors' comments give (`@category`). Pure: the editor renders
// the rows this returns.
import type { MessageTemplate } from "../../bindings";
import type { StepView } from "./recipe";
import { commentMetaOf, sectionTitleOf, summaryOf, type CommentMeta, type Lead } from "./stepText";

export type Grouping = "sections" | "category";

/** What a row shows of its template, worked out once per template object: an edit makes a
 * new object for the one template it changes, so a keystroke reads one prompt again, not 300. */
export interface StepText {
  summary: Lead;
  meta: CommentMeta;
  /** Name, content, description and category, lower case, for the filter. */
  haystack: string;
}

const texts = new WeakMap<MessageTemplate, StepText>();
const EMPTY: StepText = { summary: { text: "", skippedLines: 0, comments: 0 }, meta: {}, haystack: "" };

export function stepTextOf(template: MessageTemplate | undefined): StepText {
  if (!template) return EMPTY;
  let text = texts.get(template);
  if (!text) {
    const content = template.content ?? "";
    const meta = commentMetaOf(content);
    text = {
      summary: summaryOf(content),
      meta,
      haystack: [template.name, template.id, content, meta.description, meta.category]
        .filter(Boolean)
        .join("\n")
        .toLowerCase(),
    };
    texts.set(template, text);
  }
  return text;
}

export interface SectionRow {
  kind: "section";
  /** Stable while the list changes: the header step's key, or `category:<name>`. */
  key: string;
  title: string;
  /** The step drawn as this section's header (sections grouping), else null. */
  header: StepView | null;
  enabled: number;
  total: number;
  folded: boolean;
}

export interface StepRowItem {
  kind: "step";
  view: StepView;
  text: StepText;
}

export type ListRow = SectionRow | StepRowItem;

export interface ListOptions {
  query: string;
  enabledOnly: boolean;
  grouping: Grouping;
  folded: ReadonlySet<string>;
}

export interface RecipeList {
  rows: ListRow[];
  /** Steps switched on, of all. */
  enabled: number;
  total: number;
  /** Steps the filter lets through (folded ones included). */
  matching: number;
}

/** The key of the section that holds steps without a category. */
export const NO_CATEGORY = "category:";

interface Group {
  key: string;
  title: string;
  header: StepView | null;
  steps: StepRowItem[];
}

function groupsOf(views: StepView[], grouping: Grouping): Group[] {
  const items = views.map((view) => ({ kind: "step" as const, view, text: stepTextOf(view.template) }));
  if (grouping === "category") {
    const byName = new Map<string, Group>();
    const none: Group = { key: NO_CATEGORY, title: "", header: null, steps: [] };
    for (const item of items) {
      const name = item.text.meta.category;
      if (!name) {
        none.steps.push(item);
        continue;
      }
      let group = byName.get(name);
      if (!group) byName.set(name, (group = { key: `category:${name}`, title: name, header: null, steps: [] }));
      group.steps.push(item);
    }
    const groups = [...byName.values()];
    // Without any category there is nothing to group by: one list, no section rows.
    return groups.length === 0 ? [none] : none.steps.length > 0 ? [...groups, none] : groups;
  }
  const groups: Group[] = [{ key: "", title: "", header: null, steps: [] }];
  for (const item of items) {
    const title = item.view.template?.name ? sectionTitleOf(item.view.template.name) : null;
    if (title !== null) groups.push({ key: item.view.key, title, header: item.view, steps: [] });
    else groups.at(-1)!.steps.push(item);
  }
  return groups;
}

/** The rows of the list: each section's row (none for the steps before the first header, nor
 * for a list of one group), then its steps unless it is folded. A text filter shows the
 * steps it finds in a folded section too; a section with nothing to show is left out. */
export function recipeList(views: StepView[], options: ListOptions): RecipeList {
  const query = options.query.trim().toLowerCase();
  // Every word of the filter, anywhere in the step: "memory pacing" finds "🧠 Memory: pacing".
  const words = query.split(/\s+/).filter(Boolean);
  const has = (text: string) => words.every((w) => text.includes(w));
  const groups = groupsOf(views, options.grouping);
  const sectioned = groups.length > 1 || groups[0]!.header !== null;
  const rows: ListRow[] = [];
  let matching = 0;
  const passes = (item: StepRowItem) =>
    (!options.enabledOnly || item.view.step.enabled) && (!query || has(item.text.haystack));
  for (const group of groups) {
    const shown = group.steps.filter(passes);
    matching += shown.length;
    const titleMatches = !!query && has(group.title.toLowerCase());
    const folded = options.folded.has(group.key) && !(query && shown.length > 0);
    // The steps before the first header have no row of their own.
    if (sectioned && group.key !== "") {
      const empty = shown.length === 0 && !titleMatches;
      if (!(empty && (query || options.enabledOnly))) {
        rows.push({
          kind: "section",
          key: group.key,
          title: group.title,
          header: group.header,
          enabled: group.steps.filter((s) => s.view.step.enabled).length,
          total: group.steps.length,
          folded: options.folded.has(group.key),
        });
      }
    }
    if (!folded) rows.push(...shown);
  }
  const enabled = views.filter((v) => v.step.enabled).length;
  return { rows, enabled, total: views.length, matching };
}
