// The recipe list of a big preset (issue 39): steps in sections, filtered by text or "enabled
// only", sections folded (components/lists/). A section starts at a step whose name is drawn as
// a header (`=== Core ===`); "Add section" makes such a step by hand. Or the list is grouped by
// the category the authors' comments give (`@category`).
import type { MessageTemplate } from "../../bindings";
import type { StepView } from "./recipe";
import { commentMetaOf, summaryOf, type CommentMeta, type Lead } from "./stepText";
import {
  lastListOf,
  NO_CATEGORY,
  type ItemShape,
  type ListOptions,
  type ListRow as SectionedListRow,
  type SectionedList,
  type SectionRow as SectionedSectionRow,
} from "../../components/lists/sectionedList";

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

/** A step of the list: its view and what its row shows. */
export interface StepItem {
  view: StepView;
  text: StepText;
}

const shape: ItemShape<StepItem> = {
  key: (s) => s.view.key,
  name: (s) => s.view.template?.name ?? undefined,
  enabled: (s) => s.view.step.enabled,
  haystack: (s) => s.text.haystack,
  category: (s) => s.text.meta.category,
};

export type RecipeList = SectionedList<StepItem>;
export type ListRow = SectionedListRow<StepItem>;
export type SectionRow = SectionedSectionRow<StepItem>;
export { NO_CATEGORY, type ListOptions };

const items = new WeakMap<StepView[], StepItem[]>();
const last = lastListOf(shape);

/** The rows of the recipe list, with its counts (`sectionedList`); asked again for the same
 * views and options, the same list. */
export function recipeList(views: StepView[], options: ListOptions): RecipeList {
  let steps = items.get(views);
  if (!steps) items.set(views, (steps = views.map((view) => ({ view, text: stepTextOf(view.template) }))));
  return last(steps, options);
}
