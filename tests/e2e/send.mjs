// End-to-end tests of sending, run by run.mjs in the same app window (under
// scripts/with-test-keychain: keys go to a private Secret Service). A provider double on
// 127.0.0.1 answers in OpenAI's streaming format and records what it received: a connection
// added and given a key in the dialog, a reply streamed in and stored in the session, the body
// received equal byte for byte to the body the preview's provider request shows, the key in the
// Authorization header; a slow reply stopped (kept, marked incomplete); Regenerate and swipes;
// Continue (the last reply grows, the body sent the one the preview's type switch showed),
// Impersonate (the message box gets the text, the history does not) and a prefill (the stored
// reply starts with it); a server that never answers stopped within a second; a dripping server
// given up on at the connection's own total timeout; an edit of the session while a reply
// arrives kept with it.
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { shot, until } from "./harness.mjs";

// The app's client would go through a proxy the environment names; the double is local.
process.env.NO_PROXY = [process.env.NO_PROXY, "127.0.0.1", "localhost"].filter(Boolean).join(",");
process.env.no_proxy = process.env.NO_PROXY;

const KEY = "sk-e2e-4c1d-secret";

/** The provider double: each POST to /v1/chat/completions recorded, answered with `reply()`. */
function providerDouble() {
  const received = [];
  const double = {
    received,
    /** The reply's parts, and the pause before each. */
    parts: ["Hello", " from", " the", " double", "."],
    delay: 150,
    promptTokens: 42,
    /** "stream" the parts; "hang": never answer; "drip": headers, then a comment every 300 ms. */
    mode: "stream",
    server: null,
    port: 0,
  };
  double.server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"error":{"message":"not here"}}');
        return;
      }
      let closed = false;
      res.on("close", () => (closed = true));
      if (double.mode === "hang") return;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      if (double.mode === "drip") {
        while (!closed) {
          res.write(": still here\n");
          await new Promise((r) => setTimeout(r, 300));
        }
        return;
      }
      const event = (value) => res.write(`data: ${JSON.stringify(value)}\n\n`);
      const { parts, delay } = double;
      for (const content of parts) {
        await new Promise((r) => setTimeout(r, delay));
        if (closed) return;
        event({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
      }
      event({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
      event({ choices: [], usage: { prompt_tokens: double.promptTokens, completion_tokens: parts.length } });
      res.write("data: [DONE]\n\n");
      res.end();
    });
  });
  return double;
}

export function sendTests(test, current) {
  const browser = () => current().browser;
  const $ = (selector) => browser().$(selector);
  const byTest = (id) => $(`[data-testid="${id}"]`);
  const exists = async (id) => (await byTest(id)).isExisting();
  /** An element's text as the DOM holds it (WebDriver's getText trims and folds whitespace). */
  const textOf = (selector) =>
    browser().execute((s) => document.querySelector(s)?.textContent ?? null, selector);
  const byTestText = (id) => textOf(`[data-testid="${id}"]`);
  const double = providerDouble();

  async function typeInto(id, text) {
    const el = await byTest(id);
    await el.click();
    await browser().keys(["End"]);
    await el.addValue(text);
    await until(() => el.getValue(), (v) => v.endsWith(text), `the text typed into ${id}`);
  }

  async function lastReplyAt() {
    return browser().execute(() => {
      const el = document.querySelector('[data-testid="last-reply"] [data-testid^="swipe-position-"]');
      return el ? Number(el.dataset.testid.slice("swipe-position-".length)) : -1;
    });
  }

  test("send: add a connection with a key, stream a reply, the body sent is the body shown", async () => {
    await new Promise((resolve) => double.server.listen(0, "127.0.0.1", resolve));
    double.port = double.server.address().port;

    // A fresh preset and a session of its own.
    await (await byTest("editor-mode-simple")).click();
    await (await byTest("new-preset")).click();
    await (await byTest("new-session")).click();
    await (await byTest("session-editor")).waitForExist({ timeout: 8000 });
    // The session's author's note (SillyTavern's), shown with SillyTavern's defaults.
    const note = await byTest("authors-note");
    await note.scrollIntoView({ block: "center" });
    await browser().pause(200);
    await shot(browser(), "47-session-authors-note");

    await (await byTest("open-connections")).click();
    await (await byTest("connections-dialog")).waitForExist({ timeout: 4000 });
    await (await byTest("add-connection")).click();
    await typeInto("connection-name", "double");
    await (await byTest("connection-dialect")).selectByAttribute("value", "openai-compatible");
    await typeInto("connection-url", `http://127.0.0.1:${double.port}/v1`);
    await typeInto("connection-model", "double-1");
    await (await byTest("connection-save")).click();
    const row = await $('[data-testid="connection-row"][data-name="double"]');
    await row.waitForExist({ timeout: 4000 });
    assert.equal(await (await row.$('[data-testid="connection-key-state"]')).getText(), "no key");

    const keyField = await row.$('[data-testid="connection-key-input"]');
    assert.equal(await keyField.getAttribute("type"), "password");
    await keyField.click();
    await keyField.addValue(KEY);
    await (await row.$('[data-testid="connection-set-key"]')).click();
    await until(
      async () => (await row.$('[data-testid="connection-key-state"]')).getText(),
      (s) => s === "key set",
      "the key set in the keychain",
    );
    assert.equal(await keyField.getValue(), "", "the key field is emptied");
    const page = await browser().execute(() => document.documentElement.outerHTML);
    assert.ok(!page.includes(KEY), "the key is nowhere in the page");
    await shot(browser(), "39-send-connections");
    await (await byTest("close-connections")).click();

    const select = await byTest("connection-select");
    await until(() => select.getValue(), (v) => v === "double", "the connection chosen");
    await typeInto("send-input", "Hello, double");

    // The provider request through the connection: URL, redacted headers, the body.
    await (await byTest("preview-view-request")).click();
    const url = await until(() => byTestText("provider-request-url"), (u) => u?.includes(String(double.port)), "the request's URL");
    assert.equal(url, `POST http://127.0.0.1:${double.port}/v1/chat/completions`);
    const shown = await until(
      () => byTestText("provider-request"),
      (b) => b?.includes("Hello, double") && b.includes('"stream": true'),
      "the body with the typed message",
    );
    const headers = await textOf('[data-testid="provider-request-head"] .request-headers');
    assert.ok(!headers.includes(KEY), `headers redacted: ${headers}`);
    assert.match(headers, /authorization/i);

    // Send and the reply are in the Messages view.
    await (await byTest("preview-view-messages")).click();
    await (await byTest("send")).click();
    const partial = await until(
      () => byTestText("streaming-reply"),
      (t) => t && t.startsWith("Hello") && t !== "Hello from the double.",
      "part of the reply streaming in",
      6000,
    );
    await shot(browser(), "40-send-streaming");
    assert.ok(partial.length > 0);
    await until(() => byTestText("last-reply-text"), (t) => t === "Hello from the double.", "the stored reply", 10000);
    assert.equal(await (await byTest("send-input")).getValue(), "", "the input is emptied");

    assert.equal(double.received.length, 1);
    const [got] = double.received;
    assert.equal(got.body, shown, "the body received is the body the preview showed, byte for byte");
    assert.equal(got.headers.authorization, `Bearer ${KEY}`);
    const info = await byTestText("reply-info");
    assert.match(info, /prompt 42 \(counted \d+\)/, `the calibration: ${info}`);
    assert.match(info, /\d+ ms/);

    // The turn is in the session: the typed message and the reply.
    const contents = await browser().execute(() =>
      [...document.querySelectorAll('[data-testid^="session-message-"] textarea')].map((t) => t.value),
    );
    assert.deepEqual(contents.slice(-2), ["Hello, double", "Hello from the double."]);
    await shot(browser(), "40-send-stored");
  });

  test("send: Stop keeps the reply as far as it came, marked incomplete", async () => {
    double.parts = Array.from({ length: 30 }, (_, i) => ` word${i}`);
    double.delay = 250;
    await typeInto("send-input", "Tell me a long story");
    await (await byTest("send")).click();
    await until(() => byTestText("streaming-reply"), (t) => t?.includes("word2"), "the slow reply arriving", 8000);
    await (await byTest("stop")).click();
    const kept = await until(() => byTestText("last-reply-text"), (t) => t?.startsWith(" word0"), "the stopped reply kept", 8000);
    assert.ok(!kept.includes("word29"), `stopped before the end: ${kept}`);
    assert.ok(await exists("reply-incomplete"), "marked incomplete");
    await shot(browser(), "40-send-stopped");
  });

  test("send: Regenerate replaces the reply and the swipes flip between them", async () => {
    double.parts = ["A second", " answer."];
    double.delay = 50;
    const before = double.received.length;
    const stopped = await byTestText("last-reply-text");
    await (await byTest("regenerate")).click();
    await until(() => byTestText("last-reply-text"), (t) => t === "A second answer.", "the regenerated reply", 8000);
    assert.equal(double.received.length, before + 1);
    // The regenerated request does not carry the reply it replaces.
    assert.ok(!double.received.at(-1).body.includes("word0"), "built without the replaced reply");
    const at = await lastReplyAt();
    assert.ok(at >= 0, "the last reply has swipe controls");
    assert.equal(await byTestText(`swipe-position-${at}`), "2/2");
    assert.ok(!(await byTestText("reply-info")).includes("incomplete"));

    await (await $(`[data-testid="last-reply"] [data-testid="swipe-prev-${at}"]`)).click();
    await until(() => byTestText(`swipe-position-${at}`), (p) => p === "1/2", "flipped to the first reply");
    assert.equal(await byTestText("last-reply-text"), stopped);
    assert.ok(await exists("reply-incomplete"), "the first reply is still the stopped one");
    await browser().execute(() => document.querySelector('[data-testid="last-reply"]').scrollIntoView({ block: "center" }));
    await shot(browser(), "41-send-swipes");
    await (await $(`[data-testid="last-reply"] [data-testid="swipe-next-${at}"]`)).click();
    await until(() => byTestText("last-reply-text"), (t) => t === "A second answer.", "flipped back");
  });

  /** The session as stored, read from the backend. */
  async function storedSession() {
    const id = await browser().execute(() => document.querySelector('[data-testid="session-select"]')?.value ?? null);
    const stored = await browser().executeAsync((sessionId, done) => {
      window.__TAURI_INTERNALS__.invoke("get_session", { id: sessionId }).then(done, (e) => done({ error: String(e) }));
    }, id);
    assert.ok(!stored.error, JSON.stringify(stored));
    return stored;
  }

  const lastPreviewRow = () =>
    browser().execute(() => {
      const li = [...document.querySelectorAll('[data-testid="preview-messages"] > li')].at(-1);
      return li ? { source: li.dataset.source, role: [...li.classList].find((c) => c.startsWith("role-")) } : null;
    });

  test("send: the preview's type switch shows the continuation sent; Continue, Impersonate and a prefill", async () => {
    double.parts = [" And", " more."];
    double.delay = 30;
    const before = await storedSession();
    const reply = before.messages.at(-1);
    const n = before.messages.length;
    await typeInto("send-input", "Not for a continuation");
    await until(lastPreviewRow, (r) => r?.source?.startsWith("input"), "the next reply's preview ending with the input");
    // The preview of a continuation: the reply it continues sent last, without the input.
    await (await byTest("preview-type-continue")).click();
    await until(lastPreviewRow, (r) => r?.source === `history #${n - 1}` && r.role === "role-assistant", "the continuation's preview");
    await (await byTest("preview-view-request")).click();
    const shown = await until(
      () => byTestText("provider-request"),
      (b) => b?.includes(reply.content) && !b.includes("Not for a continuation"),
      "the continuation's body",
    );
    await (await byTest("preview-view-messages")).click();
    assert.equal(await (await byTest("continue")).getAttribute("class"), "primary", "the kind shown is the primary button");
    await (await byTest("continue")).click();
    await until(() => byTestText("last-reply-text"), (t) => t === `${reply.content} And more.`, "the continued reply", 8000);
    assert.equal(double.received.at(-1).body, shown, "the continuation sent is the one the preview showed");
    let stored = await storedSession();
    assert.equal(stored.messages.length, n, "no message added");
    assert.equal(stored.messages.at(-1).content, `${reply.content} And more.`, "the stored reply grew");
    assert.deepEqual(stored.messages.at(-1).swipes, reply.swipes, "its other replies as they were");
    assert.equal(await (await byTest("send-input")).getValue(), "Not for a continuation", "a continuation takes no input");
    await browser().execute(() => document.querySelector('[data-testid="preview-type"]').scrollIntoView({ block: "center" }));
    // The pointer off the fields, whose tooltips would cover the switch.
    await (await $(".type-switch-row > span")).moveTo();
    await shot(browser(), "42-send-continue");
    await (await byTest("language")).selectByAttribute("value", "zh-CN");
    await until(() => byTestText("continue"), (t) => t === "继续", "the buttons in Chinese");
    await shot(browser(), "42-send-continue-zh");
    await (await byTest("language")).selectByAttribute("value", "en");

    // Impersonate: the user's next message goes into the box, not into the session.
    double.parts = ["I", " agree."];
    await (await byTest("impersonate")).click();
    await until(() => byTest("send-input").then((e) => e.getValue()), (v) => v === "I agree.", "the impersonated message in the box", 8000);
    assert.ok(double.received.at(-1).body.includes("[Write the next message of"), "the impersonation prompt was sent");
    stored = await storedSession();
    assert.equal(stored.messages.length, n, "the history is unchanged");
    assert.equal(stored.messages.at(-1).content, `${reply.content} And more.`);
    await (await $(".type-switch-row > span")).moveTo();
    await shot(browser(), "42-send-impersonate");

    // A prefill: sent as the reply's start, stored and shown at its start.
    await (await byTest("preview-type-normal")).click();
    await typeInto("prefill-input", "Indeed, ");
    double.parts = ["yes."];
    await (await byTest("send")).click();
    await until(() => byTestText("last-reply-text"), (t) => t === "Indeed, yes.", "the reply with its prefill", 8000);
    assert.deepEqual(JSON.parse(double.received.at(-1).body).messages.at(-1), { role: "assistant", content: "Indeed, " });
    stored = await storedSession();
    assert.deepEqual(stored.messages.slice(n).map((m) => m.content), ["I agree.", "Indeed, yes."]);
    await browser().execute(() => document.querySelector('[data-testid="last-reply"]').scrollIntoView({ block: "center" }));
    await shot(browser(), "42-send-prefill");
    const prefill = await byTest("prefill-input");
    await prefill.click();
    await browser().keys(["Control", "a"]);
    await browser().keys(["Backspace"]);
    await until(() => prefill.getValue(), (v) => v === "", "the prefill emptied");
  });

  test("send: Stop ends a send whose server never answers within a second", async () => {
    double.mode = "hang";
    await typeInto("send-input", "Are you there?");
    await (await byTest("send")).click();
    await (await byTest("stop")).waitForExist({ timeout: 4000 });
    await browser().pause(500);
    // Measured in the page: from the click on Stop until the send is over (Send is back).
    const took = await browser().executeAsync((done) => {
      const started = performance.now();
      const over = () => !document.querySelector('[data-testid="stop"]') && document.querySelector('[data-testid="send"]');
      new MutationObserver((_, observer) => {
        if (over()) {
          observer.disconnect();
          done(performance.now() - started);
        }
      }).observe(document.body, { childList: true, subtree: true, attributes: true });
      document.querySelector('[data-testid="stop"]').click();
      setTimeout(() => done(-1), 5000);
    });
    assert.ok(took >= 0 && took < 1000, `stopped in ${took} ms`);
    assert.equal(await exists("send-error"), false, "a stop is not an error");
    // Nothing came, so nothing was kept: the input is still there to send again.
    assert.equal(await (await byTest("send-input")).getValue(), "Are you there?");
    double.mode = "stream";
  });

  /** Opens the connection "double" in the dialog's form, runs `edit`, saves and closes. */
  async function editConnection(edit) {
    await (await byTest("open-connections")).click();
    const row = await $('[data-testid="connection-row"][data-name="double"]');
    await row.waitForExist({ timeout: 4000 });
    await (await row.$('[data-testid="connection-edit"]')).click();
    await (await byTest("connection-form")).waitForExist({ timeout: 4000 });
    await edit();
    await (await byTest("connection-save")).click();
    await (await byTest("connection-form")).waitForExist({ reverse: true, timeout: 4000 });
    await (await byTest("close-connections")).click();
  }

  async function setTotalTimeout(value) {
    await editConnection(async () => {
      const summary = await $(".connection-timeouts summary");
      if (!(await (await $(".connection-timeouts")).getAttribute("open"))) await summary.click();
      const field = await byTest("connection-totalSecs");
      // Emptied as a person would (clearValue goes around React's onChange).
      await field.click();
      await browser().keys(["Control", "a"]);
      await browser().keys(["Backspace"]);
      if (value) await field.addValue(value);
      await until(() => field.getValue(), (v) => v === value, "the total timeout typed");
      if (value) await shot(browser(), "39-send-connection-timeouts");
    });
  }

  test("send: a dripping server is given up on at the connection's own total timeout", async () => {
    await setTotalTimeout("2");
    double.mode = "drip";
    const started = Date.now();
    await (await byTest("send")).click();
    const error = await until(() => byTestText("send-error"), (t) => t, "the timeout said", 8000);
    const took = Date.now() - started;
    assert.match(error, /2 s to send and answer in all/);
    assert.ok(took < 6000, `given up on after ${took} ms`);
    await browser().execute(() => document.querySelector('[data-testid="send-error"]').scrollIntoView({ block: "center" }));
    await shot(browser(), "40-send-total-timeout");
    double.mode = "stream";
    await setTotalTimeout("");
    const kept = await browser().executeAsync((done) => {
      window.__TAURI_INTERNALS__.invoke("list_connections").then(done, (e) => done({ error: String(e) }));
    });
    assert.deepEqual(kept.find((c) => c.connection.name === "double")?.connection.timeouts?.totalSecs ?? null, null);
  });

  test("send: an edit of the session while the reply arrives is kept with the reply", async () => {
    double.parts = Array.from({ length: 12 }, (_, i) => ` part${i}`);
    double.delay = 200;
    const first = '[data-testid="session-message-0"] textarea';
    const before = await browser().execute((s) => document.querySelector(s)?.value ?? null, first);
    assert.ok(before !== null, "the session editor shows the first message");
    await (await byTest("send")).click();
    await until(() => byTestText("streaming-reply"), (t) => t?.includes("part1"), "the reply arriving", 8000);
    const area = await $(first);
    await area.click();
    await browser().keys(["End"]);
    await area.addValue(" (edited)");
    await until(() => byTestText("last-reply-text"), (t) => t?.endsWith("part11"), "the reply stored", 10000);
    // In the window and in the database: the edit and the reply.
    const id = await browser().execute(() => document.querySelector('[data-testid="session-select"]')?.value ?? null);
    const stored = await browser().executeAsync((sessionId, done) => {
      window.__TAURI_INTERNALS__.invoke("get_session", { id: sessionId }).then(done, (e) => done({ error: String(e) }));
    }, id);
    assert.ok(!stored.error, JSON.stringify(stored));
    assert.equal(stored.messages[0].content, `${before} (edited)`);
    assert.ok(stored.messages.at(-1).content.endsWith("part11"), "the reply is stored");
    assert.equal(await browser().execute((s) => document.querySelector(s)?.value, first), `${before} (edited)`);
    await shot(browser(), "40-send-edit-during-reply");
  });

  test("send: a reply whose session is deleted while it arrives is kept in a file beside the database", async () => {
    const select = await byTest("session-select");
    const kept = await select.getValue();
    await (await byTest("new-session")).click();
    const doomed = await until(() => select.getValue(), (v) => v && v !== kept, "the new session open");
    double.parts = Array.from({ length: 8 }, (_, i) => ` gone${i}`);
    double.delay = 200;
    await typeInto("send-input", "Remember this");
    await (await byTest("send")).click();
    await until(() => byTestText("streaming-reply"), (t) => t?.includes("gone1"), "the reply arriving", 8000);
    // Another window (or program) deletes the session meanwhile.
    const deleted = await browser().executeAsync((id, done) => {
      window.__TAURI_INTERNALS__.invoke("delete_session", { id }).then(() => done("ok"), (e) => done(String(e)));
    }, doomed);
    assert.equal(deleted, "ok");
    const error = await until(() => byTestText("send-error"), (t) => t, "the failure said", 8000);
    const file = /the reply is kept in (.+\.txt)\)/.exec(error)?.[1];
    assert.ok(file, `the error names the file: ${error}`);
    assert.equal(readFileSync(file, "utf8"), Array.from({ length: 8 }, (_, i) => ` gone${i}`).join(""));
    assert.ok(error.startsWith("Received but not stored: "), error);
    assert.ok(error.includes(`session "${doomed}"`), error);
    await browser().execute(() => document.querySelector('[data-testid="send-error"]').scrollIntoView({ block: "center" }));
    await shot(browser(), "40-send-reply-kept");
    rmSync(file);
    await select.selectByAttribute("value", kept);
    await until(() => select.getValue(), (v) => v === kept, "back to the first session");
    double.server.close();
  });
}
