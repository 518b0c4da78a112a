import { useCallback, useMemo } from "react";
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
import { editPreset, editPresetFor, selectStep, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { MessageEditor } from "./MessageEditor";
import { StepRow } from "./StepRow";
import { SectionRow } from "./SectionRow";
import { ListTools } from "./ListTools";
import { addMessage, addSection, moveStep, recipeIndex, stepViews } from "./recipe";
import { recipeList } from "./recipeList";
import { foldedOf, toggleFolded, useListView } from "./listView";
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
  const sensors = useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 4 } }),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );
  const at = preset ? recipeIndex(preset, recipeId) : -1;
  const recipe = preset?.contextRecipes[at];
  const views = useMemo(() => (preset && recipe ? stepViews(preset, recipe) : []), [preset, recipe]);
  const folded = preset ? foldedOf(listView, preset.id) : undefined;
  // A short recipe has no tools, so no filter either (one may be left from a long one).
  const tools = views.length > SCROLL_FROM;
  const query = tools ? listView.query : "";
  const enabledOnly = tools && listView.enabledOnly;
  const grouping = tools ? listView.grouping : "sections";
  const list = useMemo(
    () => recipeList(views, { query, enabledOnly, grouping, folded: folded ?? new Set() }),
    [views, query, enabledOnly, grouping, folded],
  );
  // The sortable ids of the rows shown; the same array while they stay the same, so that the
  // rows' sortable state is not made again on every keystroke.
  const idsKey = list.rows
    .map((r) => (r.kind === "step" ? simpleStepId(r.view.key) : r.header ? simpleStepId(r.header.key) : ""))
    .filter(Boolean)
    .join("\n");
  const ids = useMemo(() => (idsKey ? idsKey.split("\n") : []), [idsKey]);
  const presetId = preset?.id;
  const onFold = useCallback((key: string) => presetId && toggleFolded(presetId, key), [presetId]);

  if (!preset) return <section className="editor empty">{t("presets.none")}</section>;
  if (!recipe) {
    return <section className="editor empty">{t("recipe.noneApplies", { model })}</section>;
  }

  const onDragEnd = (e: DragEndEvent) => {
    if (!e.over || e.active.id === e.over.id) return;
    const from = views.findIndex((v) => simpleStepId(v.key) === e.active.id);
    const to = views.findIndex((v) => simpleStepId(v.key) === e.over?.id);
    if (from < 0 || to < 0) return;
    editPreset((p) => moveStep(p, at, from, to));
    if (selected === from) selectStep(to);
  };

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
      {tools && <ListTools list={list} views={views} presetId={preset.id} />}
      <DndContext sensors={sensors} collisionDetection={closestCenter} onDragEnd={onDragEnd}>
        <SortableContext items={ids} strategy={verticalListSortingStrategy}>
          <ol className={tools ? "steps scrolling" : "steps"} data-testid="steps">
            {list.rows.map((row) =>
              row.kind === "section" ? (
                <SectionRow
                  key={`section:${row.key}`}
                  section={row}
                  recipeAt={at}
                  selected={row.header !== null && selected === row.header.index}
                  onFold={onFold}
                />
              ) : (
                <StepRow
                  key={row.view.key}
                  view={row.view}
                  text={row.text}
                  recipeAt={at}
                  selected={selected === row.view.index}
                />
              ),
            )}
          </ol>
        </SortableContext>
      </DndContext>
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
