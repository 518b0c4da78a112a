import { useSortable } from "@dnd-kit/sortable";
import { CSS } from "@dnd-kit/utilities";
import { editPreset } from "../../app/store";
import { useT } from "../../app/useT";
import { RoleIcon } from "../../app/RoleIcon";
import { RoleSelect } from "../../app/RoleSelect";
import { StrategyEditor } from "../../components/StrategyEditor";
import { MacroTextarea } from "../../components/MacroTextarea";
import { modeOf } from "../../components/strategy";
import { StepControls } from "./StepControls";
import { isSlot, setStepEnabled, setStepStrategy, type StepView } from "./recipe";
import { overriddenFields, removeRecipeStep, resetStepStrategy, setStepOverride } from "./workbenchEdits";
import { stepId } from "./dragIds";
import type { InjectionStrategy } from "../../bindings";

/** One step in the workbench: handle, enable switch, the template it names, its strategy (grey
 * when inherited from the template, highlighted when the step overrides it) and, expanded, the
 * overrides of strategy, role and content, each with "reset to inherited". */
export function WorkbenchStep({
  view,
  recipeAt,
  expanded,
  onToggle,
}: {
  view: StepView;
  recipeAt: number;
  expanded: boolean;
  onToggle: () => void;
}) {
  const t = useT();
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, transform, transition, isDragging } =
    useSortable({ id: stepId(view.key) });
  const { step, template, strategy } = view;
  const overridden = overriddenFields(step);
  const slot = isSlot(template);
  const role = step.overrides?.role ?? template?.role ?? "system";
  const classes = [
    "step",
    "workbench-step",
    slot ? "slot" : "message",
    step.enabled ? "" : "disabled",
    overridden.length > 0 ? "has-overrides" : "",
    expanded ? "expanded" : "",
    isDragging ? "dragging" : "",
    template ? "" : "missing",
  ].filter(Boolean);

  return (
    <li
      ref={setNodeRef}
      style={{ transform: CSS.Transform.toString(transform), transition }}
      className={classes.join(" ")}
      data-testid={`wstep-${view.key}`}
      data-step-id={step.messageId}
    >
      <div className="workbench-step-head">
        <StepControls
          name={step.messageId}
          handleRef={setActivatorNodeRef}
          attributes={attributes}
          listeners={listeners}
          handleTestId={`whandle-${view.key}`}
          enabled={step.enabled}
          enabledTestId={`wenabled-${view.key}`}
          onEnabled={(enabled) => editPreset((p) => setStepEnabled(p, recipeAt, view.index, enabled))}
        />
        <button type="button" className="step-body" onClick={onToggle} aria-expanded={expanded} data-testid={`wtoggle-${view.key}`}>
          <span className="step-title">
            <RoleIcon role={role} />
            <code className="template-id">{step.messageId}</code>
            {template?.name && <span className="muted"> {template.name}</span>}
            {!template && <span className="error-text"> {t("workbench.missingTemplate")}</span>}
          </span>
        </button>
        <span className="tags">
          <StrategyTag strategy={strategy} overridden={overridden.includes("strategy")} />
          {overridden.includes("content") && <span className="tag tag-override">{t("workbench.contentOverride")}</span>}
          {overridden.includes("role") && <span className="tag tag-override">{t(`role.${role}`)}</span>}
        </span>
        <button
          type="button"
          className="icon-button"
          aria-label={t("workbench.removeStep", { id: step.messageId })}
          title={t("workbench.removeStep", { id: step.messageId })}
          data-testid={`wremove-${view.key}`}
          onClick={() => editPreset((p) => removeRecipeStep(p, recipeAt, view.index))}
        >
          ×
        </button>
      </div>
      {expanded && (
        <div className="overrides" data-testid="step-overrides">
          <OverrideBlock
            label={t("editor.injection")}
            overridden={overridden.includes("strategy")}
            onReset={() => editPreset((p) => resetStepStrategy(p, recipeAt, view.index))}
            testId="strategy"
            inherited={t("workbench.inheritedStrategy", {
              value: describe(template?.defaultInjectionStrategy, t),
            })}
          >
            <StrategyEditor
              strategy={strategy}
              testPrefix="step-"
              onChange={(mode, values) =>
                editPreset((p) => setStepStrategy(p, recipeAt, view.index, mode, values))
              }
            />
          </OverrideBlock>
          <OverrideBlock
            label={t("editor.role")}
            overridden={overridden.includes("role")}
            onReset={() => editPreset((p) => setStepOverride(p, recipeAt, view.index, "role", null))}
            testId="role"
            inherited={t("workbench.inheritedValue", { value: t(`role.${template?.role ?? "system"}`) })}
          >
            <RoleSelect
              value={role}
              testId="step-role"
              label={t("editor.role")}
              onChange={(r) => editPreset((p) => setStepOverride(p, recipeAt, view.index, "role", r))}
            />
          </OverrideBlock>
          {!slot && (
            <OverrideBlock
              label={t("editor.content")}
              overridden={overridden.includes("content")}
              onReset={() => editPreset((p) => setStepOverride(p, recipeAt, view.index, "content", null))}
              testId="content"
              inherited={t("workbench.inheritedContent")}
            >
              <MacroTextarea
                value={step.overrides?.content ?? template?.content ?? ""}
                testId="step-content"
                label={t("editor.content")}
                onChange={(content) =>
                  editPreset(
                    (p) => setStepOverride(p, recipeAt, view.index, "content", content),
                    `override:${recipeAt}:${view.index}`,
                  )
                }
              />
            </OverrideBlock>
          )}
        </div>
      )}
    </li>
  );
}

function OverrideBlock({
  label,
  overridden,
  onReset,
  inherited,
  testId,
  children,
}: {
  label: string;
  overridden: boolean;
  onReset: () => void;
  inherited: string;
  testId: string;
  children: React.ReactNode;
}) {
  const t = useT();
  return (
    <div
      className={overridden ? "override overridden" : "override inherited"}
      data-testid={`override-${testId}`}
      data-overridden={overridden}
    >
      <div className="override-head">
        <strong>{label}</strong>
        {overridden ? (
          <>
            <span className="tag tag-override">{t("workbench.overridden")}</span>
            <button type="button" className="link" data-testid={`reset-${testId}`} onClick={onReset}>
              {t("workbench.reset")}
            </button>
          </>
        ) : (
          <span className="muted">{inherited}</span>
        )}
      </div>
      {children}
    </div>
  );
}

function StrategyTag({ strategy, overridden }: { strategy: InjectionStrategy | null; overridden: boolean }) {
  const mode = modeOf(strategy);
  const cls = overridden ? "tag tag-override" : "tag tag-inherited";
  if (mode === "depth") return <span className={`${cls} tag-depth`}>Depth: {strategy?.depth}</span>;
  if (mode === "anchor") {
    return (
      <span className={`${cls} tag-anchor`}>
        ⚓ {strategy?.anchorPosition === "before" ? "↑" : "↓"} {strategy?.anchorTarget}
      </span>
    );
  }
  return overridden ? <span className={cls}>≡</span> : null;
}

function describe(strategy: InjectionStrategy | null | undefined, t: ReturnType<typeof useT>): string {
  const mode = modeOf(strategy);
  if (mode === "depth") return `Depth: ${strategy?.depth}`;
  if (mode === "anchor") {
    return `⚓ ${t(strategy?.anchorPosition === "before" ? "editor.before" : "editor.after").toLowerCase()} ${strategy?.anchorTarget}`;
  }
  return t("editor.mode.list");
}
