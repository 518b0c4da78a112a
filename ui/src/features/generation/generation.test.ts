import { describe, expect, it } from "vitest";
import type { AgentPreset, ResolvedGeneration } from "../../bindings";
import {
  checkNumber,
  fieldView,
  formatStops,
  inheritedExtra,
  NUMBER_FIELDS,
  formatDepths,
  isSet,
  parseCacheBreakpoints,
  parseExtra,
  parseNumber,
  parseStops,
  resetField,
  setField,
} from "./generation";

const preset = (generation?: AgentPreset["generation"]): AgentPreset => ({
  id: "p",
  name: "P",
  ...(generation ? { generation } : {}),
});
const field = (key: string) => NUMBER_FIELDS.find((f) => f.key === key)!;

describe("generation settings", () => {
  it("set and reset field by field, dropping what is empty", () => {
    const p = setField(preset(), "temperature", 0.5);
    expect(p.generation).toEqual({ temperature: 0.5 });
    expect(setField(p, "temperature", 0.5)).toBe(p);
    expect(setField(p, "stop", [])).toBe(p);
    const q = setField(p, "stop", ["END"]);
    expect(q.generation).toEqual({ temperature: 0.5, stop: ["END"] });
    expect(resetField(resetField(q, "stop"), "temperature")).not.toHaveProperty("generation");
    expect(resetField(preset(), "seed")).toEqual(preset());
  });

  it("take the preset's value over the build's, and the model's from the build", () => {
    const resolved: ResolvedGeneration = {
      settings: { temperature: 1, topK: 40, extra: { a: 1, b: 2 } },
      origins: { temperature: "model", topK: "preset" },
      extraOrigins: { a: "model", b: "model" },
    };
    const p = preset({ topP: 0.9, extra: { b: 3 } });
    expect(fieldView(p, resolved, "topP")).toEqual({ value: 0.9, origin: "preset", canReset: true });
    expect(fieldView(p, resolved, "temperature")).toEqual({ value: 1, origin: "model", canReset: false });
    // A build older than the reset of the preset's own value: the model's is not known yet.
    expect(fieldView(p, resolved, "topK")).toEqual({ value: undefined, origin: "default", canReset: false });
    expect(fieldView(p, null, "seed")).toEqual({ value: undefined, origin: "default", canReset: false });
    expect(inheritedExtra(p, resolved)).toEqual({ a: 1 });
  });

  it("check numbers against the engine's ranges", () => {
    expect(parseNumber(field("temperature"), "")).toEqual({ ok: true, value: undefined });
    expect(parseNumber(field("temperature"), "2")).toEqual({ ok: true, value: 2 });
    expect(parseNumber(field("temperature"), "2.01")).toEqual({ ok: false, problem: { kind: "range", min: 0, max: 2 } });
    expect(parseNumber(field("topP"), "abc")).toEqual({ ok: false, problem: { kind: "notNumber" } });
    expect(checkNumber(field("topK"), 0)).toEqual({ ok: false, problem: { kind: "atLeast", min: 1 } });
    expect(checkNumber(field("seed"), -5)).toEqual({ ok: true, value: -5 });
    expect(checkNumber(field("seed"), 1.5)).toEqual({ ok: false, problem: { kind: "integer" } });
    expect(checkNumber(field("presencePenalty"), -2)).toEqual({ ok: true, value: -2 });
  });

  it("write stop sequences one a line with escapes, and read them back", () => {
    const stops = ["###", "\n\nUser:", "a\\b", "\tx "];
    const text = formatStops(stops);
    expect(text).toBe("###\n\\n\\nUser:\na\\\\b\n\\tx ");
    expect(parseStops(text)).toEqual({ ok: true, value: stops });
    expect(parseStops("\n\n")).toEqual({ ok: true, value: undefined });
  });

  it("take extra only as an object without reserved or empty keys", () => {
    expect(parseExtra("")).toEqual({ ok: true, value: undefined });
    expect(parseExtra("{}")).toEqual({ ok: true, value: undefined });
    expect(parseExtra('{"user":"u"}')).toEqual({ ok: true, value: { user: "u" } });
    expect(parseExtra("null")).toEqual({ ok: false, problem: { kind: "notObject" } });
    expect(parseExtra('{"stream":true}')).toEqual({ ok: false, problem: { kind: "reservedKey", key: "stream" } });
    expect(parseExtra('{"":1}')).toEqual({ ok: false, problem: { kind: "emptyKey" } });
    expect(parseExtra("{").ok).toBe(false);
  });

  it("take cache breakpoints as the system part and depths, none twice, at most four", () => {
    expect(parseCacheBreakpoints(false, "")).toEqual({ ok: true, value: undefined });
    expect(parseCacheBreakpoints(true, "")).toEqual({ ok: true, value: { system: true } });
    expect(parseCacheBreakpoints(false, "0, 2 5")).toEqual({ ok: true, value: { depths: [0, 2, 5] } });
    expect(parseCacheBreakpoints(true, " 3，1 ")).toEqual({ ok: true, value: { system: true, depths: [3, 1] } });
    for (const bad of ["-1", "1.5", "two", "0,, x"]) {
      expect(parseCacheBreakpoints(false, bad), bad).toEqual({ ok: false, problem: { kind: "notDepths" } });
    }
    expect(parseCacheBreakpoints(false, "2, 0, 2")).toEqual({ ok: false, problem: { kind: "repeatedDepth", depth: 2 } });
    expect(parseCacheBreakpoints(false, "0, 1, 2, 3")).toMatchObject({ ok: true });
    expect(parseCacheBreakpoints(true, "0, 1, 2, 3")).toEqual({
      ok: false,
      problem: { kind: "tooManyBreakpoints", max: 4, count: 5 },
    });
    expect(formatDepths([0, 2])).toBe("0, 2");
    expect(formatDepths(undefined)).toBe("");
    // Asking for none is not setting it.
    expect(isSet({ cacheBreakpoints: {} }, "cacheBreakpoints")).toBe(false);
    expect(setField(preset(), "cacheBreakpoints", { depths: [] })).toEqual(preset());
    expect(setField(preset(), "cacheBreakpoints", { system: true }).generation).toEqual({ cacheBreakpoints: { system: true } });
  });
});
