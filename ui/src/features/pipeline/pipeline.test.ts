import { describe, expect, it } from "vitest";
import type { AgentPreset, ConfigField, ProcessorConfig } from "../../bindings";
import {
  enabledView,
  entryOf,
  priorityView,
  resetProcessor,
  resetSetting,
  sameConfig,
  seedEntry,
  setProcessorEnabled,
  setProcessorPriority,
  setSetting,
  settingView,
  type StageInfo,
} from "./pipeline";

const strategy: ConfigField = {
  key: "strategy",
  label: "Strategy",
  type: "select",
  default: "fixed-preset",
  options: ["fixed-preset", "proportional"],
};
const truncate: ConfigField = { key: "truncateOverflowing", label: "Cut", type: "boolean", default: false };
const share: ConfigField = { key: "shareHistory", label: "Share", type: "number", default: 55 };

function stage(modelConfig: ProcessorConfig | null, isCore = false): StageInfo {
  return {
    descriptor: {
      id: "token-limiter",
      name: "Token limiter",
      description: "",
      priority: 400,
      isCore,
      defaultEnabled: true,
      configFields: [strategy, truncate, share],
    },
    modelConfig,
  };
}

const modelConfig: ProcessorConfig = { id: "token-limiter", priority: 410, settings: { shareHistory: 60, truncateOverflowing: true } };

function preset(processors?: ProcessorConfig[]): AgentPreset {
  return { id: "p", name: "P", ...(processors ? { processors } : {}) };
}

describe("editing a processor's settings", () => {
  it("seeds the preset's entry from the model profile's config on the first edit", () => {
    const after = setSetting(preset(), stage(modelConfig), "strategy", "proportional");
    expect(after.processors).toEqual([
      {
        id: "token-limiter",
        priority: 410,
        settings: { shareHistory: 60, truncateOverflowing: true, strategy: "proportional" },
      },
    ]);
  });

  it("starts from nothing when the model profile has no config", () => {
    const after = setProcessorEnabled(preset(), stage(null), false);
    expect(after.processors).toEqual([{ id: "token-limiter", enabled: false }]);
  });

  it("keeps the other processors' entries and the entry's place", () => {
    const other = { id: "lorebook", enabled: false };
    const before = preset([{ id: "token-limiter", settings: { strategy: "proportional" } }, other]);
    const after = setSetting(before, stage(null), "truncateOverflowing", true);
    expect(after.processors).toEqual([
      { id: "token-limiter", settings: { strategy: "proportional", truncateOverflowing: true } },
      other,
    ]);
  });

  it("does not switch a core processor off", () => {
    const before = preset();
    expect(setProcessorEnabled(before, stage(null, true), false)).toBe(before);
  });

  it("rounds a priority and drops it with null", () => {
    const withPriority = setProcessorPriority(preset(), stage(null), 42.4);
    expect(withPriority.processors).toEqual([{ id: "token-limiter", priority: 42 }]);
    expect(setProcessorPriority(withPriority, stage(null), null).processors).toBeUndefined();
  });

  it("keeps an explicit switch even where it matches the default", () => {
    const before = preset([{ id: "token-limiter", enabled: false }]);
    const after = setProcessorEnabled(before, stage(null), true);
    expect(after.processors).toEqual([{ id: "token-limiter", enabled: true }]);
  });

  it("removes an entry that ends up setting nothing", () => {
    const reset = resetSetting(preset([{ id: "token-limiter", settings: { strategy: "proportional" } }]), stage(null), "strategy");
    expect(reset.processors).toBeUndefined();
    expect("processors" in reset).toBe(false);
  });

  it("keeps an entry equal to the model profile's config: it applies to every model", () => {
    const edited = setSetting(preset(), stage(modelConfig), "strategy", "proportional");
    const back = resetSetting(edited, stage(modelConfig), "strategy");
    expect(entryOf(back, "token-limiter")).toEqual({ ...modelConfig, id: "token-limiter" });
  });

  it("returns the same preset when nothing changes", () => {
    const before = preset([{ id: "token-limiter", settings: { strategy: "proportional" } }]);
    expect(setSetting(before, stage(null), "strategy", "proportional")).toBe(before);
    expect(resetSetting(preset(), stage(modelConfig), "strategy")).toEqual(preset());
    expect(resetProcessor(before, "lorebook")).toBe(before);
  });
});

describe("resetting", () => {
  it("a key the model profile sets writes the model's value", () => {
    const before = preset([{ id: "token-limiter", settings: { shareHistory: 80, strategy: "proportional" } }]);
    const after = resetSetting(before, stage(modelConfig), "shareHistory");
    expect(entryOf(after, "token-limiter")?.settings).toEqual({ shareHistory: 60, strategy: "proportional" });
  });

  it("a key the model profile does not set removes it", () => {
    const before = preset([{ id: "token-limiter", enabled: false, settings: { strategy: "proportional" } }]);
    const after = resetSetting(before, stage(modelConfig), "strategy");
    expect(entryOf(after, "token-limiter")).toEqual({ id: "token-limiter", enabled: false });
  });

  it("a processor removes the preset's entry", () => {
    const before = preset([{ id: "token-limiter", enabled: false }, { id: "lorebook", enabled: false }]);
    expect(resetProcessor(before, "token-limiter").processors).toEqual([{ id: "lorebook", enabled: false }]);
  });
});

describe("what the panel shows", () => {
  it("values and origins without a preset entry", () => {
    const s = stage(modelConfig);
    expect(settingView(preset(), s, share)).toEqual({ value: 60, origin: "model", canReset: false });
    expect(settingView(preset(), s, strategy)).toEqual({ value: "fixed-preset", origin: "default", canReset: false });
    expect(priorityView(preset(), s)).toEqual({ value: 410, origin: "model" });
    expect(enabledView(preset(), s)).toEqual({ value: true, origin: "default" });
  });

  it("values copied from the model profile are the preset's from then on, with nothing to reset", () => {
    const s = stage(modelConfig);
    const edited = setSetting(preset(), s, "strategy", "proportional");
    expect(settingView(edited, s, strategy)).toEqual({ value: "proportional", origin: "preset", canReset: true });
    expect(settingView(edited, s, share)).toEqual({ value: 60, origin: "preset", canReset: false });
    expect(priorityView(edited, s)).toEqual({ value: 410, origin: "preset" });
  });

  it("the preset's entry replaces the model's whole: a key it leaves out is the default", () => {
    const s = stage(modelConfig);
    const own = preset([{ id: "token-limiter", settings: { strategy: "proportional" } }]);
    expect(settingView(own, s, share)).toEqual({ value: 55, origin: "default", canReset: true });
    expect(priorityView(own, s)).toEqual({ value: 400, origin: "default" });
  });

  it("a value the engine refuses shows the default and can be reset", () => {
    const own = preset([{ id: "token-limiter", settings: { strategy: "nope" } }]);
    expect(settingView(own, stage(null), strategy)).toEqual({ value: "fixed-preset", origin: "default", canReset: true });
  });

  it("a core processor always runs", () => {
    const own = preset([{ id: "token-limiter", enabled: false }]);
    expect(enabledView(own, stage(null, true))).toEqual({ value: true, origin: "default" });
    expect(enabledView(own, stage(null))).toEqual({ value: false, origin: "preset" });
  });

  it("compares configs ignoring absent parts", () => {
    expect(sameConfig({ id: "a", settings: {} }, { id: "a", enabled: null })).toBe(true);
    expect(seedEntry(stage({ id: "token-limiter", enabled: null, settings: {} }))).toEqual({ id: "token-limiter" });
  });
});
