// End-to-end test of honest token counts (RULES 5.8), run by run.mjs in the same app window: a
// local model's family is counted exactly with its own vocabulary, read when it is first
// previewed, and every message says so; a Claude model's counts are estimates, each marked.
import assert from "node:assert/strict";
import { shot, typeModel as typeModelIn, until } from "./harness.mjs";

export function tokenTests(test, current) {
  const browser = () => current().browser;
  const byTest = (id) => browser().$(`[data-testid="${id}"]`);
  const textOf = (id) =>
    browser().execute((s) => document.querySelector(`[data-testid="${s}"]`)?.textContent ?? null, id);
  const messageCounts = () =>
    browser().execute(() => [...document.querySelectorAll('[data-testid="message-tokens"]')].map((e) => e.textContent));

  const typeModel = (text) => typeModelIn(browser(), text);

  test("token counts: a local model's family counts exactly, Claude's are marked estimates", async () => {
    if (!(await (await byTest("model-input")).isExisting())) {
      await (await byTest("new-preset")).click();
    }
    await (await byTest("model-input")).waitForExist({ timeout: 4000 });

    await typeModel("llama3.1:8b");
    // The model is typed key by key: a build for a shorter id on the way may show first.
    const llama = await until(() => textOf("preview-tokenizer"), (t) => t === "llama3 · exact", "the llama3 count", 20000);
    assert.match(llama, /^llama3 · exact$/);
    const exact = await until(messageCounts, (c) => c.length > 0, "the messages");
    assert.ok(exact.every((c) => /^\d+$/.test(c)), `every message exact: ${exact}`);
    await (await browser().$(".totals")).scrollIntoView({ block: "center" });
    await shot(browser(), "54-tokens-llama-exact");

    await typeModel("claude-sonnet-4-5");
    const claude = await until(() => textOf("preview-tokenizer"), (t) => t?.includes("1.11"), "Claude's estimate", 20000);
    assert.match(claude, /^cl100k_base × 1\.11 · estimate$/);
    const estimated = await until(messageCounts, (c) => c.length > 0 && c.every((x) => x.startsWith("~")), "marked estimates");
    assert.ok(estimated.every((c) => /^~\d+$/.test(c)), `every message an estimate: ${estimated}`);
    // The model field's suggestions closed, as a reader sees the counts.
    await browser().execute(() => document.activeElement?.blur());
    await shot(browser(), "55-tokens-claude-estimate");

    await typeModel("gpt-4o");
    await until(() => textOf("preview-tokenizer"), (t) => t === "o200k_base · exact", "gpt-4o again");
  });
}
