import { describe, expect, it } from "vitest";
import { breakpointMarks } from "./breakpoints";

describe("the preview's cache breakpoint marks", () => {
  it("are by the message each follows, without stability while there is no previous turn", () => {
    const marks = breakpointMarks([{ messageIndex: 0 }, { messageIndex: 5, depth: 2 }], undefined);
    expect([...marks]).toEqual([
      [0, { depth: null, stable: null }],
      [5, { depth: 2, stable: null }],
    ]);
    expect(breakpointMarks(undefined, undefined).size).toBe(0);
  });

  it("say whether each one's prefix is as in the previous turn, matched by place and depth", () => {
    const marks = breakpointMarks(
      [{ messageIndex: 0 }, { messageIndex: 5, depth: 2 }, { messageIndex: 7, depth: 0 }],
      [
        { messageIndex: 0, stable: true },
        { messageIndex: 5, depth: 2, stable: false },
        // Of an earlier build, where depth 0 was another message: not this one's.
        { messageIndex: 6, depth: 0, stable: true },
      ],
    );
    expect(marks.get(0)).toEqual({ depth: null, stable: true });
    expect(marks.get(5)).toEqual({ depth: 2, stable: false });
    expect(marks.get(7)).toEqual({ depth: 0, stable: null });
  });
});
