import { useState } from "react";
import {
  DndContext,
  DragOverlay,
  KeyboardSensor,
  PointerSensor,
  closestCenter,
  pointerWithin,
  rectIntersection,
  useSensor,
  useSensors,
  type DragEndEvent,
  type CollisionDetection,
  type DragStartEvent,
  type KeyboardCoordinateGetter,
} from "@dnd-kit/core";
import { sortableKeyboardCoordinates } from "@dnd-kit/sortable";
import { editPreset, getState, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { RoleIcon } from "../../app/RoleIcon";
import { OnBody } from "../../components/OnBody";
import { TemplateLibrary } from "../library/TemplateLibrary";
import { Workbench, workbenchRecipeIndex } from "./Workbench";
import { moveStep, stepViews } from "./recipe";
import { insertStep } from "./workbenchEdits";
import { STEPS_END, dragLabel as label, libraryTemplate, stepId } from "./dragIds";

/**
 * Advanced mode (RULES 9.3): the template library on the left, the recipe workbench on
 * the right. A library card dropped on the steps list becomes a step where it lands; steps reorder
 * among themselves. Pointer and keyboard (Space, arrows, Space) alike.
 */
export function AdvancedEditor() {
  const t = useT();
  const preset = useApp((s) => s.preset);
  const [dragging, setDragging] = useState<string | null>(null);
  const sensors = useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 4 } }),
    useSensor(KeyboardSensor, { coordinateGetter: libraryAwareCoordinates }),
  );
  if (!preset) return <section className="editor empty">{t("presets.none")}</section>;

  const onDragStart = (e: DragStartEvent) => setDragging(String(e.active.id));
  const onDragEnd = (e: DragEndEvent) => {
    setDragging(null);
    const { active, over } = e;
    const current = getState().preset;
    if (!over || !current) return;
    const at = workbenchRecipeIndex(current, getState().workbenchRecipe);
    const recipe = current.contextRecipes[at];
    if (!recipe) return;
    const keys = stepViews(current, recipe).map((v) => stepId(v.key));
    const target = over.id === STEPS_END ? keys.length : keys.indexOf(String(over.id));
    if (target < 0) return;
    const templateId = libraryTemplate(active.id);
    if (templateId !== null) {
      editPreset((p) => insertStep(p, at, templateId, target));
    } else {
      const from = keys.indexOf(String(active.id));
      const to = Math.min(target, keys.length - 1);
      if (from >= 0 && from !== to) editPreset((p) => moveStep(p, at, from, to));
    }
  };

  const draggedId = libraryTemplate(dragging);
  const draggedTemplate =
    draggedId !== null ? preset.messageTemplates.find((m) => m.id === draggedId) : undefined;

  return (
    <DndContext
      sensors={sensors}
      collisionDetection={collision}
      onDragStart={onDragStart}
      onDragEnd={onDragEnd}
      onDragCancel={() => setDragging(null)}
      accessibility={{
        announcements: {
          onDragStart: ({ active }) => t("advanced.announce.pick", { id: label(active.id) }),
          onDragOver: ({ active, over }) =>
            over ? t("advanced.announce.over", { id: label(active.id), over: label(over.id) }) : "",
          onDragEnd: ({ active, over }) =>
            over ? t("advanced.announce.drop", { id: label(active.id), over: label(over.id) }) : "",
          onDragCancel: ({ active }) => t("advanced.announce.cancel", { id: label(active.id) }),
        },
      }}
    >
      <section className="advanced" aria-label={t("advanced.title")}>
        <TemplateLibrary />
        <Workbench />
      </section>
      <OnBody>
        <DragOverlay dropAnimation={null}>
          {draggedTemplate && (
            <div className="template-card overlay">
              <RoleIcon role={draggedTemplate.role} /> <strong>{draggedTemplate.id}</strong>
            </div>
          )}
        </DragOverlay>
      </OnBody>
    </DndContext>
  );
}

/**
 * Steps reorder onto the nearest step. A library card lands only where it is released over the
 * steps or the drop zone (by keyboard: where the arrows put it); released anywhere else, it is not
 * dropped at all.
 */
const collision: CollisionDetection = (args) => {
  if (libraryTemplate(args.active.id) === null) return closestCenter(args);
  return args.pointerCoordinates ? pointerWithin(args) : rectIntersection(args);
};

/**
 * Keyboard dragging. Steps move the way sortable lists do. A library card is not in the list, so
 * the arrows walk it over the steps (and the drop zone at the end) from top to bottom.
 */
const libraryAwareCoordinates: KeyboardCoordinateGetter = (event, args) => {
  const { active, collisionRect, droppableRects, droppableContainers, over } = args.context;
  if (!active || libraryTemplate(active.id) === null) {
    return sortableKeyboardCoordinates(event, args);
  }
  const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.code];
  if (step === undefined || !collisionRect) return undefined;
  event.preventDefault();
  const targets = droppableContainers
    .getEnabled()
    .flatMap((c) => {
      const rect = droppableRects.get(c.id);
      return rect ? [{ id: c.id, rect }] : [];
    })
    .sort((a, b) => a.rect.top - b.rect.top);
  if (targets.length === 0) return undefined;
  const at = targets.findIndex((t) => t.id === over?.id);
  const next = targets[at < 0 ? 0 : Math.max(0, Math.min(targets.length - 1, at + step))]!;
  return {
    x: next.rect.left + (next.rect.width - collisionRect.width) / 2,
    y: next.rect.top + (next.rect.height - collisionRect.height) / 2,
  };
};
