import { act, fireEvent, render } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { resetForTests } from "../app/store";
import { set } from "../app/state";
import type { MacroTrace } from "../bindings";
import { MacroTextarea } from "./MacroTextarea";

const trace: MacroTrace = {
  expansions: [
    { position: "template:main#0", message: 0, offset: 6, depth: 0, written: "{{getvar::mood}}", name: "getvar", arguments: "mood", output: "calm" },
  ],
  before: { local: {}, global: {} },
  after: { local: {}, global: {} },
};

/** The editor, its highlighted macro laid out at x 10-100, y 10-30 (jsdom lays nothing out). */
function editor() {
  const { container, getByTestId } = render(<MacroTextarea value="Mood: {{getvar::mood}}." onChange={() => {}} />);
  const mark = container.querySelector("mark.macro")!;
  mark.getClientRects = () => [{ left: 10, right: 100, top: 10, bottom: 30 }] as unknown as DOMRectList;
  return getByTestId("editor-content") as HTMLTextAreaElement;
}

describe("the macro editor's hover", () => {
  beforeEach(() => resetForTests());

  it("shows what a highlighted macro became the last time a build was traced", () => {
    act(() => set({ macroTrace: trace }));
    const field = editor();
    fireEvent.mouseMove(field, { clientX: 50, clientY: 20 });
    expect(field.title).toBe("{{getvar::mood}} → calm (last build traced)");
    fireEvent.mouseMove(field, { clientX: 300, clientY: 20 });
    expect(field.title).toBe("");
    act(() => set({ language: "zh-CN" }));
    fireEvent.mouseMove(field, { clientX: 50, clientY: 20 });
    expect(field.title).toBe("{{getvar::mood}} → calm（最近一次追踪的构建）");
  });

  it("shows nothing while no build was traced", () => {
    const field = editor();
    fireEvent.mouseMove(field, { clientX: 50, clientY: 20 });
    expect(field.title).toBe("");
  });
});
