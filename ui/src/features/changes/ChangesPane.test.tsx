import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { editPreset, getState, resetForTests, setLanguage, undo } from "../../app/store";
import { renderApp } from "../../test/renderApp";
import type { Changes, ChangesRequest, Source } from "../../bindings";

const template = (id: string): Source => ({ kind: "template", templateId: id, placement: { mode: "list" } });
const history = (index: number): Source => ({ kind: "history", historyIndex: index, placement: { mode: "list" } });

/** What the engine answers for a turn whose system prompt drew another `{{random}}` choice. */
function randomTurn(): Changes {
  const same = (i: number) => ({
    kind: "same" as const,
    left: i,
    right: i,
    role: "user" as const,
    source: history(i - 1),
    leftTokens: 4,
    rightTokens: 4,
    tokenDelta: 0,
  });
  return {
    left: { model: "gpt-4o", recipe: "all", messages: 8 },
    right: { model: "gpt-4o", recipe: "all", messages: 10 },
    diff: {
      stablePrefix: { tokens: 3, bytes: 42 },
      firstDifference: { row: 0, messageIndex: 0, offset: 6, source: template("main"), cause: "macro:random" },
      messages: [
        {
          kind: "changed",
          left: 0,
          right: 0,
          role: "system",
          source: template("main"),
          leftTokens: 6,
          rightTokens: 7,
          tokenDelta: 1,
          changes: [
            { op: "equal", text: "Mood: " },
            { op: "delete", text: "calm" },
            { op: "insert", text: "stormy" },
            { op: "equal", text: `. ${"Stay in character. ".repeat(40)}` },
          ],
        },
        ...[1, 2, 3, 4, 5, 6, 7].map(same),
        {
          kind: "right",
          left: null,
          right: 8,
          role: "user",
          source: history(7),
          leftTokens: 0,
          rightTokens: 5,
          tokenDelta: 5,
          text: "What next?",
        },
        {
          kind: "right",
          left: null,
          right: 9,
          role: "assistant",
          source: history(8),
          leftTokens: 0,
          rightTokens: 6,
          tokenDelta: 6,
          text: "We sail.",
        },
      ],
      leftTokens: 40,
      rightTokens: 52,
    },
  };
}

const changesCalls = (calls: { cmd: string; args: Record<string, unknown> }[]) =>
  calls.filter((c) => c.cmd === "changes").map((c) => c.args.request as ChangesRequest);

const kinds = () => screen.getAllByTestId("changes-row").map((r) => r.dataset.kind);

describe("the Changes view", () => {
  beforeEach(() => resetForTests());
  afterEach(() => vi.restoreAllMocks());

  it("compares this turn with the last: the stable prefix, the first difference and its cause, the rows", async () => {
    const { calls } = await renderApp((b) => (b.changing.answer = randomTurn));
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    expect(screen.getByTestId("preview-view-changes").getAttribute("aria-selected")).toBe("true");
    const summary = await screen.findByTestId("changes-summary");
    expect(changesCalls(calls).at(-1)?.against).toEqual({ kind: "previousTurn" });

    expect(summary.textContent).toContain("Before gpt-4o · all · 8 messages → Now gpt-4o · all · 10 messages");
    expect(screen.getByTestId("changes-stable-prefix").textContent).toBe("Stable prefix: 3 tokens · 42 bytes");
    expect(screen.getByTestId("changes-total").textContent).toBe("Total: 40 → 52 tokens (+12)");
    const first = screen.getByTestId("changes-first-difference");
    expect(first.dataset.messageIndex).toBe("0");
    expect(first.textContent).toContain("message 0");
    // The template by its name in the recipe (issue 39), its id on hover.
    expect(first.textContent).toContain("templateMain prompt");
    const cause = screen.getByTestId("changes-cause");
    expect(cause.dataset.cause).toBe("macro:random");
    expect(cause.textContent).toBe("the macro {{random}} gave another value macro:random");

    // Of the seven shared history messages, the two next to each difference show.
    expect(kinds()).toEqual(["changed", "same", "same", "same", "same", "right", "right"]);
    expect(screen.getByTestId("changes-folded").textContent).toContain("3 identical messages");
    const [changed] = screen.getAllByTestId("changes-row");
    expect(changed!.querySelector("del")?.textContent).toBe("calm");
    expect(changed!.querySelector("ins")?.textContent).toBe("stormy");
    // The long equal tail keeps its start, the rest left out.
    expect(changed!.textContent).toMatch(/characters …$/);
    expect(changed!.textContent).toContain("6 → 7");
    expect(changed!.textContent).toContain("+1");
    const onlyNow = screen.getAllByTestId("changes-row")[5]!;
    expect(onlyNow.textContent).toContain("only now");
    expect(onlyNow.querySelector("ins")?.textContent).toBe("What next?");
  });

  it("jumps to the first difference and marks it and its first changed piece", async () => {
    await renderApp((b) => (b.changing.answer = randomTurn));
    const scrolled: Element[] = [];
    Element.prototype.scrollIntoView = vi.fn(function (this: Element) {
      scrolled.push(this);
    });
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    await screen.findByTestId("changes-summary");
    expect(document.querySelector("[data-jumped]")).toBeNull();
    fireEvent.click(screen.getByTestId("changes-jump"));
    const row = screen.getAllByTestId("changes-row")[0]!;
    expect(row.dataset.jumped).toBe("true");
    expect(row.className).toContain("jumped");
    const marked = row.querySelector(".piece.marked");
    expect(marked?.textContent).toBe("calm");
    expect(scrolled).toEqual([marked]);
  });

  it("says the two are identical when nothing differs", async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    // The fake builds leave the history out: this turn and the last one are the same.
    const first = await screen.findByTestId("changes-first-difference");
    expect(first.textContent).toBe("The two requests are identical.");
    expect(screen.queryByTestId("changes-jump")).toBeNull();
    // Every row the same: all of them folded into one line.
    expect(screen.queryAllByTestId("changes-row")).toHaveLength(0);
    expect(screen.getByTestId("changes-folded").textContent).toContain("3 identical messages");
  });

  it("shows the command's refusal as a message: a session without a user message has no earlier turn", async () => {
    await renderApp((b) => (b.sessions.get("chat-1")!.messages = [{ role: "assistant", content: "Welcome." }]));
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    const error = await screen.findByTestId("changes-error");
    expect(error.textContent).toBe(
      'The comparison failed: session "chat-1": it has no user message, so there is no earlier turn to compare with',
    );
    expect(screen.getByTestId("changes-mode")).toBeTruthy();
  });

  it("compares with the preset before its last edit", async () => {
    const { calls } = await renderApp();
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    await screen.findByTestId("changes-summary");
    fireEvent.click(within(screen.getByTestId("changes-mode")).getByText("Last edit"));
    expect(screen.getByTestId("changes-missing").textContent).toContain("No edit yet");

    const before = getState().preset!;
    fireEvent.click(screen.getByLabelText("Enabled: Style note"));
    await waitFor(() => expect(kinds()).toContain("left"));
    const asked = changesCalls(calls).at(-1)!;
    expect(asked.against.kind).toBe("request");
    const against = asked.against as { kind: "request"; request: ChangesRequest["request"] };
    expect(against.request.preset).toEqual(before);
    expect(asked.request.preset).toEqual(getState().preset);
    expect(screen.getByTestId("changes-cause").dataset.cause).toBe("template");
    const gone = screen.getAllByTestId("changes-row").find((r) => r.dataset.kind === "left")!;
    expect(gone.textContent).toContain("only before");
    expect(gone.querySelector("del")?.textContent).toBe("Be brief.");
  });

  it("keeps the preset before an edit: a run of typing in one field is one edit, an undo another", async () => {
    await renderApp();
    expect(getState().beforeEdit).toBeNull();
    act(() => editPreset((p) => ({ ...p, name: "Helper A" }), "name"));
    act(() => editPreset((p) => ({ ...p, name: "Helper AB" }), "name"));
    expect(getState().beforeEdit?.name).toBe("Helper");
    act(() => editPreset((p) => ({ ...p, description: "x" })));
    expect(getState().beforeEdit?.name).toBe("Helper AB");
    act(() => undo());
    expect(getState().beforeEdit?.description).toBe("x");
  });

  it("compares with another session or model that is picked", async () => {
    const { calls } = await renderApp((b) =>
      b.sessions.set("chat-2", { formatVersion: 1, id: "chat-2", title: "Chat two", messages: [] } as never),
    );
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    fireEvent.click(within(screen.getByTestId("changes-mode")).getByText("Pick two"));
    const session = screen.getByTestId("changes-pick-session") as HTMLSelectElement;
    fireEvent.change(session, { target: { value: "chat-2" } });
    await waitFor(() => {
      const against = changesCalls(calls).at(-1)?.against as { request?: { sessionId: string } };
      expect(against.request?.sessionId).toBe("chat-2");
    });
    // No swipes in the session: only sessions and models to pick from.
    const kindsOffered = [...(screen.getByTestId("changes-pick-kind") as HTMLSelectElement).options].map((o) => o.value);
    expect(kindsOffered).toEqual(["session", "model"]);

    fireEvent.change(screen.getByTestId("changes-pick-kind"), { target: { value: "model" } });
    expect((screen.getByTestId("changes-pick-model") as HTMLInputElement).value).toBe("claude-3-5-sonnet");
    // Claude's build has a message of its own (the fake's alternation filler): only before.
    await waitFor(() => expect(kinds()).toContain("left"));
    const against = changesCalls(calls).at(-1)!.against as { request: { model: string } };
    expect(against.request.model).toBe("claude-3-5-sonnet");
    expect(screen.getByTestId("changes-summary").textContent).toContain("Before claude-3-5-sonnet · all");
  });

  it("offers the newest reply's other swipes", async () => {
    const { calls } = await renderApp((b) => {
      b.sessions.get("chat-1")!.messages[1] = {
        role: "assistant",
        content: "Hi there",
        swipes: [{ content: "Hello!" }, { content: "Hey." }],
      };
    });
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    fireEvent.click(within(screen.getByTestId("changes-mode")).getByText("Pick two"));
    fireEvent.change(screen.getByTestId("changes-pick-kind"), { target: { value: "swipe" } });
    const swipe = screen.getByTestId("changes-pick-swipe") as HTMLSelectElement;
    expect([...swipe.options].map((o) => o.textContent)).toEqual(["reply 1 of 3", "reply 2 of 3"]);
    expect(swipe.value).toBe("1");
    await waitFor(() => expect(changesCalls(calls).at(-1)?.against).toEqual({ kind: "swipe", position: 1 }));
  });

  it("is never on with Compare: Compare shows the Messages view, the Changes tab stops comparing", async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    expect(screen.getByTestId("changes")).toBeTruthy();
    fireEvent.click(screen.getByTestId("compare-toggle"));
    expect(screen.queryByTestId("changes")).toBeNull();
    expect(screen.getByTestId("preview-view-changes").getAttribute("aria-selected")).toBe("false");
    expect(getState().compareModel).not.toBeNull();
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    expect(getState().compareModel).toBeNull();
    expect(screen.getByTestId("changes")).toBeTruthy();
    // Off and on again, it comes back in the mode it had.
    fireEvent.click(within(screen.getByTestId("changes-mode")).getByText("Last edit"));
    fireEvent.click(screen.getByTestId("preview-view-messages"));
    await screen.findByTestId("preview-messages");
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    expect(getState().changesMode).toBe("lastEdit");
  });

  it("says it all in Chinese", async () => {
    await renderApp((b) => (b.changing.answer = randomTurn));
    act(() => setLanguage("zh-CN"));
    fireEvent.click(screen.getByTestId("preview-view-changes"));
    await screen.findByTestId("changes-summary");
    expect(screen.getByTestId("preview-view-changes").textContent).toBe("Δ 变化");
    expect(screen.getByTestId("changes-stable-prefix").textContent).toBe("稳定前缀：3 个 token · 42 字节");
    expect(screen.getByTestId("changes-cause").textContent).toBe("宏 {{random}} 的结果不同 macro:random");
    expect(screen.getByTestId("changes-first-difference").textContent).toContain("第 0 条消息");
    expect(screen.getByTestId("changes-jump").textContent).toBe("↓ 跳转");
  });
});
