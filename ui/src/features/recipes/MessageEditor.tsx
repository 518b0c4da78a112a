import { useRef } from "react";
import type { Role } from "../../bindings";
import { editPreset, selectStep, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import {
  clampDepth,
  isSlot,
  macroParts,
  removeStep,
  setStepStrategy,
  updateTemplate,
  type InjectionMode,
  type StepView,
} from "./recipe";

const ROLES: Role[] = ["system", "user", "assistant"];

/** The editor of the selected step: role, content with macros highlighted, injection mode. */
export function MessageEditor({ view, recipeAt }: { view: StepView; recipeAt: number }) {
  const t = useT();
  const anchors = useApp((s) => s.preview?.anchors ?? ["chat_history", "user_profile"]);
  const { template, step, strategy, mode } = view;
  const slot = isSlot(template);
  const templateId = step.messageId;

  const setMode = (next: InjectionMode, values = {}) =>
    editPreset((p) =>
      setStepStrategy(p, recipeAt, view.index, next, {
        depth: strategy?.depth ?? 0,
        anchorTarget: strategy?.anchorTarget ?? anchors[0],
        anchorPosition: strategy?.anchorPosition ?? "after",
        ...values,
      }),
    );

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
          <select
            value={template?.role ?? "system"}
            data-testid="editor-role"
            onChange={(e) => editPreset((p) => updateTemplate(p, templateId, { role: e.target.value as Role }))}
          >
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {t(`role.${r}`)}
              </option>
            ))}
          </select>
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
      <fieldset className="injection" data-testid="injection">
        <legend>{t("editor.injection")}</legend>
        <label>
          <input type="radio" name="mode" checked={mode === "list"} onChange={() => setMode("list")} />
          {t("editor.mode.list")}
        </label>
        <label>
          <input
            type="radio"
            name="mode"
            data-testid="mode-depth"
            checked={mode === "depth"}
            onChange={() => setMode("depth")}
          />
          {t("editor.mode.depth")}
        </label>
        {mode === "depth" && (
          <label className="indent">
            {t("editor.depth")}
            <input
              type="number"
              min={0}
              max={99}
              data-testid="depth-input"
              value={strategy?.depth ?? 0}
              onChange={(e) => setMode("depth", { depth: clampDepth(Number(e.target.value)) })}
            />
          </label>
        )}
        <label>
          <input
            type="radio"
            name="mode"
            data-testid="mode-anchor"
            checked={mode === "anchor"}
            onChange={() => setMode("anchor")}
          />
          {t("editor.mode.anchor")}
        </label>
        {mode === "anchor" && (
          <div className="indent field-row">
            <label>
              {t("editor.anchor")}
              <select
                value={strategy?.anchorTarget ?? anchors[0]}
                data-testid="anchor-select"
                onChange={(e) => setMode("anchor", { anchorTarget: e.target.value })}
              >
                {anchors.map((a) => (
                  <option key={a} value={a}>
                    {a}
                  </option>
                ))}
              </select>
            </label>
            <label>
              <input
                type="radio"
                name="position"
                checked={strategy?.anchorPosition === "before"}
                onChange={() => setMode("anchor", { anchorPosition: "before" })}
              />
              {t("editor.before")}
            </label>
            <label>
              <input
                type="radio"
                name="position"
                checked={strategy?.anchorPosition !== "before"}
                onChange={() => setMode("anchor", { anchorPosition: "after" })}
              />
              {t("editor.after")}
            </label>
          </div>
        )}
      </fieldset>
    </div>
  );
}

/** A textarea over a mirror that colours `{{macros}}`; the two scroll together. */
export function MacroTextarea({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const mirror = useRef<HTMLDivElement>(null);
  return (
    <div className="macro-area">
      <div className="macro-mirror" ref={mirror} aria-hidden="true">
        {macroParts(value).map((part, i) =>
          part.macro ? (
            <mark key={i} className="macro">
              {part.text}
            </mark>
          ) : (
            <span key={i}>{part.text}</span>
          ),
        )}
        {"\n"}
      </div>
      <textarea
        value={value}
        spellCheck={false}
        data-testid="editor-content"
        onChange={(e) => onChange(e.target.value)}
        onScroll={(e) => {
          if (mirror.current) mirror.current.scrollTop = e.currentTarget.scrollTop;
        }}
      />
    </div>
  );
}
