// End-to-end tests of the summary and long-term memory (RULES 9.9), run by run.mjs in the same app
// window after the send tests. A double on 127.0.0.1 answers a chat request with a fixed summary
// and `/v1/embeddings` with vectors made from the words of each text (so a text recalls itself
// with score 1); it can be made to hang, for the search's time limit.
import assert from "node:assert/strict";
import http from "node:http";
import { previewSources, shot, until } from "./harness.mjs";

process.env.NO_PROXY = [process.env.NO_PROXY, "127.0.0.1", "localhost"].filter(Boolean).join(",");
process.env.no_proxy = process.env.NO_PROXY;

const SUMMARY = "Ann and Bo met at the mill and sailed to the lighthouse.";
const TOPICS = [
  "the red lighthouse on the cliff",
  "bread and cheese for supper",
  "the old mill by the river",
  "a letter from the captain",
];

/** Each word adds 1 at a place its hash picks: texts that share words point the same way. */
function vector(text) {
  const v = new Array(8).fill(0);
  for (const word of text.split(/\s+/).filter(Boolean)) {
    let h = 7;
    for (const b of Buffer.from(word.toLowerCase())) h = (Math.imul(h, 31) + b) >>> 0;
    v[h % 8] += 1;
  }
  return v;
}

function memoryDouble() {
  const double = { received: [], hang: false, server: null, port: 0 };
  double.server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      double.received.push({ url: req.url, body });
      if (req.url === "/v1/embeddings") {
        if (double.hang) return;
        const input = JSON.parse(body).input;
        const data = input.map((t, index) => ({ index, embedding: vector(t) }));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ data }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: SUMMARY } }],
        }),
      );
    });
  });
  return double;
}

export function memoryTests(test, current) {
  const browser = () => current().browser;
  const $ = (selector) => browser().$(selector);
  const byTest = (id) => $(`[data-testid="${id}"]`);
  const textOf = (id) =>
    browser().execute((s) => document.querySelector(`[data-testid="${s}"]`)?.textContent ?? null, id);
  const invoke = (cmd, args) =>
    browser().executeAsync(
      (c, a, done) => window.__TAURI_INTERNALS__.invoke(c, a).then(done, (e) => done({ error: e })),
      cmd,
      args,
    );
  const double = memoryDouble();

  async function typeInto(id, text) {
    const el = await byTest(id);
    await el.click();
    await browser().keys(["End"]);
    await el.addValue(text);
    await until(() => el.getValue(), (v) => v.endsWith(text), `the text typed into ${id}`);
  }

  /** Empties the next user message (a test before may have left text in it). */
  async function clearInput() {
    const input = await byTest("send-input");
    await input.click();
    await browser().keys(["Control", "a"]);
    await browser().keys(["Control"]);
    await browser().keys(["Backspace"]);
    await until(() => input.getValue(), (v) => v === "", "the message box emptied");
  }

  async function view(id) {
    await browser().execute(
      (s) => document.querySelector(`[data-testid="${s}"]`)?.scrollIntoView({ block: "center" }),
      id,
    );
  }

  test("memory: summarize, edit and restore the summary; index and recall with a score", async () => {
    await new Promise((resolve) => double.server.listen(0, "127.0.0.1", resolve));
    double.port = double.server.address().port;

    // A preset of its own, and a session of ten messages stored as an import would, then opened.
    await (await byTest("editor-mode-simple")).click();
    await (await byTest("new-preset")).click();
    const select = await byTest("session-select");
    const before = await select.getValue();
    await (await byTest("new-session")).click();
    const id = await until(() => select.getValue(), (v) => v && v !== before, "the new session open");
    const stored = await invoke("get_session", { id });
    const messages = Array.from({ length: 10 }, (_, i) => ({
      id: `m${i}`,
      role: i % 2 ? "assistant" : "user",
      content: TOPICS[i % 4],
    }));
    assert.equal((await invoke("save_session", { session: { ...stored, messages } })) ?? null, null);
    await select.selectByAttribute("value", before);
    await until(() => select.getValue(), (v) => v === before, "away");
    await select.selectByAttribute("value", id);
    await until(() => browser().execute(() => document.querySelectorAll('[data-testid^="session-message-"]').length), (n) => n === 10, "the ten messages");

    // The connection, through the dialog (no key: a local server takes none).
    await (await byTest("open-connections")).click();
    await (await byTest("connections-dialog")).waitForExist({ timeout: 4000 });
    await (await byTest("add-connection")).click();
    await typeInto("connection-name", "memo");
    await (await byTest("connection-dialect")).selectByAttribute("value", "openai-compatible");
    await typeInto("connection-url", `http://127.0.0.1:${double.port}/v1`);
    await typeInto("connection-model", "embed-1");
    await (await byTest("connection-save")).click();
    await $('[data-testid="connection-row"][data-name="memo"]').then((r) => r.waitForExist({ timeout: 4000 }));
    await (await byTest("close-connections")).click();

    // The preset's system prompt writes the summary.
    await (await $('[data-step-id="system-prompt"] .step-body')).click();
    await typeInto("editor-content", " Story so far: {{summary}}");

    // Summarize now: the newest four stay, so it covers #0 to #5.
    await view("summary-editor");
    await (await byTest("summarize-connection")).selectByAttribute("value", "memo");
    await (await byTest("summarize-now")).click();
    await until(() => textOf("summary-range"), (t) => t?.startsWith("Covers stored messages #0 to #5"), "the summary's range", 8000);
    assert.equal(await (await byTest("summary-text")).getValue(), SUMMARY);
    const badge = await until(() => textOf("summary-badge"), (t) => t, "the summary's message in the preview", 8000);
    assert.equal(badge, "summary #0–#5");
    await shot(browser(), "60-memory-summary");

    // Edited by hand: kept as a new summary, marked.
    const text = await byTest("summary-text");
    await text.click();
    await browser().keys(["End"]);
    await text.addValue(" They kept the letter.");
    await (await byTest("summary-save")).click();
    await until(() => textOf("summary-range"), (t) => t?.includes("edited by hand"), "the edit marked", 6000);
    await until(() => textOf("summary-badge"), (t) => t === "summary #0–#5 ✎", "the preview marks the edit", 6000);

    // The older one restored.
    await view("older-summaries");
    await browser().execute(() => document.querySelector('[data-testid="older-summaries"] summary').click());
    const restore = await $('[data-testid^="restore-summary-"]');
    await restore.waitForDisplayed({ timeout: 4000 });
    await shot(browser(), "61-memory-summary-edited");
    await restore.click();
    await until(() => (async () => (await byTest("summary-text")).getValue())(), (v) => v === SUMMARY, "the first summary again", 6000);
    await until(() => textOf("summary-badge"), (t) => t === "summary #0–#5", "the preview follows", 6000);

    // Index through the embeddings double; the status says how much, with what.
    await view("memory-index");
    assert.match(await textOf("memory-status"), /Not indexed yet \(10 messages\)/);
    await (await byTest("index-connection")).selectByAttribute("value", "memo");
    await (await byTest("index-now")).click();
    await until(() => textOf("memory-status"), (t) => t === "10 of 10 messages indexed with embed-1 through memo", "the index status", 8000);
    assert.match(await textOf("index-done"), /10 messages embedded with embed-1/);
    const sideways = await browser().execute(() => {
      const pane = document.querySelector(".preview");
      return pane.scrollWidth - pane.clientWidth;
    });
    assert.ok(sideways <= 0, `the preview pane does not scroll sideways (${sideways} px)`);
    await shot(browser(), "62-memory-indexed");

    // With the summary standing for #0 to #5 (the memory processor leaves them out of the
    // history), the next user message recalls the lighthouse, with its stored message and score.
    await (await byTest("tab-pipeline")).click();
    await byTest("setting-memory-omitSummarized").then((e) => e.waitForExist({ timeout: 4000 }));
    await browser().execute(() => document.querySelector('[data-testid="setting-memory-omitSummarized"]').click());
    await until(() => byTest("setting-memory-omitSummarized").then((e) => e.isSelected()), (v) => v, "omitSummarized on");
    await (await byTest("tab-recipe")).click();
    await clearInput();
    await typeInto("send-input", "the red lighthouse on the cliff");
    const sources = await until(
      () => previewSources(browser()),
      (s) => s.some((x) => x.startsWith("memory #0 · score 1.000")),
      "the recalled message in the preview",
      8000,
    );
    assert.ok(!sources.some((x) => /^memory #(6|7|8|9)\b/.test(x)), `the newest four are not recalled: ${sources}`);
    await browser().execute(() =>
      document.querySelector('[data-testid="preview-messages"] > li.src-memory')?.scrollIntoView({ block: "center" }),
    );
    await shot(browser(), "63-memory-recalled");

    // The same in Chinese.
    await (await byTest("language")).selectByAttribute("value", "zh-CN");
    await view("summary-editor");
    await until(() => textOf("summary-range"), (t) => t?.startsWith("涵盖存储的消息 #0 至 #5"), "the editor in Chinese");
    await shot(browser(), "64-memory-zh");
    await browser().execute(() =>
      document.querySelector('[data-testid="preview-messages"] > li.src-memory')?.scrollIntoView({ block: "center" }),
    );
    await until(() => textOf("summary-badge"), (t) => t === "摘要 #0–#5", "the preview in Chinese");
    await shot(browser(), "64-memory-zh-preview");
    await (await byTest("language")).selectByAttribute("value", "en");

    // An endpoint that does not answer: the preview goes on without memory within the limit, and says so.
    double.hang = true;
    await typeInto("send-input", " today");
    const skipped = await until(() => textOf("memory-skipped"), (t) => t, "the search given up on", 6000);
    assert.match(skipped, /built without long-term memory: the memory search took more than 1500 ms/);
    assert.ok(!(await previewSources(browser())).some((x) => x.startsWith("memory")));
    await shot(browser(), "65-memory-skipped");
    // The reason is said in the user's language too.
    await (await byTest("language")).selectByAttribute("value", "zh-CN");
    await until(() => textOf("memory-skipped"), (t) => t?.includes("未使用长期记忆构建：记忆检索超过了 1500 毫秒"), "the reason in Chinese");
    await (await byTest("language")).selectByAttribute("value", "en");
    double.hang = false;
    await clearInput();
    // Back to the session the tests before left open.
    await select.selectByAttribute("value", before);
    await until(() => select.getValue(), (v) => v === before, "back to the first session");
    double.server.close();
    double.server.closeAllConnections?.();
  });
}
