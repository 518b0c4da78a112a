import { describe, expect, it } from "vitest";
import type { PreviewRequest, TextChange } from "../../bindings";
import type { Chat, Preset } from "../../app/model";
import { againstFor, causeText, hasEarlierTurn, newestSwipes, shortenPieces, sidePieces } from "./changes";
import { translate } from "../../i18n";

const preset = { id: "p", name: "P", messageTemplates: [], contextRecipes: [] } as unknown as Preset;
const request: PreviewRequest = {
  preset,
  sessionId: "chat-1",
  model: "gpt-4o",
  input: null,
  contextWindow: null,
  reserve: null,
  generationType: "normal",
  prefill: null,
};

describe("what the preview is compared with", () => {
  it("is the previous turn of the session, when there is a session", () => {
    expect(againstFor("lastTurn", { kind: "session", sessionId: null }, request, null)).toEqual({
      ok: true,
      against: { kind: "previousTurn" },
    });
    expect(againstFor("lastTurn", { kind: "session", sessionId: null }, { ...request, sessionId: null }, null)).toEqual({
      ok: false,
      missing: "noSession",
    });
  });

  it("is the same request with the preset before the last edit, once there was one", () => {
    expect(againstFor("lastEdit", { kind: "session", sessionId: null }, request, null)).toEqual({ ok: false, missing: "noEdit" });
    const before = { ...preset, name: "Before" };
    expect(againstFor("lastEdit", { kind: "session", sessionId: null }, request, before)).toEqual({
      ok: true,
      against: { kind: "request", request: { ...request, preset: before } },
    });
  });

  it("is another session, model or swipe when one is picked", () => {
    const session = againstFor("pick", { kind: "session", sessionId: "chat-2" }, request, null);
    expect(session).toEqual({ ok: true, against: { kind: "request", request: { ...request, sessionId: "chat-2" } } });
    const model = againstFor("pick", { kind: "model", model: " claude-3-5-sonnet " }, request, null);
    expect(model).toEqual({ ok: true, against: { kind: "request", request: { ...request, model: "claude-3-5-sonnet" } } });
    expect(againstFor("pick", { kind: "swipe", position: 0 }, request, null)).toEqual({
      ok: true,
      against: { kind: "swipe", position: 0 },
    });
    for (const nothing of [
      { kind: "session", sessionId: null },
      { kind: "model", model: "  " },
      { kind: "swipe", position: null },
    ] as const) {
      expect(againstFor("pick", nothing, request, null)).toEqual({ ok: false, missing: "noPick" });
    }
  });
});

describe("the session's turns and swipes", () => {
  const chat = (messages: Chat["messages"]) => ({ id: "c", messages }) as Chat;

  it("has an earlier turn once it has a user message", () => {
    expect(hasEarlierTurn(null)).toBe(false);
    expect(hasEarlierTurn(chat([{ role: "assistant", content: "Hi" }]))).toBe(false);
    expect(hasEarlierTurn(chat([{ role: "assistant", content: "Hi" }, { role: "user", content: "Yo" }]))).toBe(true);
  });

  it("finds the newest reply's swipes and which one it shows", () => {
    expect(newestSwipes(null)).toBeNull();
    expect(newestSwipes(chat([{ role: "user", content: "a" }, { role: "assistant", content: "b" }]))).toBeNull();
    const swiped = chat([
      { role: "assistant", content: "old", swipes: [{ content: "older" }] },
      { role: "user", content: "a" },
      { role: "assistant", content: "b", swipes: [{ content: "b1" }, { content: "b2" }], swipeAt: 1 },
      { role: "user", content: "pending" },
    ]);
    expect(newestSwipes(swiped)).toEqual({ shown: 1, count: 3 });
  });
});

describe("the first difference's cause in words", () => {
  const say = (cause: string, language: "en" | "zh-CN" = "en") => {
    const { key, vars } = causeText(cause);
    return translate(language, key, vars);
  };

  it("names the macro, entry or template, and the other causes", () => {
    expect(say("macro:random")).toBe("the macro {{random}} gave another value");
    expect(say("lorebook:dragons")).toBe("the lorebook entry “dragons” fired in only one of them");
    expect(say("depth-injection:note")).toBe("the depth injection of “note” moved with the history");
    expect(say("limiter")).toBe("the token limiter cut or dropped history differently");
    expect(say("history")).toBe("the stored history differs");
    expect(say("template")).toBe("a template's text differs");
    expect(say("other")).toBe("something else in the request differs");
    expect(say("something-new")).toBe("something else in the request differs");
  });

  it("says it in Chinese", () => {
    expect(say("macro:time", "zh-CN")).toBe("宏 {{time}} 的结果不同");
    expect(say("template", "zh-CN")).toBe("模板的文本不同");
  });

  it("keeps a name with a colon whole", () => {
    expect(causeText("lorebook:a:b").vars).toEqual({ name: "a:b" });
  });
});

describe("a changed message's pieces", () => {
  const long = (c: string, n: number) => c.repeat(n);

  it("keep short pieces whole", () => {
    const changes: TextChange[] = [
      { op: "equal", text: "Mood: " },
      { op: "delete", text: "calm" },
      { op: "insert", text: "stormy" },
      { op: "equal", text: "." },
    ];
    expect(shortenPieces(changes).map((p) => [p.op, p.head, p.hidden, p.tail])).toEqual([
      ["equal", "Mood: ", 0, ""],
      ["delete", "calm", 0, ""],
      ["insert", "stormy", 0, ""],
      ["equal", ".", 0, ""],
    ]);
  });

  it("keep only what is next to a change of a long equal piece", () => {
    const changes: TextChange[] = [
      { op: "equal", text: long("a", 1000) },
      { op: "insert", text: "X" },
      { op: "equal", text: long("b", 500) },
      { op: "delete", text: "Y" },
      { op: "equal", text: long("c", 1000) },
    ];
    const [first, , middle, , last] = shortenPieces(changes, 10);
    expect(first).toEqual({ op: "equal", head: "", hidden: 990, tail: long("a", 10) });
    expect(middle).toEqual({ op: "equal", head: long("b", 10), hidden: 480, tail: long("b", 10) });
    expect(last).toEqual({ op: "equal", head: long("c", 10), hidden: 990, tail: "" });
  });

  it("cut a huge inserted piece at both ends, at characters, not in the middle of one", () => {
    const [piece] = shortenPieces([{ op: "insert", text: long("字", 5000) }], 10, 100);
    expect(piece).toEqual({ op: "insert", head: long("字", 100), hidden: 4800, tail: long("字", 100) });
    const [emoji] = shortenPieces([{ op: "equal", text: "🙂".repeat(200) }, { op: "insert", text: "!" }], 5);
    expect(emoji!.tail).toBe("🙂".repeat(5));
    expect(emoji!.hidden).toBe(195);
  });

  it("split into each side's: the left without what came in, the right without what went", () => {
    const changes: TextChange[] = [
      { op: "equal", text: "a " },
      { op: "delete", text: "b" },
      { op: "insert", text: "c" },
    ];
    expect(sidePieces(changes, "left").map((c) => c.text)).toEqual(["a ", "b"]);
    expect(sidePieces(changes, "right").map((c) => c.text)).toEqual(["a ", "c"]);
  });
});
