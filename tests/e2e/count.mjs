// End-to-end test of "Count exactly", run by run.mjs in the same app window (under
// scripts/with-test-keychain: the key goes to a private Secret Service). A double of Anthropic's
// count_tokens endpoint on 127.0.0.1 records what it receives: nothing until the button is
// clicked; then one request with the key in x-api-key and the Messages body's input fields only,
// and the window shows its count beside our estimate. A second click on the same content is
// answered from the counts kept, without a request.
import assert from "node:assert/strict";
import http from "node:http";
import { shot, until } from "./harness.mjs";

process.env.NO_PROXY = [process.env.NO_PROXY, "127.0.0.1", "localhost"].filter(Boolean).join(",");
process.env.no_proxy = process.env.NO_PROXY;

const KEY = "sk-ant-e2e-count-secret";
const COUNTED = 4321;

function countDouble() {
  const received = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.method !== "POST" || req.url !== "/v1/messages/count_tokens") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"type":"error","error":{"type":"not_found_error","message":"not here"}}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ input_tokens: COUNTED }));
    });
  });
  return { server, received };
}

export function countTests(test, current) {
  const browser = () => current().browser;
  const $ = (selector) => browser().$(selector);
  const byTest = (id) => $(`[data-testid="${id}"]`);
  const textOf = (id) =>
    browser().execute((s) => document.querySelector(`[data-testid="${s}"]`)?.textContent ?? null, id);

  /** Types `text` one key at a time: keys given together are all pressed, then all released, so
   * a letter twice in a row would be typed once. */
  async function typeKeys(text) {
    for (const key of text) await browser().keys(key);
  }

  /** Empties a field (select all, delete) and types `text` into it. */
  async function replaceText(id, text) {
    const el = await byTest(id);
    await el.click();
    await browser().keys(["Control", "a"]);
    await browser().keys(["Control"]);
    await browser().keys(["Backspace"]);
    await typeKeys(text);
    await until(() => el.getValue(), (v) => v === text, `the text typed into ${id}`);
  }

  /** Types `text` over the model field's whole value: typing replaces the selection (an emptied
   * model field is not a model, so it is never emptied first). */
  async function typeModel(text) {
    const el = await byTest("model-input");
    await el.click();
    await browser().keys(["Control", "a"]);
    await browser().keys(["Control"]);
    await typeKeys(text);
    await until(() => el.getValue(), (v) => v === text, `the model ${text}`);
  }

  test("count exactly: asked only on a click, through Anthropic's count_tokens, kept per content", async () => {
    const double = countDouble();
    await new Promise((resolve) => double.server.listen(0, "127.0.0.1", resolve));
    const port = double.server.address().port;
    try {
      if (!(await (await byTest("model-input")).isExisting())) {
        await (await byTest("new-preset")).click();
      }
      const model = await byTest("model-input");
      await model.waitForExist({ timeout: 4000 });
      const modelBefore = await model.getValue();

      await (await byTest("open-connections")).click();
      await (await byTest("connections-dialog")).waitForExist({ timeout: 4000 });
      await (await byTest("add-connection")).click();
      await replaceText("connection-name", "claude-double");
      await (await byTest("connection-dialect")).selectByAttribute("value", "anthropic");
      await replaceText("connection-url", `http://127.0.0.1:${port}`);
      await (await byTest("connection-save")).click();
      const row = await $('[data-testid="connection-row"][data-name="claude-double"]');
      await row.waitForExist({ timeout: 4000 });
      const keyField = await row.$('[data-testid="connection-key-input"]');
      await keyField.click();
      await keyField.addValue(KEY);
      await (await row.$('[data-testid="connection-set-key"]')).click();
      await until(
        async () => (await row.$('[data-testid="connection-key-state"]')).getText(),
        (s) => s === "key set",
        "the key set in the keychain",
      );
      await (await byTest("close-connections")).click();

      // A Claude model: our count is an estimate, so the button is offered.
      await typeModel("claude-sonnet-4-5");
      const button = await byTest("count-exactly");
      await button.waitForExist({ timeout: 8000 });
      const total = await until(() => textOf("token-total"), (t) => /^\d/.test(t ?? ""), "the estimated total");
      const ours = Number(total.split(" ")[0].replaceAll(",", ""));
      await browser().pause(500);
      assert.equal(double.received.length, 0, "nothing is counted before the click");

      await button.click();
      const shown = await until(() => textOf("exact-count"), (t) => t?.includes("exact"), "the provider's count", 8000);
      assert.ok(shown.startsWith(`${COUNTED} tokens, exact (Anthropic count_tokens)`), shown);
      const difference = COUNTED - ours;
      assert.equal(
        await textOf("exact-count-difference"),
        `${difference > 0 ? "+" : "−"}${Math.abs(difference)} against the estimate`,
      );
      assert.equal(double.received.length, 1);
      const [got] = double.received;
      assert.equal(got.url, "/v1/messages/count_tokens");
      assert.equal(got.headers["x-api-key"], KEY);
      assert.equal(got.headers["anthropic-version"], "2023-06-01");
      const body = JSON.parse(got.body);
      assert.equal(body.model, "claude-sonnet-4-5");
      assert.ok(Array.isArray(body.messages) && body.messages.length > 0, got.body);
      for (const field of ["max_tokens", "stream", "temperature", "stop_sequences"]) {
        assert.ok(!(field in body), `no ${field} in the count request: ${got.body}`);
      }
      const page = await browser().execute(() => document.documentElement.outerHTML);
      assert.ok(!page.includes(KEY), "the key is nowhere in the page");
      await (await $(".totals")).scrollIntoView({ block: "center" });
      await shot(browser(), "53-count-exactly");

      // Another build offers the button again; the same content is answered from what was kept.
      await typeModel("claude-sonnet-4-0");
      await typeModel("claude-sonnet-4-5");
      await until(() => byTest("count-exactly").then((b) => b.isExisting()), (e) => e, "the button again");
      await (await byTest("count-exactly")).click();
      const kept = await until(
        () => textOf("exact-count-difference"),
        (t) => t?.includes("kept from an earlier count"),
        "the kept count",
        8000,
      );
      assert.ok(kept.length > 0);
      assert.equal(double.received.length, 1, "no second request for the same content");

      await typeModel(modelBefore);
    } finally {
      double.server.close();
    }
  });
}
