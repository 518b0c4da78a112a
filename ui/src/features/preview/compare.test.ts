import { describe, expect, it } from "vitest";
import { defaultCompareModel, foldRows, signed, summarize, type Row } from "./compare";

describe("summarizing the rows", () => {
  it("counts the rows that differ, by kind", () => {
    const rows: Row[] = ["same", "changed", "left", "same", "right", "right"].map((kind) => ({ kind }) as Row);
    expect(summarize(rows)).toEqual({ differ: 4, changed: 1, onlyLeft: 1, onlyRight: 2 });
    expect(summarize([])).toEqual({ differ: 0, changed: 0, onlyLeft: 0, onlyRight: 0 });
  });

  it("writes a token difference with its sign", () => {
    expect([signed(120), signed(-40), signed(0)]).toEqual(["+120", "−40", "±0"]);
  });
});

describe("folding identical runs", () => {
  const rows = (kinds: string): Row[] => [...kinds].map((k) => ({ kind: k === "s" ? "same" : "changed" }));
  const shape = (shown: ReturnType<typeof foldRows>) =>
    shown.map((s) => (s.kind === "folded" ? `[${s.count}]` : s.row.kind[0])).join("");

  it("folds a long run, keeping the rows next to a difference", () => {
    expect(shape(foldRows(rows("sssssssscsssssssss"), 2))).toBe("[6]sscss[7]");
  });

  it("leaves short runs and runs without a neighbour difference alone", () => {
    expect(shape(foldRows(rows("scsssssc"), 2))).toBe("scsssssc");
    expect(shape(foldRows(rows("s"), 2))).toBe("s");
  });

  it("shows more of a run when asked", () => {
    const shown = foldRows(rows("csssssssssssc"), 2, new Map([[1, 3]]));
    expect(shape(shown)).toBe("csssss[4]ssc");
  });
});

describe("the model to compare with", () => {
  it("is a Claude model for a GPT model and a GPT model for the rest", () => {
    expect(defaultCompareModel("gpt-4o", [])).toBe("claude-3-5-sonnet");
    expect(defaultCompareModel("claude-3-opus", [])).toBe("gpt-4o");
    expect(defaultCompareModel("gpt-4o", ["gpt-4o", "claude-3-7-sonnet"])).toBe("claude-3-7-sonnet");
    expect(defaultCompareModel("llama-3", ["gpt-4.1", "gpt-4o"])).toBe("gpt-4.1");
    expect(defaultCompareModel("gpt-4o", ["claude-3-5-sonnet"])).not.toBe("gpt-4o");
  });
});
