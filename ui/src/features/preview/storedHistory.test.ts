import { describe, expect, it } from "vitest";
import type { BuiltMessage, Preview, Source } from "../../bindings";
import { withStoredHistory } from "./storedHistory";
import { asChat } from "../../app/model";

describe("the preview's stored history", () => {
  it("is rebuilt from the session it was requested for, in its places, around what the backend sent in full", () => {
    const session = asChat({
      formatVersion: 1,
      id: "s",
      messages: [
        { id: "m0", role: "user", content: "first" },
        { role: "assistant", name: "Ann", content: "second" },
        { role: "user", content: "third" },
        { role: "assistant", content: "fourth" },
      ],
    });
    const sent = (content: string, source: Source): BuiltMessage => ({ role: "system", content, tokens: 9, exact: true, source });
    const preview = {
      result: {
        messages: [
          sent("prompt", { kind: "template", templateId: "sys", placement: { mode: "list" } }),
          sent("rewritten by a rule", { kind: "history", historyIndex: 2, placement: { mode: "list" } }),
          sent("a note", { kind: "template", templateId: "note", placement: { mode: "depth", depth: 1 } }),
        ],
      },
      elided: [
        { at: 1, historyIndex: 0, tokens: [4, 5] },
        { at: 5, historyIndex: 3, tokens: [6] },
      ],
    } as unknown as Preview;
    const filled = withStoredHistory(preview, session).result.messages;
    expect(filled.map((m) => m.content)).toEqual(["prompt", "first", "second", "rewritten by a rule", "a note", "fourth"]);
    expect(filled[1]).toEqual({
      role: "user",
      content: "first",
      tokens: 4,
      source: { kind: "history", placement: { mode: "list" }, historyIndex: 0, messageId: "m0" },
    });
    expect(filled[2]).toMatchObject({ role: "assistant", name: "Ann", tokens: 5 });
    expect(filled[5]).toMatchObject({ role: "assistant", tokens: 6, source: { historyIndex: 3 } });
    // The backend's result itself is not changed.
    expect(preview.result.messages).toHaveLength(3);
  });

  it("is the preview itself when nothing was left out", () => {
    const preview = { result: { messages: [] }, elided: [] } as unknown as Preview;
    expect(withStoredHistory(preview, null)).toBe(preview);
  });
});
