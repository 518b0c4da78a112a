// The preset's processor settings (RULES 5.9) as the pipeline panel shows and changes them: pure
// functions from preset to preset, recorded by the store like every other edit.
//
// The merge, as the engine does it (crates/engine/src/pipeline/config.rs): the pipeline's
// defaults, under SillyTavern compatibility the processor's SillyTavern values over them (RULES
// 5.11), then the model profile's config, then the preset's; for one processor id the preset's
// config REPLACES the model profile's whole, for every model. So an edit that creates the preset's
// entry starts it from the model profile's config (the model in view keeps what it had), and from
// then on the preset holds every value of the entry, for every model: the panel says so, and shows
// those values as the preset's, as the engine does.
import type { AgentPreset, ConfigField, PipelineStage, ProcessorConfig, SettingOrigin, Value } from "../../bindings";

/** What the edits need of a stage: the processor, the model profile's config for it and its
 * SillyTavern behaviour. */
export type StageInfo = Pick<PipelineStage, "descriptor" | "modelConfig"> & Partial<Pick<PipelineStage, "sillytavern">>;

/** Whether the preset builds under SillyTavern compatibility (RULES 5.11). */
export function isSillyTavern(preset: AgentPreset): boolean {
  return preset.compatibility === "sillytavern";
}

/** The preset switched to SillyTavern compatibility or back to the native rules. */
export function setCompatibility<P extends AgentPreset>(preset: P, sillytavern: boolean): P {
  if (sillytavern === isSillyTavern(preset)) return preset;
  if (sillytavern) return { ...preset, compatibility: "sillytavern" };
  const rest = { ...preset };
  delete rest.compatibility;
  return rest;
}

type Settings = { [key: string]: Value };

export function processorsOf(preset: AgentPreset): ProcessorConfig[] {
  return preset.processors ?? [];
}

/** The preset's config for processor `id`, if it has one. */
export function entryOf(preset: AgentPreset, id: string): ProcessorConfig | undefined {
  return processorsOf(preset).find((c) => c.id === id);
}

/** Deep equality of JSON values; an absent value equals only another absent one. */
export function sameValue(a: Value | undefined, b: Value | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => k in b && sameValue(a[k], b[k]));
}

function settingsOf(c: ProcessorConfig | null | undefined): Settings {
  return c?.settings ?? {};
}

/** The config with absent parts left out: no null `enabled`/`priority`, no empty `settings`. */
export function normalize(c: ProcessorConfig): ProcessorConfig {
  const out: ProcessorConfig = { id: c.id };
  if (c.enabled !== undefined && c.enabled !== null) out.enabled = c.enabled;
  if (c.priority !== undefined && c.priority !== null) out.priority = c.priority;
  if (Object.keys(settingsOf(c)).length > 0) out.settings = { ...settingsOf(c) };
  return out;
}

/** A config that sets nothing: no enabled, no priority, no settings. */
export function isEmptyConfig(c: ProcessorConfig): boolean {
  const n = normalize(c);
  return n.enabled === undefined && n.priority === undefined && n.settings === undefined;
}

/** Whether two configs set the same things (absent and null count as the same). */
export function sameConfig(a: ProcessorConfig | null | undefined, b: ProcessorConfig | null | undefined): boolean {
  const na = normalize(a ?? { id: "" });
  const nb = normalize(b ?? { id: "" });
  return (
    na.enabled === nb.enabled &&
    na.priority === nb.priority &&
    sameValue(na.settings as Value | undefined, nb.settings as Value | undefined)
  );
}

/** The entry a first edit starts from: a copy of the model profile's config, so nothing of it is lost. */
export function seedEntry(stage: StageInfo): ProcessorConfig {
  return normalize({ ...(stage.modelConfig ?? {}), id: stage.descriptor.id });
}

function withProcessors<P extends AgentPreset>(preset: P, processors: ProcessorConfig[]): P {
  if (processors.length > 0) return { ...preset, processors };
  const rest = { ...preset };
  delete rest.processors;
  return rest;
}

/**
 * Changes the preset's entry for the stage's processor, starting from the model profile's config
 * when the preset has none. An entry that ends up setting nothing is removed. One equal to this
 * model profile's config stays: it applies to every model, and other models' profiles may differ.
 * Returns `preset` itself when nothing changed.
 */
export function updateProcessor<P extends AgentPreset>(
  preset: P,
  stage: StageInfo,
  change: (entry: ProcessorConfig) => ProcessorConfig,
): P {
  const id = stage.descriptor.id;
  const list = processorsOf(preset);
  const index = list.findIndex((c) => c.id === id);
  const before = index >= 0 ? list[index]! : undefined;
  const after = normalize({ ...change(before ? normalize(before) : seedEntry(stage)), id });
  if (isEmptyConfig(after)) {
    return before ? withProcessors(preset, list.filter((_, i) => i !== index)) : preset;
  }
  if (before && sameConfig(before, after)) return preset;
  const next = index >= 0 ? list.map((c, i) => (i === index ? after : c)) : [...list, after];
  return withProcessors(preset, next);
}

/** Switches the processor on or off for this preset. A core processor cannot be switched off. */
export function setProcessorEnabled<P extends AgentPreset>(preset: P, stage: StageInfo, enabled: boolean): P {
  if (stage.descriptor.isCore && !enabled) return preset;
  return updateProcessor(preset, stage, (c) => ({ ...c, enabled }));
}

/** Sets the processor's priority (rounded; the engine's is an integer); `null` drops the preset's. */
export function setProcessorPriority<P extends AgentPreset>(preset: P, stage: StageInfo, priority: number | null): P {
  return updateProcessor(preset, stage, (c) => ({
    ...c,
    priority: priority === null || !Number.isFinite(priority) ? null : Math.round(priority),
  }));
}

/** Sets one setting of the processor for this preset. */
export function setSetting<P extends AgentPreset>(preset: P, stage: StageInfo, key: string, value: Value): P {
  return updateProcessor(preset, stage, (c) => ({ ...c, settings: { ...settingsOf(c), [key]: value } }));
}

/**
 * Puts one setting back to what the preset inherits: the model profile's value if it has one
 * (the preset's entry replaces the model's whole, so the value is written), else nothing, which
 * is the pipeline's default.
 */
export function resetSetting<P extends AgentPreset>(preset: P, stage: StageInfo, key: string): P {
  if (!entryOf(preset, stage.descriptor.id)) return preset;
  const model = settingsOf(stage.modelConfig);
  return updateProcessor(preset, stage, (c) => {
    const settings = { ...settingsOf(c) };
    if (key in model) settings[key] = model[key]!;
    else delete settings[key];
    return { ...c, settings };
  });
}

/** Removes the preset's config for processor `id`: the model profile's applies again. */
export function resetProcessor<P extends AgentPreset>(preset: P, id: string): P {
  const list = processorsOf(preset);
  if (!list.some((c) => c.id === id)) return preset;
  return withProcessors(
    preset,
    list.filter((c) => c.id !== id),
  );
}

// ---- what the panel shows -------------------------------------------------------------------

/** Whether the engine takes `value` for `field` (it falls back to the default otherwise). */
export function fits(field: ConfigField, value: Value | undefined): boolean {
  switch (field.type) {
    case "boolean":
      return typeof value === "boolean";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "text":
      return typeof value === "string";
    case "select":
      return typeof value === "string" && (field.options ?? []).includes(value);
  }
}

export interface SettingView {
  /** The value the processor runs with. */
  value: Value;
  origin: SettingOrigin;
  /** The preset's value differs from what it would inherit: a reset changes something. */
  canReset: boolean;
}

/** What a setting starts from before any config: the processor's SillyTavern value under
 * SillyTavern compatibility, else its default. */
export function baseSetting(preset: AgentPreset, stage: StageInfo, field: ConfigField): { value: Value; origin: SettingOrigin } {
  const compat = isSillyTavern(preset) ? stage.sillytavern?.settings?.[field.key] : undefined;
  if (compat !== undefined && fits(field, compat)) return { value: compat, origin: "compatibility" };
  return { value: field.default, origin: "default" };
}

/** One setting as it will run for this preset, where it comes from, and whether it can be reset. */
export function settingView(preset: AgentPreset, stage: StageInfo, field: ConfigField): SettingView {
  const entry = entryOf(preset, stage.descriptor.id);
  const model = settingsOf(stage.modelConfig);
  const key = field.key;
  const base = baseSetting(preset, stage, field);
  if (entry) {
    const own = settingsOf(entry)[key];
    const canReset = !sameValue(own, model[key]);
    if (own !== undefined && fits(field, own)) return { value: own, origin: "preset", canReset };
    return { ...base, canReset };
  }
  const inherited = model[key];
  if (inherited !== undefined && fits(field, inherited)) return { value: inherited, origin: "model", canReset: false };
  return { ...base, canReset: false };
}

export interface SwitchView<T> {
  value: T;
  origin: SettingOrigin;
}

/** Whether the processor runs for this preset, and where that comes from. Core ones always run. */
export function enabledView(preset: AgentPreset, stage: StageInfo): SwitchView<boolean> {
  const { descriptor: d, modelConfig } = stage;
  const entry = entryOf(preset, d.id);
  const own = entry ? entry.enabled : undefined;
  const fromModel = modelConfig?.enabled ?? undefined;
  const refused = (v: boolean | null | undefined) => d.isCore && v === false;
  const compat = isSillyTavern(preset) ? (stage.sillytavern?.enabled ?? undefined) : undefined;
  const base: SwitchView<boolean> =
    compat !== undefined && !refused(compat)
      ? { value: compat, origin: "compatibility" }
      : { value: d.isCore || d.defaultEnabled, origin: "default" };
  if (entry) {
    if (own === undefined || own === null || refused(own)) return base;
    return { value: own, origin: "preset" };
  }
  if (fromModel === undefined || refused(fromModel)) return base;
  return { value: fromModel, origin: "model" };
}

/** The processor's priority for this preset, and where it comes from. */
export function priorityView(preset: AgentPreset, stage: StageInfo): SwitchView<number> {
  const { descriptor: d, modelConfig } = stage;
  const entry = entryOf(preset, d.id);
  const fromModel = modelConfig?.priority ?? undefined;
  if (entry) {
    const own = entry.priority ?? undefined;
    if (own === undefined) return { value: d.priority, origin: "default" };
    return { value: own, origin: "preset" };
  }
  if (fromModel === undefined) return { value: d.priority, origin: "default" };
  return { value: fromModel, origin: "model" };
}

/** The stronger of two origins: the preset's over the model profile's over SillyTavern
 * compatibility over the default. */
export function strongest(a: SettingOrigin, b: SettingOrigin): SettingOrigin {
  const rank: Record<SettingOrigin, number> = { default: 0, compatibility: 1, model: 2, preset: 3 };
  return rank[a] >= rank[b] ? a : b;
}
