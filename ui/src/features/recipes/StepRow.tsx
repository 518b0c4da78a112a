import { memo, useCallback } from "react";
import { useSortable } from "@dnd-kit/sortable";
import { CSS } from "@dnd-kit/utilities";
import { editPreset, selectStep } from "../../app/store";
import { useT } from "../../app/useT";
import { RoleIcon } from "../../app/RoleIcon";
import { LeadText } from "../../components/LeadText";
import { StepControls } from "./StepControls";
import { isSlot, setStepEnabled, type StepView } from "./recipe";
import type { StepText } from "./recipeList";
import { simpleStepId } from "./dragIds";

/** One step of the recipe: handle, enable switch, role, name, summary and strategy tags. Rows
 * whose step and template did not change are not rendered again: a keystroke in one step of a
 * 300-step recipe renders that step's row. */
export const StepRow = memo(
  StepRowView,
  (a, b) =>
    a.selected === b.selected &&
    a.recipeAt === b.recipeAt &&
    a.text === b.text &&
    a.view.key === b.view.key &&
    a.view.index === b.view.index &&
    a.view.step === b.view.step &&
    a.view.template === b.view.template &&
    a.view.strategy === b.view.strategy,
);

function StepRowView({
  view,
  text,
  recipeAt,
  selected,
}: {
  view: StepView;
  text: StepText;
  recipeAt: number;
  selected: boolean;
}) {
  const t = useT();
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, transform, transition, isDragging } =
    useSortable({ id: simpleStepId(view.key) });
  const { template, step, strategy, mode, index } = view;
  const onEnabled = useCallback(
    (enabled: boolean) => editPreset((p) => setStepEnabled(p, recipeAt, index, enabled)),
    [recipeAt, index],
  );
  const slot = isSlot(template);
  const name = template?.name || step.messageId;
  const moves =
    mode === "depth"
      ? t("recipe.movesDepth", { depth: strategy?.depth ?? 0 })
      : mode === "anchor"
        ? t("recipe.movesAnchor", {
            anchor: strategy?.anchorTarget ?? "",
            position: t(strategy?.anchorPosition === "before" ? "editor.before" : "editor.after").toLowerCase(),
          })
        : undefined;
  const classes = [
    "step",
    slot ? "slot" : "message",
    mode !== "list" ? `moves moves-${mode}` : "",
    selected ? "selected" : "",
    step.enabled ? "" : "disabled",
    isDragging ? "dragging" : "",
  ].filter(Boolean);
  const { description, category } = text.meta;

  return (
    <li
      ref={setNodeRef}
      style={{ transform: CSS.Transform.toString(transform), transition }}
      className={classes.join(" ")}
      title={[moves, description].filter(Boolean).join("\n") || undefined}
      data-testid={`step-${view.key}`}
      data-step-id={step.messageId}
    >
      <StepControls
        name={name}
        handleRef={setActivatorNodeRef}
        attributes={attributes}
        listeners={listeners}
        handleTestId={`handle-${view.key}`}
        enabled={step.enabled}
        onEnabled={onEnabled}
      />
      <button type="button" className="step-body" onClick={() => selectStep(view.index)}>
        <span className="step-title">
          <RoleIcon role={template?.role ?? "system"} />
          <strong>{slot && template?.type && template.type !== "message" ? t(`recipe.slot.${template.type}`) : name}</strong>
          {slot && <span className="muted"> · {step.messageId}</span>}
        </span>
        {!slot && (
          <span className="summary" data-testid="step-summary">
            <LeadText lead={text.summary} emptyText={t("recipe.noText")} />
          </span>
        )}
      </button>
      <span className="tags">
        {category && (
          <span className="tag tag-category" title={t("recipe.categoryHint")}>
            {category}
          </span>
        )}
        {mode === "depth" && <span className="tag tag-depth">Depth: {strategy?.depth}</span>}
        {mode === "anchor" && (
          <span className="tag tag-anchor">
            ⚓ {strategy?.anchorPosition === "before" ? "↑" : "↓"} {strategy?.anchorTarget}
          </span>
        )}
      </span>
    </li>
  );
}
