import { useSortable } from "@dnd-kit/sortable";
import { CSS } from "@dnd-kit/utilities";
import { editPreset, selectStep } from "../../app/store";
import { useT } from "../../app/useT";
import { RoleIcon } from "../../app/RoleIcon";
import { StepControls } from "./StepControls";
import { isSlot, setStepEnabled, type StepView } from "./recipe";
import { simpleStepId } from "./dragIds";

/** One step of the recipe: handle, enable switch, role, name, summary and strategy tags. */
export function StepRow({
  view,
  recipeAt,
  selected,
}: {
  view: StepView;
  recipeAt: number;
  selected: boolean;
}) {
  const t = useT();
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, transform, transition, isDragging } =
    useSortable({ id: simpleStepId(view.key) });
  const { template, step, strategy, mode } = view;
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

  return (
    <li
      ref={setNodeRef}
      style={{ transform: CSS.Transform.toString(transform), transition }}
      className={classes.join(" ")}
      title={moves}
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
        onEnabled={(enabled) => editPreset((p) => setStepEnabled(p, recipeAt, view.index, enabled))}
      />
      <button type="button" className="step-body" onClick={() => selectStep(view.index)}>
        <span className="step-title">
          <RoleIcon role={template?.role ?? "system"} />
          <strong>{slot && template?.type && template.type !== "message" ? t(`recipe.slot.${template.type}`) : name}</strong>
          {slot && <span className="muted"> · {step.messageId}</span>}
        </span>
        {!slot && <span className="summary">{summary(template?.content ?? "")}</span>}
      </button>
      <span className="tags">
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

function summary(content: string): string {
  const line = content.replace(/\s+/g, " ").trim();
  return line.length > 90 ? `${line.slice(0, 90)}…` : line;
}
