import { describe, expect, it } from "vitest";
import type { Preview } from "../bindings";
import { withStoredHistory } from "./store";
import { asChat } from "./model";

describe("the preview's history texts", () => {
  it("are taken from the session the UI holds where the backend left them out", () => {
    const session = asChat({
      formatVersion: 1,
      id: "s",
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: "second" },
      ],
    });
    const row = (content: string, historyIndex?: number) => ({
      role: "user" as const,
      content,
      tokens: 3,
      source: {
        kind: historyIndex === undefined ? ("template" as const) : ("history" as const),
        historyIndex,
        placement: { mode: "list" as const },
      },
    });
    const preview = {
      result: { messages: [row("prompt"), row("", 1), row("edited by a regex rule", 0)] },
      elided: [1],
    } as unknown as Preview;
    const filled = withStoredHistory(preview, session);
    expect(filled.result.messages.map((m) => m.content)).toEqual([
      "prompt",
      "second",
      "edited by a regex rule",
    ]);
    // The backend's result itself is not changed.
    expect(preview.result.messages[1]?.content).toBe("");
  });
});
