// Advanced mode's edits (RULES 2, 9.3): templates in the library, recipes in the
// workbench, and each step's overrides. Like `recipe.ts`, every edit is a pure function from
// preset to preset; the store records it for undo and autosave.
import type { Preset } from "../../app/model";
import type {
  ContextRecipe,
  InjectionStrategy,
  MessageTemplate,
  RecipeStep,
  Role,
  TemplateType,
} from "../../bindings";

/** The first of `base`, `base-2`, `base-3`, ... that `taken` does not hold. */
export function freeId(taken: Iterable<string>, base: string): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) if (!used.has(`${base}-${n}`)) return `${base}-${n}`;
}

// ---- templates ------------------------------------------------------------------------------

/** A new template at the end of the library; returns the preset and its id. */
export function createTemplate(
  preset: Preset,
  type: TemplateType = "message",
): { preset: Preset; id: string } {
  const base = type === "message" ? "template" : type === "placeholder" ? "anchor" : type;
  const id = freeId(
    preset.messageTemplates.map((t) => t.id),
    base,
  );
  const role: Role = type === "chat_history" ? "user" : "system";
  const template: MessageTemplate =
    type === "message" ? { id, role, content: "" } : { id, role, type };
  return { preset: { ...preset, messageTemplates: [...preset.messageTemplates, template] }, id };
}

/** Fields to set; `null` removes an optional one. */
export type TemplateChange = {
  [K in "name" | "role" | "type" | "content" | "defaultInjectionStrategy"]?: MessageTemplate[K] | null;
};

export function changeTemplate(preset: Preset, id: string, change: TemplateChange): Preset {
  return {
    ...preset,
    messageTemplates: preset.messageTemplates.map((t) => {
      if (t.id !== id) return t;
      const next = { ...t, ...change } as Record<string, unknown>;
      for (const [key, value] of Object.entries(change)) {
        if (value === undefined || value === null) delete next[key];
      }
      return next as MessageTemplate;
    }),
  };
}

/** How many steps, over all recipes, name template `id`. */
export function templateUsage(preset: Preset, id: string): number {
  return preset.contextRecipes.reduce(
    (n, r) => n + r.steps.filter((s) => s.messageId === id).length,
    0,
  );
}

/** How many placements (template defaults, steps, lorebook entries) are anchored to `id`. */
export function anchoredTo(preset: Preset, id: string): number {
  const at = (s: InjectionStrategy | null | undefined) => (s?.anchorTarget === id ? 1 : 0);
  return (
    preset.messageTemplates.reduce((n, t) => n + (t.id === id ? 0 : at(t.defaultInjectionStrategy)), 0) +
    preset.contextRecipes.reduce(
      (n, r) => n + r.steps.reduce((m, s) => m + (s.messageId === id ? 0 : at(s.injectionStrategy)), 0),
      0,
    ) +
    (preset.lorebook?.entries ?? []).reduce((n, e) => n + at(e.strategy), 0)
  );
}

/** `preset` with `change` applied to every placement strategy there is: template defaults, recipe
 * steps and lorebook entries. Holders whose strategy comes back the same are kept as they were. */
function mapStrategies(preset: Preset, change: (s: InjectionStrategy) => InjectionStrategy): Preset {
  const swap = <T, K extends keyof T>(holder: T, key: K): T => {
    const s = holder[key] as InjectionStrategy | null | undefined;
    const next = s ? change(s) : s;
    return next === s ? holder : { ...holder, [key]: next };
  };
  return {
    ...preset,
    lorebook: preset.lorebook
      ? { ...preset.lorebook, entries: (preset.lorebook.entries ?? []).map((e) => swap(e, "strategy")) }
      : preset.lorebook,
    messageTemplates: preset.messageTemplates.map((t) => swap(t, "defaultInjectionStrategy")),
    contextRecipes: preset.contextRecipes.map((r) => ({ ...r, steps: r.steps.map((s) => swap(s, "injectionStrategy")) })),
  };
}

/** Deletes template `id` and every step that names it. Placements anchored to it would have
 * nowhere to go: they lose the anchor and fall back to list order (their depth and order stay). */
export function deleteTemplate(preset: Preset, id: string): Preset {
  const without: Preset = {
    ...preset,
    messageTemplates: preset.messageTemplates.filter((t) => t.id !== id),
    contextRecipes: preset.contextRecipes.map((r) => ({ ...r, steps: r.steps.filter((s) => s.messageId !== id) })),
  };
  return mapStrategies(without, (s) => {
    if (s.anchorTarget !== id) return s;
    const rest = { ...s };
    delete rest.anchorTarget;
    delete rest.anchorPosition;
    return rest;
  });
}

/** Gives template `from` the id `to`: the steps that name it and the strategies anchored to it
 * follow, in templates, steps and lorebook entries alike. */
export function renameTemplate(preset: Preset, from: string, to: string): Preset {
  if (from === to) return preset;
  const renamed: Preset = {
    ...preset,
    messageTemplates: preset.messageTemplates.map((t) => (t.id === from ? { ...t, id: to } : t)),
    contextRecipes: preset.contextRecipes.map((r) => ({
      ...r,
      steps: r.steps.map((s) => (s.messageId === from ? { ...s, messageId: to } : s)),
    })),
  };
  return mapStrategies(renamed, (s) => (s.anchorTarget === from ? { ...s, anchorTarget: to } : s));
}

// ---- recipes --------------------------------------------------------------------------------

function withRecipe(preset: Preset, at: number, change: (r: ContextRecipe) => ContextRecipe): Preset {
  return {
    ...preset,
    contextRecipes: preset.contextRecipes.map((r, i) => (i === at ? change(r) : r)),
  };
}

/** A new empty recipe at the end; it matches no model until its filter says so. Without a
 * name, its tab shows its id. */
export function addRecipe(preset: Preset, name?: string): { preset: Preset; id: string } {
  const id = freeId(
    preset.contextRecipes.map((r) => r.id),
    "recipe",
  );
  const recipe: ContextRecipe = name ? { id, name, modelFilter: [], steps: [] } : { id, modelFilter: [], steps: [] };
  return { preset: { ...preset, contextRecipes: [...preset.contextRecipes, recipe] }, id };
}

/** A copy of recipe `at` right after it, with a free id, no name (its tab shows the id) and no
 * model filter (two recipes with one filter would leave the copy unreachable). */
export function duplicateRecipe(preset: Preset, at: number): { preset: Preset; id: string } {
  const source = preset.contextRecipes[at];
  if (!source) return { preset, id: "" };
  const id = freeId(
    preset.contextRecipes.map((r) => r.id),
    `${source.id}-copy`,
  );
  const copy: ContextRecipe = { ...structuredClone(source), id, modelFilter: [] };
  delete copy.name;
  const recipes = [...preset.contextRecipes];
  recipes.splice(at + 1, 0, copy);
  return { preset: { ...preset, contextRecipes: recipes }, id };
}

export function deleteRecipe(preset: Preset, at: number): Preset {
  return { ...preset, contextRecipes: preset.contextRecipes.filter((_, i) => i !== at) };
}

export function changeRecipe(
  preset: Preset,
  at: number,
  change: Partial<Pick<ContextRecipe, "id" | "name" | "modelFilter">>,
): Preset {
  return withRecipe(preset, at, (r) => ({ ...r, ...change }));
}

// ---- steps ----------------------------------------------------------------------------------

/** A new enabled step naming template `templateId`, inserted at `index` (the end if past it). */
export function insertStep(preset: Preset, at: number, templateId: string, index: number): Preset {
  return withRecipe(preset, at, (r) => {
    const steps = [...r.steps];
    steps.splice(Math.max(0, Math.min(index, steps.length)), 0, { messageId: templateId, enabled: true });
    return { ...r, steps };
  });
}

/** Removes step `index` of recipe `at`; the template stays in the library. */
export function removeRecipeStep(preset: Preset, at: number, index: number): Preset {
  return withRecipe(preset, at, (r) => ({ ...r, steps: r.steps.filter((_, i) => i !== index) }));
}

export type OverrideField = "content" | "role";

/** Sets (a value) or resets (null) one override of a step. */
export function setStepOverride(
  preset: Preset,
  at: number,
  index: number,
  field: OverrideField,
  value: string | null,
): Preset {
  return withRecipe(preset, at, (r) => ({
    ...r,
    steps: r.steps.map((s, i) => {
      if (i !== index) return s;
      const overrides = { ...(s.overrides ?? {}) } as NonNullable<RecipeStep["overrides"]>;
      if (value === null) delete overrides[field];
      else if (field === "role") overrides.role = value as Role;
      else overrides.content = value;
      const next: RecipeStep = { ...s, overrides };
      if (Object.keys(overrides).length === 0) delete next.overrides;
      return next;
    }),
  }));
}

/** Back to the template's default strategy. */
export function resetStepStrategy(preset: Preset, at: number, index: number): Preset {
  return withRecipe(preset, at, (r) => ({
    ...r,
    steps: r.steps.map((s, i) => {
      if (i !== index) return s;
      const next = { ...s };
      delete next.injectionStrategy;
      return next;
    }),
  }));
}

/** What a step overrides, for the "overridden" highlight. */
export function overriddenFields(step: RecipeStep): ("strategy" | OverrideField)[] {
  const fields: ("strategy" | OverrideField)[] = [];
  if (step.injectionStrategy !== undefined && step.injectionStrategy !== null) fields.push("strategy");
  if (step.overrides?.content !== undefined && step.overrides?.content !== null) fields.push("content");
  if (step.overrides?.role !== undefined && step.overrides?.role !== null) fields.push("role");
  return fields;
}
