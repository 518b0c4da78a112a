import { render, screen } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import type { BuiltMessage, Preview } from "../../bindings";
import { set } from "../../app/state";
import { resetForTests } from "../../app/store";
import type { Preset } from "../../app/model";
import { MessageHead } from "./MessageHead";

const message = (exact: boolean): BuiltMessage => ({
  role: "user",
  content: "hello",
  tokens: 42,
  exact,
  source: { kind: "history", historyIndex: 0, placement: { mode: "list" } },
});

describe("a built message's head", () => {
  it("shows an exact count as it is", () => {
    render(<MessageHead message={message(true)} open={false} onToggle={() => {}} />);
    const tokens = screen.getByTestId("message-tokens");
    expect(tokens.textContent).toBe("42");
    expect(tokens.title).toMatch(/exactly/);
  });

  it("marks an estimate with ~ and says why it is one", () => {
    render(<MessageHead message={message(false)} open={false} onToggle={() => {}} />);
    const tokens = screen.getByTestId("message-tokens");
    expect(tokens.textContent).toBe("~42");
    expect(tokens.className).toContain("estimate");
    expect(tokens.title).toMatch(/estimate/i);
  });
});

describe("a memory or summary message's head", () => {
  beforeEach(() => resetForTests());

  it("shows the stored message a recalled one comes from and its score", () => {
    const recalled: BuiltMessage = {
      role: "system",
      content: "[Earlier, user] the red lighthouse",
      tokens: 9,
      exact: true,
      source: {
        kind: "memory",
        processor: "memory",
        memory: { index: 12, messageId: "m12", score: 812 },
        placement: { mode: "list" },
      },
    };
    const { container } = render(<MessageHead message={recalled} open={false} onToggle={() => {}} />);
    expect(container.querySelector(".badge-memory")?.textContent).toBe("memory");
    expect(container.querySelector(".badge-detail")?.textContent).toBe("#12 · score 0.812");
  });

  it("marks the message that writes the summary with the range it covers and a hand edit", () => {
    set({
      preset: {
        formatVersion: 1,
        id: "p",
        name: "P",
        messageTemplates: [
          { id: "story", role: "system", content: "So far: {{summary}}" },
          { id: "main", role: "system", content: "Be brief." },
        ],
        contextRecipes: [],
      } as unknown as Preset,
      preview: {
        summary: {
          id: 3, text: "They met.", firstPosition: 0, lastPosition: 17, connection: null, model: null,
          edited: true, current: true, createdAt: 0,
        },
      } as unknown as Preview,
    });
    const of = (templateId: string): BuiltMessage => ({
      role: "system",
      content: "x",
      tokens: 1,
      exact: true,
      source: { kind: "template", templateId, placement: { mode: "list" } },
    });
    render(<MessageHead message={of("story")} open={false} onToggle={() => {}} />);
    const badge = screen.getByTestId("summary-badge");
    expect(badge.textContent).toBe("summary #0–#17 ✎");
    expect(badge.title).toBe("edited by hand");
    render(<MessageHead message={of("main")} open={false} onToggle={() => {}} />);
    expect(screen.getAllByTestId("summary-badge")).toHaveLength(1);
  });
});
