import { memo, useCallback } from "react";
import type { Role } from "../../bindings";
import { RoleSelect } from "../../app/RoleSelect";
import { editPreset, selectStep } from "../../app/store";
import { StrategyEditor } from "../../components/StrategyEditor";
import { MacroTextarea } from "../../components/MacroTextarea";
import type { InjectionMode, StrategyValues } from "../../components/strategy";
import { useT } from "../../app/useT";
import { stepTextOf } from "./recipeList";
import {
  isSlot,
  removeStep,
  setStepStrategy,
  updateTemplate,
  type StepView,
} from "./recipe";

/**
 * The editor of the selected step: role, content with macros highlighted, injection mode. A
 * keystroke in the content renders the content field again; the name, role and injection
 * fields get the same props and are not rendered again (React writes a form field's name and
 * type again at each render; docs/PERFORMANCE.md, issue 39).
 */
export function MessageEditor({ view, recipeAt }: { view: StepView; recipeAt: number }) {
  const t = useT();
  const { template, step, strategy, index } = view;
  const slot = isSlot(template);
  const templateId = step.messageId;
  const { description, category } = stepTextOf(template).meta;
  const onStrategy = useCallback(
    (next: InjectionMode, values: StrategyValues) =>
      editPreset((p) => setStepStrategy(p, recipeAt, index, next, values)),
    [recipeAt, index],
  );

  return (
    <div className="message-editor" data-testid="message-editor" aria-label={t("editor.title")}>
      <NameRow
        templateId={templateId}
        name={template?.name ?? ""}
        role={template?.role ?? "system"}
        recipeAt={recipeAt}
        index={index}
      />
      {(description || category) && (
        <dl className="comment-meta" data-testid="editor-comment-meta" title={t("editor.commentMeta")}>
          {category && (
            <>
              <dt>{t("editor.category")}</dt>
              <dd>{category}</dd>
            </>
          )}
          {description && (
            <>
              <dt>{t("editor.description")}</dt>
              <dd>{description}</dd>
            </>
          )}
        </dl>
      )}
      {slot ? (
        <p className="muted">{t("editor.slotNote")}</p>
      ) : (
        <label className="content-field">
          {t("editor.content")}
          <MacroTextarea
            value={template?.content ?? ""}
            onChange={(content) =>
              editPreset((p) => updateTemplate(p, templateId, { content }), `content:${templateId}`)
            }
          />
        </label>
      )}
      <StrategyEditor strategy={strategy} onChange={onStrategy} />
    </div>
  );
}

/** The step's name, role and Remove. */
const NameRow = memo(function NameRow({
  templateId,
  name,
  role,
  recipeAt,
  index,
}: {
  templateId: string;
  name: string;
  role: Role;
  recipeAt: number;
  index: number;
}) {
  const t = useT();
  return (
    <div className="field-row">
      <label>
        {t("editor.name")}
        <input
          value={name}
          data-testid="editor-name"
          onChange={(e) =>
            editPreset((p) => updateTemplate(p, templateId, { name: e.target.value }), `name:${templateId}`)
          }
        />
      </label>
      <label>
        {t("editor.role")}
        <RoleSelect
          value={role}
          testId="editor-role"
          onChange={(next) => editPreset((p) => updateTemplate(p, templateId, { role: next }))}
        />
      </label>
      <button
        type="button"
        className="danger"
        onClick={() => {
          selectStep(null);
          editPreset((p) => removeStep(p, recipeAt, index));
        }}
      >
        {t("recipe.removeStep")}
      </button>
    </div>
  );
});
