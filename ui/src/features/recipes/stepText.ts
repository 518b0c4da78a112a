// What a row shows of a message (issue 39): the first text that says something. Community
// presets open their prompts with the author's comment macros (`{{// ...}}`, expanded to nothing,
// so never sent) and blank lines; a row that shows the first two lines of such a prompt is blank.
// Pure functions, shared by the recipe's rows and the preview's.

/** A comment macro: `{{//` up to the first `}}`, across lines. */
const COMMENT = /\{\{\/\/([\s\S]*?)\}\}/g;

export interface Lead {
  /** The text from its first meaningful line on, comment macros taken out; "" when none. */
  text: string;
  /** Lines before it that were blank or held only comments. */
  skippedLines: number;
  /** Comment macros in the whole text. */
  comments: number;
}

/** What a closed row of the preview reads of its message: far more than its two lines show. */
export const LEAD_CHARS = 4000;

/** The text from its first line that is not blank once comment macros are taken out. With a
 * `limit`, only the text's first `limit` characters are read (a row shows two lines of a message
 * that may be a megabyte long). */
export function leadOf(content: string, limit = Infinity): Lead {
  let comments = 0;
  const read = content.length > limit ? content.slice(0, limit) : content;
  const bare = read.replace(COMMENT, () => {
    comments++;
    return "";
  });
  const lines = bare.split(/\r?\n/);
  let first = 0;
  while (first < lines.length && lines[first]!.trim() === "") first++;
  const text = first < lines.length ? lines.slice(first).join("\n").replace(/^\s+/, "").trimEnd() : "";
  return { text, skippedLines: first < lines.length ? first : 0, comments };
}

/** The lead on one line, white space collapsed, at most `max` characters. */
export function summaryOf(content: string, max = 90): Lead {
  const lead = leadOf(content);
  const line = lead.text.replace(/\s+/g, " ").trim();
  return { ...lead, text: line.length > max ? `${line.slice(0, max)}…` : line };
}

export interface CommentMeta {
  /** `@tooltip` (or `@description`, `@desc`): what the author says the step is for. */
  description?: string;
  /** `@category` (or `@group`, `@section`). */
  category?: string;
}

const DESCRIPTION = new Set(["tooltip", "description", "desc"]);
const CATEGORY = new Set(["category", "group", "section"]);

/** The `@key value` metadata of the text's comment macros: read, never sent. One comment may
 * hold several (`{{// @category Core @tooltip Sets the tone }}`); the first of each wins. */
export function commentMetaOf(content: string): CommentMeta {
  const meta: CommentMeta = {};
  if (!content.includes("{{//")) return meta;
  for (const m of content.matchAll(COMMENT)) {
    const body = m[1]!;
    const tag = /(?:^|\s)@(\w+)[ \t:]*([\s\S]*?)(?=\s@\w+|$)/g;
    for (const [, key, value] of body.matchAll(tag)) {
      const k = key!.toLowerCase();
      const v = value!.replace(/\s+/g, " ").trim();
      if (!v) continue;
      if (DESCRIPTION.has(k) && meta.description === undefined) meta.description = v;
      else if (CATEGORY.has(k) && meta.category === undefined) meta.category = v;
    }
  }
  return meta;
}

