// End-to-end test of the Changes view (RULES 9.8), run by run.mjs in the same app window: a preset
// whose system prompt draws a {{random}} choice (imported through the dialog's path) and a session
// of two exchanges; this turn against the last names the macro at message 0 and Jump marks it;
// an edit of the template against the preview before it names the template; a Claude model's
// cache breakpoint after the system part, which that macro makes change from turn to turn.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { answerDialog, scratchDatabase, shot, typeModel as typeModelIn, until } from "./harness.mjs";

/** Forty ways the sea can be: this turn and the last draw from them with other seeds. */
const SEAS = [
  "calm", "choppy", "glassy", "rough", "heaving", "grey", "silver", "green", "foaming", "still",
  "restless", "brooding", "sparkling", "murky", "icy", "warm", "swollen", "flat", "wild", "sullen",
  "bright", "dark", "misty", "rolling", "white-capped", "leaden", "clear", "stormy", "quiet", "angry",
  "gentle", "lively", "cold", "shining", "dull", "hazy", "slack", "surging", "smooth", "breaking",
];

const PRESET = {
  formatVersion: 1,
  id: "changes-e2e",
  name: "Navigator",
  messageTemplates: [
    {
      id: "system-prompt",
      name: "System prompt",
      role: "system",
      content: `You are the navigator of a small sailing ship. Today the sea is {{random::${SEAS.join("::")}}}. Answer as the navigator.`,
    },
    { id: "chat-history", name: "Chat history", role: "user", type: "chat_history" },
  ],
  contextRecipes: [
    {
      id: "default",
      name: "Default",
      modelFilter: ["*"],
      steps: [
        { messageId: "system-prompt", enabled: true },
        { messageId: "chat-history", enabled: true },
      ],
    },
  ],
  generation: { cacheBreakpoints: { system: true, depths: [2] } },
};

/** Two exchanges, each user message with the time it was written. */
const SESSION = {
  formatVersion: 1,
  id: "changes-voyage",
  title: "The voyage",
  messages: [
    { role: "user", content: "Where are we?", createdAt: "2026-11-20T09:00:00Z" },
    { role: "assistant", content: "Two days out of Saltmere, heading north." },
    { role: "user", content: "How long to the islands?", createdAt: "2026-11-20T09:05:00Z" },
    { role: "assistant", content: "Another day, if the wind holds." },
  ],
};

export function changesTests(test, current) {
  const browser = () => current().browser;
  const $ = (selector) => browser().$(selector);
  const byTest = (id) => $(`[data-testid="${id}"]`);
  const attr = (selector, name) =>
    browser().execute((s, n) => document.querySelector(s)?.getAttribute(n) ?? null, selector, name);
  const textOf = (id) =>
    browser().execute((s) => document.querySelector(`[data-testid="${s}"]`)?.textContent ?? null, id);

  const typeModel = (text) => typeModelIn(browser(), text);

  async function chooseMode(mode) {
    const button = await $(`[data-testid="changes-mode"] [data-mode="${mode}"]`);
    await button.scrollIntoView({ block: "center" });
    await button.click();
    await until(() => attr(`[data-testid="changes-mode"] [data-mode="${mode}"]`, "aria-checked"), (c) => c === "true", mode);
  }

  test("changes: this turn against the last names the {{random}} macro; Jump marks it; an edit names the template", async () => {
    // The session, stored as a send would have stored it; the window reads it again, once the
    // preview it is building has returned (a reload in the middle of one would not reopen it).
    await (await byTest("preview-messages")).waitForExist({ timeout: 20000 }).catch(() => {});
    const saved = await browser().executeAsync((session, done) => {
      window.__TAURI_INTERNALS__.invoke("save_session", { session }).then(
        () => done("ok"),
        (e) => done(JSON.stringify(e)),
      );
    }, SESSION);
    assert.equal(saved, "ok");
    await browser().refresh();
    await (await byTest("new-preset")).waitForExist({ timeout: 20000 });
    if (await (await byTest("crash-notice-dismiss")).isExisting()) await (await byTest("crash-notice-dismiss")).click();

    // The preset, imported through the dialog's path.
    const dir = scratchDatabase();
    const file = path.join(path.dirname(dir.path), "Navigator.json");
    writeFileSync(file, JSON.stringify(PRESET));
    try {
      answerDialog(file);
      await (await byTest("import")).click();
      await (await byTest("confirm-import")).waitForExist({ timeout: 8000 });
      await (await byTest("confirm-import")).click();
      await until(async () => (await $(".preset-list .current")).getText(), (t) => t.includes("Navigator"), "the imported preset");
    } finally {
      dir.remove();
    }
    if (await (await byTest("editor-mode-simple")).isExisting()) await (await byTest("editor-mode-simple")).click();
    await (await byTest("session-select")).selectByAttribute("value", SESSION.id);
    await typeModel("gpt-4o");
    await until(
      () => browser().execute(() => document.querySelector('[data-testid="preview-messages"]')?.dataset.count),
      (n) => n === "5",
      "the system prompt and the four messages",
      15000,
    );

    const toggle = await byTest("preview-view-changes");
    await toggle.scrollIntoView({ block: "center" });
    await toggle.click();
    await chooseMode("lastTurn");
    const cause = await until(() => attr('[data-testid="changes-cause"]', "data-cause"), (c) => c !== null, "the first difference's cause", 15000);
    assert.equal(cause, "macro:random");
    assert.equal(await attr('[data-testid="changes-first-difference"]', "data-message-index"), "0");
    assert.match(await textOf("changes-cause"), /^the macro \{\{random\}\} gave another value macro:random$/);
    assert.match(await textOf("changes-stable-prefix"), /^Stable prefix: \d+ tokens · \d+ bytes$/);
    assert.match(await textOf("changes-total"), /^Total: \d+ → \d+ tokens \(\+\d+\)$/);
    // The newest exchange is only in this turn.
    const kinds = await browser().execute(() =>
      [...document.querySelectorAll('[data-testid="changes-row"]')].map((r) => r.dataset.kind),
    );
    assert.equal(kinds[0], "changed", `the system prompt changed: ${kinds}`);
    assert.deepEqual(kinds.slice(-2), ["right", "right"], `the newest exchange is new: ${kinds}`);

    const row = await attr('[data-testid="changes-first-difference"]', "data-row");
    await (await byTest("changes-jump")).click();
    await until(
      () => attr('[data-testid="changes-row"][data-jumped]', "data-row"),
      (r) => r === row,
      "the first difference's row marked",
    );
    const marked = await browser().execute(
      () => document.querySelector('[data-testid="changes-row"][data-jumped] .piece.marked')?.textContent ?? null,
    );
    assert.ok(marked && SEAS.some((s) => marked.includes(s)), `the marked piece is the macro's choice: ${marked}`);
    await shot(browser(), "56-changes-last-turn");

    // An edit of the template, against the preview before it.
    await (await $('[data-step-id="system-prompt"] .step-body')).click();
    const content = await byTest("editor-content");
    await content.click();
    // To the end of the whole text (End alone goes to the end of the wrapped line).
    await browser().keys(["Control", "End"]);
    await browser().keys(["Control"]);
    await content.addValue(" Keep every answer short.");
    await until(() => content.getValue(), (v) => v.endsWith("Answer as the navigator. Keep every answer short."), "the sentence added at the end");
    await chooseMode("lastEdit");
    await until(() => attr('[data-testid="changes-cause"]', "data-cause"), (c) => c === "template", "the template as the cause", 15000);
    assert.equal(await attr('[data-testid="changes-first-difference"]', "data-message-index"), "0");
    const inserted = await browser().execute(
      () => [...document.querySelectorAll('[data-testid="changes-row"] ins')].map((e) => e.textContent).join(""),
    );
    assert.match(inserted, /Keep every answer short\./);
    await (await byTest("changes-jump")).click();
    await (await byTest("changes-summary")).scrollIntoView({ block: "start" });
    await shot(browser(), "57-changes-last-edit");
  });

  test("changes: a Claude request's cache breakpoint after the system part changed since the last turn", async () => {
    await (await byTest("preview-view-messages")).click();
    await typeModel("claude-sonnet-4-5");
    const stable = await until(
      () => attr('[data-testid="cache-breakpoint"]', "data-stable"),
      (s) => s === "true" || s === "false",
      "the breakpoint compared with the last turn",
      15000,
    );
    // The {{random}} choice in the system prompt differs from the last turn's: nothing cached then applies.
    assert.equal(stable, "false");
    const marks = await browser().execute(() =>
      [...document.querySelectorAll('[data-testid="cache-breakpoint"]')].map((m) => [
        m.closest("li").dataset.source,
        m.textContent,
      ]),
    );
    assert.deepEqual(marks, [
      ["template system-prompt", "cache breakpoint · system part · changed since last turn"],
      ["history #1", "cache breakpoint · depth 2 · changed since last turn"],
    ]);
    // Away from the model field, so that its list of suggestions closes.
    await browser().keys(["Escape"]);
    await (await $(".totals")).click();
    await (await byTest("cache-breakpoint")).scrollIntoView({ block: "center" });
    await shot(browser(), "58-cache-breakpoint");

    // The setting in the Generation panel: the preset's; a depth added there is marked too, and
    // a depth named twice is refused there and never reaches the request.
    await (await byTest("tab-generation")).click();
    const depths = await byTest("generation-cacheBreakpoints");
    await depths.scrollIntoView({ block: "center" });
    assert.equal(await attr('[data-testid="generation-origin-cacheBreakpoints"]', "data-origin"), "preset");
    assert.equal(await depths.getValue(), "2");
    await depths.click();
    await browser().keys(["End"]);
    await depths.addValue(", 0");
    const count = () => browser().execute(() => document.querySelectorAll('[data-testid="cache-breakpoint"]').length);
    await until(count, (n) => n === 3, "a breakpoint after the newest message too");
    await depths.addValue(", 0");
    const refused = await until(() => textOf("generation-error-cacheBreakpoints"), (t) => t !== null, "the repeated depth refused");
    assert.equal(refused, "Depth 0 is named twice. Not saved.");
    // As for every setting, while the text is refused the preset keeps what it had before the typing.
    await until(count, (n) => n === 2, "the breakpoints of before the typing");
    await shot(browser(), "59-generation-cache-breakpoints");
    await browser().keys(["Backspace", "Backspace", "Backspace"]);
    await until(() => textOf("generation-error-cacheBreakpoints"), (t) => t === null, "the depths taken again");
    await until(count, (n) => n === 3, "the breakpoint after the newest message again");
    await (await byTest("tab-recipe")).click();
    await typeModel("gpt-4o");
  });
}
