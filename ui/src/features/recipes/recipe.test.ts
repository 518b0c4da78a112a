import { describe, expect, it } from "vitest";
import type { Preset } from "../../app/model";
import {
  addMessage,
  moveStep,
  removeStep,
  setStepStrategy,
  stepViews,
} from "./recipe";
import { clampDepth } from "../../components/strategy";

function preset(): Preset {
  return {
    formatVersion: 1,
    id: "p",
    name: "P",
    messageTemplates: [
      { id: "main", role: "system", content: "You are {{char}}." },
      { id: "history", role: "user", type: "chat_history" },
      { id: "note", role: "system", content: "Note", defaultInjectionStrategy: { depth: 2 } },
    ],
    contextRecipes: [
      {
        id: "all",
        modelFilter: ["*"],
        steps: [
          { messageId: "main", enabled: true },
          { messageId: "history", enabled: true },
          { messageId: "note", enabled: true },
        ],
      },
    ],
  } as Preset;
}

describe("simple mode's recipe edits", () => {
  it("shows the template's default strategy when the step has none", () => {
    const views = stepViews(preset(), preset().contextRecipes[0]);
    expect(views.map((v) => v.mode)).toEqual(["list", "list", "depth"]);
    expect(views[2]?.strategy?.depth).toBe(2);
  });

  it("moves a step and keeps the others in order", () => {
    const p = moveStep(preset(), 0, 2, 0);
    expect(p.contextRecipes[0].steps.map((s) => s.messageId)).toEqual(["note", "main", "history"]);
  });

  it("writes list order as an empty strategy only over a moving default", () => {
    const listed = setStepStrategy(preset(), 0, 2, "list", {});
    expect(listed.contextRecipes[0].steps[2].injectionStrategy).toEqual({});
    const plain = setStepStrategy(preset(), 0, 0, "list", {});
    expect(plain.contextRecipes[0].steps[0].injectionStrategy).toBeUndefined();
  });

  it("sets a depth within 0-99 and an anchor with its position", () => {
    const deep = setStepStrategy(preset(), 0, 0, "depth", { depth: 250 });
    expect(deep.contextRecipes[0].steps[0].injectionStrategy).toEqual({ depth: 99 });
    const anchored = setStepStrategy(preset(), 0, 0, "anchor", {
      anchorTarget: "chat_history",
      anchorPosition: "before",
    });
    expect(anchored.contextRecipes[0].steps[0].injectionStrategy).toEqual({
      anchorTarget: "chat_history",
      anchorPosition: "before",
    });
    expect(clampDepth(-3)).toBe(0);
    expect(clampDepth(Number.NaN)).toBe(0);
  });

  it("adds a message with a fresh id and removes an orphaned template with its step", () => {
    const { preset: added, index } = addMessage(preset(), 0, "New");
    expect(index).toBe(3);
    expect(added.messageTemplates.at(-1)?.id).toBe("message");
    expect(addMessage(added, 0, "Again").preset.messageTemplates.at(-1)?.id).toBe("message-2");
    const removed = removeStep(added, 0, 3);
    expect(removed.messageTemplates.some((t) => t.id === "message")).toBe(false);
    expect(removed.contextRecipes[0].steps).toHaveLength(3);
  });

  it("keeps a template another recipe still names", () => {
    const p = preset();
    p.contextRecipes.push({ id: "other", modelFilter: ["gpt-*"], steps: [{ messageId: "main", enabled: true }] });
    const removed = removeStep(p, 0, 0);
    expect(removed.messageTemplates.some((t) => t.id === "main")).toBe(true);
  });
});
