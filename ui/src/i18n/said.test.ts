import { describe, expect, it } from "vitest";
import type { ProcessorDescriptor, Said } from "../bindings";
import engineTexts from "./engineTexts.json";
import { engineZh } from "./engineZh";
import { describe as describeProcessor, PLACEHOLDER, say } from "./said";

const english: Record<string, string> = engineTexts;
const chinese: Record<string, string> = engineZh;
const names = (text: string) => [...text.matchAll(PLACEHOLDER)].map((m) => m[1]).sort();

describe("engine texts", () => {
  // engineTexts.json lists every code the engine and the importers can say (a Rust test writes
  // it from their lists): a code without Chinese fails here, and in the type checker.
  it("have a Chinese text for every code the engine can say, and for no other", () => {
    expect(Object.keys(english).length).toBeGreaterThan(200);
    expect(Object.keys(chinese).sort()).toEqual(Object.keys(english).sort());
  });

  it("keep the placeholders of the English", () => {
    for (const code of Object.keys(english)) {
      expect(names(chinese[code] ?? ""), code).toEqual(names(english[code]!));
    }
  });

  it("are written in Chinese", () => {
    // Texts made only of placeholders and punctuation, or of names, may stay as they are.
    const asIs = new Set(["plain", "import.kind.null", "processor.history-operations.count.label"]);
    for (const [code, text] of Object.entries(chinese)) {
      if (asIs.has(code) || english[code]!.replace(PLACEHOLDER, "").match(/^[\W_]*$/)) continue;
      expect(text, code).toMatch(/\p{Script=Han}/u);
    }
  });
});

describe("say", () => {
  const why: Said = { code: "attachment.no-images", params: {}, parts: {} };
  const said: Said = {
    code: "asset-resolver.not-sent",
    params: { name: "cat.png", model: "gpt-{x}" },
    parts: { why },
  };
  const englishText = 'attachment "cat.png" not sent to gpt-{x}: the model does not take images';

  it("gives the engine's English in English", () => {
    expect(say("en", said, englishText)).toBe(englishText);
  });

  it("fills the Chinese with the parameters as they are and the parts in Chinese", () => {
    expect(say("zh-CN", said, englishText)).toBe("附件“cat.png”未发送给 gpt-{x}：该模型不接受图片");
  });

  it("leaves macros in doubled braces alone", () => {
    const hint: Said = { code: "processor.injection-assembler.systemPromptTemplate.help", params: {}, parts: {} };
    expect(say("zh-CN", hint, "")).toContain("{{original}}");
  });

  it("falls back to the English for a code it does not know (a plugin's)", () => {
    const plugin: Said = { code: "my-plugin.done", params: {}, parts: {} };
    expect(say("zh-CN", plugin, "done")).toBe("done");
  });

  it("says a processor's name, description and settings by its id", () => {
    const d: ProcessorDescriptor = {
      id: "token-limiter",
      name: "Token limiter",
      description: "Fits the context",
      priority: 400,
      isCore: false,
      defaultEnabled: true,
      configFields: [{ key: "strategy", label: "Strategy", type: "select", default: "fixed-preset", description: "d" }],
    };
    expect(describeProcessor("zh-CN", d, "name")).toBe("Token 限制器");
    expect(describeProcessor("zh-CN", d, { label: "strategy" })).toBe("策略");
    expect(describeProcessor("en", d, { help: "strategy" })).toBe("d");
    expect(describeProcessor("zh-CN", { ...d, id: "plugin" }, "description")).toBe("Fits the context");
    // A select's choices: their value in English, their own text in Chinese.
    expect(describeProcessor("zh-CN", d, { option: "strategy", value: "proportional" })).toBe("按比例");
    expect(describeProcessor("en", d, { option: "strategy", value: "proportional" })).toBe("proportional");
    expect(describeProcessor("zh-CN", { ...d, id: "plugin" }, { option: "strategy", value: "x" })).toBe("x");
  });

  it("says a choice inside a log line in the same language", () => {
    const line: Said = {
      code: "history-operations.truncate-role",
      params: { count: "5" },
      parts: {
        mode: { code: "processor.history-operations.truncateMode.option.keepLast", params: {}, parts: {} },
        role: { code: "processor.history-operations.role.option.user", params: {}, parts: {} },
      },
    };
    expect(say("zh-CN", line, "")).toBe("聊天记录操作：截断（保留最近的 N 条，N = 5，仅用户消息）");
  });
});
