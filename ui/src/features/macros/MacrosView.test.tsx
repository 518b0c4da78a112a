import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { getState, resetForTests, setLanguage } from "../../app/store";
import { renderApp } from "../../test/renderApp";
import type { MacroTrace, PreviewRequest } from "../../bindings";
import { lastValueOf } from "./MacrosView";
import { spanOf } from "./markInMessage";

/** The trace of `{{setvar::mood::calm}}Mood: {{getvar::mood}}.`, which became "Mood: calm." */
function moodTrace(stopped = false): MacroTrace {
  return {
    expansions: [
      {
        position: "template:main#0",
        message: 0,
        offset: 0,
        depth: 0,
        written: "{{setvar::mood::calm}}",
        name: "setvar",
        arguments: "mood::calm",
        output: "",
        variable: { scope: "local", name: "mood", before: "grim", after: "calm" },
      },
      {
        position: "template:main#0",
        message: 0,
        offset: 28,
        depth: 0,
        written: "{{getvar::mood}}",
        name: "getvar",
        arguments: "mood",
        output: "calm",
        variable: { scope: "local", name: "mood", before: "calm", after: "calm" },
      },
    ],
    before: { local: { mood: "grim" }, global: {} },
    after: { local: { mood: "calm" }, global: { seen: "yes" } },
    stopped: stopped ? { code: "macro.trace-entries-cap", params: { count: "20000" }, parts: {} } : null,
  };
}

const previewCalls = (calls: { cmd: string; args: Record<string, unknown> }[]) =>
  calls.filter((c) => c.cmd === "preview").map((c) => c.args.request as PreviewRequest);

async function openApp(stopped = false) {
  return renderApp((b) => {
    b.presets.get("helper")!.messageTemplates[0]!.content = "Mood: calm.";
    b.explaining.trace = moodTrace(stopped);
  });
}

describe("the Macros view", () => {
  beforeEach(() => resetForTests());

  it("is asked for only while it is open: the live preview's builds carry no trace otherwise", async () => {
    const { calls } = await openApp();
    expect(previewCalls(calls).every((r) => !r.traceMacros)).toBe(true);
    fireEvent.click(screen.getByTestId("preview-view-macros"));
    await screen.findByTestId("macros-view");
    expect(previewCalls(calls).at(-1)?.traceMacros).toBe(true);
    const asked = calls.length;
    fireEvent.click(screen.getByTestId("preview-view-messages"));
    act(() => getState().preset && setLanguage("en"));
    // The next build, after an edit, asks for no trace; the editor keeps the last one.
    fireEvent.change(screen.getAllByTestId("send-input")[0]!, { target: { value: "next" } });
    await waitFor(() => expect(calls.length).toBeGreaterThan(asked));
    await waitFor(() => expect(previewCalls(calls).at(-1)?.traceMacros).toBeFalsy());
    expect(getState().macroTrace?.expansions.length).toBe(2);
  });

  it("lists each expansion with where, as written, its output and the variable before and after", async () => {
    await openApp();
    fireEvent.click(screen.getByTestId("preview-view-macros"));
    const rows = await screen.findAllByTestId("macro-expansion");
    expect(rows.map((r) => r.dataset.name)).toEqual(["setvar", "getvar"]);
    const set = within(rows[0]!);
    expect(set.getByTestId("macro-where").textContent).toBe("1. message 0 · template:main#0 · at 0");
    expect(set.getByTestId("macro-written").textContent).toBe("{{setvar::mood::calm}}");
    expect(set.getByTestId("macro-output").textContent).toBe("(empty)");
    expect(set.getByTestId("macro-variable").textContent).toBe("Local mood: grim → calm");
    expect(within(rows[1]!).getByTestId("macro-output").textContent).toBe("calm");
    expect(screen.getByTestId("variables-before").textContent).toContain("mood = grim");
    expect(screen.getByTestId("variables-after").textContent).toContain("mood = calm");
    expect(screen.getByTestId("variables-after").textContent).toContain("seen = yes");
    expect(screen.queryByTestId("macros-stopped")).toBeNull();
  });

  it("marks a chosen expansion in its message, in the Messages view", async () => {
    await openApp();
    fireEvent.click(screen.getByTestId("preview-view-macros"));
    const rows = await screen.findAllByTestId("macro-expansion");
    fireEvent.click(within(rows[1]!).getByRole("button"));
    const mark = await screen.findByTestId("macro-mark");
    expect(mark.textContent).toBe("calm");
    expect(mark.closest(".built-content")?.textContent).toBe("Mood: calm.");
    expect(screen.getByTestId("preview-view-messages").getAttribute("aria-selected")).toBe("true");
  });

  it("says where the trace stopped at its cap, in Chinese too", async () => {
    await openApp(true);
    act(() => setLanguage("zh-CN"));
    fireEvent.click(screen.getByTestId("preview-view-macros"));
    const note = await screen.findByTestId("macros-stopped");
    expect(note.textContent).toBe("追踪提前停止：宏追踪在 20000 个宏之后停止；构建在不追踪的情况下继续");
    expect(screen.getByTestId("preview-view-macros").textContent).toBe("宏");
    expect(within(screen.getAllByTestId("macro-expansion")[0]!).getByTestId("macro-variable").textContent).toBe(
      "局部 mood: grim → calm",
    );
  });
});

describe("an expansion's place in its message", () => {
  const trace = moodTrace();
  it("follows the outputs before it in the same text, in UTF-8 bytes", () => {
    expect(spanOf(trace.expansions, 1, "Mood: calm.")).toEqual({ start: 6, end: 10 });
    expect(spanOf(trace.expansions, 0, "Mood: calm.")).toEqual({ start: 0, end: 0 });
    // Two bytes of "é" before it: byte 9 is character 8.
    const wide = { ...trace.expansions[1]!, offset: 31 };
    expect(spanOf([trace.expansions[0]!, wide], 1, "calm é: calm.")).toEqual({ start: 8, end: 12 });
  });
  it("is looked for when processors moved it, and is none when it is not there", () => {
    expect(spanOf(trace.expansions, 1, "[edited] Mood: calm.")).toEqual({ start: 15, end: 19 });
    expect(spanOf(trace.expansions, 1, "Nothing here.")).toBeNull();
  });
  it("gives the editor's hover the last value of a macro as written", () => {
    expect(lastValueOf(trace, "{{getvar::mood}}")).toBe("calm");
    expect(lastValueOf(trace, "{{user}}")).toBeNull();
    expect(lastValueOf(null, "{{getvar::mood}}")).toBeNull();
  });
});

describe("the preview's tabs", () => {
  beforeEach(() => resetForTests());

  it("are a tablist: one in the Tab order, the arrow keys, Home and End move and show", async () => {
    await openApp();
    const tabs = screen.getAllByRole("tab").filter((t) => t.dataset.testid?.startsWith("preview-view-"));
    expect(tabs.map((t) => t.dataset.testid)).toEqual([
      "preview-view-messages",
      "preview-view-changes",
      "preview-view-request",
      "preview-view-macros",
      "preview-view-lorebook",
    ]);
    expect(tabs.map((t) => t.tabIndex)).toEqual([0, -1, -1, -1, -1]);
    expect(document.getElementById("preview-panel")?.getAttribute("aria-labelledby")).toBe("preview-tab-messages");
    fireEvent.keyDown(tabs[0]!, { key: "ArrowLeft" });
    expect(screen.getByTestId("preview-view-lorebook").getAttribute("aria-selected")).toBe("true");
    expect(document.activeElement).toBe(screen.getByTestId("preview-view-lorebook"));
    fireEvent.keyDown(document.activeElement!, { key: "Home" });
    fireEvent.keyDown(document.activeElement!, { key: "ArrowRight" });
    expect(getState().previewTab).toBe("changes");
    fireEvent.keyDown(document.activeElement!, { key: "ArrowRight" });
    expect(await screen.findByTestId("request-view")).toBeTruthy();
    expect(screen.getByTestId("preview-view-request").tabIndex).toBe(0);
    fireEvent.keyDown(document.activeElement!, { key: "End" });
    expect(getState().previewTab).toBe("lorebook");
  });
});
