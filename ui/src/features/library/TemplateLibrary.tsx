import { useState } from "react";
import { useDraggable } from "@dnd-kit/core";
import type { MessageTemplate, TemplateType } from "../../bindings";
import { editPreset, editPresetFor, getState, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { RoleIcon } from "../../app/RoleIcon";
import { RoleSelect } from "../../app/RoleSelect";
import { ConfirmDialog } from "../../app/ConfirmDialog";
import { MacroTextarea } from "../../components/MacroTextarea";
import { StrategyEditor } from "../../components/StrategyEditor";
import { IdField } from "../../components/IdField";
import { strategyFor } from "../../components/strategy";
import {
  anchoredTo,
  changeTemplate,
  createTemplate,
  deleteTemplate,
  insertStep,
  renameTemplate,
  templateUsage,
} from "../recipes/workbenchEdits";
import { workbenchRecipeIndex } from "../recipes/Workbench";
import { libraryCardId } from "../recipes/dragIds";
import { summaryOf } from "../recipes/stepText";

const TYPES: TemplateType[] = ["message", "placeholder", "chat_history", "user_profile"];

/** The template library (RULES 9.3): every template of the preset, searchable; cards are
 * drag sources for the recipe workbench. */
export function TemplateLibrary() {
  const t = useT();
  const templates = useApp((s) => s.preset?.messageTemplates ?? []);
  const [query, setQuery] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  const q = query.trim().toLowerCase();
  const shown = q
    ? templates.filter((m) =>
        [m.id, m.name ?? "", m.content ?? ""].some((text) => text.toLowerCase().includes(q)),
      )
    : templates;

  const create = (type: TemplateType) => {
    const created = editPresetFor((p) => createTemplate(p, type));
    setQuery("");
    if (created) setOpen(created.id);
  };

  return (
    <aside className="library" aria-label={t("library.title")} data-testid="template-library">
      <header className="library-head">
        <h3>{t("library.title")}</h3>
        <NewTemplateMenu onCreate={create} />
      </header>
      <input
        type="search"
        className="library-search"
        placeholder={t("library.search")}
        aria-label={t("library.search")}
        data-testid="library-search"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      <ul className="template-cards">
        {shown.map((m) => (
          <TemplateCard
            key={m.id}
            template={m}
            open={open === m.id}
            onToggle={() => setOpen((o) => (o === m.id ? null : m.id))}
            onRenamed={(id) => setOpen(id)}
          />
        ))}
      </ul>
      {shown.length === 0 && (
        <p className="muted">{templates.length === 0 ? t("library.empty") : t("library.noMatch")}</p>
      )}
    </aside>
  );
}

function NewTemplateMenu({ onCreate }: { onCreate: (type: TemplateType) => void }) {
  const t = useT();
  const [type, setType] = useState<TemplateType>("message");
  return (
    <div className="new-template">
      <select
        aria-label={t("library.newType")}
        data-testid="new-template-type"
        value={type}
        onChange={(e) => setType(e.target.value as TemplateType)}
      >
        {TYPES.map((ty) => (
          <option key={ty} value={ty}>
            {t(`library.type.${ty}`)}
          </option>
        ))}
      </select>
      <button type="button" className="primary" data-testid="new-template" onClick={() => onCreate(type)}>
        + {t("library.new")}
      </button>
    </div>
  );
}

function TemplateCard({
  template,
  open,
  onToggle,
  onRenamed,
}: {
  template: MessageTemplate;
  open: boolean;
  onToggle: () => void;
  onRenamed: (id: string) => void;
}) {
  const t = useT();
  const { attributes, listeners, setNodeRef, isDragging } = useDraggable({
    id: libraryCardId(template.id),
  });
  const type = template.type ?? "message";
  const recipeName = useApp((s) => {
    const p = s.preset;
    return p ? (p.contextRecipes[workbenchRecipeIndex(p, s.workbenchRecipe)]?.id ?? null) : null;
  });
  return (
    <li
      className={`template-card type-${type}${open ? " open" : ""}${isDragging ? " dragging" : ""}`}
      data-testid={`template-${template.id}`}
    >
      <div className="template-card-head">
        <button
          type="button"
          ref={setNodeRef}
          className="handle"
          aria-label={t("library.dragHandle", { id: template.id })}
          data-testid={`drag-template-${template.id}`}
          {...attributes}
          {...listeners}
        >
          ⠿
        </button>
        <button type="button" className="template-card-body" onClick={onToggle} aria-expanded={open}>
          <span className="step-title">
            <RoleIcon role={template.role} />
            <code className="template-id">{template.id}</code>
          </span>
          {(template.name || type !== "message") && (
            <span className="template-name">
              {type !== "message" && <span className="tag tag-slot">{t(`library.type.${type}`)}</span>}{" "}
              {template.name}
            </span>
          )}
          {type === "message" && <span className="summary">{summary(template.content ?? "")}</span>}
        </button>
        {recipeName && (
          <button
            type="button"
            className="icon-button"
            title={t("library.addTo", { recipe: recipeName })}
            aria-label={t("library.addTo", { recipe: recipeName })}
            data-testid={`add-template-${template.id}`}
            onClick={() => {
              const at = workbenchRecipeIndex(getState().preset!, getState().workbenchRecipe);
              editPreset((p) => insertStep(p, at, template.id, Number.MAX_SAFE_INTEGER));
            }}
          >
            ＋
          </button>
        )}
      </div>
      {open && <TemplateEditor template={template} onRenamed={onRenamed} />}
    </li>
  );
}

function TemplateEditor({
  template,
  onRenamed,
}: {
  template: MessageTemplate;
  onRenamed: (id: string) => void;
}) {
  const t = useT();
  const preset = useApp((s) => s.preset);
  const [confirm, setConfirm] = useState(false);
  if (!preset) return null;
  const type = template.type ?? "message";
  const used = templateUsage(preset, template.id);
  const anchored = anchoredTo(preset, template.id);

  return (
    <div className="template-editor" data-testid="template-editor">
      <div className="field-row">
        <IdField
          label={t("library.id")}
          id={template.id}
          taken={preset.messageTemplates.map((m) => m.id)}
          testId="template-id-input"
          onCommit={(id) => {
            editPreset((p) => renameTemplate(p, template.id, id));
            onRenamed(id);
          }}
        />
        <label>
          {t("editor.name")}
          <input
            value={template.name ?? ""}
            data-testid="template-name-input"
            onChange={(e) =>
              editPreset(
                (p) => changeTemplate(p, template.id, { name: e.target.value || null }),
                `tname:${template.id}`,
              )
            }
          />
        </label>
      </div>
      <div className="field-row">
        <label>
          {t("editor.role")}
          <RoleSelect
            value={template.role}
            testId="template-role"
            onChange={(role) => editPreset((p) => changeTemplate(p, template.id, { role }))}
          />
        </label>
        <label>
          {t("library.typeLabel")}
          <select
            value={type}
            data-testid="template-type"
            onChange={(e) => {
              const next = e.target.value as TemplateType;
              editPreset((p) => changeTemplate(p, template.id, { type: next === "message" ? null : next }));
            }}
          >
            {TYPES.map((ty) => (
              <option key={ty} value={ty}>
                {t(`library.type.${ty}`)}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="danger" data-testid="delete-template" onClick={() => setConfirm(true)}>
          {t("library.delete")}
        </button>
      </div>
      {type === "message" ? (
        <label className="content-field">
          {t("editor.content")}
          <MacroTextarea
            value={template.content ?? ""}
            testId="template-content"
            onChange={(content) =>
              editPreset((p) => changeTemplate(p, template.id, { content }), `tcontent:${template.id}`)
            }
          />
        </label>
      ) : (
        <p className="muted">{t("editor.slotNote")}</p>
      )}
      <StrategyEditor
        strategy={template.defaultInjectionStrategy}
        testPrefix="template-"
        listLabel={t("library.defaultList")}
        onChange={(mode, values) =>
          editPreset((p) =>
            changeTemplate(p, template.id, {
              defaultInjectionStrategy:
                strategyFor(mode, values, template.defaultInjectionStrategy?.order) ?? null,
            }),
          )
        }
      />
      <p className="muted hint">{t("library.defaultHint")}</p>
      {confirm && (
        <ConfirmDialog
          message={[
            used > 0
              ? t("library.confirmDeleteUsed", { id: template.id, count: used })
              : t("library.confirmDelete", { id: template.id }),
            anchored > 0 ? t("library.anchoredGoToList", { count: anchored }) : "",
          ]
            .filter(Boolean)
            .join(" ")}
          confirm={used > 0 ? t("library.deleteAndSteps", { count: used }) : t("library.delete")}
          onCancel={() => setConfirm(false)}
          onConfirm={() => {
            setConfirm(false);
            editPreset((p) => deleteTemplate(p, template.id));
          }}
        />
      )}
    </div>
  );
}

/** The first text that says something, comment macros and blank lines skipped (issue 39). */
function summary(content: string): string {
  return summaryOf(content, 70).text;
}
