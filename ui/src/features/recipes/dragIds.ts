// The ids dnd-kit knows draggables and drop zones by. Advanced mode: a library card
// (TemplateLibrary), a step of the workbench's sortable list (WorkbenchStep), the drop zone at the
// list's end (Workbench); one `DndContext` holds them all (AdvancedEditor), so they must not clash.
// Simple mode: a step of its own sortable list (SimpleEditor, StepRow).
import type { UniqueIdentifier } from "@dnd-kit/core";

const LIBRARY_PREFIX = "lib:";
const STEP_PREFIX = "step:";

/** The drop zone after the last step. */
export const STEPS_END = "steps-end";

/** The draggable id of the library card of template `templateId`. */
export function libraryCardId(templateId: string): string {
  return `${LIBRARY_PREFIX}${templateId}`;
}

/** The sortable id of the step with key `key` (`StepView::key`). */
export function stepId(key: string): string {
  return `${STEP_PREFIX}${key}`;
}

/** The template a library card's id names, or null for a step or the drop zone. */
export function libraryTemplate(id: UniqueIdentifier | null | undefined): string | null {
  const s = id === null || id === undefined ? "" : String(id);
  return s.startsWith(LIBRARY_PREFIX) ? s.slice(LIBRARY_PREFIX.length) : null;
}

/** What the screen reader announcements call a draggable or drop zone. */
export function dragLabel(id: UniqueIdentifier): string {
  const s = String(id);
  if (s === STEPS_END) return "⤓";
  return s.replace(LIBRARY_PREFIX, "").replace(STEP_PREFIX, "");
}

/** The sortable id of the step with key `key` in simple mode's list, the only draggables there. */
export function simpleStepId(key: string): string {
  return key;
}
