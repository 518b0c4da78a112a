import { useState, type ReactNode } from "react";
import type { GenerationSettings, LogEntry, ResolvedGeneration, SettingOrigin } from "../../bindings";
import type { Preset } from "../../app/model";
import { editPreset, useApp } from "../../app/store";
import { useSay, useT } from "../../app/useT";
import type { MessageKey } from "../../i18n";
import {
  checkNumber,
  extraOrigin,
  fieldView,
  formatExtra,
  formatStops,
  generationOf,
  formatDepths,
  inheritedExtra,
  MAX_CACHE_BREAKPOINTS,
  MAX_STOP_SEQUENCES,
  NUMBER_FIELDS,
  parseCacheBreakpoints,
  parseExtra,
  parseNumber,
  parseStops,
  resetField,
  setField,
  type FieldKey,
  type NumberField,
  type Parsed,
  type Problem,
} from "./generation";
import { TextCompletionSettings } from "../instruct/TextCompletionSettings";

/** What is typed into a field and not yet shown from the preset: kept while the preset's own
 * value is still `base` (an undo or a reset replaces it). `start` is the preset's value before
 * the typing began: while the text is not a value the engine takes, the preset keeps that one. */
interface Draft {
  text: string;
  base: string;
  start: unknown;
}

/** A value as the drafts compare it: an empty list or object is no value, as in the preset. */
const ownKey = (value: unknown) => {
  if (value === undefined || value === null) return "null";
  if (Array.isArray(value) && value.length === 0) return "null";
  if (typeof value === "object" && Object.keys(value).length === 0) return "null";
  return JSON.stringify(value);
};

/**
 * A field typed into: every text the engine takes is written into the preset at once (one undo
 * step while typing), and one it does not take puts back the value the preset had before the
 * typing began, so what is refused is never saved. Leaving a field with a text that is taken
 * shows the value as the preset holds it.
 */
function useDraft<T>(key: FieldKey, own: T | null | undefined, parse: (text: string) => Parsed<T>) {
  const [draft, setDraft] = useState<Draft | null>(null);
  const live = draft && draft.base === ownKey(own) ? draft : null;
  return {
    /** The text typed, when it is still what the field shows. */
    text: live ? live.text : null,
    change(typed: string) {
      const start = live ? live.start : own;
      const parsed = parse(typed);
      const value = parsed.ok ? parsed.value : start;
      editPreset(
        (p) => setField(p, key, (value ?? undefined) as GenerationSettings[typeof key] | undefined),
        `generation:${key}`,
      );
      setDraft({ text: typed, base: ownKey(value), start });
    },
    leave() {
      if (live && parse(live.text).ok) setDraft(null);
    },
    clear() {
      setDraft(null);
    },
  };
}

/**
 * The generation panel (RULES 5.10): the sampler and length settings the request carries, each
 * with where its value comes from (the preset, the model profile, or nothing: the provider's
 * default), a reset to what the preset inherits, and the build's warnings about it. A value the
 * engine would refuse is shown with its range and never written into the preset.
 */
export function GenerationPanel() {
  const t = useT();
  const preset = useApp((s) => s.preset);
  const model = useApp((s) => s.model);
  const preview = useApp((s) => s.preview);
  if (!preset) return null;
  const resolved = preview?.result.generation ?? null;
  const warnings = (preview?.result.warnings ?? []).filter((w) => w.said.code.startsWith("generation."));
  const warningsOf = (key: FieldKey) =>
    warnings.filter(
      (w) => w.said.params.setting === key || (key === "maxOutputTokens" && w.said.code === "generation.over-reserve"),
    );
  return (
    <div className="generation" data-testid="generation-panel">
      <header className="editor-head">
        <div>
          <h2>{t("generation.title")}</h2>
          <p className="muted" data-testid="generation-intro">
            {t("generation.intro", { model })}
          </p>
        </div>
      </header>
      <div className="generation-settings">
        {NUMBER_FIELDS.map((field) => (
          <NumberRow key={field.key} field={field} preset={preset} resolved={resolved} warnings={warningsOf(field.key)} />
        ))}
        <StopRow preset={preset} resolved={resolved} warnings={warningsOf("stop")} />
        <CacheRow preset={preset} resolved={resolved} warnings={warningsOf("cacheBreakpoints")} />
        <ExtraRow preset={preset} resolved={resolved} />
      </div>
      <TextCompletionSettings preset={preset} />
    </div>
  );
}

interface RowProps {
  preset: Preset;
  resolved: ResolvedGeneration | null;
  warnings?: LogEntry[];
}

function NumberRow({ field, preset, resolved, warnings }: RowProps & { field: NumberField }) {
  const key = field.key;
  const view = fieldView(preset, resolved, key);
  const own = generationOf(preset)[key];
  const draft = useDraft(key, own, (text) => parseNumber(field, text));
  const text = draft.text ?? (view.value === undefined ? "" : String(view.value));
  const parsed: Parsed<number> =
    draft.text !== null
      ? parseNumber(field, draft.text)
      : own !== undefined && own !== null
        ? checkNumber(field, own)
        : { ok: true, value: undefined };
  return (
    <Row
      fieldKey={key}
      origin={view.origin}
      canReset={view.canReset}
      onReset={draft.clear}
      problem={parsed.ok ? null : parsed.problem}
      warnings={warnings}
    >
      <input
        id={`generation-${key}`}
        type="number"
        data-testid={`generation-${key}`}
        min={field.min !== undefined && Number.isSafeInteger(field.min) ? field.min : undefined}
        max={field.max !== undefined && Number.isSafeInteger(field.max) ? field.max : undefined}
        step={field.integer ? 1 : "any"}
        value={text}
        aria-invalid={parsed.ok ? undefined : true}
        onChange={(e) => {
          // A number input answers "" while its text is no number yet ("-", "1e"): not an edit.
          if (e.target.value === "" && e.target.validity?.badInput) return;
          draft.change(e.target.value);
        }}
        onBlur={draft.leave}
      />
    </Row>
  );
}

function StopRow({ preset, resolved, warnings }: RowProps) {
  const t = useT();
  const view = fieldView(preset, resolved, "stop");
  const own = generationOf(preset).stop;
  const draft = useDraft("stop", own, parseStops);
  const text = draft.text ?? formatStops(view.value);
  const parsed = parseStops(draft.text ?? formatStops(own));
  return (
    <Row
      fieldKey="stop"
      origin={view.origin}
      canReset={view.canReset}
      onReset={draft.clear}
      problem={parsed.ok ? null : parsed.problem}
      warnings={warnings}
    >
      <textarea
        id="generation-stop"
        data-testid="generation-stop"
        rows={Math.min(8, Math.max(2, text.split("\n").length))}
        value={text}
        placeholder={t("generation.stopPlaceholder")}
        spellCheck={false}
        aria-invalid={parsed.ok ? undefined : true}
        onChange={(e) => draft.change(e.target.value)}
        onBlur={draft.leave}
      />
    </Row>
  );
}

/**
 * Anthropic's prompt-cache breakpoints (RULES 5.13): after the system part (a checkbox) and after
 * the messages at the depths typed (`0, 2`). A value the engine would refuse (a depth twice, more
 * than four in all) is said and not written, as for the other settings.
 */
function CacheRow({ preset, resolved, warnings }: RowProps) {
  const t = useT();
  const view = fieldView(preset, resolved, "cacheBreakpoints");
  const own = generationOf(preset).cacheBreakpoints;
  const system = view.value?.system ?? false;
  const draft = useDraft("cacheBreakpoints", own, (text) => parseCacheBreakpoints(system, text));
  const text = draft.text ?? formatDepths(view.value?.depths ?? undefined);
  // The system part switched on over four depths: refused, and said until the next change.
  const [refused, setRefused] = useState<Problem | null>(null);
  const parsed = parseCacheBreakpoints(system, text);
  return (
    <Row
      fieldKey="cacheBreakpoints"
      origin={view.origin}
      canReset={view.canReset}
      onReset={() => {
        draft.clear();
        setRefused(null);
      }}
      problem={parsed.ok ? refused : parsed.problem}
      warnings={warnings}
      max={MAX_CACHE_BREAKPOINTS}
    >
      <div className="cache-fields">
        <label className="check">
          <input
            type="checkbox"
            data-testid="generation-cacheSystem"
            checked={system}
            onChange={(e) => {
              const next = parseCacheBreakpoints(e.target.checked, text);
              if (!next.ok) return setRefused(next.problem);
              setRefused(null);
              draft.clear();
              editPreset((p) => setField(p, "cacheBreakpoints", next.value));
            }}
          />
          {t("generation.cacheSystem")}
        </label>
        <label className="check">
          {t("generation.cacheDepths")}
          <input
            id="generation-cacheBreakpoints"
            data-testid="generation-cacheBreakpoints"
            className="depths-input"
            value={text}
            placeholder="0, 2"
            spellCheck={false}
            aria-invalid={parsed.ok ? undefined : true}
            onChange={(e) => {
              setRefused(null);
              draft.change(e.target.value);
            }}
            onBlur={draft.leave}
          />
        </label>
      </div>
    </Row>
  );
}

function ExtraRow({ preset, resolved }: RowProps) {
  const t = useT();
  const own = generationOf(preset).extra;
  const ownExtra = own && Object.keys(own).length > 0 ? own : undefined;
  const inherited = inheritedExtra(preset, resolved);
  const draft = useDraft("extra", ownExtra, parseExtra);
  const text = draft.text ?? formatExtra(ownExtra);
  const parsed = parseExtra(text);
  return (
    <Row
      fieldKey="extra"
      origin={extraOrigin(preset, resolved)}
      canReset={ownExtra !== undefined}
      onReset={draft.clear}
      problem={parsed.ok ? null : parsed.problem}
      note={
        Object.keys(inherited).length > 0 && (
          <p className="setting-description muted" data-testid="generation-inherited-extra">
            {t("generation.inheritedExtra", { json: JSON.stringify(inherited) })}
          </p>
        )
      }
    >
      <textarea
        id="generation-extra"
        data-testid="generation-extra"
        rows={Math.min(10, Math.max(3, text.split("\n").length))}
        value={text}
        placeholder={'{ "user": "…" }'}
        spellCheck={false}
        aria-invalid={parsed.ok ? undefined : true}
        onChange={(e) => draft.change(e.target.value)}
        onBlur={draft.leave}
      />
    </Row>
  );
}

/** One setting: its label, the control, the origin, the reset, and what is wrong with it. */
function Row({
  fieldKey,
  origin,
  canReset,
  onReset,
  problem,
  warnings,
  note,
  max = MAX_STOP_SEQUENCES,
  children,
}: {
  fieldKey: FieldKey;
  origin: SettingOrigin;
  canReset: boolean;
  onReset: () => void;
  problem: Problem | null;
  warnings?: LogEntry[];
  note?: ReactNode;
  /** The `{max}` its help names. */
  max?: number;
  children: ReactNode;
}) {
  const t = useT();
  const say = useSay();
  return (
    <div className={`setting generation-setting origin-${origin}`} data-testid={`generation-row-${fieldKey}`}>
      <label className="setting-label" htmlFor={`generation-${fieldKey}`}>
        {t(`generation.field.${fieldKey}`)}
        <code className="generation-key">{fieldKey}</code>
      </label>
      <div className="setting-control">
        {children}
        <OriginBadge origin={origin} testId={`generation-origin-${fieldKey}`} />
        {canReset && (
          <button
            type="button"
            className="link"
            data-testid={`generation-reset-${fieldKey}`}
            title={t("generation.resetTitle")}
            onClick={() => {
              onReset();
              editPreset((p) => resetField(p, fieldKey));
            }}
          >
            {t("generation.reset")}
          </button>
        )}
      </div>
      {problem && (
        <p className="setting-description error" role="alert" data-testid={`generation-error-${fieldKey}`}>
          {problemText(t, problem)}
        </p>
      )}
      <p className="setting-description muted">{t(`generation.help.${fieldKey}`, { max })}</p>
      {note}
      {warnings?.map((w, i) => (
        <p key={i} className="setting-description warn-text" data-testid={`generation-warning-${fieldKey}`}>
          ⚠ {say(w.said, w.message)}
        </p>
      ))}
    </div>
  );
}

function problemText(t: (key: MessageKey, vars?: Record<string, string | number>) => string, problem: Problem): string {
  switch (problem.kind) {
    case "notNumber":
      return t("generation.problem.notNumber");
    case "range":
      return t("generation.problem.range", { min: problem.min, max: problem.max });
    case "atLeast":
      return t("generation.problem.atLeast", { min: problem.min });
    case "integer":
      return t("generation.problem.integer");
    case "tooManyStops":
      return t("generation.problem.tooManyStops", { count: problem.count, max: problem.max });
    case "json":
      return t("generation.problem.json", { message: problem.message });
    case "notObject":
      return t("generation.problem.notObject");
    case "reservedKey":
      return t("generation.problem.reservedKey", { key: problem.key });
    case "emptyKey":
      return t("generation.problem.emptyKey");
    case "notDepths":
      return t("generation.problem.notDepths");
    case "repeatedDepth":
      return t("generation.problem.repeatedDepth", { depth: problem.depth });
    case "tooManyBreakpoints":
      return t("generation.problem.tooManyBreakpoints", { count: problem.count, max: problem.max });
  }
}

/** The pipeline panel's origin badge, in the same look, with what an origin means here: the
 * default is no value at all (the provider's own applies). */
function OriginBadge({ origin, testId }: { origin: SettingOrigin; testId: string }) {
  const t = useT();
  return (
    <span
      className={`tag origin origin-${origin}`}
      data-testid={testId}
      data-origin={origin}
      title={t(`generation.originTitle.${origin}`)}
    >
      {t(`generation.origin.${origin}`)}
    </span>
  );
}
