// Drives the real Promptloom window: tauri-driver in front of WebKitWebDriver, under Xvfb (the
// caller runs this inside `xvfb-run`). Each test gets a fresh database unless it asks for one.
import { execFile, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { remote } from "webdriverio";

const execFileAsync = promisify(execFile);

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const APP = process.env.PROMPTLOOM_APP ?? path.join(ROOT, "target/debug/promptloom-app");
/** The command-line tool, built alongside the app. */
export const CLI = process.env.PROMPTLOOM_CLI ?? path.join(ROOT, "target/debug/promptloom");
export const SHOTS = path.join(ROOT, "tests/e2e/screenshots");
mkdirSync(SHOTS, { recursive: true });

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

async function waitForPort(port, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.on("connect", () => (socket.destroy(), resolve(true)));
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`tauri-driver did not listen on port ${port} within ${ms} ms`);
}

/**
 * The native file dialogs open from Rust, out of WebDriver's reach. Debug builds read each
 * dialog's answer from the first line of the file named by PROMPTLOOM_TEST_DIALOG instead; the
 * tests write the answer before they click the button that opens the dialog.
 */
export const DIALOG_ANSWERS = path.join(mkdtempSync(path.join(os.tmpdir(), "promptloom-dialog-")), "answers");
writeFileSync(DIALOG_ANSWERS, "");

/** The next native dialog answers `file` (a path), or is cancelled when `file` is null. */
export function answerDialog(file) {
  appendFileSync(DIALOG_ANSWERS, `${file ?? ""}\n`);
}

export function scratchDatabase() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "promptloom-e2e-"));
  return { path: path.join(dir, "promptloom.db"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts the app on `db` and returns the WebDriver session and a `close` that ends both. A new
 * database's first start shows the first-run tour over the panes; it is skipped (which the app
 * stores in `db`) unless `tour` is set, for the tests of the tour.
 */
export async function launch(db, ready = '[data-testid="new-preset"]', { tour = false } = {}) {
  const port = await freePort();
  const driverBin = process.env.TAURI_DRIVER ?? "tauri-driver";
  const driver = spawn(
    driverBin,
    ["--port", String(port), "--native-port", String(await freePort()), "--native-driver", "/usr/bin/WebKitWebDriver"],
    {
      env: { ...process.env, PROMPTLOOM_DB: db, PROMPTLOOM_TEST_DIALOG: DIALOG_ANSWERS },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let driverErr = "";
  driver.stderr.on("data", (d) => (driverErr += d));
  try {
    await waitForPort(port, 15000);
    const browser = await remote({
      hostname: "127.0.0.1",
      port,
      logLevel: "error",
      capabilities: { "tauri:options": { application: APP } },
    });
    await browser.$(ready).waitForExist({ timeout: 20000 });
    // The tour shows in the same render as the panes, or not at all.
    const skip = await browser.$('[data-testid="tour-skip"]');
    if (!tour && (await skip.isExisting())) {
      await skip.click();
      await browser.$('[data-testid="tour"]').waitForExist({ reverse: true, timeout: 5000 });
    }
    return {
      browser,
      async close() {
        await browser.deleteSession().catch(() => {});
        driver.kill();
        await new Promise((r) => setTimeout(r, 300));
      },
    };
  } catch (e) {
    driver.kill();
    throw new Error(`${e.message}\n${driverErr}`);
  }
}

/**
 * Saves what the screen shows: the X server's picture (ImageMagick's `import`), where the window
 * fills xvfb-run's 1280x800 screen. Not WebKitWebDriver's screenshot: it waits for the page's
 * next frame, and with compositing off (the app's choice on a machine without a GPU) a page that
 * has nothing new to paint may never send one, so the screenshot never returns.
 */
export async function shot(browser, name) {
  // Under Xvfb a frame can trail the DOM by a moment: let it catch up.
  await browser.pause(200);
  await execFileAsync("import", ["-window", "root", path.join(SHOTS, `${name}.png`)]);
}

/** The preview's messages, each as "kind detail" (its `data-source`). */
export async function previewSources(browser) {
  return browser.execute(() =>
    [...document.querySelectorAll('[data-testid="preview-messages"] > li')].map((li) => li.dataset.source),
  );
}

/** Replaces the preview's model with `text`, typed key by key as a hand does. */
export async function typeModel(browser, text) {
  const el = await browser.$('[data-testid="model-input"]');
  await el.click();
  await browser.keys(["Control", "a"]);
  await browser.keys(["Control"]);
  for (const key of text) await browser.keys(key);
  await until(() => el.getValue(), (v) => v === text, `the model ${text}`);
}

/** The recipe's steps in the editor, by template id. */
export async function stepIds(browser) {
  return browser.execute(() =>
    [...document.querySelectorAll('[data-testid="steps"] > li')].map((li) => li.dataset.stepId),
  );
}

/** Waits until `read()` satisfies `ok`, returning the last value; fails with `what`. */
export async function until(read, ok, what, ms = 8000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await read();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: still ${JSON.stringify(last)} after ${ms} ms`);
}

/** Drags `from` by the pointer and drops it on the middle of `to`, in small steps, the way a
 * hand does (a drag starts only after the pointer has moved a few pixels). */
export async function dragTo(browser, from, to) {
  // The target may be below the fold of its scrolling pane: bring it into view first, then read
  // both positions in viewport coordinates, which is what pointer actions use.
  await browser.execute((el) => el.scrollIntoView({ block: "center" }), to);
  const rect = (el) =>
    browser.execute((e) => {
      const r = e.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    }, el);
  const a = await rect(from);
  const b = await rect(to);
  const x = Math.round(a.x);
  const y = Math.round(a.y);
  const tx = Math.round(b.x);
  const ty = Math.round(b.y);
  await browser.performActions([
    {
      type: "pointer",
      id: "mouse",
      parameters: { pointerType: "mouse" },
      actions: [
        { type: "pointerMove", x, y, duration: 0 },
        { type: "pointerDown", button: 0 },
        { type: "pointerMove", x: x + 6, y: y + 2, duration: 100 },
        { type: "pointerMove", x: Math.round((x + tx) / 2), y: Math.round((y + ty) / 2), duration: 200 },
        { type: "pointerMove", x: tx, y: ty, duration: 200 },
        { type: "pause", duration: 150 },
        { type: "pointerUp", button: 0 },
      ],
    },
  ]);
  await browser.releaseActions();
  // dnd-kit swallows the click that follows a drop for a few milliseconds; a hand is slower.
  await browser.pause(120);
}
