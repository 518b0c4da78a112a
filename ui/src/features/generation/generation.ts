// The preset's generation settings (RULES 5.10) as the generation panel shows and changes them:
// pure functions from preset to preset, recorded by the store like every other edit.
//
// The merge, as the engine does it (crates/engine/src/pipeline/generation.rs): nothing by
// default, then the model profile's settings, then the preset's, FIELD BY FIELD (unlike the
// processors' config, which the preset replaces whole); `extra` merges key by key. An empty stop
// list counts as not set. The ranges are the engine's (crates/engine/src/model/generation.rs):
// a preset with a value outside them cannot be saved, so the panel never writes one.
import type {
  AgentPreset,
  CacheBreakpoints,
  GenerationSettings,
  ResolvedGeneration,
  SettingOrigin,
  Value,
} from "../../bindings";
// Keys `extra` may not set: the engine writes them itself (its list, through the bindings).
import { RESERVED_EXTRA_KEYS } from "../../bindings";
import { sameValue } from "../pipeline/pipeline";

/** The most stop sequences the engine takes. */
export const MAX_STOP_SEQUENCES = 16;
/** The most cache breakpoints one Anthropic request takes (the engine's MAX_CACHE_BREAKPOINTS). */
export const MAX_CACHE_BREAKPOINTS = 4;

export type NumberKey = "temperature" | "topP" | "topK" | "maxOutputTokens" | "frequencyPenalty" | "presencePenalty" | "seed";
export type FieldKey = NumberKey | "stop" | "extra" | "cacheBreakpoints";

export interface NumberField {
  key: NumberKey;
  /** Whole numbers only. */
  integer: boolean;
  min?: number;
  max?: number;
}

/** The typed number settings, in the order the panel shows them. */
export const NUMBER_FIELDS: NumberField[] = [
  { key: "temperature", integer: false, min: 0, max: 2 },
  { key: "topP", integer: false, min: 0, max: 1 },
  { key: "topK", integer: true, min: 1, max: 4294967295 },
  { key: "maxOutputTokens", integer: true, min: 1, max: 4294967295 },
  { key: "frequencyPenalty", integer: false, min: -2, max: 2 },
  { key: "presencePenalty", integer: false, min: -2, max: 2 },
  { key: "seed", integer: true, min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER },
];

export function generationOf(preset: AgentPreset): GenerationSettings {
  return preset.generation ?? {};
}

/** Whether `settings` sets `key`: a stop list, extra or cache breakpoints count when not empty. */
export function isSet(settings: GenerationSettings | null | undefined, key: FieldKey): boolean {
  const v = settings?.[key];
  if (v === undefined || v === null) return false;
  if (key === "stop") return (v as string[]).length > 0;
  if (key === "extra") return Object.keys(v as object).length > 0;
  if (key === "cacheBreakpoints") return breakpointCount(v as CacheBreakpoints) > 0;
  return true;
}

/** How many breakpoints `c` asks for: the system part's and one a depth. */
export function breakpointCount(c: CacheBreakpoints | null | undefined): number {
  return (c?.system ? 1 : 0) + (c?.depths?.length ?? 0);
}

/** The settings with the unset fields left out; null when nothing is left. */
function normalize(settings: GenerationSettings): GenerationSettings | null {
  const out: GenerationSettings = {};
  for (const key of Object.keys(settings) as FieldKey[]) {
    if (isSet(settings, key)) (out as Record<string, unknown>)[key] = settings[key];
  }
  return Object.keys(out).length > 0 ? out : null;
}

function withGeneration<P extends AgentPreset>(preset: P, generation: GenerationSettings | null): P {
  if (generation) return { ...preset, generation };
  const rest = { ...preset };
  delete rest.generation;
  return rest;
}

/**
 * Sets one field of the preset's generation settings; `undefined` (or an empty stop list or
 * extra) removes the preset's value, so the model profile's applies again, or none. The preset
 * loses its `generation` when nothing is left. Returns `preset` itself when nothing changed.
 */
export function setField<P extends AgentPreset, K extends FieldKey>(
  preset: P,
  key: K,
  value: GenerationSettings[K] | undefined,
): P {
  const before = generationOf(preset);
  const next = { ...before } as Record<string, unknown>;
  if (value === undefined || value === null) delete next[key];
  else next[key] = value;
  const after = normalize(next as GenerationSettings);
  const was = normalize(before);
  if (sameValue((was ?? undefined) as Value | undefined, (after ?? undefined) as Value | undefined)) return preset;
  return withGeneration(preset, after);
}

/** Removes the preset's value of `key`: the model profile's applies again, or none. */
export function resetField<P extends AgentPreset>(preset: P, key: FieldKey): P {
  return setField(preset, key, undefined);
}

// ---- what the panel shows -------------------------------------------------------------------

export interface FieldView<T> {
  /** The value the request carries; undefined when none is sent. */
  value: T | undefined;
  origin: SettingOrigin;
  /** The preset sets it: a reset changes something. */
  canReset: boolean;
}

/**
 * One field as the request will carry it, and where it comes from. The preset's own value is
 * known at once; an inherited one comes from the last build (`resolved`), which says whether the
 * model profile set it. While that build is older than an edit that took the preset's value
 * away, the model profile's value is not known yet and the field shows as not set.
 */
export function fieldView<K extends FieldKey>(
  preset: AgentPreset,
  resolved: ResolvedGeneration | null | undefined,
  key: K,
): FieldView<NonNullable<GenerationSettings[K]>> {
  const own = generationOf(preset);
  if (isSet(own, key)) return { value: own[key] as NonNullable<GenerationSettings[K]>, origin: "preset", canReset: true };
  if (key !== "extra" && resolved?.origins[key] === "model" && isSet(resolved.settings, key)) {
    return { value: resolved.settings[key] as NonNullable<GenerationSettings[K]>, origin: "model", canReset: false };
  }
  return { value: undefined, origin: "default", canReset: false };
}

/** The model profile's keys of `extra` that the request carries (the preset does not set them). */
export function inheritedExtra(preset: AgentPreset, resolved: ResolvedGeneration | null | undefined): { [key: string]: Value } {
  const own = generationOf(preset).extra ?? {};
  const out: { [key: string]: Value } = {};
  const extra = resolved?.settings.extra ?? {};
  for (const [key, origin] of Object.entries(resolved?.extraOrigins ?? {})) {
    if (origin === "model" && !(key in own) && key in extra) out[key] = extra[key]!;
  }
  return out;
}

/** Where `extra` comes from as a whole: the preset when it sets a key, else the model profile. */
export function extraOrigin(preset: AgentPreset, resolved: ResolvedGeneration | null | undefined): SettingOrigin {
  if (isSet(generationOf(preset), "extra")) return "preset";
  return Object.keys(inheritedExtra(preset, resolved)).length > 0 ? "model" : "default";
}

// ---- parsing what the user typed ------------------------------------------------------------

/** Why a value cannot be written, for the panel to say; each names what the engine takes. */
export type Problem =
  | { kind: "notNumber" }
  | { kind: "range"; min: number; max: number }
  | { kind: "atLeast"; min: number }
  | { kind: "integer" }
  | { kind: "tooManyStops"; max: number; count: number }
  | { kind: "json"; message: string }
  | { kind: "notObject" }
  | { kind: "reservedKey"; key: string }
  | { kind: "emptyKey" }
  | { kind: "notDepths" }
  | { kind: "repeatedDepth"; depth: number }
  | { kind: "tooManyBreakpoints"; max: number; count: number };

export type Parsed<T> = { ok: true; value: T | undefined } | { ok: false; problem: Problem };

/** A number field's text: empty is not set; otherwise a number within the field's range. */
export function parseNumber(field: NumberField, text: string): Parsed<number> {
  if (text.trim() === "") return { ok: true, value: undefined };
  const n = Number(text);
  if (!Number.isFinite(n)) return { ok: false, problem: { kind: "notNumber" } };
  return checkNumber(field, n);
}

/** Whether the engine takes `n` for `field`. */
export function checkNumber(field: NumberField, n: number): Parsed<number> {
  if (field.integer && !Number.isInteger(n)) return { ok: false, problem: { kind: "integer" } };
  const { min, max } = field;
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
    // The whole-number fields' maxima are only technical: they say "at least".
    if (field.integer && min !== undefined) {
      return { ok: false, problem: field.key === "seed" ? { kind: "integer" } : { kind: "atLeast", min } };
    }
    return { ok: false, problem: { kind: "range", min: min ?? -Infinity, max: max ?? Infinity } };
  }
  return { ok: true, value: n };
}

/**
 * The stop list as the textarea shows it: one sequence a line, a line break in one written `\n`,
 * a tab `\t`, a backslash `\\`.
 */
export function formatStops(stops: string[] | undefined): string {
  return (stops ?? [])
    .map((s) => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t"))
    .join("\n");
}

function unescape(line: string): string {
  return line.replace(/\\(\\|n|r|t)/g, (_, c: string) => ({ "\\": "\\", n: "\n", r: "\r", t: "\t" })[c]!);
}

/** The textarea's lines as stop sequences: empty lines are skipped, at most 16 are taken. */
export function parseStops(text: string): Parsed<string[]> {
  const stops = text
    .split("\n")
    .filter((line) => line !== "")
    .map(unescape);
  if (stops.length > MAX_STOP_SEQUENCES) {
    return { ok: false, problem: { kind: "tooManyStops", max: MAX_STOP_SEQUENCES, count: stops.length } };
  }
  return { ok: true, value: stops.length > 0 ? stops : undefined };
}

export function formatExtra(extra: { [key: string]: Value } | undefined): string {
  return extra && Object.keys(extra).length > 0 ? JSON.stringify(extra, null, 2) : "";
}

/** The extra textarea: empty is none; else a JSON object with none of the reserved keys. */
export function parseExtra(text: string): Parsed<{ [key: string]: Value }> {
  if (text.trim() === "") return { ok: true, value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, problem: { kind: "json", message: e instanceof Error ? e.message : String(e) } };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, problem: { kind: "notObject" } };
  for (const key of Object.keys(value)) {
    if (key === "") return { ok: false, problem: { kind: "emptyKey" } };
    if ((RESERVED_EXTRA_KEYS as readonly string[]).includes(key)) return { ok: false, problem: { kind: "reservedKey", key } };
  }
  const object = value as { [key: string]: Value };
  return { ok: true, value: Object.keys(object).length > 0 ? object : undefined };
}

/** Cache breakpoint depths as the field shows them: `0, 2`. */
export function formatDepths(depths: readonly number[] | undefined): string {
  return (depths ?? []).join(", ");
}

/**
 * The cache breakpoints of the system part's checkbox and the depths' field (whole numbers from
 * 0, separated by commas or spaces): none repeated, at most four in all. Nothing asked is not set.
 */
export function parseCacheBreakpoints(system: boolean, text: string): Parsed<CacheBreakpoints> {
  const words = text.split(/[\s,，、]+/).filter((w) => w !== "");
  if (words.some((w) => !/^\d+$/.test(w) || Number(w) > 4294967295)) return { ok: false, problem: { kind: "notDepths" } };
  const depths = words.map(Number);
  const twice = depths.find((d, i) => depths.indexOf(d) !== i);
  if (twice !== undefined) return { ok: false, problem: { kind: "repeatedDepth", depth: twice } };
  const count = (system ? 1 : 0) + depths.length;
  if (count > MAX_CACHE_BREAKPOINTS) {
    return { ok: false, problem: { kind: "tooManyBreakpoints", max: MAX_CACHE_BREAKPOINTS, count } };
  }
  if (count === 0) return { ok: true, value: undefined };
  return { ok: true, value: { ...(system ? { system } : {}), ...(depths.length > 0 ? { depths } : {}) } };
}
