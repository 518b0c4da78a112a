import { useEffect, type ReactNode } from "react";
import type { Affixes, InstructTemplate } from "../../bindings";
import type { Preset } from "../../app/model";
import { editPreset, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { escapeText } from "./segments";
import { builtInOf, useBuiltInTemplates } from "./templates";

/** The preset's own templates that are no built-in (imported with it), by preset id: kept while
 * the app runs, so that choosing a built-in and then "its own" again gives it back. */
const ownTemplates = new Map<string, InstructTemplate>();

/** For tests. */
export function forgetOwnTemplates() {
  ownTemplates.clear();
}

const OFF = "off";
const OWN = "own";
const builtInValue = (id: string) => `builtin:${id}`;

/**
 * Text completion (RULES 5.12), in the generation tab: off (the request is a list of chat
 * messages), a built-in instruct template, or the preset's own (imported with it). A built-in
 * chosen is stored whole as the preset's `instruct`, so the preset carries it wherever it goes;
 * off removes it. The chosen template's fields are shown, read only.
 */
export function TextCompletionSettings({ preset }: { preset: Preset }) {
  const t = useT();
  const builtIns = useBuiltInTemplates();
  const preview = useApp((s) => s.preview);
  const chosen = preset.instruct ?? null;
  const chosenBuiltIn = chosen ? builtInOf(chosen, builtIns) : null;
  const isOwn = chosen !== null && chosenBuiltIn === null;
  const loaded = builtIns.length > 0;
  useEffect(() => {
    if (loaded && isOwn && chosen) ownTemplates.set(preset.id, chosen);
  }, [loaded, isOwn, chosen, preset.id]);
  const own = isOwn ? chosen : (ownTemplates.get(preset.id) ?? null);
  const value = chosen === null ? OFF : chosenBuiltIn ? builtInValue(chosenBuiltIn.id) : OWN;
  // Without a template of the preset's, the model profile may still name one (RULES 5.12).
  const fromProfile = chosen === null ? (preview?.result.prompt?.template ?? null) : null;
  const profileTemplate = fromProfile ? (builtIns.find((b) => b.id === fromProfile) ?? null) : null;
  const shown = chosen ?? profileTemplate;

  const choose = (next: string) => {
    const template =
      next === OFF ? null : next === OWN ? own : (builtIns.find((b) => builtInValue(b.id) === next) ?? null);
    editPreset((p) => {
      const next = { ...p };
      if (template) next.instruct = template;
      else delete next.instruct;
      return next;
    });
  };

  return (
    <section className="text-completion" data-testid="text-completion" aria-labelledby="text-completion-title">
      <h3 id="text-completion-title">{t("instruct.title")}</h3>
      <p className="muted">{t("instruct.intro")}</p>
      <div className={`setting ${chosen ? "origin-preset" : ""}`}>
        <label className="setting-label" htmlFor="instruct-choice">
          {t("instruct.choice")}
        </label>
        <div className="setting-control">
          <select id="instruct-choice" data-testid="instruct-choice" value={value} onChange={(e) => choose(e.target.value)}>
            <option value={OFF}>{t("instruct.off")}</option>
            {own && <option value={OWN}>{t("instruct.own", { name: own.name })}</option>}
            <optgroup label={t("instruct.builtIns")}>
              {builtIns.map((b) => (
                <option key={b.id} value={builtInValue(b.id)}>
                  {b.name}
                </option>
              ))}
            </optgroup>
          </select>
        </div>
        {fromProfile && (
          <p className="setting-description" data-testid="instruct-from-profile">
            {t("instruct.fromProfile", {
              profile: preview?.result.profile ?? "",
              name: profileTemplate?.name ?? fromProfile,
            })}
          </p>
        )}
        <p className="setting-description muted">{t(chosen || fromProfile ? "instruct.onHelp" : "instruct.offHelp")}</p>
      </div>
      {shown && <TemplateFields template={shown} />}
    </section>
  );
}

/** A template's fields, read only, every text escaped so that white space shows. */
function TemplateFields({ template }: { template: InstructTemplate }) {
  const t = useT();
  const text = (s: string | null | undefined) =>
    s ? <code className="instruct-text">{escapeText(s)}</code> : <span className="muted">—</span>;
  const list = (items: string[] | undefined) =>
    items && items.length > 0 ? items.map((s, i) => <span key={i}>{text(s)} </span>) : <span className="muted">—</span>;
  const affixes = (a: Affixes | undefined) => (
    <>
      {text(a?.prefix)} <span className="muted">{t("instruct.content")}</span> {text(a?.suffix)}
      {a?.firstPrefix !== undefined && a.firstPrefix !== null && (
        <div className="instruct-variant">
          {t("instruct.firstPrefix")} {text(a.firstPrefix)}
        </div>
      )}
      {a?.lastPrefix !== undefined && a.lastPrefix !== null && (
        <div className="instruct-variant">
          {t("instruct.lastPrefix")} {text(a.lastPrefix)}
        </div>
      )}
    </>
  );
  const rows: [string, ReactNode][] = [
    [
      t("instruct.field.bos"),
      <>
        {text(template.bos)}
        {template.serverAddsBos && template.bos ? <span className="muted"> {t("instruct.bosByServer")}</span> : null}
      </>,
    ],
    ...(template.defaultSystem !== undefined && template.defaultSystem !== null
      ? ([[t("instruct.field.defaultSystem"), template.defaultSystem ? text(template.defaultSystem) : t("instruct.emptyTurn")]] as [string, ReactNode][])
      : []),
    ...(template.todayFormat
      ? ([[t("instruct.field.today"), <code key="today">{template.todayFormat}</code>]] as [string, ReactNode][])
      : []),
    [t("instruct.field.system"), affixes(template.system)],
    [t("instruct.field.user"), affixes(template.user)],
    [t("instruct.field.assistant"), affixes(template.assistant)],
    [t("instruct.field.systemMode"), t(`instruct.systemMode.${template.systemMode ?? "own"}`)],
    [t("instruct.field.systemSeparator"), text(template.systemSeparator)],
    [t("instruct.field.replyPrefix"), text(template.replyPrefix)],
    [t("instruct.field.stop"), list(template.stop)],
    [t("instruct.field.names"), t(`instruct.names.${template.names ?? "always"}`)],
    [
      t("instruct.field.trim"),
      <>
        {t(template.trim ? "instruct.yes" : "instruct.no")}
        {template.trimSystem !== undefined && template.trimSystem !== null && template.trimSystem !== template.trim ? (
          <span className="muted"> {t(template.trimSystem ? "instruct.trimSystemYes" : "instruct.trimSystemNo")}</span>
        ) : null}
      </>,
    ],
    [t("instruct.field.specialTokens"), list(template.specialTokens)],
  ];
  return (
    <div className="instruct-fields" data-testid="instruct-fields">
      <p className="muted">
        {t("instruct.fieldsOf", { name: template.name, id: template.id })} · {t("instruct.readOnly")}
      </p>
      <dl>
        {rows.map(([label, value]) => (
          <div key={label} className="instruct-field">
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
