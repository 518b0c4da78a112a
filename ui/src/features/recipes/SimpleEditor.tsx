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
import { ListTools } from "../../components/lists/ListTools";
import { addMessage, addSection, moveStep, recipeIndex, stepViews, type StepView } from "./recipe";
import { recipeList, stepTextOf, type RecipeList } from "./recipeList";
import { foldedOf, toggleFolded, useListView, type ListView } from "../../components/lists/listView";
import { simpleStepId } from "./dragIds";
import type { Preset } from "../../app/model";
import type { ContextRecipe } from "../../bindings";

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
  const listView = useListView("steps");
  const at = preset ? recipeIndex(preset, recipeId) : -1;
  const recipe = preset?.contextRecipes[at];
  const views = viewsOf(preset, recipe);
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
      {views.length > SCROLL_FROM && (
        <ListTools
          listId="steps"
          list={list}
          presetId={preset.id}
          filterLabel={t("recipe.filter")}
          hasCategories={views.some((v) => stepTextOf(v.template).meta.category)}
        />
      )}
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

const NO_VIEWS: StepView[] = [];
const NOTHING_FOLDED: ReadonlySet<string> = new Set();
let lastViews: { templates: Preset["messageTemplates"]; recipe: ContextRecipe; views: StepView[] } | null = null;

/** The steps of `recipe`, worked out once per edit for the editor and its list alike. */
function viewsOf(preset: Preset | null, recipe: ContextRecipe | undefined): StepView[] {
  if (!preset || !recipe) return NO_VIEWS;
  if (lastViews?.templates !== preset.messageTemplates || lastViews.recipe !== recipe) {
    lastViews = { templates: preset.messageTemplates, recipe, views: stepViews(preset, recipe) };
  }
  return lastViews.views;
}

/** The rows shown of `views` as the list view asks, filtered only where the list has tools;
 * the editor and its list get the same rows, worked out once. */
function useRecipeList(views: StepView[], listView: ListView, presetId: string | undefined): RecipeList {
  const folded = presetId ? foldedOf(listView, presetId) : NOTHING_FOLDED;
  // A short recipe has no tools, so no filter either (one may be left from a long one).
  const tools = views.length > SCROLL_FROM;
  const query = tools ? listView.query : "";
  const enabledOnly = tools && listView.enabledOnly;
  const grouping = tools ? listView.grouping : "sections";
  return recipeList(views, { query, enabledOnly, grouping, folded });
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
  const listView = useListView("steps");
  const recipe = preset?.contextRecipes[recipeAt];
  const views = viewsOf(preset, recipe);
  const list = useRecipeList(views, listView, preset?.id);
  // The sortable ids of the rows shown; the same array while they stay the same, so that the
  // sortable context keeps its value.
  const idsKey = list.rows
    .map((r) => (r.kind === "item" ? simpleStepId(r.item.view.key) : r.header ? simpleStepId(r.header.view.key) : ""))
    .filter(Boolean)
    .join("\n");
  const ids = useMemo(() => (idsKey ? idsKey.split("\n") : []), [idsKey]);
  const presetId = preset?.id;
  const onFold = useCallback((key: string) => presetId && toggleFolded("steps", presetId, key), [presetId]);
  return (
    <SortableContext items={ids} strategy={verticalListSortingStrategy}>
      <ol className={views.length > SCROLL_FROM ? "steps scrolling" : "steps"} data-testid="steps">
        {list.rows.map((row) =>
          row.kind === "section" ? (
            <SectionRow
              key={`section:${row.key}`}
              section={row}
              recipeAt={recipeAt}
              selected={row.header !== null && selected === row.header.view.index}
              onFold={onFold}
            />
          ) : (
            <StepRow
              key={row.item.view.key}
              view={row.item.view}
              text={row.item.text}
              recipeAt={recipeAt}
              selected={selected === row.item.view.index}
            />
          ),
        )}
      </ol>
    </SortableContext>
  );
}
