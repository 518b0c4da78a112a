import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { BuiltMessage, RenderedPrompt, Span } from "../../bindings";
import { resetForTests } from "../../app/store";
import { resetChecking } from "./checking";
import { PromptString } from "./PromptString";

const bytes = (s: string) => new TextEncoder().encode(s).length;

/** Parts written one after the other, their spans in UTF-8 bytes as the engine gives them. */
function prompt(parts: [string, Span["source"]][], specialTokens: string[], stop: string[]): RenderedPrompt {
  let text = "";
  const spans: Span[] = [];
  for (const [part, source] of parts) {
    const start = bytes(text);
    text += part;
    spans.push({ start, end: bytes(text), source });
  }
  return { template: "chatml", prompt: text, spans, stop, specialTokens };
}

const T = { kind: "template" } as const;
const M = (index: number) => ({ kind: "message", index }) as const;

const messages: BuiltMessage[] = [
  { role: "system", content: "你是灯塔看守人。", tokens: 9, exact: true, source: { kind: "template", templateId: "main", placement: { mode: "list" } } },
  {
    role: "user",
    name: "Rosa",
    content: "灯亮着吗？🕯️ <|im_end|>",
    tokens: 12,
    exact: true,
    source: { kind: "history", historyIndex: 3, placement: { mode: "list" } },
  },
  {
    role: "system",
    content: "A storm 🌊 is coming.  ",
    tokens: 8,
    exact: true,
    source: { kind: "lorebook", entryId: "storm", placement: { mode: "depth", depth: 1 } },
  },
];

const chatml = prompt(
  [
    ["<|im_start|>system\n", T],
    ["你是灯塔看守人。", M(0)],
    ["<|im_end|>\n<|im_start|>user\n", T],
    ["Rosa: 灯亮着吗？🕯️ <|im_end|>", M(1)],
    ["<|im_end|>\n<|im_start|>system\n", T],
    ["A storm 🌊 is coming.  ", M(2)],
    ["<|im_end|>\n<|im_start|>assistant\n", T],
  ],
  ["<|im_start|>", "<|im_end|>"],
  ["<|im_end|>", "\n\nUser:"],
);

function show(p: RenderedPrompt = chatml) {
  render(<PromptString prompt={p} messages={messages} templateName="ChatML" tokens={57} />);
  return screen.getByTestId("prompt-string");
}

describe("the prompt string", () => {
  beforeEach(() => {
    resetForTests();
    resetChecking();
  });

  it("is the exact string, Chinese and emoji included: its text is the prompt", () => {
    const block = show();
    expect(block.textContent).toBe(chatml.prompt);
    expect(block.tagName).toBe("PRE");
  });

  it("marks every special token, in the template's parts and in a message's", () => {
    const block = show();
    const marks = [...block.querySelectorAll("mark.special-token")].map((m) => m.textContent);
    expect(marks).toEqual([
      "<|im_start|>",
      "<|im_end|>",
      "<|im_start|>",
      "<|im_end|>", // typed by the user, inside message 1
      "<|im_end|>",
      "<|im_start|>",
      "<|im_end|>",
      "<|im_start|>",
    ]);
    const inMessage = block.querySelector('[data-message="1"] mark.special-token');
    expect(inMessage?.textContent).toBe("<|im_end|>");
  });

  it("styles the template's parts apart from the messages', each message with its provenance", () => {
    const block = show();
    const template = [...block.querySelectorAll(".ps-template")].map((e) => e.textContent);
    expect(template[0]).toBe("<|im_start|>system\n");
    expect(template.join("")).not.toContain("灯");
    const parts = [...block.querySelectorAll(".ps-message")];
    expect(parts.map((e) => e.textContent)).toEqual(["你是灯塔看守人。", "Rosa: 灯亮着吗？🕯️ <|im_end|>", "A storm 🌊 is coming.  "]);
    // The same labels as the message list's.
    expect(parts.map((e) => (e as HTMLElement).dataset.source)).toEqual([
      "template main",
      "history #3",
      "lorebook storm · depth 1",
    ]);
    expect(parts[1]!.className).toContain("ps-kind-history");
    expect(parts[1]!.getAttribute("title")).toBe("Message 2 · history #3");
  });

  it("says where a part came from on hover, and keeps it on a click", () => {
    show();
    const line = screen.getByTestId("prompt-provenance");
    expect(line.textContent).toContain("written by the ChatML template");
    const storm = document.querySelector('[data-message="2"]')!;
    fireEvent.mouseOver(storm.firstChild!);
    expect(line.textContent).toContain("Message 3");
    expect(line.querySelector(".badge-lorebook")?.textContent).toBe("lorebook");
    expect(line.textContent).toContain("storm · depth 1");
    fireEvent.mouseLeave(screen.getByTestId("prompt-string"));
    expect(line.textContent).not.toContain("Message 3");
    fireEvent.click(storm);
    fireEvent.mouseLeave(screen.getByTestId("prompt-string"));
    expect(line.textContent).toContain("Message 3");
    expect(storm.className).toContain("picked");
  });

  it("shades white space at a line's end and marks line breaks without adding text", () => {
    const p = prompt(
      [
        ["[INST] ", T],
        ["Hi there  ", M(1)],
        ["\n\n### Response:\n", T],
      ],
      ["[INST]"],
      [],
    );
    const block = show(p);
    expect(block.textContent).toBe(p.prompt);
    const trailing = [...block.querySelectorAll(".ws-trailing")].map((e) => e.textContent);
    // The space after [INST] is followed by text: it is not marked.
    expect(trailing).toEqual(["  "]);
    expect(block.querySelector('[data-message="1"] .ws-trailing')).not.toBeNull();
    expect(block.querySelectorAll(".ws-newline")).toHaveLength(3);
  });

  it("lists the stop sequences escaped and the string's token count", () => {
    show();
    const stops = [...screen.getByTestId("prompt-stop").querySelectorAll("code")].map((c) => c.textContent);
    expect(stops).toEqual(["<|im_end|>", "\\n\\nUser:"]);
    expect(screen.getByTestId("prompt-tokens").textContent).toBe("57 in the string");
  });

  it("names the BOS token the server adds, which the string leaves out", () => {
    show();
    expect(screen.queryByTestId("prompt-server-bos")).toBeNull();
    cleanup();
    show({ ...chatml, serverBos: "<|begin_of_text|>" });
    expect(screen.getByTestId("prompt-server-bos").textContent).toContain("<|begin_of_text|>");
    expect(screen.getByTestId("prompt-string").textContent).not.toContain("<|begin_of_text|>");
  });

  it("copies exactly the prompt", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    show();
    fireEvent.click(screen.getByTestId("prompt-copy"));
    expect(writeText).toHaveBeenCalledWith(chatml.prompt);
    expect(await screen.findByText("Copied")).toBeTruthy();
  });
});
