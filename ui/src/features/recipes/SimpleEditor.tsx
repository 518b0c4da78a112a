import { memo, useCallback, useMemo } from "react";
import {
  DndContext,
  KeyboardSensor,
  PointerSensor,
  closestCenter,
  useSensor,
  useSensors,
  type DragEndEvent,
} from "@dnd-kit/core";
import {
  SortableContext,
  sortableKeyboardCoordinates,
  verticalListSortingStrategy,
} from "@dnd-kit/sortable";
import { editPreset, editPresetFor, getState, selectStep, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { MessageEditor } from "./MessageEditor";
import { StepRow } from "./StepRow";
import { SectionRow } from "./SectionRow";
import { ListTools } from "./ListTools";
import { addMessage, addSection, moveStep, recipeIndex, stepViews, type StepView } from "./recipe";
import { recipeList, type RecipeList } from "./recipeList";
import { foldedOf, toggleFolded, useListView, type ListView } from "./listView";
import { simpleStepId } from "./dragIds";

/** A recipe longer than this scrolls in a box of its own, so that the editor of the selected
 * step stays in view below it, and has the list's tools (filter, enabled only, the count). */
const SCROLL_FROM = 12;

/** Simple mode (RULES 9.2): the recipe that applies to the chosen model, as a sortable list. */
export function SimpleEditor() {
  const t = useT();
  const preset = useApp((s) => s.preset);
  const recipeId = useApp((s) => s.recipeId);
  const model = useApp((s) => s.model);
  const selected = useApp((s) => s.selectedStep);
  const listView = useListView();
  const at = preset ? recipeIndex(preset, recipeId) : -1;
  const recipe = preset?.contextRecipes[at];
  const views = useMemo(() => (preset && recipe ? stepViews(preset, recipe) : []), [preset, recipe]);
  const list = useRecipeList(views, listView, preset?.id);

  if (!preset) return <section className="editor empty">{t("presets.none")}</section>;
  if (!recipe) {
    return <section className="editor empty">{t("recipe.noneApplies", { model })}</section>;
  }

  return (
    <section className="editor" aria-label={t("recipe.title")}>
      <header className="editor-head">
        <div>
          <h2>{preset.name}</h2>
          <p className="muted" data-testid="recipe-applies">
            {recipeId
              ? t("recipe.appliesTo", { recipe: recipe.name ?? recipe.id, model })
              : `${t("recipe.title")}: ${recipe.name ?? recipe.id}`}
          </p>
        </div>
        <div className="editor-head-actions">
          <button
            type="button"
            data-testid="add-section"
            title={t("recipe.addSectionHint")}
            onClick={() => {
              const added = editPresetFor((p) => addSection(p, at, t("recipe.newSection")));
              if (added) selectStep(added.index);
            }}
          >
            + {t("recipe.addSection")}
          </button>
          <button
            type="button"
            className="primary"
            data-testid="add-message"
            onClick={() => {
              const added = editPresetFor((p) => addMessage(p, at, t("recipe.newMessage")));
              if (added) selectStep(added.index);
            }}
          >
            + {t("recipe.addMessage")}
          </button>
        </div>
      </header>
      {views.length > SCROLL_FROM && <ListTools list={list} views={views} presetId={preset.id} />}
      <StepList recipeAt={at} />
      {views.length === 0 && <p className="muted">{t("recipe.empty")}</p>}
      {views.length > 0 && list.rows.length === 0 && (
        <p className="muted" data-testid="steps-none-match">
          {t("recipe.noneMatch")}
        </p>
      )}
      {selected !== null && views[selected] ? (
        <MessageEditor view={views[selected]} recipeAt={at} />
      ) : (
        <p className="muted hint">{t("editor.select")}</p>
      )}
    </section>
  );
}

/** The rows shown of `views` as the list view asks, filtered only where the list has tools. */
function useRecipeList(views: StepView[], listView: ListView, presetId: string | undefined): RecipeList {
  const folded = presetId ? foldedOf(listView, presetId) : undefined;
  // A short recipe has no tools, so no filter either (one may be left from a long one).
  const tools = views.length > SCROLL_FROM;
  const query = tools ? listView.query : "";
  const enabledOnly = tools && listView.enabledOnly;
  const grouping = tools ? listView.grouping : "sections";
  return useMemo(
    () => recipeList(views, { query, enabledOnly, grouping, folded: folded ?? new Set() }),
    [views, query, enabledOnly, grouping, folded],
  );
}

/**
 * The sortable list. Its drag context is rendered again only when the recipe shown changes, not
 * on each edit: a render of the context renders every sortable row again, which in a 260-step
 * recipe took longer than the build itself. The rows below it follow the store on their own.
 */
const StepList = memo(function StepList({ recipeAt }: { recipeAt: number }) {
  const sensors = useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 4 } }),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );
  const onDragEnd = useCallback(
    (e: DragEndEvent) => {
      const { preset, selectedStep } = getState();
      const recipe = preset?.contextRecipes[recipeAt];
      if (!preset || !recipe || !e.over || e.active.id === e.over.id) return;
      const views = stepViews(preset, recipe);
      const from = views.findIndex((v) => simpleStepId(v.key) === e.active.id);
      const to = views.findIndex((v) => simpleStepId(v.key) === e.over?.id);
      if (from < 0 || to < 0) return;
      editPreset((p) => moveStep(p, recipeAt, from, to));
      if (selectedStep === from) selectStep(to);
    },
    [recipeAt],
  );
  return (
    <DndContext sensors={sensors} collisionDetection={closestCenter} onDragEnd={onDragEnd}>
      <StepRows recipeAt={recipeAt} />
    </DndContext>
  );
});

function StepRows({ recipeAt }: { recipeAt: number }) {
  const preset = useApp((s) => s.preset);
  const selected = useApp((s) => s.selectedStep);
  const listView = useListView();
  const recipe = preset?.contextRecipes[recipeAt];
  const views = useMemo(() => (preset && recipe ? stepViews(preset, recipe) : []), [preset, recipe]);
  const list = useRecipeList(views, listView, preset?.id);
  // The sortable ids of the rows shown; the same array while they stay the same, so that the
  // sortable context keeps its value.
  const idsKey = list.rows
    .map((r) => (r.kind === "step" ? simpleStepId(r.view.key) : r.header ? simpleStepId(r.header.key) : ""))
    .filter(Boolean)
    .join("\n");
  const ids = useMemo(() => (idsKey ? idsKey.split("\n") : []), [idsKey]);
  const presetId = preset?.id;
  const onFold = useCallback((key: string) => presetId && toggleFolded(presetId, key), [presetId]);
  return (
    <SortableContext items={ids} strategy={verticalListSortingStrategy}>
      <ol className={views.length > SCROLL_FROM ? "steps scrolling" : "steps"} data-testid="steps">
        {list.rows.map((row) =>
          row.kind === "section" ? (
            <SectionRow
              key={`section:${row.key}`}
              section={row}
              recipeAt={recipeAt}
              selected={row.header !== null && selected === row.header.index}
              onFold={onFold}
            />
          ) : (
            <StepRow
              key={row.view.key}
              view={row.view}
              text={row.text}
              recipeAt={recipeAt}
              selected={selected === row.view.index}
            />
          ),
        )}
      </ol>
    </SortableContext>
  );
}
