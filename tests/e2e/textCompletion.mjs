// End-to-end test of text completion (RULES 5.12), run by run.mjs in the same app window: ChatML
// chosen in the generation tab, the preview's prompt string with its special tokens marked and
// each message's provenance, and the check against ChatML's own Jinja chat template: identical,
// then a difference (a bos token the template writes and ChatML does not), then an error, while
// the preview goes on.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT, shot, until } from "./harness.mjs";

const CHATML = readFileSync(path.join(ROOT, "crates/engine/tests/data/chat_templates/chatml.jinja"), "utf8");

export function textCompletionTests(test, current) {
  const browser = () => current().browser;
  const $ = (selector) => browser().$(selector);
  const byTest = (id) => $(`[data-testid="${id}"]`);
  const textOf = (selector) => browser().execute((s) => document.querySelector(s)?.textContent ?? null, selector);

  /** Types `text` into the field as a whole (WebDriver's element send keys; a line break is
   * the Enter key, which WebKitWebDriver does not make of "\n"). */
  async function typeAll(id, text) {
    const el = await byTest(id);
    await el.scrollIntoView({ block: "center" });
    await el.setValue(text.replaceAll("\n", "\uE007"));
    await until(() => el.getValue(), (v) => v === text, `the text typed into ${id}`);
  }

  /** Opens the check's panel, clicking its summary again should a click land while the pane
   * was still moving. */
  async function openCheckPanel() {
    const open = () => browser().execute(() => document.querySelector('[data-testid="jinja-check"]')?.open);
    for (let tries = 0; tries < 5 && !(await open()); tries++) {
      const summary = await $('[data-testid="jinja-check"] > summary');
      await summary.scrollIntoView({ block: "center" });
      await summary.click();
      await browser().pause(200);
    }
    assert.ok(await open(), "the check's panel is open");
  }

  async function runCheck() {
    const run = await byTest("jinja-run");
    await run.scrollIntoView({ block: "center" });
    await run.click();
  }

  test("text completion: ChatML chosen, the prompt string marked, checked against ChatML's own chat template", async () => {
    await (await byTest("new-preset")).click();
    await (await byTest("tab-generation")).waitForExist({ timeout: 4000 });
    await (await byTest("tab-generation")).click();
    const choice = await byTest("instruct-choice");
    await choice.waitForExist({ timeout: 4000 });
    await until(
      () => browser().execute(() => document.querySelectorAll('[data-testid="instruct-choice"] option').length),
      (n) => n >= 12,
      "the built-in templates and off",
    );
    assert.equal(await choice.getValue(), "off");
    await choice.scrollIntoView({ block: "center" });
    await choice.selectByAttribute("value", "builtin:chatml");
    await until(() => textOf('[data-testid="instruct-fields"]'), (t) => t?.includes("ChatML (chatml)"), "ChatML's fields");

    // The preview shows the prompt string at once, ChatML's special tokens marked.
    const block = await byTest("prompt-string");
    await block.waitForExist({ timeout: 8000 });
    const marks = await until(
      () =>
        browser().execute(() =>
          [...document.querySelectorAll('[data-testid="prompt-string"] mark.special-token')].map((m) => m.textContent),
        ),
      (m) => m.length >= 4 && m[0] === "<|im_start|>",
      "<|im_start|> marked in the prompt string",
    );
    assert.ok(marks.includes("<|im_end|>"), `<|im_end|> marked too: ${marks}`);
    const prompt = await textOf('[data-testid="prompt-string"]');
    assert.ok(prompt.startsWith("<|im_start|>system\n"), prompt);
    assert.ok(prompt.endsWith("<|im_start|>assistant\n"), prompt);
    // What a selection of the whole block copies is the string itself: the line-break marks
    // are drawn by CSS, not written into the text.
    const selected = await browser().execute(() => {
      const range = document.createRange();
      range.selectNodeContents(document.querySelector('[data-testid="prompt-string"]'));
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      const text = selection.toString();
      selection.removeAllRanges();
      return text;
    });
    assert.equal(selected, prompt);
    assert.equal(await textOf('[data-testid="prompt-stop"]'), "<|im_end|>");
    assert.match(await textOf('[data-testid="prompt-tokens"]'), /^\d+ in the string$/);

    // A history message's part says where it came from, as the message list does.
    const history = await $('[data-testid="prompt-string"] [data-source^="history"]');
    await history.scrollIntoView({ block: "center" });
    await history.moveTo();
    const provenance = await until(
      () => textOf('[data-testid="prompt-provenance"]'),
      (t) => /^Message \d+history#\d+/.test(t ?? ""),
      "the history message's provenance on hover",
    );
    assert.match(provenance, /(user|assistant) · \d+$/);

    await (await byTest("generation-panel")).scrollIntoView({ block: "end" });
    await (await byTest("preview-view-prompt")).scrollIntoView({ block: "start" });
    await shot(browser(), "48-text-completion-prompt-string");

    // Copy puts the exact string on the clipboard: pasted into a text field, it is the prompt.
    await openCheckPanel();
    const copy = await byTest("prompt-copy");
    await copy.scrollIntoView({ block: "center" });
    await copy.click();
    await until(() => copy.getText(), (t) => t === "Copied", "the copy done");
    const field = await byTest("jinja-template");
    await field.scrollIntoView({ block: "center" });
    await field.waitForClickable({ timeout: 4000 });
    await field.click();
    await browser().keys(["Control", "v"]);
    await browser().keys(["Control"]);
    const pasted = await until(() => field.getValue(), (v) => v.length > 0, "the pasted prompt");
    assert.equal(pasted, prompt);

    // ChatML's own chat template gives the same string.
    await typeAll("jinja-template", CHATML);
    await runCheck();
    const identical = await until(
      () => textOf('[data-testid="jinja-result"]'),
      (t) => t?.includes("Identical"),
      "the check: identical",
      15000,
    );
    assert.match(identical, /the same \d+ bytes/);
    await (await byTest("jinja-result")).scrollIntoView({ block: "end" });
    await shot(browser(), "49-text-completion-jinja-identical");

    // A template that writes a bos token ChatML does not: `<s><|im_start|>` against
    // `<|im_start|>`, the same first byte, so they differ at byte 1, and what their side has
    // more is highlighted.
    await typeAll("jinja-template", `{{ bos_token }}${CHATML}`);
    await typeAll("jinja-bos", "<s>");
    await runCheck();
    const differs = await until(
      () => textOf('[data-testid="jinja-result"]'),
      (t) => t?.includes("differ from byte 1 on"),
      "the check: a difference at byte 1",
      15000,
    );
    assert.match(differs, /line 1, column 2/);
    assert.equal(await textOf('[data-testid="jinja-theirs-changed"]'), "s><");
    assert.equal(await textOf('[data-testid="jinja-ours-changed"]'), "");
    await (await byTest("jinja-result")).scrollIntoView({ block: "end" });
    await shot(browser(), "50-text-completion-jinja-difference");

    // One that does not parse: the engine's words; the preview keeps working.
    await typeAll("jinja-template", "{% for message in messages %}{{ message.content }}");
    await runCheck();
    const error = await until(
      () => textOf('[data-testid="jinja-error"]'),
      (t) => t !== null,
      "the check's error",
      15000,
    );
    assert.match(error, /^The check failed: chat template "pasted": line \d+: /);
    assert.equal(await (await byTest("preview-error")).isExisting(), false);
    assert.ok(await (await byTest("prompt-string")).isExisting(), "the prompt string is still shown");
    await (await byTest("jinja-error")).scrollIntoView({ block: "end" });
    await shot(browser(), "51-text-completion-jinja-error");

    // In Chinese and the dark theme: the same view, the same marks.
    await (await byTest("theme-toggle")).click();
    await (await byTest("language")).selectByAttribute("value", "zh-CN");
    await until(() => textOf('[data-testid="preview-view-prompt"]'), (t) => t === "提示字符串", "the view's name in Chinese");
    await (await byTest("preview-view-prompt")).scrollIntoView({ block: "start" });
    await shot(browser(), "52-text-completion-dark-zh");
    await (await byTest("theme-toggle")).click();
    await (await byTest("language")).selectByAttribute("value", "en");

    // Llama 3.1: the server puts the BOS token before the string itself, so the string leaves
    // it out and the view names it beside the string; the template dates its system turn.
    await choice.scrollIntoView({ block: "center" });
    await choice.selectByAttribute("value", "builtin:llama-3.1");
    const bos = await until(
      () => textOf('[data-testid="prompt-server-bos"]'),
      (t) => t?.includes("<|begin_of_text|>"),
      "Llama 3's BOS named beside the string",
    );
    assert.match(bos, /put before the string by the server/);
    const llama = await textOf('[data-testid="prompt-string"]');
    assert.ok(llama.startsWith("<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: "), llama);
    const fields = await textOf('[data-testid="instruct-fields"]');
    assert.ok(fields.includes("added by the server before the string") && fields.includes("%d %b %Y"), fields);
    await (await byTest("instruct-fields")).scrollIntoView({ block: "start" });
    await (await byTest("prompt-server-bos")).scrollIntoView({ block: "center" });
    await shot(browser(), "52b-text-completion-server-bos");

    // The message list is one click away; off puts the chat preview back.
    await (await byTest("preview-view-messages")).click();
    await (await byTest("preview-messages")).waitForExist({ timeout: 4000 });
    await choice.scrollIntoView({ block: "center" });
    await choice.selectByAttribute("value", "off");
    await until(
      async () => (await byTest("preview-view-prompt")).isExisting(),
      (shown) => !shown,
      "the preview without a prompt string",
    );
    await (await byTest("tab-recipe")).click();
  });
}
