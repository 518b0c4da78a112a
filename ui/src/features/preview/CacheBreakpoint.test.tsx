import { act, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { resetForTests, setLanguage, setModel } from "../../app/store";
import { renderApp as renderWith, type FakeBackend } from "../../test/renderApp";
import type { Changes } from "../../bindings";

/** A Claude model over the sample preset, which asks for breakpoints after the system part and
 * the newest message. */
function renderApp(setup?: (backend: FakeBackend) => void) {
  return renderWith((backend) => {
    backend.presets.get("helper")!.generation = { cacheBreakpoints: { system: true, depths: [0] } };
    backend.settings.set("ui.model", "claude-3-5-sonnet");
    setup?.(backend);
  });
}

const marks = () =>
  screen.queryAllByTestId("cache-breakpoint").map((m) => ({
    at: m.closest("li")!.dataset.source,
    text: m.textContent,
    stable: m.dataset.stable,
  }));

describe("the preview's cache breakpoints", () => {
  beforeEach(() => resetForTests());

  it("marks each after its message, stable when the previous turn had the same prefix", async () => {
    const { calls } = await renderApp();
    await waitFor(() => expect(marks().every((m) => m.stable === "true")).toBe(true));
    expect(marks()).toEqual([
      { at: "template main", text: "cache breakpoint · system part · stable", stable: "true" },
      { at: "processor role-alternation", text: "cache breakpoint · depth 0 · stable", stable: "true" },
    ]);
    expect(calls.filter((c) => c.cmd === "changes").at(-1)?.args.request).toMatchObject({ against: { kind: "previousTurn" } });
  });

  it("says which changed since the last turn, in English and Chinese", async () => {
    await renderApp((b) => {
      b.changing.answer = () =>
        ({
          diff: {
            breakpoints: [
              { messageIndex: 0, stable: true },
              { messageIndex: 3, depth: 0, stable: false },
            ],
          },
        }) as unknown as Changes;
    });
    await waitFor(() => expect(marks().map((m) => m.stable)).toEqual(["true", "false"]));
    expect(marks()[1]!.text).toBe("cache breakpoint · depth 0 · changed since last turn");
    act(() => setLanguage("zh-CN"));
    expect(marks().map((m) => m.text)).toEqual(["缓存断点 · 系统部分 · 稳定", "缓存断点 · 深度 0 · 自上一轮以来已变化"]);
  });

  it("does not ask about stability without an earlier turn, and has no marks for a model without them", async () => {
    const { calls } = await renderApp((b) => (b.sessions.get("chat-1")!.messages = [{ role: "assistant", content: "Hi" }]));
    expect(marks().map((m) => m.stable)).toEqual(["unknown", "unknown"]);
    expect(marks()[0]!.text).toBe("cache breakpoint · system part");
    await new Promise((r) => setTimeout(r, 400));
    expect(calls.some((c) => c.cmd === "changes")).toBe(false);

    act(() => setModel("gpt-4o"));
    await waitFor(() => expect(marks()).toEqual([]));
  });
});
