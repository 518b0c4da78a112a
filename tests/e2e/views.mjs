// End-to-end test of the preview's Macros and Lorebook test views (RULES 4.6, 6.6, 9.4), run by
// run.mjs in the same app window right after the lorebook test, on its preset (whose entry's key
// is "zeppelin") and session: a {{setvar}}/{{getvar}} pair in the system prompt traced with the
// variable before and after, one expansion marked in its message; a pasted text tested, one entry
// fired and one not, each with its reason; the tabs switched with the keyboard.
import assert from "node:assert/strict";
import { shot, until } from "./harness.mjs";

const ADDED = " {{setvar::mood::calm}}Mood: {{getvar::mood}}.";

export function viewTests(test, getApp) {
  /** The system prompt before the macros were added. */
  let original = "";
  const browser = () => getApp().browser;
  const $ = (selector) => browser().$(selector);
  const byTest = (id) => $(`[data-testid="${id}"]`);
  const selected = () =>
    browser().execute(() => document.querySelector('[role="tab"][aria-selected="true"][data-testid^="preview-view-"]')?.dataset.testid);
  const focused = () => browser().execute(() => document.activeElement?.dataset.testid ?? null);
  const inChinese = async (name, check) => {
    await (await byTest("language")).selectByAttribute("value", "zh-CN");
    await until(check, (ok) => ok, `${name} in Chinese`);
    await shot(browser(), `${name}-zh`);
    await (await byTest("language")).selectByAttribute("value", "en");
  };

  test("preview views: the Macros view traces a setvar/getvar pair and marks one in its message; keyboard tabs", async () => {
    await (await $('[data-step-id="system-prompt"] .step-body')).click();
    const content = await byTest("editor-content");
    original = await content.getValue();
    await content.click();
    await browser().keys(["Control", "End"]);
    await browser().keys(["Control"]);
    await content.addValue(ADDED);
    await until(() => content.getValue(), (v) => v.endsWith(ADDED.trim()), "the macros typed");

    // The tabs by keyboard: the shown one is in the Tab order, the arrows move and show.
    const messages = await byTest("preview-view-messages");
    await messages.click();
    await browser().keys(["ArrowRight"]);
    await until(selected, (t) => t === "preview-view-changes", "Changes by the right arrow");
    await browser().keys(["ArrowRight"]);
    await browser().keys(["ArrowRight"]);
    await until(selected, (t) => t === "preview-view-macros", "Macros two more to the right");
    assert.equal(await focused(), "preview-view-macros", "the focus moves with the selection");

    const setvar = await $('[data-testid="macro-expansion"][data-name="setvar"]');
    await setvar.waitForExist({ timeout: 8000 });
    assert.equal(await (await setvar.$('[data-testid="macro-variable-before"]')).getText(), "(not set)");
    assert.equal(await (await setvar.$('[data-testid="macro-variable-after"]')).getText(), "calm");
    assert.equal(await (await setvar.$('[data-testid="macro-written"]')).getText(), "{{setvar::mood::calm}}");
    const getvar = await $('[data-testid="macro-expansion"][data-name="getvar"]');
    assert.equal(await (await getvar.$('[data-testid="macro-output"]')).getText(), "calm");
    assert.match(await (await byTest("variables-after")).getText(), /mood = calm/);
    await browser().execute(() => (document.querySelector(".preview").scrollTop = 0));
    await shot(browser(), "60-macros-view");
    await inChinese("60-macros-view", async () => (await (await byTest("preview-view-macros")).getText()) === "宏");

    // Chosen, it is marked in its message in the Messages view.
    await (await getvar.$("button")).click();
    await until(selected, (t) => t === "preview-view-messages", "the Messages view");
    const mark = await byTest("macro-mark");
    await mark.waitForExist({ timeout: 4000 });
    assert.equal(await mark.getText(), "calm");
    assert.match(await browser().execute(() => document.querySelector('[data-testid="macro-mark"]').closest(".built-content").textContent), /Mood: calm\./);
    await shot(browser(), "61-macro-marked");
  });

  test("preview views: the Lorebook test view shows a fired and a not-fired entry with their reasons", async () => {
    // A second entry, whose key the text does not name.
    await (await byTest("tab-lorebook")).click();
    await (await byTest("add-entry")).click();
    const keys = await $('[data-testid="entry-keys"] input');
    await keys.click();
    await keys.addValue("lighthouse");
    await browser().keys(["Enter"]);
    await (await byTest("entry-content")).addValue("The lighthouse keeper.");
    await (await byTest("tab-recipe")).click();

    await (await byTest("preview-view-lorebook")).click();
    await (await byTest("lore-test-text")).addValue("A zeppelin drifts over the harbour.");
    await (await byTest("lore-test-run")).click();
    const fired = await $('[data-testid="lore-verdict"][data-reason="key"]');
    await fired.waitForExist({ timeout: 8000 });
    assert.equal(await (await fired.$('[data-testid="lore-verdict-fired"]')).getText(), "fired");
    assert.match(await (await fired.$('[data-testid="lore-verdict-where"]')).getText(), /key “zeppelin” · in the text/);
    const silent = await $('[data-testid="lore-verdict"][data-reason="noMatch"]');
    assert.equal(await (await silent.$('[data-testid="lore-verdict-fired"]')).getText(), "not fired");
    assert.equal(await (await silent.$('[data-testid="lore-verdict-why"]')).getText(), "none of its keys occurs in the messages read");
    // Pinned, the silent one stays at the top with its whole explanation.
    await (await silent.$('[data-testid="lore-verdict-pin"]')).click();
    await until(
      async () => (await (await byTest("lore-test-pinned")).isExisting()) && (await (await byTest("lore-test-pinned")).getText()),
      (t) => t && t.includes("noMatch"),
      "the pinned entry",
    );
    await (await byTest("lore-test-summary")).scrollIntoView({ block: "start" });
    await shot(browser(), "62-lorebook-test");
    await inChinese("62-lorebook-test", async () =>
      (await (await byTest("lore-test-pinned")).getText()).includes("读取的消息中没有出现它的任何关键词"),
    );

    // Back as it was: the Messages view, the system prompt without the macros.
    await (await byTest("preview-view-messages")).click();
    await (await $('[data-step-id="system-prompt"] .step-body')).click();
    const content = await byTest("editor-content");
    await content.click();
    await browser().keys(["Control", "a"]);
    await browser().keys(["Control"]);
    await content.addValue(original);
    await until(() => content.getValue(), (v) => v === original, "the system prompt as it was");
  });
}
