import { useEffect, useState } from "react";
import { useDroppable } from "@dnd-kit/core";
import { SortableContext, verticalListSortingStrategy } from "@dnd-kit/sortable";
import type { ContextRecipe, RecipeMatches } from "../../bindings";
import type { Preset } from "../../app/model";
import { api, errorMessage } from "../../app/api";
import { editPreset, editPresetFor, getState, openWorkbenchRecipe, useApp } from "../../app/store";
import { useSay, useT } from "../../app/useT";
import { ConfirmDialog } from "../../app/ConfirmDialog";
import { TagInput } from "../../components/TagInput";
import { IdField } from "../../components/IdField";
import { WorkbenchStep } from "./WorkbenchStep";
import { stepViews } from "./recipe";
import { addRecipe, changeRecipe, deleteRecipe, duplicateRecipe } from "./workbenchEdits";
import { STEPS_END, stepId } from "./dragIds";

/** The recipe open in the workbench: the one chosen, else the one the model gets, else the first. */
export function workbenchRecipeIndex(preset: Preset, id: string | null): number {
  const chosen = preset.contextRecipes.findIndex((r) => r.id === id);
  if (chosen >= 0) return chosen;
  const applied = preset.contextRecipes.findIndex((r) => r.id === getState().recipeId);
  if (applied >= 0) return applied;
  return preset.contextRecipes.length > 0 ? 0 : -1;
}

/** The recipe workbench (RULES 9.3): a tab per recipe, its id, name and model filter, and its
 * steps, which take templates dropped from the library. */
export function Workbench() {
  const t = useT();
  const preset = useApp((s) => s.preset);
  const chosen = useApp((s) => s.workbenchRecipe);
  // `workbenchRecipeIndex` falls back to the recipe the model gets: follow it.
  useApp((s) => s.recipeId);
  const at = preset ? workbenchRecipeIndex(preset, chosen) : -1;
  const recipe = preset?.contextRecipes[at];
  // Pin the recipe shown: otherwise an edit that changes which recipe the model gets would switch
  // the workbench to another tab under the user's hands.
  useEffect(() => {
    if (recipe && chosen !== recipe.id) openWorkbenchRecipe(recipe.id);
  }, [recipe, chosen]);
  if (!preset) return null;

  const add = () => {
    const added = editPresetFor((p) => addRecipe(p));
    if (added) openWorkbenchRecipe(added.id);
  };

  return (
    <section className="workbench" aria-label={t("workbench.title")} data-testid="workbench">
      <div className="recipe-tabs">
        <div role="tablist" aria-label={t("workbench.recipes")} className="recipe-tablist">
          {preset.contextRecipes.map((r, i) => (
            <button
              key={`${r.id}#${i}`}
              id={`recipe-tab-${i}`}
              type="button"
              role="tab"
              aria-selected={i === at}
              aria-controls="recipe-tabpanel"
              className={i === at ? "tab current" : "tab"}
              data-testid={`recipe-tab-${r.id}`}
              title={r.id}
              onClick={() => openWorkbenchRecipe(r.id)}
            >
              {r.name || r.id}
            </button>
          ))}
        </div>
        <button type="button" className="tab add-tab" data-testid="add-recipe" onClick={add} title={t("workbench.add")}>
          + {t("workbench.add")}
        </button>
      </div>
      {recipe ? (
        <RecipePanel key={recipe.id} preset={preset} recipe={recipe} at={at} />
      ) : (
        <p className="muted">{t("workbench.none")}</p>
      )}
    </section>
  );
}

function RecipePanel({ preset, recipe, at }: { preset: Preset; recipe: ContextRecipe; at: number }) {
  const t = useT();
  const [confirm, setConfirm] = useState(false);
  // The expanded step, by its key: it stays open on the same step when steps move.
  const [expanded, setExpanded] = useState<string | null>(null);
  const views = stepViews(preset, recipe);
  const { setNodeRef, isOver } = useDroppable({ id: STEPS_END });

  return (
    <div
      className="recipe-panel"
      id="recipe-tabpanel"
      role="tabpanel"
      aria-labelledby={`recipe-tab-${at}`}
      data-testid={`recipe-panel-${recipe.id}`}
    >
      <div className="field-row recipe-fields">
        <IdField
          label={t("workbench.id")}
          id={recipe.id}
          taken={preset.contextRecipes.map((r) => r.id)}
          testId="recipe-id-input"
          onCommit={(id) => {
            editPreset((p) => changeRecipe(p, at, { id }));
            openWorkbenchRecipe(id);
          }}
        />
        <label>
          {t("workbench.name")}
          <input
            value={recipe.name ?? ""}
            placeholder={recipe.id}
            data-testid="recipe-name-input"
            onChange={(e) =>
              editPreset((p) => changeRecipe(p, at, { name: e.target.value || undefined }), `rname:${at}`)
            }
          />
        </label>
        <div className="recipe-actions">
          <button
            type="button"
            data-testid="duplicate-recipe"
            onClick={() => {
              const copy = editPresetFor((p) => duplicateRecipe(p, at));
              if (copy) openWorkbenchRecipe(copy.id);
            }}
          >
            {t("presets.duplicate")}
          </button>
          <button type="button" className="danger" data-testid="delete-recipe" onClick={() => setConfirm(true)}>
            {t("presets.delete")}
          </button>
        </div>
      </div>
      <ModelFilter key={recipe.id} preset={preset} recipe={recipe} at={at} />
      <h4 className="steps-title">{t("workbench.steps", { count: recipe.steps.length })}</h4>
      <SortableContext items={views.map((v) => stepId(v.key))} strategy={verticalListSortingStrategy}>
        <ol className="steps workbench-steps" data-testid="workbench-steps">
          {views.map((v) => (
            <WorkbenchStep
              key={v.key}
              view={v}
              recipeAt={at}
              expanded={expanded === v.key}
              onToggle={() => setExpanded((e) => (e === v.key ? null : v.key))}
            />
          ))}
        </ol>
      </SortableContext>
      <div
        ref={setNodeRef}
        className={isOver ? "drop-end over" : "drop-end"}
        data-testid="steps-drop-end"
      >
        {recipe.steps.length === 0 ? t("workbench.dropFirst") : t("workbench.dropHere")}
      </div>
      {confirm && (
        <ConfirmDialog
          message={t("workbench.confirmDelete", { name: recipe.name || recipe.id })}
          confirm={t("presets.delete")}
          onCancel={() => setConfirm(false)}
          onConfirm={() => {
            setConfirm(false);
            editPreset((p) => deleteRecipe(p, at));
            openWorkbenchRecipe(null);
          }}
        />
      )}
    </div>
  );
}

/** The model filter as tags, refused when a pattern is not one, and the models it reaches. */
function ModelFilter({ preset, recipe, at }: { preset: Preset; recipe: ContextRecipe; at: number }) {
  const t = useT();
  const say = useSay();
  const models = useApp((s) => s.models);
  const model = useApp((s) => s.model);
  const [matches, setMatches] = useState<{ all: RecipeMatches; own: RecipeMatches } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stale = false;
    const ids = models.includes(model) ? models : [model, ...models];
    const timer = setTimeout(() => {
      Promise.all([
        api.recipeMatches(preset, ids),
        api.recipeMatches({ ...preset, contextRecipes: [recipe] }, ids),
      ]).then(
        ([all, own]) => {
          if (!stale) {
            setMatches({ all, own });
            setError(null);
          }
        },
        (e) => !stale && setError(errorMessage(e)),
      );
    }, 120);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [preset, recipe, models, model]);

  const invalid: Record<string, string> = {};
  for (const p of matches?.all.problems ?? []) if (p.recipe === recipe.id) invalid[p.pattern] = say(p.said, p.message);
  const winner = new Map((matches?.all.models ?? []).map((m) => [m.model, m.recipe]));
  const reached = (matches?.own.models ?? []).filter((m) => m.recipe !== null).map((m) => m.model);
  const wins = reached.filter((m) => winner.get(m) === recipe.id);
  const lost = reached.filter((m) => winner.get(m) !== recipe.id);

  const validate = async (pattern: string) => {
    try {
      const check = await api.recipeMatches(
        { ...preset, contextRecipes: [{ ...recipe, modelFilter: [pattern] }] },
        [],
      );
      const problem = check.problems[0];
      return problem ? say(problem.said, problem.message) : null;
    } catch (e) {
      return errorMessage(e);
    }
  };

  return (
    <div className="model-filter">
      <label className="filter-label">{t("workbench.filter")}</label>
      <TagInput
        values={recipe.modelFilter}
        label={t("workbench.filter")}
        placeholder={t("workbench.filterPlaceholder")}
        testId="model-filter"
        validate={validate}
        invalid={invalid}
        onChange={(modelFilter) => editPreset((p) => changeRecipe(p, at, { modelFilter }))}
      />
      {error && <p className="error">{error}</p>}
      <div className="matches" data-testid="filter-matches">
        {recipe.modelFilter.length === 0 ? (
          <p className="muted">{t("workbench.noFilter")}</p>
        ) : wins.length === 0 && lost.length === 0 ? (
          <p className="muted">{t("workbench.noKnownModel")}</p>
        ) : (
          <>
            {wins.length > 0 && (
              <p>
                <span className="muted">{t("workbench.wins")}</span>{" "}
                {wins.map((m) => (
                  <span key={m} className="tag tag-wins" data-testid={`wins-${m}`}>
                    {m}
                  </span>
                ))}
              </p>
            )}
            {lost.length > 0 && (
              <p>
                <span className="muted">{t("workbench.shadowed")}</span>{" "}
                {lost.map((m) => (
                  <span key={m} className="tag tag-shadowed" data-testid={`shadowed-${m}`}>
                    {m} → {winner.get(m) ?? "—"}
                  </span>
                ))}
              </p>
            )}
          </>
        )}
      </div>
    </div>
  );
}
