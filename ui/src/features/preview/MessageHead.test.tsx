import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { BuiltMessage } from "../../bindings";
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
