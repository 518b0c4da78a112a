import { describe, expect, it } from "vitest";
import { translate } from ".";
import { en } from "./en";
import { zh } from "./zh";

describe("translations", () => {
  it("fill placeholders", () => {
    expect(translate("en", "preview.tokens", { total: 12, budget: 100 })).toBe("12 / 100 tokens");
    expect(translate("zh-CN", "preview.messages", { count: 3 })).toBe("3 条消息");
  });

  it("keep the same placeholders in both languages", () => {
    const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      expect(names(zh[key]), key).toEqual(names(en[key]));
    }
  });
});
