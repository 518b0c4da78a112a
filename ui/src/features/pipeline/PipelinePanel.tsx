import { useEffect, useState } from "react";
import type { ConfigField, PipelineStage, SettingOrigin, Value } from "../../bindings";
import { api, errorMessage } from "../../app/api";
import type { Preset } from "../../app/model";
import { editPreset, useApp } from "../../app/store";
import { ListTools } from "../../components/lists/ListTools";
import { SectionHead } from "../../components/lists/SectionHead";
import { foldedOf, toggleFolded, useListView } from "../../components/lists/listView";
import { sectionedList, type ItemShape } from "../../components/lists/sectionedList";
import { useDescribe, useSay, useT } from "../../app/useT";
import { englishOf } from "../../i18n/said";
import {
  baseSetting,
  enabledView,
  isSillyTavern,
  setCompatibility,
  entryOf,
  priorityView,
  resetProcessor,
  resetSetting,
  setProcessorEnabled,
  setProcessorPriority,
  setSetting,
  settingView,
  strongest,
} from "./pipeline";

/** How long the panel waits after the last edit before it asks the engine again. */
const REFETCH_DELAY_MS = 150;

interface Loaded {
  presetId: string;
  model: string;
  stages: PipelineStage[];
}

/**
 * The pipeline as it would run for the preset being edited and the chosen model, fetched again
 * (debounced) after every change of either; a response overtaken by a newer change is dropped.
 */
function usePipeline(preset: Preset | null, model: string) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!preset) return;
    let current = true;
    const timer = setTimeout(() => {
      api.pipeline(preset, model).then(
        (stages) => {
          if (!current) return;
          setLoaded({ presetId: preset.id, model, stages });
          setError(null);
        },
        (e: unknown) => {
          if (current) setError(errorMessage(e));
        },
      );
    }, REFETCH_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [preset, model]);
  return { loaded, error };
}

/** The bands of priorities the panel draws as sections, in run order (RULES 5.1). */
type Band = "history" | "context" | "budget" | "formatters" | "last";
function bandOf(priority: number): Band {
  if (priority < 280) return "history";
  if (priority < 400) return "context";
  if (priority < 500) return "budget";
  if (priority < 900) return "formatters";
  return "last";
}

interface StageItem {
  stage: PipelineStage;
  index: number;
  priority: number;
  enabled: boolean;
  haystack: string;
}

const stageShape: ItemShape<StageItem> = {
  key: (s) => s.stage.descriptor.id,
  enabled: (s) => s.enabled,
  haystack: (s) => s.haystack,
  category: (s) => bandOf(s.priority),
};

/** The pipeline panel (RULES 9.5): processors in run order, in sections by what they work on
 * (their priority's band), their switches, settings and origins; filtered, folded and switched
 * a section at a time like the recipe's list. */
export function PipelinePanel() {
  const t = useT();
  const preset = useApp((s) => s.preset);
  const model = useApp((s) => s.model);
  const { loaded, error } = usePipeline(preset, model);
  const describe = useDescribe();
  const view = useListView("processors");
  if (!preset) return null;
  const stages = loaded && loaded.presetId === preset.id ? loaded.stages : null;
  const stale = loaded !== null && loaded.model !== model;
  // The engine's order; a priority just edited takes effect at once, ties keep the engine's order.
  const ordered: StageItem[] = (stages ?? [])
    .map((stage, index) => {
      const name = describe(stage.descriptor, "name");
      const haystack = [stage.descriptor.id, name, describe(stage.descriptor, "description")].join("\n").toLowerCase();
      return { stage, index, priority: priorityView(preset, stage).value, enabled: enabledView(preset, stage).value, haystack };
    })
    .sort((a, b) => a.priority - b.priority || a.index - b.index);
  const list = sectionedList(ordered, stageShape, {
    query: view.query,
    enabledOnly: view.enabledOnly,
    grouping: "category",
    folded: foldedOf(view, preset.id),
  });
  const switchAll = (items: StageItem[], enabled: boolean) =>
    editPreset((p) => items.reduce((next, { stage }) => setProcessorEnabled(next, stage, enabled), p));

  return (
    <div className="pipeline" data-testid="pipeline-panel">
      <header className="editor-head">
        <div>
          <h2>{t("pipeline.title")}</h2>
          <p className="muted">{t("pipeline.intro", { model })}</p>
        </div>
      </header>
      {stages !== null && <CompatibilitySwitch preset={preset} stages={stages} />}
      {ordered.length > 0 && (
        <ListTools listId="processors" list={list} presetId={preset.id} filterLabel={t("pipeline.filter")} />
      )}
      {error && (
        <p className="error" role="alert" data-testid="pipeline-error">
          {t("pipeline.error", { message: error })}
        </p>
      )}
      {stages === null ? (
        !error && <p className="muted">{t("pipeline.loading")}</p>
      ) : ordered.length === 0 ? (
        <p className="muted">{t("pipeline.empty")}</p>
      ) : (
        // Until the stages of the model in view arrive (or while they cannot), the ones shown
        // are another model's: editing them would copy that model's config into the preset.
        <fieldset className="processors-fieldset" disabled={stale || error !== null}>
          <ol className={stale || error ? "processors stale" : "processors"}>
            {list.rows.map((row) =>
              row.kind === "item" ? (
                <ProcessorCard key={row.item.stage.descriptor.id} stage={row.item.stage} preset={preset} />
              ) : (
                <li key={row.key} className="section" data-testid={`processors-section-${row.key.slice("category:".length)}`}>
                  <SectionHead
                    section={{ ...row, title: t(`pipeline.section.${row.title as Band}`) }}
                    onFold={(key) => toggleFolded("processors", preset.id, key)}
                    onSwitchAll={(enabled) => switchAll(row.items, enabled)}
                  />
                </li>
              ),
            )}
          </ol>
          {list.rows.length === 0 && <p className="muted">{t("pipeline.noneMatch")}</p>}
        </fieldset>
      )}
    </div>
  );
}

/** The preset's SillyTavern compatibility (RULES 5.11), with what it changes, processor by
 * processor, as the processors say it. */
function CompatibilitySwitch({ preset, stages }: { preset: Preset; stages: PipelineStage[] }) {
  const t = useT();
  const say = useSay();
  const describe = useDescribe();
  const on = isSillyTavern(preset);
  const changes = stages.filter((s) => s.sillytavern);
  return (
    <section className="compatibility" data-testid="compatibility">
      <label className="compatibility-switch">
        <span className="switch">
          <input
            type="checkbox"
            data-testid="compatibility-sillytavern"
            checked={on}
            onChange={(e) => editPreset((p) => setCompatibility(p, e.target.checked))}
          />
          <span aria-hidden="true" />
        </span>
        <strong>{t("pipeline.compatibility")}</strong>
      </label>
      <p className="muted">{t(on ? "pipeline.compatibilityOn" : "pipeline.compatibilityOff")}</p>
      {changes.length > 0 && (
        <details data-testid="compatibility-changes">
          <summary>{t("pipeline.compatibilityChanges", { count: changes.length })}</summary>
          <ul>
            {changes.map((s) => (
              <li key={s.descriptor.id}>
                <strong>{describe(s.descriptor, "name")}</strong>: {say(s.sillytavern!.changes, englishOf(s.sillytavern!.changes))}
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

function ProcessorCard({ stage, preset }: { stage: PipelineStage; preset: Preset }) {
  const t = useT();
  const say = useSay();
  const describe = useDescribe();
  const d = stage.descriptor;
  const enabled = enabledView(preset, stage);
  const priority = priorityView(preset, stage);
  const hasEntry = entryOf(preset, d.id) !== undefined;
  const switchTitle = d.isCore ? t("pipeline.coreLocked") : t("pipeline.enabled");
  return (
    <li
      data-testid={`processor-${d.id}`}
      className={["processor", enabled.value ? "" : "disabled", d.isCore ? "core" : "", hasEntry ? "overridden" : ""]
        .filter(Boolean)
        .join(" ")}
    >
      <div className="processor-head">
        <label className="switch" title={switchTitle}>
          <input
            type="checkbox"
            data-testid={`processor-enabled-${d.id}`}
            checked={enabled.value}
            disabled={d.isCore}
            title={switchTitle}
            aria-label={t("pipeline.enable", { name: describe(d, "name") })}
            onChange={(e) => editPreset((p) => setProcessorEnabled(p, stage, e.target.checked))}
          />
          <span aria-hidden="true" />
        </label>
        <div className="processor-title">
          <span className="step-title">
            <strong>{describe(d, "name")}</strong>
            {d.isCore && (
              <span className="tag tag-core" title={t("pipeline.coreLocked")}>
                {t("pipeline.core")}
              </span>
            )}
          </span>
          <code className="processor-id">{d.id}</code>
        </div>
        <label className={`processor-priority origin-${priority.origin}`} title={t("pipeline.priorityHint")}>
          {t("pipeline.priority")}
          <NumberInput
            value={priority.value}
            testId={`priority-${d.id}`}
            onBlurOnly
            onCommit={(n) => editPreset((p) => setProcessorPriority(p, stage, n))}
          />
        </label>
        <OriginBadge
          origin={strongest(enabled.origin, priority.origin)}
          testId={`origin-${d.id}`}
          title={t("pipeline.originOf", {
            enabled: t(`pipeline.origin.${enabled.origin}`),
            priority: t(`pipeline.origin.${priority.origin}`),
          })}
        />
        {hasEntry && (
          <button
            type="button"
            className="link"
            data-testid={`reset-processor-${d.id}`}
            title={t("pipeline.resetProcessorTitle")}
            onClick={() => editPreset((p) => resetProcessor(p, d.id))}
          >
            {t("pipeline.resetProcessor")}
          </button>
        )}
      </div>
      <p className="processor-description muted">{describe(d, "description")}</p>
      {hasEntry && (
        <p className="processor-scope" data-testid={`scope-${d.id}`}>
          {t("pipeline.presetScope")}
        </p>
      )}
      {stage.resolved.notes.length > 0 && (
        <ul className="processor-notes" data-testid={`notes-${d.id}`}>
          {stage.resolved.notes.map((note, i) => (
            <li key={i} className="warn-text">
              ⚠ {stage.resolved.notesSaid[i] ? say(stage.resolved.notesSaid[i], note) : note}
            </li>
          ))}
        </ul>
      )}
      {d.configFields.length > 0 && (
        <div className="processor-settings">
          {d.configFields.map((field) => (
            <SettingRow key={field.key} stage={stage} preset={preset} field={field} />
          ))}
        </div>
      )}
    </li>
  );
}

function SettingRow({ stage, preset, field }: { stage: PipelineStage; preset: Preset; field: ConfigField }) {
  const t = useT();
  const describe = useDescribe();
  const id = stage.descriptor.id;
  const key = field.key;
  const view = settingView(preset, stage, field);
  const inputId = `pipeline-${id}-${key}`;
  const testId = `setting-${id}-${key}`;
  const coalesce = `pipeline:${id}:${key}`;
  const write = (value: Value, merge?: string) => editPreset((p) => setSetting(p, stage, key, value), merge);
  const modelValue = stage.modelConfig?.settings?.[key];
  const base = baseSetting(preset, stage, field);
  const resetTitle =
    modelValue !== undefined
      ? t("pipeline.resetToModel", { value: show(modelValue) })
      : base.origin === "compatibility"
        ? t("pipeline.resetToCompatibility", { value: show(base.value) })
        : t("pipeline.resetToDefault", { value: show(field.default) });

  let control;
  switch (field.type) {
    case "boolean":
      control = (
        <label className="switch">
          <input
            id={inputId}
            type="checkbox"
            data-testid={testId}
            checked={view.value === true}
            onChange={(e) => write(e.target.checked)}
          />
          <span aria-hidden="true" />
        </label>
      );
      break;
    case "number":
      control = (
        <NumberInput
          id={inputId}
          testId={testId}
          value={typeof view.value === "number" ? view.value : 0}
          onCommit={(n) => write(n, coalesce)}
        />
      );
      break;
    case "select":
      control = (
        <select id={inputId} data-testid={testId} value={String(view.value)} onChange={(e) => write(e.target.value)}>
          {(field.options ?? []).map((o) => (
            <option key={o} value={o}>
              {describe(stage.descriptor, { option: key, value: o })}
            </option>
          ))}
        </select>
      );
      break;
    case "text": {
      const text = typeof view.value === "string" ? view.value : "";
      // An <input> drops line breaks, and some texts are templates or separators made of them.
      const multiline = /\n/.test(text) || /\n/.test(String(field.default)) || text.length > 60;
      control = multiline ? (
        <textarea
          id={inputId}
          data-testid={testId}
          rows={Math.min(6, Math.max(2, text.split("\n").length))}
          value={text}
          onChange={(e) => write(e.target.value, coalesce)}
        />
      ) : (
        <input id={inputId} data-testid={testId} value={text} onChange={(e) => write(e.target.value, coalesce)} />
      );
      break;
    }
  }

  return (
    <div className={`setting origin-${view.origin}`}>
      <label className="setting-label" htmlFor={inputId}>
        {describe(stage.descriptor, { label: key })}
      </label>
      <div className="setting-control">
        {control}
        <OriginBadge origin={view.origin} testId={`origin-${id}-${key}`} />
        {view.canReset && (
          <button
            type="button"
            className="link"
            data-testid={`reset-${id}-${key}`}
            title={resetTitle}
            onClick={() => editPreset((p) => resetSetting(p, stage, key))}
          >
            {t("pipeline.reset")}
          </button>
        )}
      </div>
      {field.description && (
        <p className="setting-description muted">{describe(stage.descriptor, { help: key })}</p>
      )}
    </div>
  );
}

function show(value: Value): string {
  return JSON.stringify(value);
}

function OriginBadge({ origin, testId, title }: { origin: SettingOrigin; testId: string; title?: string }) {
  const t = useT();
  return (
    <span
      className={`tag origin origin-${origin}`}
      data-testid={testId}
      data-origin={origin}
      title={title ?? t(`pipeline.originTitle.${origin}`)}
    >
      {t(`pipeline.origin.${origin}`)}
    </span>
  );
}

/**
 * A number field that lets the user type freely ("1.", "-", an empty field) and writes only
 * numbers: on every valid keystroke, or with `onBlurOnly` when the field is left or Enter is hit
 * (for a priority, which moves the card).
 */
function NumberInput({
  value,
  onCommit,
  onBlurOnly = false,
  id,
  testId,
}: {
  value: number;
  onCommit: (value: number) => void;
  onBlurOnly?: boolean;
  id?: string;
  testId: string;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const parse = (text: string) => {
    const n = Number(text);
    return text.trim() !== "" && Number.isFinite(n) ? n : null;
  };
  const finish = () => {
    if (onBlurOnly && draft !== null) {
      const n = parse(draft);
      if (n !== null && n !== value) onCommit(n);
    }
    setDraft(null);
  };
  // While typing, the text as typed ("1." stays "1."); in live mode a value changed elsewhere
  // (a reset, an undo) shows at once unless the text is not a number yet.
  const typed = draft === null ? null : parse(draft);
  const shown = draft !== null && (onBlurOnly || typed === null || typed === value) ? draft : String(value);
  return (
    <input
      id={id}
      type="number"
      data-testid={testId}
      value={shown}
      onChange={(e) => {
        setDraft(e.target.value);
        const n = parse(e.target.value);
        if (!onBlurOnly && n !== null) onCommit(n);
      }}
      onBlur={finish}
      onKeyDown={(e) => {
        if (e.key === "Enter") finish();
      }}
    />
  );
}
