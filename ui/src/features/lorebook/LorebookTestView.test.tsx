import { act, fireEvent, screen, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { resetForTests, setLanguage } from "../../app/store";
import { renderApp } from "../../test/renderApp";
import type { LorebookEntry, LorebookTest, LorebookTestRequest } from "../../bindings";
import { TEST_TEXT_BYTES } from "./LorebookTestView";

/** The tester's answer for "a dragon by the gate": the dragon fires by its key, the castle not. */
function answer(): LorebookTest {
  return {
    entries: [
      {
        entryId: "dragon",
        name: "Dragon",
        fired: true,
        reason: "key",
        why: 'key "dragon" in the input',
        said: { code: "lorebook.by-key-input", params: { key: "dragon" }, parts: {} },
        key: "dragon",
        place: { kind: "input", offset: 2 },
        tokens: 6,
      },
      {
        entryId: "castle",
        name: "Castle",
        fired: false,
        reason: "noMatch",
        why: "none of its keys occurs in the messages read",
        said: { code: "lorebook.test.no-match", params: {}, parts: {} },
        key: "castle",
        tokens: 4,
      },
    ],
    budget: 512,
    warnings: [],
  };
}

async function openTester(answerWith: (r: LorebookTestRequest) => LorebookTest = answer) {
  const backend = await renderApp((b) => {
    const preset = b.presets.get("helper")!;
    preset.lorebook = {
      entries: [
        { id: "dragon", name: "Dragon", keys: ["dragon"], content: "Dragons breathe fire." },
        { id: "castle", name: "Castle", keys: ["castle"], content: "The castle." },
      ] as LorebookEntry[],
    } as typeof preset.lorebook;
    b.explaining.lorebook = answerWith;
  });
  fireEvent.click(screen.getByTestId("preview-view-lorebook"));
  await screen.findByTestId("lore-test");
  return backend;
}

const testCalls = (calls: { cmd: string; args: Record<string, unknown> }[]) =>
  calls.filter((c) => c.cmd === "lorebook_test").map((c) => c.args.request as LorebookTestRequest);

describe("the Lorebook test view", () => {
  beforeEach(() => resetForTests());

  it("tests a pasted text: each entry fired or not, why, its code, key and tokens", async () => {
    const { calls } = await openTester();
    fireEvent.change(screen.getByTestId("lore-test-text"), { target: { value: "a dragon by the gate" } });
    fireEvent.click(screen.getByTestId("lore-test-run"));
    const entries = await screen.findAllByTestId("lore-verdict");
    expect(testCalls(calls).at(-1)?.text).toBe("a dragon by the gate");
    expect(screen.getByTestId("lore-test-summary").textContent).toBe("1 of 2 entries fired · lorebook budget 512 tokens");
    const dragon = within(entries[0]!);
    expect(dragon.getByTestId("lore-verdict-fired").textContent).toBe("fired");
    expect(dragon.getByTestId("lore-verdict-code").textContent).toBe("key");
    expect(dragon.getByTestId("lore-verdict-why").textContent).toBe('key "dragon" in the input');
    expect(dragon.getByTestId("lore-verdict-where").textContent).toBe("key “dragon” · in the text");
    const castle = within(entries[1]!);
    expect(castle.getByTestId("lore-verdict-fired").textContent).toBe("not fired");
    expect(castle.getByTestId("lore-verdict-code").textContent).toBe("noMatch");
    expect(entries[1]!.textContent).toContain("4 tokens");
  });

  it("pins an entry at the top with its whole explanation", async () => {
    await openTester();
    fireEvent.click(screen.getByTestId("lore-test-run"));
    const castle = (await screen.findAllByTestId("lore-verdict"))[1]!;
    fireEvent.click(within(castle).getByTestId("lore-verdict-pin"));
    const pinned = screen.getByTestId("lore-test-pinned");
    expect(within(pinned).getByTestId("lore-verdict").dataset.entry).toBe("castle");
    expect(within(pinned).getByTestId("lore-verdict-pin").textContent).toBe("Unpin");
    expect(within(screen.getByTestId("lore-test-entries")).getAllByTestId("lore-verdict").map((v) => v.dataset.entry)).toEqual([
      "dragon",
    ]);
    // The whole explanation of the fired one names the byte of its key too.
    fireEvent.click(within(pinned).getByTestId("lore-verdict-pin"));
    fireEvent.click(within(screen.getAllByTestId("lore-verdict")[0]!).getByTestId("lore-verdict-pin"));
    expect(within(screen.getByTestId("lore-test-pinned")).getByTestId("lore-verdict-where").textContent).toBe(
      "key “dragon” · in the text · at byte 2",
    );
  });

  it("tests the session, and the session with the next message", async () => {
    const { calls } = await openTester();
    fireEvent.click(within(screen.getByTestId("lore-test-source")).getByText("The session"));
    expect(screen.queryByTestId("lore-test-text")).toBeNull();
    fireEvent.click(screen.getByTestId("lore-test-run"));
    await screen.findAllByTestId("lore-verdict");
    const asked = testCalls(calls).at(-1)!;
    expect(asked.text).toBeNull();
    expect(asked.request.sessionId).toBe("chat-1");
    expect(asked.request.input).toBeNull();
  });

  it("refuses a text over the cap with a clear error and asks nothing", async () => {
    const { calls } = await openTester();
    const textarea = screen.getByTestId("lore-test-text");
    fireEvent.change(textarea, { target: { value: "x".repeat(TEST_TEXT_BYTES + 1) } });
    fireEvent.click(screen.getByTestId("lore-test-run"));
    expect((await screen.findByTestId("lore-test-error")).textContent).toBe(
      "The text is 50.0 MB; at most 50 MB is tested. Nothing was tested.",
    );
    expect(testCalls(calls)).toEqual([]);
  });

  it("says it in Chinese", async () => {
    await openTester();
    act(() => setLanguage("zh-CN"));
    fireEvent.click(screen.getByTestId("lore-test-run"));
    const entries = await screen.findAllByTestId("lore-verdict");
    expect(screen.getByTestId("preview-view-lorebook").textContent).toBe("世界书测试");
    expect(within(entries[0]!).getByTestId("lore-verdict-fired").textContent).toBe("已触发");
    expect(within(entries[1]!).getByTestId("lore-verdict-why").textContent).toBe("读取的消息中没有出现它的任何关键词");
    expect(screen.getByTestId("lore-test-summary").textContent).toBe("2 个条目中 1 个触发 · 世界书预算 512 个 token");
  });
});
