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
import { addMessage, moveStep, recipeIndex, stepViews } from "./recipe";
import { simpleStepId } from "./dragIds";

/** Simple mode (RULES 9.2): the recipe that applies to the chosen model, as a sortable list. */
export function SimpleEditor() {
  const t = useT();
  const preset = useApp((s) => s.preset);
  const recipeId = useApp((s) => s.recipeId);
  const model = useApp((s) => s.model);
  const selected = useApp((s) => s.selectedStep);
  const sensors = useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 4 } }),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );
  if (!preset) return <section className="editor empty">{t("presets.none")}</section>;
  const at = recipeIndex(preset, recipeId);
  const recipe = preset.contextRecipes[at];
  if (!recipe) {
    return <section className="editor empty">{t("recipe.noneApplies", { model })}</section>;
  }
  const views = stepViews(preset, recipe);

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
      </header>
      <DndContext sensors={sensors} collisionDetection={closestCenter} onDragEnd={onDragEnd}>
        <SortableContext items={views.map((v) => simpleStepId(v.key))} strategy={verticalListSortingStrategy}>
          <ol className="steps" data-testid="steps">
            {views.map((v) => (
              <StepRow
                key={v.key}
                view={v}
                recipeAt={at}
                selected={selected === v.index}
              />
            ))}
          </ol>
        </SortableContext>
      </DndContext>
      {views.length === 0 && <p className="muted">{t("recipe.empty")}</p>}
      {selected !== null && views[selected] ? (
        <MessageEditor view={views[selected]} recipeAt={at} />
      ) : (
        <p className="muted hint">{t("editor.select")}</p>
      )}
    </section>
  );
}
