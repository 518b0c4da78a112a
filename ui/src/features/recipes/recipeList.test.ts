import { describe, expect, it } from "vitest";
import type { Preset } from "../../app/model";
import type { MessageTemplate } from "../../bindings";
import { NO_CATEGORY, recipeList, stepTextOf, type ListOptions, type ListRow } from "./recipeList";
import { stepViews } from "./recipe";

function preset(steps: [name: string, content: string, enabled: boolean][]): Preset {
  const templates: MessageTemplate[] = steps.map(([name, content], i) => ({ id: `p${i}`, name, role: "system", content }));
  return {
    formatVersion: 1,
    id: "big",
    name: "Big",
    messageTemplates: templates,
    contextRecipes: [{ id: "default", steps: steps.map(([, , enabled], i) => ({ messageId: `p${i}`, enabled })) }],
  } as unknown as Preset;
}

const big = preset([
  ["Main", "{{// @category Core }}\nYou are {{char}}.", true],
  ["=== Style ===", "", true],
  ["🎭 Tone", "{{// @category Style }}{{// @tooltip Sets the tone }}\nWrite vividly.", true],
  ["Length", "{{// @category Style }}\nShort replies.", false],
  ["━━ Extras ━━", "", false],
  ["Dice", "Roll {{roll:d6}}.", false],
]);
const views = stepViews(big, big.contextRecipes[0]!);
const options = (o: Partial<ListOptions> = {}): ListOptions => ({
  query: "",
  enabledOnly: false,
  grouping: "sections",
  folded: new Set(),
  ...o,
});
const shown = (rows: ListRow[]) => rows.map((r) => (r.kind === "section" ? `[${r.title} ${r.enabled}/${r.total}]` : r.item.view.step.messageId));

describe("the recipe list of a big preset", () => {
  it("starts a section at each header step, counting what is on in each and in all", () => {
    const list = recipeList(views, options());
    expect(shown(list.rows)).toEqual(["p0", "[Style 1/2]", "p2", "p3", "[Extras 0/1]", "p5"]);
    expect(list).toMatchObject({ enabled: 3, total: 6, matching: 4 });
  });

  it("hides a folded section's steps, not its row", () => {
    const list = recipeList(views, options({ folded: new Set(["p1"]) }));
    expect(shown(list.rows)).toEqual(["p0", "[Style 1/2]", "[Extras 0/1]", "p5"]);
    expect(list.rows[1]).toMatchObject({ kind: "section", folded: true });
  });

  it("filters by name, content, description or category, showing what it finds in a folded section", () => {
    expect(shown(recipeList(views, options({ query: "VIVID", folded: new Set(["p1"]) })).rows)).toEqual(["[Style 1/2]", "p2"]);
    expect(shown(recipeList(views, options({ query: "sets the tone" })).rows)).toEqual(["[Style 1/2]", "p2"]);
    expect(shown(recipeList(views, options({ query: "tone  vividly" })).rows)).toEqual(["[Style 1/2]", "p2"]);
    expect(recipeList(views, options({ query: "nothing like it" })).rows).toEqual([]);
  });

  it("shows the enabled steps only, leaving out sections with none", () => {
    const list = recipeList(views, options({ enabledOnly: true }));
    expect(shown(list.rows)).toEqual(["p0", "[Style 1/2]", "p2"]);
    expect(list.matching).toBe(2);
  });

  it("groups by the comments' categories, in the order they first appear, the rest last", () => {
    const list = recipeList(views, options({ grouping: "category" }));
    expect(shown(list.rows)).toEqual(["[Core 1/1]", "p0", "[Style 1/2]", "p2", "p3", "[ 1/3]", "p1", "p4", "p5"]);
    expect(list.rows.at(-4)).toMatchObject({ key: NO_CATEGORY });
  });

  it("is one plain list when there is no header and no category", () => {
    const plain = preset([["A", "a", true], ["B", "b", false]]);
    const v = stepViews(plain, plain.contextRecipes[0]!);
    expect(shown(recipeList(v, options()).rows)).toEqual(["p0", "p1"]);
    expect(shown(recipeList(v, options({ grouping: "category" })).rows)).toEqual(["p0", "p1"]);
  });

  it("reads a template's text once, and again only after an edit made a new template", () => {
    const template = big.messageTemplates[2]!;
    expect(stepTextOf(template)).toBe(stepTextOf(template));
    expect(stepTextOf(template).summary.text).toBe("Write vividly.");
    expect(stepTextOf(template).meta).toEqual({ category: "Style", description: "Sets the tone" });
    expect(stepTextOf({ ...template, content: "New" }).summary.text).toBe("New");
  });
});
