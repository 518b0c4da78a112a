// End-to-end test of the generation panel, run by run.mjs in the same app window: a temperature
// set in the panel is the preset's, and the provider request body the preview shows carries it;
// a value out of range is refused in the window and never reaches the body; a reset takes it out.
import assert from "node:assert/strict";
import { shot, until } from "./harness.mjs";

export function generationTests(test, current) {
  const browser = () => current().browser;
  const $ = (selector) => browser().$(selector);
  const byTest = (id) => $(`[data-testid="${id}"]`);
  const textOf = (id) =>
    browser().execute((s) => document.querySelector(`[data-testid="${s}"]`)?.textContent ?? null, id);

  /** Empties a number field (select all, delete) and types `text` into it. */
  async function typeNumber(id, text) {
    const el = await byTest(id);
    await el.scrollIntoView({ block: "center" });
    await el.click();
    await browser().keys(["Control", "a"]);
    await browser().keys(["Control"]);
    await browser().keys(["Backspace"]);
    if (text) await browser().keys([...text]);
    await until(() => el.getValue(), (v) => v === text, `the text typed into ${id}`);
  }

  /** Shows the preview's Request view (once) and answers its body as shown. */
  async function requestBody() {
    const tab = await byTest("preview-view-request");
    if ((await tab.getAttribute("aria-selected")) !== "true") await tab.click();
    return textOf("provider-request");
  }

  test("generation panel: a temperature set for the preset is in the provider request body", async () => {
    if (!(await (await byTest("tab-generation")).isExisting())) {
      await (await byTest("new-preset")).click();
    }
    await (await byTest("tab-generation")).waitForExist({ timeout: 4000 });
    await (await byTest("tab-generation")).click();
    await (await byTest("generation-panel")).waitForExist({ timeout: 4000 });
    const intro = await textOf("generation-intro");
    assert.match(intro, /each provider's own names/);

    await typeNumber("generation-temperature", "0.7");
    await until(() => textOf("generation-origin-temperature"), (t) => t === "preset", "the temperature as the preset's");
    await until(requestBody, (b) => b?.includes('"temperature": 0.7'), 'the request body with "temperature": 0.7');

    // Out of range: the window says the range, the preset keeps 0.7, the body too.
    await typeNumber("generation-topP", "1.5");
    const error = await until(() => textOf("generation-error-topP"), (t) => t !== null, "the range of top P");
    assert.equal(error, "Must be between 0 and 1. Not saved.");
    await browser().pause(400);
    const body = await requestBody();
    assert.ok(!body.includes("top_p"), `no top_p in the body: ${body}`);
    assert.ok(body.includes('"temperature": 0.7'), `the temperature is still sent: ${body}`);

    await (await byTest("generation-panel")).scrollIntoView({ block: "start" });
    await browser().pause(200);
    await shot(browser(), "45-generation-settings");

    // Cleared and reset: nothing of it is sent any more.
    await typeNumber("generation-topP", "");
    await (await byTest("generation-reset-temperature")).click();
    await until(() => textOf("generation-origin-temperature"), (t) => t === "provider default", "the temperature reset");
    await until(requestBody, (b) => b !== null && !b.includes('"temperature"'), "the request body without temperature");
    await (await byTest("preview-view-messages")).click();
    await (await byTest("tab-recipe")).click();
  });
}
