import { describe, expect, it } from "vitest";
import { presetChanges } from "./presetChanges";
import { samplePreset } from "../test/fakeBackend";
import { setStepEnabled, updateTemplate } from "../features/recipes/recipe";
import { updateEntry } from "../features/lorebook/lorebook";

const withBook = () => ({
  ...samplePreset(),
  lorebook: { entries: [{ id: "e1", keys: ["a"], content: "A" }, { id: "e2", keys: ["b"], content: "B" }] },
});

describe("the changes an edit made, for the live preview's draft", () => {
  it("are the template typed into, by its position", () => {
    const before = samplePreset();
    const after = updateTemplate(before, "style", { content: "Be very brief." });
    expect(presetChanges(before, after)).toEqual([{ kind: "template", index: 2, template: after.messageTemplates[2] }]);
  });

  it("are the recipe of a step switched, and the lorebook entry edited", () => {
    const before = withBook();
    const switched = setStepEnabled(before, 0, 1, false);
    expect(presetChanges(before, switched)).toEqual([{ kind: "recipe", index: 0, recipe: switched.contextRecipes[0] }]);
    const edited = updateEntry(before, 1, { content: "B!" });
    expect(presetChanges(before, edited)).toEqual([{ kind: "lorebookEntry", index: 1, entry: edited.lorebook!.entries![1] }]);
  });

  it("are none for the same preset", () => {
    const p = samplePreset();
    expect(presetChanges(p, p)).toEqual([]);
  });

  it("are not changes of items when anything else changed: the whole preset goes", () => {
    const before = withBook();
    expect(presetChanges(before, { ...before, name: "Renamed" })).toBeNull();
    expect(presetChanges(before, { ...before, description: "new" })).toBeNull();
    expect(presetChanges(before, { ...before, lorebook: null })).toBeNull();
    expect(presetChanges(before, { ...before, lorebook: { ...before.lorebook, scanDepth: 4 } })).toBeNull();
    // An item added or removed.
    expect(presetChanges(before, { ...before, messageTemplates: before.messageTemplates.slice(1) })).toBeNull();
    expect(presetChanges(before, { ...before, contextRecipes: [...before.contextRecipes, before.contextRecipes[0]!] })).toBeNull();
  });

  it("replace the items that moved at their new places", () => {
    const before = samplePreset();
    const [a, b, c] = before.messageTemplates;
    const after = { ...before, messageTemplates: [c!, b!, a!] };
    expect(presetChanges(before, after)).toEqual([
      { kind: "template", index: 0, template: c },
      { kind: "template", index: 2, template: a },
    ]);
  });

  it("are not sent item by item when too many changed", () => {
    const before = { ...samplePreset(), messageTemplates: Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, role: "system" as const, content: "x" })) };
    const after = { ...before, messageTemplates: before.messageTemplates.map((t) => ({ ...t, content: "y" })) };
    expect(presetChanges(before, after)).toBeNull();
    const few = { ...before, messageTemplates: before.messageTemplates.map((t, i) => (i < 3 ? { ...t, content: "y" } : t)) };
    expect(presetChanges(before, few)).toHaveLength(3);
  });
});
