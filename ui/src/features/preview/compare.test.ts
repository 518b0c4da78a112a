import { describe, expect, it } from "vitest";
import type { BuiltMessage, Role } from "../../bindings";
import { alignMessages, defaultCompareModel, foldRows, summarize, type DiffRow } from "./compare";

function template(id: string, content = `text of ${id}`, role: Role = "system"): BuiltMessage {
  return { role, content, tokens: 5, exact: true, source: { kind: "template", templateId: id, placement: { mode: "list" } } };
}

function history(index: number, content = `message ${index}`): BuiltMessage {
  return {
    role: index % 2 === 0 ? "user" : "assistant",
    content,
    tokens: 5,
    exact: true,
    source: { kind: "history", historyIndex: index, placement: { mode: "list" } },
  };
}

function historyRun(from: number, to: number): BuiltMessage[] {
  return Array.from({ length: to - from }, (_, i) => history(from + i));
}

/** The rows as `kind:left:right` strings, for readable expectations. */
const show = (rows: DiffRow[]) => rows.map((r) => `${r.kind}:${r.left ?? "-"}:${r.right ?? "-"}`);

/** Every message of both sides appears exactly once, in its side's order. */
function expectComplete(rows: DiffRow[], left: number, right: number) {
  expect(rows.flatMap((r) => (r.left === null ? [] : [r.left]))).toEqual(Array.from({ length: left }, (_, i) => i));
  expect(rows.flatMap((r) => (r.right === null ? [] : [r.right]))).toEqual(Array.from({ length: right }, (_, i) => i));
}

describe("aligning two built contexts", () => {
  it("pairs identical lists row by row, all the same", () => {
    const list = [template("main"), ...historyRun(0, 3), template("style")];
    const rows = alignMessages(list, list.map((m) => ({ ...m })));
    expect(show(rows)).toEqual(["same:0:0", "same:1:1", "same:2:2", "same:3:3", "same:4:4"]);
    expect(summarize(rows).differ).toBe(0);
  });

  it("shows a moved message as gone from one place and come in another", () => {
    const left = [template("main"), template("style"), ...historyRun(0, 2)];
    const right = [template("main"), ...historyRun(0, 2), template("style")];
    const rows = alignMessages(left, right);
    expect(show(rows)).toEqual(["same:0:0", "left:1:-", "same:2:1", "same:3:2", "right:-:3"]);
    expect(summarize(rows)).toEqual({ differ: 2, changed: 0, onlyLeft: 1, onlyRight: 1 });
    expectComplete(rows, 4, 4);
  });

  it("pairs a message of one source whose text differs as changed", () => {
    const left = [template("main", "You are Ann."), history(0), template("style")];
    const right = [template("main", "You are Ann, an assistant."), history(0), template("style")];
    expect(show(alignMessages(left, right))).toEqual(["changed:0:0", "same:1:1", "same:2:2"]);
  });

  it("counts a changed role as a change", () => {
    const rows = alignMessages([template("note", "x", "system")], [template("note", "x", "user")]);
    expect(show(rows)).toEqual(["changed:0:0"]);
  });

  it("prefers identical pairs to changed ones in the middle", () => {
    const left = [template("a"), template("b", "one"), template("c"), template("b", "two"), template("z")];
    const right = [template("a", "A"), template("b", "two"), template("z", "Z")];
    const rows = alignMessages(left, right);
    expect(show(rows)).toEqual(["changed:0:0", "left:1:-", "left:2:-", "same:3:1", "changed:4:2"]);
  });

  it("puts every message of the only non-empty side on a row of its own", () => {
    const list = [template("main"), history(0)];
    expect(show(alignMessages(list, []))).toEqual(["left:0:-", "left:1:-"]);
    expect(show(alignMessages([], list))).toEqual(["right:-:0", "right:-:1"]);
    expect(alignMessages([], [])).toEqual([]);
  });

  it("aligns a long history whose head differs in one pass over the shared stretch", () => {
    const n = 20_000;
    const left = [template("main"), template("claude-only"), ...historyRun(0, n), template("style")];
    const right = [template("main", "shorter"), ...historyRun(0, n), template("style")];
    const started = performance.now();
    const rows = alignMessages(left, right);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(show(rows.slice(0, 3))).toEqual(["changed:0:0", "left:1:-", "same:2:1"]);
    expect(rows).toHaveLength(n + 3);
    expect(summarize(rows)).toEqual({ differ: 2, changed: 1, onlyLeft: 1, onlyRight: 0 });
    expectComplete(rows, n + 3, n + 2);
  });

  it("keeps a long middle it cannot tabulate aligned by the sources both sides hold once", () => {
    // The right side dropped the oldest history and rewrote every message: no shared head or tail.
    const n = 3000;
    const left = [template("main"), ...historyRun(0, n)];
    const right = [template("other"), ...historyRun(500, n).map((m) => ({ ...m, content: m.content + "!" })), template("end")];
    const rows = alignMessages(left, right);
    expectComplete(rows, n + 1, n - 500 + 2);
    const s = summarize(rows);
    expect(s.changed).toBe(n - 500);
    expect(s.onlyLeft).toBe(1 + 500);
    expect(s.onlyRight).toBe(2);
  });
});

describe("folding identical runs", () => {
  const rows = (kinds: string): DiffRow[] =>
    [...kinds].map((k, i) => ({ kind: k === "s" ? "same" : "changed", left: i, right: i }));
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
