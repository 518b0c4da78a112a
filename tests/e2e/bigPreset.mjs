// End-to-end test of a big community preset (issue 39), run by run.mjs in the same app window: a
// SillyTavern preset of 262 prompts shaped like the ones people share (emoji in the names,
// header prompts such as `═══ 🎭 Core ═══` that start sections, the author's comment macros with
// @category and @tooltip at the top of each prompt, half of them off, a few huge ones that start
// with blank lines) is imported; its rows say what each step says, the list is filtered, a
// section folded, a step and a whole section switched; no row of the preview is blank, in English
// or Chinese; then the keystroke-to-painted-preview time is measured while typing into one of its
// steps; then its lorebook and pipeline get the same list tools (sections, filter, fold, a
// section switched whole).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { answerDialog, CLI, dragTo, scratchDatabase, shot, SHOTS, until } from "./harness.mjs";

const execFileAsync = promisify(execFile);

const SECTIONS = [
  ["═══ 🎭 Core ═══", "Core", "🎭"],
  ["=== ✨ Style ===", "Style", "✨"],
  ["━━ 🧠 Memory ━━", "Memory", "🧠"],
  ["[ 📜 世界观 ]", "World", "📜"],
  ["─── 🔧 Tools ───", "Tools", "🔧"],
  ["=== 💬 Dialogue ===", "Dialogue", "💬"],
  ["━━ 🎲 Randomness ━━", "Random", "🎲"],
  ["[ 🛡️ Safety ]", "Safety", "🛡️"],
  ["═══ 📚 Lore ═══", "Lore", "📚"],
  ["=== 🧩 Extras ===", "Extras", "🧩"],
];
const PER_SECTION = 25;
const uuid = (n) => `5e7a1c00-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** The preset, as a SillyTavern export holds it, and the ids of a few of its prompts. */
export function bigPreset() {
  const prompts = [
    { identifier: "main", name: "Main Prompt", system_prompt: true, role: "system", content: "{{// @category Core }}\n{{// @tooltip The first thing the model reads }}\n\nWrite {{char}}'s next reply in a fictional chat with {{user}}." },
    { identifier: "chatHistory", name: "Chat History", system_prompt: true, marker: true },
  ];
  const order = [{ identifier: "main", enabled: true }];
  let n = 0;
  const huge = [];
  SECTIONS.forEach(([header, category, emoji], s) => {
    const headerId = uuid(n++);
    // A header prompt: a name drawn as a rule, no text; some authors switch them on.
    prompts.push({ identifier: headerId, name: header, role: "system", content: "" });
    order.push({ identifier: headerId, enabled: s % 2 === 0 });
    for (let i = 0; i < PER_SECTION; i++) {
      const id = uuid(n++);
      const big = i === 3 && s < 3;
      const body = big
        ? `\n\n\n\n\n\n${`${category} rule ${i}: keep the scene consistent with what was said before, and never repeat a sentence. `.repeat(220)}`
        : `${category} instruction ${s}.${i}: ${emoji} keep {{char}} ${["curious", "terse", "warm", "wry", "calm"][i % 5]} and answer {{user}} in the story's voice.`;
      prompts.push({
        identifier: id,
        name: `${emoji} ${category} ${["tone", "pacing", "detail", "voice", "rules"][i % 5]} ${i + 1}`,
        role: i % 7 === 6 ? "user" : "system",
        content: `{{// @category ${category} }}\n{{// @tooltip What ${category.toLowerCase()} prompt ${i + 1} asks of the model }}\n${body}`,
      });
      // Half off, as shared presets ship them; the huge ones on.
      order.push({ identifier: id, enabled: big || i % 2 === 0 });
      if (big) huge.push(id);
    }
  });
  order.push({ identifier: "chatHistory", enabled: true });
  return {
    preset: {
      temperature: 1,
      openai_max_context: 200000,
      prompts,
      prompt_order: [{ character_id: 100001, order }],
    },
    huge,
    count: prompts.length,
    enabled: order.filter((o) => o.enabled).length,
    firstOff: uuid(2),
  };
}

/** A build other than the debug one the tests build (PROMPTLOOM_APP, e.g. a release build for
 * the figures of docs/PERFORMANCE.md) answers no test dialogs. */
const RELEASE = !!process.env.PROMPTLOOM_APP;

export function bigPresetTests(test, current, dbPath) {
  const browser = () => current().browser;
  const byTest = (id) => browser().$(`[data-testid="${id}"]`);
  const rowsShown = () =>
    browser().execute(() =>
      [...document.querySelectorAll('[data-testid="steps"] > li')].map((li) => ({
        id: li.dataset.stepId ?? null,
        section: li.classList.contains("section"),
        off: li.classList.contains("disabled"),
        summary: li.querySelector('[data-testid="step-summary"]')?.textContent ?? null,
      })),
    );
  const { preset, huge, count, enabled, firstOff } = bigPreset();

  /** A lorebook entry named `name` with its name as its key, switched on or off. */
  async function addEntry(name, on) {
    await (await byTest("add-entry")).click();
    const editor = await byTest("entry-editor");
    await editor.waitForExist({ timeout: 4000 });
    const field = await editor.$("input");
    await field.setValue(name);
    const keys = await (await byTest("entry-keys")).$("input");
    await keys.setValue(name.toLowerCase());
    await browser().keys(["Enter"]);
    if (!on) {
      // Switched off once its row shows its name, and waited for: a click on a row still being
      // made is lost.
      const switchOf = (click) =>
        browser().execute((n, click) => {
          const li = [...document.querySelectorAll('[data-testid="entries"] > li')].find((l) => l.textContent.includes(n));
          const input = li?.querySelector(".switch input");
          if (input && click && input.checked) input.click();
          return input ? input.checked : null;
        }, name, click);
      await until(() => switchOf(true), (checked) => checked === false, `${name} switched off`);
    }
  }

  /** Every row of the preview, scrolled through from top to end: its source and the text it shows. */
  async function previewRows() {
    return browser().execute(async () => {
      const pane = document.querySelector(".preview");
      const rows = new Map();
      pane.scrollTop = 0;
      for (let guard = 0; guard < 400; guard++) {
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        for (const li of document.querySelectorAll('[data-testid="preview-messages"] > li')) {
          const shown = li.querySelector(".built-content")?.innerText ?? "";
          rows.set(li.dataset.source + "|" + li.style.top, { source: li.dataset.source, text: shown.trim() });
        }
        if (pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 2) break;
        pane.scrollTop += pane.clientHeight * 0.8;
      }
      pane.scrollTop = 0;
      return [...rows.values()];
    });
  }

  test("a 262-prompt community preset: readable rows, sections, filter, fold, toggle, no blank preview row", async () => {
    const dir = scratchDatabase();
    const file = path.join(path.dirname(dir.path), "Community preset 🎭.json");
    writeFileSync(file, JSON.stringify(preset));
    try {
      if (RELEASE) {
        // A release build reads no dialog answers: the command line imports the file into the
        // app's database, and the page reads its presets again.
        await execFileAsync(CLI, ["import", "--db", dbPath, file]);
        await browser().refresh();
        await byTest("new-preset").then((e) => e.waitForExist({ timeout: 20000 }));
        await browser().execute(() =>
          [...document.querySelectorAll('.preset-list [data-testid^="preset-"]')].find((e) => e.textContent.startsWith("Community preset"))?.click(),
        );
      } else {
        answerDialog(file);
        await (await byTest("import")).click();
        await until(
          async () => ((await byTest("import-summary").then((e) => e.isExisting())) ? (await byTest("import-summary")).getText() : ""),
          (text) => text.startsWith("SillyTavern"),
          "the import report",
        );
        await (await byTest("confirm-import")).click();
      }
      await until(
        () => browser().execute(() => Number(document.querySelector('[data-testid="preview-messages"]')?.dataset.count ?? 0)),
        (n) => n > 100,
        "the big preset's preview",
        30000,
      );
    } finally {
      dir.remove();
    }
    assert.equal(count, 2 + SECTIONS.length * (PER_SECTION + 1));

    // The count of what is on, and every row's summary is what the step says, not a comment.
    const counted = await (await byTest("steps-count")).getText();
    assert.equal(counted, `${enabled} of ${count} on`);
    const rows = await rowsShown();
    assert.equal(rows.filter((r) => r.section).length, SECTIONS.length, "a section row per header prompt");
    const summaries = rows.filter((r) => r.summary !== null).map((r) => r.summary);
    assert.ok(summaries.length >= 250, `${summaries.length} step rows`);
    for (const s of summaries) {
      assert.ok(!s.includes("{{//"), `a summary shows a comment: ${s}`);
      assert.ok(s.replace(/^\/\/\d+/, "").trim().length > 0, "a blank summary");
    }
    const bigRow = rows.find((r) => r.id === huge[0]);
    assert.match(bigRow.summary, /Core rule 3: keep the scene/, "a huge prompt's row shows its first text");
    await shot(browser(), "70-big-preset-en");

    // The emoji of a step's name is drawn in colour (an emoji font is there), not as an empty box.
    await assertEmojiDrawn(browser(), `[data-testid="section-${uuid(0)}"] .section-title strong`, "70-big-preset-en");

    // No row of the preview is blank, the huge prompts with their leading blank lines included.
    const preview = await previewRows();
    assert.ok(preview.length > 100, `${preview.length} preview rows`);
    const blank = preview.filter((r) => r.text === "");
    assert.deepEqual(blank, [], "blank preview rows");
    const hugeRow = preview.find((r) => r.source === `template ${huge[0]}`);
    assert.ok(hugeRow && /^↧\d+\s*Core rule 3/.test(hugeRow.text), `the huge prompt's row: ${hugeRow?.text.slice(0, 60)}`);

    // Filter by text: the steps that say it, in their sections.
    const filter = await byTest("steps-filter");
    await filter.click();
    await filter.addValue("memory pacing");
    const found = await until(rowsShown, (r) => r.length > 0 && r.length < 12, "the filtered list");
    assert.ok(found.filter((r) => !r.section).every((r) => /Memory/.test(r.summary)), JSON.stringify(found));
    await until(async () => (await byTest("steps-count")).getText(), (t) => /^\d+ shown · /.test(t), "the filtered count");
    await shot(browser(), "71-big-preset-filtered");
    await browser().execute(() => {
      const el = document.querySelector('[data-testid="steps-filter"]');
      el.focus();
    });
    await browser().keys(["Control", "a"]);
    await browser().keys(["Control"]);
    await browser().keys(["Backspace"]);
    await until(rowsShown, (r) => r.length > 250, "the whole list again");

    // Fold a section: its steps go, its row stays with its count.
    const style = await browser().$(`[data-testid="section-${uuid(PER_SECTION + 1)}"]`);
    await (await style.$('[data-testid="fold"]')).click();
    const folded = await until(rowsShown, (r) => r.length <= count - PER_SECTION, "the Style section folded");
    assert.ok(!folded.some((r) => r.id === uuid(PER_SECTION + 2)), "a folded step is hidden");
    assert.match(await (await style.$('[data-testid="section-count"]')).getText(), /^14\/25 on$/);

    // Enabled only: every step shown is on.
    await (await byTest("steps-enabled-only")).click();
    const on = await until(rowsShown, (r) => r.length < 200, "enabled steps only");
    assert.ok(on.every((r) => !r.off), "no step that is off is shown");
    await (await byTest("steps-enabled-only")).click();

    // Switch a step on: the preview gains its message.
    await browser().execute((id) => document.querySelector(`[data-step-id="${id}"]`)?.scrollIntoView({ block: "center" }), firstOff);
    await (await browser().$(`[data-step-id="${firstOff}"] .switch input`)).click();
    await until(
      () => browser().execute(() => [...document.querySelectorAll('[data-testid="preview-messages"] > li')].map((li) => li.dataset.source)),
      (s) => s.includes(`template ${firstOff}`),
      "the switched-on step in the preview",
    );
    await until(async () => (await byTest("steps-count")).getText(), (t) => t.endsWith(`${enabled + 1} of ${count} on`), "the count");
    // The folded section in view, with the step switched on above it.
    await browser().execute((id) => document.querySelector(`[data-testid="section-${id}"]`).scrollIntoView({ block: "end" }), uuid(PER_SECTION + 1));
    await shot(browser(), "72-big-preset-folded-toggled");

    // A whole section switched on, then off, as one edit each; two undos put it back.
    const styleCount = async () => (await style.$('[data-testid="section-count"]')).getText();
    const styleSwitch = () => style.$('[data-testid="section-switch"]');
    await (await styleSwitch()).click();
    await until(styleCount, (t) => t === "25/25 on", "the Style section all on");
    await until(async () => (await byTest("steps-count")).getText(), (t) => t === `${enabled + 12} of ${count} on`, "the count with Style on");
    await (await styleSwitch()).click();
    await until(styleCount, (t) => t === "0/25 on", "the Style section all off");
    for (let i = 0; i < 2; i++) await browser().execute(() => document.querySelector('button[aria-label^="Undo"]').click());
    await until(styleCount, (t) => t === "14/25 on", "the Style section as it was");

    // Reorder by keyboard in the long, scrolling list: Core tone 1 one down.
    const order = () => browser().execute(() => [...document.querySelectorAll('[data-testid="steps"] > li')].map((li) => li.dataset.stepId));
    await browser().execute((id) => document.querySelector(`[data-step-id="${id}"]`).scrollIntoView({ block: "center" }), uuid(1));
    const handle = await byTest(`handle-${uuid(1)}`);
    await handle.click();
    for (const key of [" ", "ArrowDown", " "]) {
      await browser().keys([key]);
      await browser().pause(150);
    }
    await until(order, (o) => o.indexOf(uuid(1)) === o.indexOf(uuid(2)) + 1, "Core tone 1 after Core pacing 2");
    // And back by pointer drag.
    await dragTo(browser(), await byTest(`handle-${uuid(1)}`), await browser().$(`[data-step-id="${uuid(2)}"]`));
    await until(order, (o) => o.indexOf(uuid(1)) + 1 === o.indexOf(uuid(2)), "Core tone 1 before Core pacing 2 again");
    // The pointer off the rows, so that no row's description stands over the next screenshots.
    await browser().performActions([
      { type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions: [{ type: "pointerMove", x: 640, y: 20, duration: 0 }] },
    ]);
    await browser().releaseActions();

    // Everything folded: the preset at a glance, a row per section with what is on in it.
    await (await byTest("steps-fold-all")).click();
    const overview = await until(rowsShown, (r) => r.length <= 2 + SECTIONS.length, "every section folded");
    assert.equal(overview.filter((r) => r.section).length, SECTIONS.length);
    await shot(browser(), "72-big-preset-all-folded");
    await (await byTest("steps-fold-all")).click();
    await until(rowsShown, (r) => r.length > 250, "every section unfolded");

    // Chinese: the same rows, the new words translated.
    await (await byTest("language")).selectByAttribute("value", "zh-CN");
    await until(async () => (await byTest("steps-count")).getText(), (t) => t.startsWith("已启用"), "the count in Chinese");
    await (await byTest("steps-filter")).click();
    await shot(browser(), "73-big-preset-zh");
    await (await byTest("theme-toggle")).click();
    await until(() => browser().execute(() => document.documentElement.dataset.theme), (t) => t === "dark", "dark theme");
    await shot(browser(), "73-big-preset-zh-dark");
    await (await byTest("theme-toggle")).click();
    const zhPreview = await previewRows();
    assert.deepEqual(zhPreview.filter((r) => r.text === ""), [], "blank preview rows in Chinese");
    await (await byTest("language")).selectByAttribute("value", "en");
    await until(async () => (await byTest("steps-count")).getText(), (t) => t.endsWith(" on"), "English again");
    await (await style.$('[data-testid="fold"]')).click();
  });

  test("keystroke to painted preview while typing in a step of the 262-prompt preset (measured, not asserted)", async () => {
    // Scroll the long list to its end and back, then type into a step near its middle.
    await browser().execute(() => {
      const list = document.querySelector('[data-testid="steps"]');
      list.scrollTop = list.scrollHeight;
    });
    await browser().pause(200);
    const target = uuid(5 * (PER_SECTION + 1) + 3);
    await browser().execute((id) => document.querySelector(`[data-step-id="${id}"]`)?.scrollIntoView({ block: "center" }), target);
    await (await browser().$(`[data-step-id="${target}"] .step-body`)).click();
    const content = await byTest("editor-content");
    await content.waitForExist({ timeout: 4000 });
    await browser().execute(() => (window.__promptloomPreviewTimes.length = 0));
    await content.click();
    await browser().keys(["Control", "End"]);
    await browser().keys(["Control"]);
    const text = " Keep every answer under three sentences.";
    const pause = Number(process.env.E2E_TYPING_PAUSE_MS ?? 80);
    for (const ch of text) {
      await browser().keys([ch]);
      await browser().pause(pause);
    }
    await browser().pause(800);
    const times = await browser().execute(() => [...window.__promptloomPreviewTimes]);
    assert.ok(times.length > 0, "the preview repainted while typing");
    const stats = (key) => {
      const sorted = times.map((t) => t[key]).sort((a, b) => a - b);
      const pick = (q) => Math.round(10 * sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]) / 10;
      return { p50: pick(0.5), p95: pick(0.95), max: pick(1) };
    };
    const report = { prompts: count, keystrokes: text.length, pauseMs: pause, previews: times.length };
    for (const key of ["total", "queued", "roundTrip", "build", "render"]) report[key] = stats(key);
    writeFileSync(path.join(SHOTS, "big-preset-latency.json"), JSON.stringify(report, null, 2));
    console.log(`    keystroke to painted preview, 262 prompts: ${JSON.stringify(report)}`);
    await shot(browser(), "74-big-preset-typing");
  });

  test("the 262-prompt preset's lorebook and pipeline: sections, filter, fold, a section switched whole", async () => {
    // The lorebook's entries get the same tools: a header entry made by hand starts a section,
    // which folds, switches whole and filters.
    await (await byTest("tab-lorebook")).click();
    for (const name of ["Harbour", "Lighthouse"]) await addEntry(name, name === "Harbour");
    await (await byTest("add-entry-section")).click();
    for (const name of ["Castle", "Town", "Market"]) await addEntry(name, name !== "Town");
    const entryIds = () => browser().execute(() => [...document.querySelectorAll('[data-testid="entries"] > li')].map((li) => li.dataset.entryId));
    await until(entryIds, (ids) => ids.length === 6, "six entries");
    await until(async () => (await byTest("entries-count")).getText(), (t) => t === "3 of 6 on", "the entries' count");
    const places = await byTest("entry-section-section");
    assert.equal(await (await places.$('[data-testid="section-count"]')).getText(), "2/3 on");
    await shot(browser(), "75-lorebook-sections-en");
    await (await places.$('[data-testid="section-switch"]')).click();
    await until(async () => (await places.$('[data-testid="section-count"]')).getText(), (t) => t === "3/3 on", "the section switched on");
    await (await places.$('[data-testid="fold"]')).click();
    await until(entryIds, (ids) => ids.length === 3, "the section folded");
    await (await byTest("entries-filter")).setValue("town");
    await until(entryIds, (ids) => ids.length === 2 && ids.includes("entry-4"), "the filter finds Town in its folded section");
    await shot(browser(), "76-lorebook-filtered-folded-en");
    await (await byTest("entries-filter")).click();
    await browser().keys(["Control", "a"]);
    await browser().keys(["Control"]);
    await browser().keys(["Backspace"]);
    await until(entryIds, (ids) => ids.length === 3, "the filter cleared");
    await (await places.$('[data-testid="fold"]')).click();
    await (await byTest("entries-enabled-only")).click();
    await until(entryIds, (ids) => ids.length === 5 && !ids.includes("entry-2"), "enabled entries only");
    await (await byTest("entries-enabled-only")).click();

    // The pipeline: its processors in sections by what they work on.
    await (await byTest("tab-pipeline")).click();
    const formatters = await byTest("processors-section-formatters");
    await formatters.waitForExist({ timeout: 8000 });
    const pipelineCount = async () => (await byTest("processors-count")).getText();
    const before = await pipelineCount();
    await (await formatters.$('[data-testid="section-switch"]')).click();
    await until(async () => (await formatters.$('[data-testid="section-count"]')).getText(), (t) => /^(\d+)\/\1 on$/.test(t), "every formatter on");
    await (await byTest("processors-section-history")).$('[data-testid="fold"]').then((b) => b.click());
    await until(() => browser().$('[data-testid="processor-session-loader"]').isExisting(), (e) => !e, "the history's processors folded");
    // Every section folded: the pipeline at a glance.
    const overview = async (name) => {
      await (await byTest("processors-fold-all")).click();
      await until(() => browser().$('[data-testid="processor-token-limiter"]').isExisting(), (e) => !e, "every section folded");
      await browser().execute(() => document.querySelector('[data-testid="pipeline-panel"]').scrollIntoView({ block: "start" }));
      await shot(browser(), name);
      await (await byTest("processors-fold-all")).click();
      await byTest("processor-token-limiter").then((e) => e.waitForExist({ timeout: 4000 }));
    };
    await overview("77-pipeline-sections-en");
    await browser().execute(() => document.querySelector('button[aria-label^="Undo"]').click());
    await until(pipelineCount, (t) => t === before, "the formatters as they were");

    // Chinese: the lorebook and the pipeline with their tools, then the recipe.
    await (await byTest("language")).selectByAttribute("value", "zh-CN");
    await until(pipelineCount, (t) => t.startsWith("已启用"), "the pipeline's count in Chinese");
    await overview("77-pipeline-sections-zh");
    await (await byTest("tab-lorebook")).click();
    await until(async () => (await byTest("entries-count")).getText(), (t) => t.startsWith("已启用"), "the entries' count in Chinese");
    await browser().execute(() => document.querySelector('[data-testid="entries-tools"]').scrollIntoView({ block: "start" }));
    await shot(browser(), "75-lorebook-sections-zh");
    await (await byTest("language")).selectByAttribute("value", "en");
    await until(async () => (await byTest("entries-count")).getText(), (t) => t.endsWith(" on"), "English again");
    await (await byTest("tab-recipe")).click();
    await byTest("steps-count").then((e) => e.waitForExist({ timeout: 8000 }));

  });
}

/** The first character of `selector`'s text is drawn with many colours (a colour emoji), not
 * as the two or three of an empty box: read from the X server's picture `shotName`. */
async function assertEmojiDrawn(browser, selector, shotName) {
  const box = await browser.execute((s) => {
    const el = document.querySelector(s);
    if (!el?.firstChild) return null;
    const range = document.createRange();
    range.setStart(el.firstChild, 0);
    range.setEnd(el.firstChild, 2);
    const r = range.getBoundingClientRect();
    // The page's CSS pixels are the screen's (the window fills xvfb-run's screen, scale 1); the
    // window's content starts below any title bar, which Xvfb has none of.
    return { x: Math.round(r.left + window.screenX), y: Math.round(r.top + window.screenY), w: Math.ceil(r.width), h: Math.ceil(r.height) };
  }, selector);
  assert.ok(box && box.w > 4, `the emoji's box: ${JSON.stringify(box)}`);
  const { stdout } = await execFileAsync("convert", [
    path.join(SHOTS, `${shotName}.png`),
    "-crop",
    `${box.w}x${box.h}+${box.x}+${box.y}`,
    "-format",
    "%k",
    "info:",
  ]);
  const colours = Number(stdout.trim());
  assert.ok(colours > 25, `the emoji is drawn in ${colours} colours: an empty box, no emoji font?`);
}
