import { describe, expect, it } from "vitest";
import { macroParts } from "./MacroTextarea";

describe("the macro textarea", () => {
  it("finds macros for highlighting", () => {
    expect(macroParts("Hi {{user}}, I am {{char}}.")).toEqual([
      { text: "Hi ", macro: false },
      { text: "{{user}}", macro: true },
      { text: ", I am ", macro: false },
      { text: "{{char}}", macro: true },
      { text: ".", macro: false },
    ]);
    expect(macroParts("")).toEqual([]);
  });
});
