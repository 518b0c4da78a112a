import { describe, expect, it } from "vitest";
import type { RenderedPrompt, Span } from "../../bindings";
import {
  byteLength,
  byteOffsetsToIndices,
  differenceAt,
  escapeText,
  markSpecial,
  runsOf,
  segmentsOf,
  specialTokenPattern,
  trailingWhitespace,
} from "./segments";

const bytes = (s: string) => new TextEncoder().encode(s).length;

/** A prompt string written part by part, with its spans in UTF-8 bytes, as the engine writes it. */
function written(parts: [string, Span["source"]][]): Pick<RenderedPrompt, "prompt" | "spans"> {
  let prompt = "";
  const spans: Span[] = [];
  for (const [text, source] of parts) {
    const start = bytes(prompt);
    prompt += text;
    spans.push({ start, end: bytes(prompt), source });
  }
  return { prompt, spans };
}

const T = { kind: "template" } as const;
const M = (index: number) => ({ kind: "message", index }) as const;

describe("UTF-8 byte offsets as string indices", () => {
  it("count Chinese as three bytes, emoji as four bytes and two code units", () => {
    const text = "a灯🕯️b";
    // a: 1 byte; 灯: 3; 🕯: 4 (a surrogate pair); U+FE0F: 3; b: 1.
    expect(byteLength(text)).toBe(bytes(text));
    expect(byteOffsetsToIndices(text, [0, 1, 4, 8, 11, 12])).toEqual([0, 1, 2, 4, 5, 6]);
  });

  it("take the offsets in any order", () => {
    expect(byteOffsetsToIndices("灯灯x", [6, 0, 3, 7])).toEqual([2, 0, 1, 3]);
  });

  it("put an offset inside a character at its start, or after it when asked", () => {
    // 灯 is bytes 0..3, 🕯 bytes 3..7.
    expect(byteOffsetsToIndices("灯🕯", [1, 2, 4, 6])).toEqual([0, 0, 1, 1]);
    expect(byteOffsetsToIndices("灯🕯", [1, 4], "ceil")).toEqual([1, 3]);
    expect(byteOffsetsToIndices("灯", [99])).toEqual([1]);
  });
});

describe("the prompt string's segments", () => {
  it("cover the string exactly and give each part its source, with Chinese and emoji", () => {
    const p = written([
      ["<|im_start|>user\n", T],
      ["Rosa: 灯亮着吗？🕯️", M(1)],
      ["<|im_end|>\n<|im_start|>assistant\n", T],
      ["It has not gone out 🌊 in forty years.", M(2)],
      ["<|im_end|>\n", T],
    ]);
    const segments = segmentsOf(p);
    expect(segments.map((s) => s.text)).toEqual([
      "<|im_start|>user\n",
      "Rosa: 灯亮着吗？🕯️",
      "<|im_end|>\n<|im_start|>assistant\n",
      "It has not gone out 🌊 in forty years.",
      "<|im_end|>\n",
    ]);
    expect(segments.map((s) => s.source)).toEqual([T, M(1), T, M(2), T]);
    expect(segments.map((s) => s.text).join("")).toBe(p.prompt);
    for (const s of segments) expect(p.prompt.slice(s.start, s.end)).toBe(s.text);
  });

  it("keep every character even where the spans leave a gap or stop early", () => {
    const prompt = "前言 message 后记";
    const start = bytes("前言 ");
    const segments = segmentsOf({ prompt, spans: [{ start, end: start + 7, source: M(0) }] });
    expect(segments.map((s) => [s.text, s.source.kind])).toEqual([
      ["前言 ", "template"],
      ["message", "message"],
      [" 后记", "template"],
    ]);
    expect(segmentsOf({ prompt: "x", spans: [] }).map((s) => s.text)).toEqual(["x"]);
    expect(segmentsOf({ prompt: "", spans: [] })).toEqual([]);
  });
});

describe("special tokens", () => {
  const pattern = specialTokenPattern(["<s>", "<start_of_turn>", "</s>", "", "<s>"]);

  it("are marked wherever they occur, the longest first", () => {
    const pieces = markSpecial("<s><start_of_turn>user 你好</s> <s>", pattern);
    expect(pieces).toEqual([
      { text: "<s>", special: true },
      { text: "<start_of_turn>", special: true },
      { text: "user 你好", special: false },
      { text: "</s>", special: true },
      { text: " ", special: false },
      { text: "<s>", special: true },
    ]);
  });

  it("take their characters literally and leave text without them whole", () => {
    const p = specialTokenPattern(["<|im_start|>", "[INST]"]);
    expect(markSpecial("a|b [INST] c", p)).toEqual([
      { text: "a|b ", special: false },
      { text: "[INST]", special: true },
      { text: " c", special: false },
    ]);
    expect(markSpecial("plain", null)).toEqual([{ text: "plain", special: false }]);
    expect(markSpecial("", pattern)).toEqual([]);
    expect(specialTokenPattern([])).toBeNull();
  });

  it("are found in a message's text as in the template's", () => {
    const p = written([
      ["<|im_start|>user\n", T],
      ["She typed <|im_end|> into the chat 😅", M(0)],
      ["<|im_end|>\n", T],
    ]);
    const re = specialTokenPattern(["<|im_start|>", "<|im_end|>"]);
    const marked = segmentsOf(p).map((s) => markSpecial(s.text, re).filter((x) => x.special).map((x) => x.text));
    expect(marked).toEqual([["<|im_start|>"], ["<|im_end|>"], ["<|im_end|>"]]);
  });
});

describe("white space made visible", () => {
  it("marks spaces and tabs at a line's end, not those inside it", () => {
    const text = "a b  \nc\t\n d \t";
    const flags = trailingWhitespace(text);
    expect([...flags].map(String).join("")).toBe("0001100100011");
  });

  it("cuts a part into runs that join to it, each line break its own", () => {
    const text = "x  \n\ny z ";
    const flags = trailingWhitespace(text);
    const runs = runsOf(text, 0, flags);
    expect(runs).toEqual([
      { text: "x", kind: "text" },
      { text: "  ", kind: "trailing" },
      { text: "\n", kind: "newline" },
      { text: "\n", kind: "newline" },
      { text: "y z", kind: "text" },
      { text: " ", kind: "trailing" },
    ]);
    // A part in the middle of the string is judged by the whole string's lines.
    const whole = "[INST] 你好 \n";
    const all = trailingWhitespace(whole);
    expect(runsOf("[INST] ", 0, all)).toEqual([{ text: "[INST] ", kind: "text" }]);
    expect(runsOf("你好 \n", 7, all)).toEqual([
      { text: "你好", kind: "text" },
      { text: " ", kind: "trailing" },
      { text: "\n", kind: "newline" },
    ]);
  });

  it("writes stop sequences with their control characters escaped", () => {
    expect(escapeText("\n### Instruction:")).toBe("\\n### Instruction:");
    expect(escapeText("a\tb\r\\\u001b\u202e停")).toBe("a\\tb\\r\\\\\\u{1b}\\u{202e}停");
  });
});

describe("where two strings differ", () => {
  it("shows what differs between what both share, from the engine's byte offset", () => {
    const ours = "<|start|>system\n你好<|eot|>";
    const theirs = "<|start|>system\nCutting Knowledge Date: 2023\n\n你好<|eot|>";
    const at = bytes("<|start|>system\n");
    const d = differenceAt(ours, theirs, at);
    expect(d.ours).toMatchObject({ before: "<|start|>system\n", changed: "", after: "你好<|eot|>" });
    expect(d.theirs).toMatchObject({ before: "<|start|>system\n", changed: "Cutting Knowledge Date: 2023\n\n" });
    expect(d.line).toBe(2);
    expect(d.column).toBe(1);
  });

  it("takes an offset inside a character to that character's start", () => {
    // 你 is E4 BD A0, 佢 is E4 BD A2: the strings first differ at their third byte.
    const d = differenceAt("说你好", "说佢好", bytes("说") + 2);
    expect(d.ours).toMatchObject({ before: "说", changed: "你", after: "好" });
    expect(d.theirs).toMatchObject({ before: "说", changed: "佢", after: "好" });
    expect(d.column).toBe(2);
  });

  it("never splits an emoji and cuts long texts with a mark", () => {
    // 😀 (F0 9F 98 80) and 😁 (F0 9F 98 81) share three bytes and their high surrogate.
    const d = differenceAt("ok 😀!", "ok 😁!", bytes("ok ") + 3);
    expect(d.ours.changed).toBe("😀");
    expect(d.theirs.changed).toBe("😁");
    const long = "x".repeat(200);
    const e = differenceAt(long + "a" + long, long + "b" + "y".repeat(500) + long, 200, 80, 100);
    expect(e.ours).toMatchObject({ changed: "a", cutBefore: true, cutChanged: false, cutAfter: true });
    expect(e.ours.before).toHaveLength(80);
    expect(e.theirs.changed).toHaveLength(100);
    expect(e.theirs.cutChanged).toBe(true);
  });

  it("finds the end of the shorter string when one is the start of the other", () => {
    const d = differenceAt("abc", "abc<eos>", 3);
    expect(d.ours).toMatchObject({ before: "abc", changed: "", after: "" });
    expect(d.theirs).toMatchObject({ before: "abc", changed: "<eos>", after: "" });
  });
});
