// Simple mode's view of a preset (RULES 2.1, 9.2): the steps of the recipe that applies to the
// chosen model, each with the template it names. Every edit here is a pure function from preset to
// preset; the store records it for undo and autosave.
import type { Preset } from "../../app/model";
import type {
  ContextRecipe,
  InjectionStrategy,
  MessageTemplate,
  RecipeStep,
  Role,
} from "../../bindings";
import { modeOf, strategyFor, type InjectionMode, type StrategyValues } from "../../components/strategy";

export interface StepView {
  index: number;
  step: RecipeStep;
  template: MessageTemplate | undefined;
  /** The strategy that applies: the step's own, else the template's default. */
  strategy: InjectionStrategy | null;
  mode: InjectionMode;
  /** A stable key for the sortable list. */
  key: string;
}

export function recipeIndex(preset: Preset, recipeId: string | null): number {
  const i = preset.contextRecipes.findIndex((r) => r.id === recipeId);
  if (i >= 0) return i;
  return preset.contextRecipes.length > 0 ? 0 : -1;
}

export function stepViews(preset: Preset, recipe: ContextRecipe): StepView[] {
  const seen = new Map<string, number>();
  // The first template of an id, as `find` would give it, without a search per step.
  const byId = new Map<string, MessageTemplate>();
  for (const t of preset.messageTemplates) if (!byId.has(t.id)) byId.set(t.id, t);
  return recipe.steps.map((step, index) => {
    const template = byId.get(step.messageId);
    const strategy = step.injectionStrategy ?? template?.defaultInjectionStrategy ?? null;
    const n = seen.get(step.messageId) ?? 0;
    seen.set(step.messageId, n + 1);
    return {
      index,
      step,
      template,
      strategy,
      mode: modeOf(strategy),
      key: n === 0 ? step.messageId : `${step.messageId}#${n}`,
    };
  });
}

function withRecipe(
  preset: Preset,
  recipeAt: number,
  change: (r: ContextRecipe) => ContextRecipe,
): Preset {
  return {
    ...preset,
    contextRecipes: preset.contextRecipes.map((r, i) => (i === recipeAt ? change(r) : r)),
  };
}

export function moveStep(preset: Preset, recipeAt: number, from: number, to: number) {
  if (from === to) return preset;
  return withRecipe(preset, recipeAt, (r) => {
    const steps = [...r.steps];
    const [moved] = steps.splice(from, 1);
    steps.splice(to, 0, moved);
    return { ...r, steps };
  });
}

export function setStepEnabled(preset: Preset, recipeAt: number, at: number, enabled: boolean) {
  return setStepsEnabled(preset, recipeAt, [at], enabled);
}

/** Switches the steps at `indices` (a whole section) on or off, as one edit. */
export function setStepsEnabled(preset: Preset, recipeAt: number, indices: number[], enabled: boolean) {
  const at = new Set(indices);
  return withRecipe(preset, recipeAt, (r) => ({
    ...r,
    steps: r.steps.map((s, i) => (at.has(i) && s.enabled !== enabled ? { ...s, enabled } : s)),
  }));
}

/** Sets the step's strategy. "List" is written as an empty strategy only when the template has
 * a default that would otherwise move it. */
export function setStepStrategy(
  preset: Preset,
  recipeAt: number,
  at: number,
  mode: InjectionMode,
  values: StrategyValues,
) {
  return withRecipe(preset, recipeAt, (r) => ({
    ...r,
    steps: r.steps.map((s, i) => {
      if (i !== at) return s;
      const template = preset.messageTemplates.find((t) => t.id === s.messageId);
      // An override keeps the order it would have inherited.
      const order = s.injectionStrategy?.order ?? template?.defaultInjectionStrategy?.order;
      let strategy = strategyFor(mode, values, order);
      if (!strategy && modeOf(template?.defaultInjectionStrategy) !== "list") strategy = {};
      const next: RecipeStep = { ...s };
      if (strategy) next.injectionStrategy = strategy;
      else delete next.injectionStrategy;
      return next;
    }),
  }));
}

export function updateTemplate(
  preset: Preset,
  templateId: string,
  change: Partial<Pick<MessageTemplate, "role" | "content" | "name">>,
): Preset {
  return {
    ...preset,
    messageTemplates: preset.messageTemplates.map((t) =>
      t.id === templateId ? { ...t, ...change } : t,
    ),
  };
}

/** A fresh template id: `message`, `message-2`, ... */
export function freeTemplateId(preset: Preset, base = "message"): string {
  const taken = new Set(preset.messageTemplates.map((t) => t.id));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** Adds a new system message at the end of the recipe; returns the preset and its step index. */
export function addMessage(
  preset: Preset,
  recipeAt: number,
  name: string,
  role: Role = "system",
): { preset: Preset; index: number } {
  const id = freeTemplateId(preset);
  return appendStep(preset, recipeAt, { id, name, role, content: "" }, true);
}

/** Adds a section by hand (issue 39): a step named as a header, `=== name ===`, which starts a
 * section in the list. It holds no text and is switched off, so it sends nothing. */
export function addSection(preset: Preset, recipeAt: number, name: string): { preset: Preset; index: number } {
  const id = freeTemplateId(preset, "section");
  return appendStep(preset, recipeAt, { id, name: `=== ${name} ===`, role: "system", content: "" }, false);
}

/** Adds `template` and a step of it at the end of the recipe; returns the preset and the step's index. */
function appendStep(
  preset: Preset,
  recipeAt: number,
  template: MessageTemplate,
  enabled: boolean,
): { preset: Preset; index: number } {
  let index = 0;
  const next = withRecipe(
    { ...preset, messageTemplates: [...preset.messageTemplates, template] },
    recipeAt,
    (r) => {
      index = r.steps.length;
      return { ...r, steps: [...r.steps, { messageId: template.id, enabled }] };
    },
  );
  return { preset: next, index };
}

/** Removes a step; its template goes too when no other step of any recipe names it. */
export function removeStep(preset: Preset, recipeAt: number, at: number): Preset {
  const id = preset.contextRecipes[recipeAt]?.steps[at]?.messageId;
  const without = withRecipe(preset, recipeAt, (r) => ({
    ...r,
    steps: r.steps.filter((_, i) => i !== at),
  }));
  const stillUsed = without.contextRecipes.some((r) => r.steps.some((s) => s.messageId === id));
  if (stillUsed) return without;
  return { ...without, messageTemplates: without.messageTemplates.filter((t) => t.id !== id) };
}

export function isSlot(template: MessageTemplate | undefined): boolean {
  return !!template?.type && template.type !== "message";
}
