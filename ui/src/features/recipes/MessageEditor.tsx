import { RoleSelect } from "../../app/RoleSelect";
import { editPreset, selectStep } from "../../app/store";
import { StrategyEditor } from "../../components/StrategyEditor";
import { MacroTextarea } from "../../components/MacroTextarea";
import { useT } from "../../app/useT";
import { stepTextOf } from "./recipeList";
import {
  isSlot,
  removeStep,
  setStepStrategy,
  updateTemplate,
  type StepView,
} from "./recipe";

/** The editor of the selected step: role, content with macros highlighted, injection mode. */
export function MessageEditor({ view, recipeAt }: { view: StepView; recipeAt: number }) {
  const t = useT();
  const { template, step, strategy } = view;
  const slot = isSlot(template);
  const templateId = step.messageId;
  const { description, category } = stepTextOf(template).meta;

  return (
    <div className="message-editor" data-testid="message-editor" aria-label={t("editor.title")}>
      <div className="field-row">
        <label>
          {t("editor.name")}
          <input
            value={template?.name ?? ""}
            data-testid="editor-name"
            onChange={(e) =>
              editPreset((p) => updateTemplate(p, templateId, { name: e.target.value }), `name:${templateId}`)
            }
          />
        </label>
        <label>
          {t("editor.role")}
          <RoleSelect
            value={template?.role ?? "system"}
            testId="editor-role"
            onChange={(role) => editPreset((p) => updateTemplate(p, templateId, { role }))}
          />
        </label>
        <button
          type="button"
          className="danger"
          onClick={() => {
            selectStep(null);
            editPreset((p) => removeStep(p, recipeAt, view.index));
          }}
        >
          {t("recipe.removeStep")}
        </button>
      </div>
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
      <StrategyEditor
        strategy={strategy}
        onChange={(next, values) =>
          editPreset((p) => setStepStrategy(p, recipeAt, view.index, next, values))
        }
      />
    </div>
  );
}
