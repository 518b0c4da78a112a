import { describe, expect, it } from "vitest";
import { samplePreset } from "../../test/fakeBackend";
import type { Preset } from "../../app/model";
import {
  addRecipe,
  anchoredTo,
  changeTemplate,
  createTemplate,
  deleteTemplate,
  duplicateRecipe,
  freeId,
  insertStep,
  overriddenFields,
  renameTemplate,
  resetStepStrategy,
  setStepOverride,
  templateUsage,
} from "./workbenchEdits";
import { idProblem } from "../../components/IdField";
import { setStepStrategy } from "./recipe";

function withAnchor(): Preset {
  const p = samplePreset();
  p.messageTemplates.push(
    { id: "wi", role: "system", type: "placeholder" },
    { id: "lore", role: "system", content: "Lore.", defaultInjectionStrategy: { anchorTarget: "wi" } },
  );
  p.contextRecipes[0]!.steps.push(
    { messageId: "wi", enabled: true },
    { messageId: "lore", enabled: true, injectionStrategy: { anchorTarget: "wi", anchorPosition: "before" } },
  );
  p.lorebook = { entries: [{ id: "e", keys: ["x"], content: "X", strategy: { anchorTarget: "wi" } }] } as Preset["lorebook"];
  return p;
}

describe("advanced mode edits", () => {
  it("hands out free ids and names what is wrong with one", () => {
    expect(freeId(["recipe", "recipe-2"], "recipe")).toBe("recipe-3");
    expect(freeId([], "recipe")).toBe("recipe");
    expect(idProblem("", [])).toBe("empty");
    expect(idProblem("a b", [])).toBe("spaces");
    // Step keys are `id#n`: an id with # would collide with them.
    expect(idProblem("a#2", [])).toBe("spaces");
    expect(idProblem("main", ["main"])).toBe("taken");
    expect(idProblem("main", ["main"], "main")).toBeNull();
  });

  it("creates templates of each kind with free ids", () => {
    const a = createTemplate(samplePreset());
    expect(a.id).toBe("template");
    const b = createTemplate(a.preset, "placeholder");
    expect(b.preset.messageTemplates.at(-1)).toEqual({ id: "anchor", role: "system", type: "placeholder" });
    const c = createTemplate(b.preset, "chat_history");
    expect(c.preset.messageTemplates.at(-1)?.role).toBe("user");
  });

  it("drops a template into a recipe at a position, and counts its uses", () => {
    let p = insertStep(samplePreset(), 0, "style", 0);
    p = insertStep(p, 0, "main", 99);
    expect(p.contextRecipes[0]!.steps.map((s) => s.messageId)).toEqual(["style", "main", "chat", "style", "main"]);
    expect(templateUsage(p, "main")).toBe(2);
    expect(templateUsage(p, "chat")).toBe(1);
  });

  it("deleting a template removes every step that names it", () => {
    const p = addRecipe(insertStep(samplePreset(), 0, "style", 0)).preset;
    const two = insertStep(p, 1, "style", 0);
    const gone = deleteTemplate(two, "style");
    expect(gone.messageTemplates.map((t) => t.id)).toEqual(["main", "chat"]);
    expect(gone.contextRecipes.map((r) => r.steps.map((s) => s.messageId))).toEqual([["main", "chat"], []]);
  });

  it("deleting an anchor sends what was anchored to it back to list order", () => {
    const p = withAnchor();
    expect(anchoredTo(p, "wi")).toBe(3);
    const gone = deleteTemplate(p, "wi");
    expect(anchoredTo(gone, "wi")).toBe(0);
    expect(gone.messageTemplates.find((t) => t.id === "lore")?.defaultInjectionStrategy).toEqual({});
    expect(gone.contextRecipes[0]!.steps.at(-1)).toEqual({ messageId: "lore", enabled: true, injectionStrategy: {} });
    expect(gone.lorebook?.entries?.[0]?.strategy).toEqual({});
  });

  it("renaming a template carries its steps and every anchor aimed at it", () => {
    const p = renameTemplate(withAnchor(), "wi", "world");
    expect(p.messageTemplates.find((t) => t.id === "lore")?.defaultInjectionStrategy?.anchorTarget).toBe("world");
    const steps = p.contextRecipes[0]!.steps;
    expect(steps.map((s) => s.messageId)).toContain("world");
    expect(steps.at(-1)?.injectionStrategy).toEqual({ anchorTarget: "world", anchorPosition: "before" });
    expect(p.lorebook?.entries?.[0]?.strategy?.anchorTarget).toBe("world");
  });

  it("changing a template removes the fields set to null", () => {
    const p = changeTemplate(withAnchor(), "lore", { defaultInjectionStrategy: null, name: "Lore" });
    const lore = p.messageTemplates.find((t) => t.id === "lore")!;
    expect(lore).toEqual({ id: "lore", role: "system", content: "Lore.", name: "Lore" });
    expect("defaultInjectionStrategy" in lore).toBe(false);
  });

  it("a duplicated recipe gets a free id, the same steps and no filter", () => {
    const { preset, id } = duplicateRecipe(samplePreset(), 0);
    expect(id).toBe("all-copy");
    expect(preset.contextRecipes[1]).toMatchObject({ id: "all-copy", modelFilter: [] });
    expect(preset.contextRecipes[1]!.name).toBeUndefined();
    expect(preset.contextRecipes[1]!.steps).toEqual(preset.contextRecipes[0]!.steps);
    expect(preset.contextRecipes[1]!.steps).not.toBe(preset.contextRecipes[0]!.steps);
  });

  it("overrides are set and reset one by one; strategy reset goes back to the template's", () => {
    let p = withAnchor();
    const lore = 4;
    expect(overriddenFields(p.contextRecipes[0]!.steps[lore]!)).toEqual(["strategy"]);
    p = setStepOverride(p, 0, lore, "content", "Other lore.");
    p = setStepOverride(p, 0, lore, "role", "user");
    expect(overriddenFields(p.contextRecipes[0]!.steps[lore]!)).toEqual(["strategy", "content", "role"]);
    p = resetStepStrategy(p, 0, lore);
    p = setStepOverride(p, 0, lore, "content", null);
    expect(p.contextRecipes[0]!.steps[lore]).toEqual({ messageId: "lore", enabled: true, overrides: { role: "user" } });
    p = setStepOverride(p, 0, lore, "role", null);
    expect(p.contextRecipes[0]!.steps[lore]).toEqual({ messageId: "lore", enabled: true });
    // An override keeps the order the step inherited.
    p = changeTemplate(p, "lore", { defaultInjectionStrategy: { depth: 2, order: 200 } });
    p = setStepStrategy(p, 0, lore, "depth", { depth: 3 });
    expect(p.contextRecipes[0]!.steps[lore]!.injectionStrategy).toEqual({ depth: 3, order: 200 });
    p = resetStepStrategy(p, 0, lore);
    // An explicit "list order" on a template that moves by default is an override of its own.
    p = setStepStrategy(p, 0, lore, "list", {});
    expect(overriddenFields(p.contextRecipes[0]!.steps[lore]!)).toEqual(["strategy"]);
  });
});
