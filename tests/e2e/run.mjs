// End-to-end tests of the real app window (issue 5). Run inside Xvfb:
//   xvfb-run -a -s "-screen 0 1280x800x24" node tests/e2e/run.mjs
// Screenshots of every step land in tests/e2e/screenshots/ (not committed).
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { answerDialog, launch, previewSources, scratchDatabase, shot, SHOTS, stepIds, until } from "./harness.mjs";
import { advancedTests } from "./advanced.mjs";
import { hostileTests } from "./hostile.mjs";
import { sendTests } from "./send.mjs";
import { memoryTests } from "./memory.mjs";
import { countTests } from "./count.mjs";
import { generationTests } from "./generation.mjs";
import { textCompletionTests } from "./textCompletion.mjs";
import { tokenTests } from "./tokens.mjs";
import { changesTests } from "./changes.mjs";
import { aboutTests } from "./about.mjs";
import { bigPresetTests } from "./bigPreset.mjs";
import { viewTests } from "./views.mjs";

const tests = [];
const test = (name, fn) => tests.push({ name, fn });
const db = scratchDatabase();
let app;

const $ = (selector) => app.browser.$(selector);
const byTest = (id) => $(`[data-testid="${id}"]`);

/** Types `text` at the end of the field (WebDriver's element send keys) and checks it arrived. */
async function typeInto(id, text) {
  const el = await byTest(id);
  const before = await el.getValue();
  await el.click();
  await app.browser.keys(["End"]);
  await el.addValue(text);
  await until(() => el.getValue(), (v) => v === before + text, `the text typed into ${id}`);
}

async function selectStep(templateId) {
  await (await $(`[data-step-id="${templateId}"] .step-body`)).click();
}

test("a new preset previews its system prompt before the chat history", async () => {
  await (await byTest("new-preset")).click();
  await until(() => stepIds(app.browser), (ids) => ids.join() === "system-prompt,chat-history", "the new preset's steps");
  const sources = await until(
    () => previewSources(app.browser),
    (s) => s.length > 2 && s[0].startsWith("template system-prompt"),
    "the preview of the new preset",
  );
  assert.ok(sources.slice(1).every((s) => s.startsWith("history")), `history after the prompt: ${sources}`);
  await shot(app.browser, "01-new-preset");
});

test("added messages appear after the chat history, in list order", async () => {
  await (await byTest("add-message")).click();
  await typeInto("editor-content", "Stay in character, {{user}}.");
  await (await byTest("add-message")).click();
  await typeInto("editor-content", "Answer briefly.");
  const sources = await until(
    () => previewSources(app.browser),
    (s) => s.at(-1) === "template message-2" && s.at(-2) === "template message",
    "the two new messages at the end of the preview",
  );
  assert.ok(sources.at(-3).startsWith("history"));
  await shot(app.browser, "02-messages-added");
});

test("a depth injection moves the message into the history in the preview", async () => {
  await selectStep("message");
  await (await byTest("mode-depth")).click();
  const depth = await byTest("depth-input");
  await depth.click();
  await app.browser.keys(["Control", "a"]);
  await app.browser.keys(["Control"]);
  await app.browser.keys(["1"]);
  const sources = await until(
    () => previewSources(app.browser),
    (s) => s.includes("template message · depth 1"),
    "the message at depth 1",
  );
  const at = sources.indexOf("template message · depth 1");
  assert.ok(sources[at - 1].startsWith("history"), `a history message before it: ${sources}`);
  assert.ok(sources[at + 1].startsWith("history"), `one history message after it: ${sources}`);
  assert.equal(sources.at(-1), "template message-2");
  assert.ok(await (await $('[data-step-id="message"] .tag-depth')).isDisplayed(), "the Depth tag shows");
  await shot(app.browser, "03-depth-injection");
});

test("reorder by keyboard", async () => {
  const handle = await byTest("handle-message-2");
  await handle.click(); // focus; a click without movement does not start a pointer drag
  await app.browser.keys([" "]);
  await app.browser.pause(150);
  await app.browser.keys(["ArrowUp"]);
  await app.browser.pause(150);
  await app.browser.keys(["ArrowUp"]);
  await app.browser.pause(150);
  await app.browser.keys([" "]);
  await until(
    () => stepIds(app.browser),
    (ids) => ids.join() === "system-prompt,message-2,chat-history,message",
    "the steps after moving message-2 up twice",
  );
  await until(
    () => previewSources(app.browser),
    (s) => s[1] === "template message-2",
    "message-2 right after the system prompt in the preview",
  );
  await shot(app.browser, "04-keyboard-reorder");
});

test("reorder by pointer drag", async () => {
  const handle = await byTest("handle-message-2");
  const target = await $('[data-step-id="system-prompt"]');
  const from = await handle.getLocation();
  const size = await handle.getSize();
  const to = await target.getLocation();
  const x = Math.round(from.x + size.width / 2);
  const y = Math.round(from.y + size.height / 2);
  const ty = Math.round(to.y + 4);
  await app.browser.performActions([
    {
      type: "pointer",
      id: "mouse",
      parameters: { pointerType: "mouse" },
      actions: [
        { type: "pointerMove", x, y, duration: 0 },
        { type: "pointerDown", button: 0 },
        { type: "pointerMove", x, y: y - 6, duration: 100 },
        { type: "pointerMove", x, y: Math.round((y + ty) / 2), duration: 200 },
        { type: "pointerMove", x, y: ty, duration: 200 },
        { type: "pause", duration: 150 },
        { type: "pointerUp", button: 0 },
      ],
    },
  ]);
  await app.browser.releaseActions();
  await until(
    () => stepIds(app.browser),
    (ids) => ids.join() === "message-2,system-prompt,chat-history,message",
    "the steps after dragging message-2 to the top",
  );
  await until(() => previewSources(app.browser), (s) => s[0] === "template message-2", "message-2 first in the preview");
  await shot(app.browser, "05-pointer-drag");
});

test("undo and redo with the keyboard", async () => {
  await app.browser.keys(["Control", "z"]);
  await app.browser.keys(["Control"]);
  await until(
    () => stepIds(app.browser),
    (ids) => ids.join() === "system-prompt,message-2,chat-history,message",
    "the order before the drag, after Ctrl+Z",
  );
  await app.browser.keys(["Control", "Shift", "z"]);
  await app.browser.keys(["Control", "Shift"]);
  await until(
    () => stepIds(app.browser),
    (ids) => ids.join() === "message-2,system-prompt,chat-history,message",
    "the dragged order again, after Ctrl+Shift+Z",
  );
});

test("both themes and both languages", async () => {
  await selectStep("message");
  await shot(app.browser, "theme-light-en");
  await (await byTest("theme-toggle")).click();
  await until(() => app.browser.execute(() => document.documentElement.dataset.theme), (t) => t === "dark", "dark theme");
  await shot(app.browser, "theme-dark-en");
  await (await byTest("language")).selectByAttribute("value", "zh-CN");
  await until(() => (async () => (await byTest("add-message")).getText())(), (t) => t.includes("添加消息"), "Chinese labels");
  await shot(app.browser, "theme-dark-zh");
  await (await byTest("theme-toggle")).click();
  await shot(app.browser, "theme-light-zh");
  await (await byTest("language")).selectByAttribute("value", "en");
  await until(() => (async () => (await byTest("add-message")).getText())(), (t) => t.includes("Add message"), "English labels");
});

test("close and reopen: the edits were saved", async () => {
  await until(async () => (await byTest("save-state")).getText(), (t) => t === "Saved", "autosave");
  await app.close();
  app = await launch(db.path);
  await until(
    () => stepIds(app.browser),
    (ids) => ids.join() === "message-2,system-prompt,chat-history,message",
    "the saved steps after reopening",
  );
  assert.ok(await (await $('[data-step-id="message"] .tag-depth')).isDisplayed(), "the depth survived");
  const sources = await until(
    () => previewSources(app.browser),
    (s) => s.includes("template message · depth 1"),
    "the reopened preview",
  );
  assert.equal(sources[0], "template message-2");
  await shot(app.browser, "06-reopened");
});

test("a lorebook entry fires on a key the recent messages mention, and not on one it does not", async () => {
  await (await byTest("tab-lorebook")).click();
  await (await byTest("add-entry")).click();
  const keys = await $('[data-testid="entry-keys"] input');
  await keys.click();
  await keys.addValue("timetable");
  await app.browser.keys(["Enter"]);
  await typeInto("entry-content", "The attic lantern is someone signalling in Morse.");
  const sources = await until(
    () => previewSources(app.browser),
    (s) => s.some((x) => x.startsWith("lorebook entry")),
    "the entry in the preview",
  );
  assert.equal(sources.filter((x) => x.startsWith("lorebook")).length, 1);
  const fires = await until(
    async () => (await $('[data-testid="lorebook"] [data-testid="what-fires"]')).getText(),
    (text) => /matched “timetable” in message #[67]/.test(text),
    "the matched key in the what-fires panel",
  );
  assert.ok(fires.length > 0);
  await shot(app.browser, "08-lorebook-fires");

  await (await $('[data-testid="entry-keys"] .tag-remove')).click();
  await keys.click();
  await keys.addValue("zeppelin");
  await app.browser.keys(["Enter"]);
  await until(
    () => previewSources(app.browser),
    (s) => !s.some((x) => x.startsWith("lorebook")),
    "no entry once no message mentions its key",
  );
  await until(
    async () => (await $('[data-testid="lorebook"] [data-testid="what-fires"]')).getText(),
    (text) => text.includes("No entry fires for this session."),
    "the empty what-fires panel",
  );
  await shot(app.browser, "08-lorebook-silent");
  await (await byTest("tab-recipe")).click();
});

viewTests(test, () => app);

test("import a SillyTavern preset: the report first, then the preset opens and previews", async () => {
  const dir = scratchDatabase();
  const file = path.join(path.dirname(dir.path), "Tavern.json");
  writeFileSync(
    file,
    JSON.stringify({
      temperature: 0.9,
      top_a: 0.2,
      prompts: [
        { identifier: "main", name: "Main Prompt", system_prompt: true, role: "system", content: "Write {{char}}'s next reply." },
        { identifier: "chatHistory", name: "Chat History", system_prompt: true, marker: true },
      ],
      prompt_order: [
        { character_id: 100001, order: [
          { identifier: "main", enabled: true },
          { identifier: "chatHistory", enabled: true },
        ] },
      ],
    }),
  );
  try {
    // The native open dialog answers with the file (harness.mjs, answerDialog).
    answerDialog(file);
    await (await byTest("import")).click();
    const summary = await until(
      async () => ((await byTest("import-summary").then((e) => e.isExisting())) ? (await byTest("import-summary")).getText() : ""),
      (text) => text.startsWith("SillyTavern"),
      "the import report",
    );
    assert.match(summary, /preset/);
    const dialog = await (await byTest("import-dialog")).getText();
    assert.match(dialog, /top_a/, "the unmapped sampling setting is reported");
    await shot(app.browser, "09-import-report");
    await (await byTest("confirm-import")).click();
    await until(
      () => previewSources(app.browser),
      (s) => s[0] === "template main",
      "the imported preset's preview",
    );
    await until(async () => (await $(".preset-list .current")).getText(), (t) => t.length > 0, "the imported preset in the list");
    // Back to the preset of the earlier tests.
    await (await byTest("preset-new-preset")).click();
    await until(() => stepIds(app.browser), (ids) => ids.includes("message-2"), "the first preset again");
  } finally {
    dir.remove();
  }
});

test("keystroke to painted preview over a 1,000-message session (measured, not asserted)", async () => {
  const size = Number(process.env.E2E_SESSION_MESSAGES ?? 1000);
  const created = await app.browser.executeAsync((size, done) => {
    const messages = [];
    for (let i = 0; i < size; i++) {
      messages.push({
        role: i % 2 ? "assistant" : "user",
        content: `Message ${i}: ${"the quick brown fox jumps over the lazy dog ".repeat(3 + (i % 7))}`,
      });
    }
    const session = { formatVersion: 1, id: "long-session", title: "1,000 messages", messages };
    window.__TAURI_INTERNALS__.invoke("save_session", { session }).then(
      () => done("ok"),
      (e) => done(JSON.stringify(e)),
    );
  }, size);
  assert.equal(created, "ok");
  await app.browser.refresh();
  await byTest("new-preset").then((e) => e.waitForExist({ timeout: 20000 }));
  await (await byTest("session-select")).selectByAttribute("value", "long-session");
  await until(
    () => app.browser.execute(() => document.querySelector('[data-testid="preview-messages"]')?.dataset.count),
    (n) => n === String(size + 3),
    "the long preview: three templates and 1,000 history messages",
  );
  await selectStep("message-2");
  await app.browser.execute(() => (window.__promptloomPreviewTimes.length = 0));
  const content = await byTest("editor-content");
  await content.click();
  const text = "Keep every answer under three sentences.";
  // A fast typist: 12 keys a second, each key its own WebDriver call.
  const pause = Number(process.env.E2E_TYPING_PAUSE_MS ?? 80);
  for (const ch of text) {
    await app.browser.keys([ch]);
    await app.browser.pause(pause);
  }
  await app.browser.pause(500);
  const times = await app.browser.execute(() => [...window.__promptloomPreviewTimes]);
  assert.ok(times.length > 0, "the preview repainted while typing");
  const stats = (key) => {
    const sorted = times.map((t) => t[key]).sort((a, b) => a - b);
    const pick = (q) => Math.round(10 * sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]) / 10;
    return { p50: pick(0.5), p95: pick(0.95), max: pick(1) };
  };
  const report = { messages: size, keystrokes: text.length, pauseMs: pause, previews: times.length };
  for (const key of ["total", "queued", "roundTrip", "build", "render"]) report[key] = stats(key);
  writeFileSync(path.join(SHOTS, "preview-latency.json"), JSON.stringify(report, null, 2));
  console.log(`    keystroke to painted preview: ${JSON.stringify(report)}`);
  // The long list renders the rows in view: scrolled to the end, the newest message is there.
  await app.browser.execute(() => {
    const pane = document.querySelector(".preview");
    pane.scrollTop = pane.scrollHeight;
  });
  await until(
    () => app.browser.execute((last) => !!document.querySelector(`[data-source="history #${last}"]`), size - 1),
    (found) => found,
    "the newest message after scrolling the preview to its end",
  );
  await shot(app.browser, "10-long-session");
});

advancedTests(test, () => app);
hostileTests(test, () => app, (next) => (app = next), db);
sendTests(test, () => app);
memoryTests(test, () => app);
countTests(test, () => app);
generationTests(test, () => app);
textCompletionTests(test, () => app);
tokenTests(test, () => app);
changesTests(test, () => app);
bigPresetTests(test, () => app, db.path);
aboutTests(test, () => app, (next) => (app = next), db);

test("a damaged database is reported in the window and left as it was", async () => {
  await app.close();
  const damaged = scratchDatabase();
  const garbage = Buffer.alloc(8192, "not a database ");
  writeFileSync(damaged.path, garbage);
  try {
    app = await launch(damaged.path, ".fatal");
    const text = await (await $(".fatal")).getText();
    assert.match(text, /damaged or not a Promptloom database/);
    assert.ok(text.includes(damaged.path), `the message names the file: ${text}`);
    await shot(app.browser, "11-damaged-database");
    assert.ok(readFileSync(damaged.path).equals(garbage), "the file was not changed");
  } finally {
    await app.close();
    app = null;
    damaged.remove();
  }
});

let failed = 0;
let ran = 0;
try {
  app = await launch(db.path);
  // E2E_ONLY=regex runs the tests whose names match, for working on a few.
  const only = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY) : null;
  const chosen = tests.filter((t) => !only || only.test(t.name));
  ran = chosen.length;
  for (const { name, fn } of chosen) {
    const started = Date.now();
    try {
      await fn();
      console.log(`ok   ${name} (${Date.now() - started} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}\n     ${String(e.stack ?? e).split("\n").join("\n     ")}`);
      await shot(app.browser, `failed-${tests.findIndex((t) => t.name === name)}`).catch(() => {});
    }
  }
} finally {
  await app?.close();
  db.remove();
}
console.log(`${ran - failed} passed, ${failed} failed; screenshots in tests/e2e/screenshots/`);
process.exit(failed ? 1 : 0);
