// End-to-end tests of hostile files and lost edits (issue 16), run by run.mjs in the same app
// window: a card that inflates to gigabytes imported through the dialog, a save refused while
// another program holds the database, a command-line import into the preset the app has open,
// and an edit made just before the window closes.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { answerDialog, CLI, launch, scratchDatabase, shot, until } from "./harness.mjs";

const execFileAsync = promisify(execFile);
// Names the Chinese UI shows as they are: products, formats, units, the model picked.
const NAMES = new Set(["Token", "SillyTavern", "Anthropic", "Promptloom", "PDF", "API", "ID", "KiB", "MiB", "MB", "gpt-4o"]);

// ---- a PNG card whose card chunk inflates to gigabytes ---------------------------------------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A zlib stream of 1 + 258 * pairs zero bytes: a literal 0, then (length 258, distance 1). */
function zlibZeros(pairs) {
  const out = [0x78, 0x01];
  let acc = 0;
  let n = 0;
  const put = (value, count) => {
    acc |= value << n;
    n += count;
    while (n >= 8) {
      out.push(acc & 0xff);
      acc >>>= 8;
      n -= 8;
    }
  };
  const code = (c, count) => {
    for (let i = count - 1; i >= 0; i--) put((c >> i) & 1, 1);
  };
  put(1, 1); // the last block
  put(1, 2); // fixed Huffman codes
  code(0x30, 8); // literal 0
  for (let i = 0; i < pairs; i++) {
    code(0xc5, 8); // length 258
    code(0, 5); // distance 1
  }
  code(0, 7); // end of block
  if (n > 0) out.push(acc & 0xff);
  const total = (1 + 258 * pairs) % 65521;
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((total << 16) | 1) >>> 0);
  return Buffer.concat([Buffer.from(out), adler]);
}

/** A 1x1 PNG whose `chara` card travels in an iTXt chunk that inflates to about 650 MB. */
function cardBomb() {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
  const itxt = Buffer.concat([Buffer.from("chara\0\x01\0\0\0", "latin1"), zlibZeros(2_500_000)]);
  // One stored deflate block with the row (filter 0, pixel 0x80), then its Adler-32.
  const row = [0, 0x80];
  let a = 1;
  let b = 0;
  for (const x of row) {
    a = (a + x) % 65521;
    b = (b + a) % 65521;
  }
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((b << 16) | a) >>> 0);
  const idat = Buffer.concat([Buffer.from([0x78, 0x01, 0x01, 2, 0, 0xfd, 0xff, ...row]), adler]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("iTXt", itxt),
    chunk("IDAT", idat),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

export function hostileTests(test, current, replace, db) {
  const browser = () => current().browser;
  const $ = (selector) => browser().$(selector);
  const byTest = (id) => $(`[data-testid="${id}"]`);
  const text = async (id) => ((await byTest(id).then((e) => e.isExisting())) ? (await byTest(id)).getText() : "");
  const previewText = () =>
    browser().execute(() => document.querySelector('[data-testid="preview-messages"]')?.textContent ?? "");
  const saveState = () =>
    browser().execute(() => {
      const el = document.querySelector('[data-testid="save-state"]');
      return el ? `${el.className} | ${el.textContent}` : "";
    });

  /** A new preset in simple mode with one message of its own; returns its id. */
  async function freshPreset() {
    const openId = () =>
      browser().execute(
        () => document.querySelector(".preset-list .current .preset-name")?.dataset.testid?.slice("preset-".length) ?? "",
      );
    const before = await openId();
    await (await byTest("editor-mode-simple")).click();
    await (await byTest("new-preset")).click();
    // The message goes into the new preset only once it is the open one.
    const id = await until(openId, (now) => now !== "" && now !== before, "the new preset opened");
    await (await byTest("add-message")).click();
    await byTest("editor-content").then((e) => e.waitForExist({ timeout: 4000 }));
    await until(saveState, (s) => s.includes("save-saved"), "the new preset saved");
    return id;
  }

  async function typeMessage(words) {
    const area = await byTest("editor-content");
    await area.click();
    await browser().keys(["End"]);
    await area.addValue(words);
  }

  /** What the database holds for preset `id`, read by the command line. */
  async function stored(id) {
    const { stdout } = await execFileAsync(CLI, ["export", id, "--db", db.path]);
    return stdout;
  }

  test("a card that inflates to gigabytes: the import dialog shows the error and the window stays up", async () => {
    const dir = scratchDatabase();
    const file = path.join(path.dirname(dir.path), "bomb.png");
    writeFileSync(file, cardBomb());
    try {
      answerDialog(file);
      await (await byTest("import")).click();
      const dialog = await until(
        () => text("import-dialog"),
        (t) => t.includes("does not inflate within 50 MB"),
        "the import dialog's error",
        30000,
      );
      assert.match(dialog, /bomb\.png/, `the dialog names the file: ${dialog}`);
      await shot(browser(), "30-card-bomb-refused");
      const cancel = await browser().execute(() => {
        const buttons = [...document.querySelectorAll('[data-testid="import-dialog"] button')];
        const b = buttons.find((x) => /Cancel|取消|Close|关闭|OK/.test(x.textContent));
        b?.click();
        return !!b;
      });
      assert.ok(cancel, "the dialog can be closed");
      await until(async () => (await byTest("import-dialog")).isExisting(), (open) => !open, "the dialog closed");
      // Still alive: an edit still previews.
      await freshPreset();
      await typeMessage("Still here after the bomb.");
      await until(previewText, (t) => t.includes("Still here after the bomb."), "the preview after the refused card");
    } finally {
      dir.remove();
    }
  });

  test("a save refused while another program holds the database is shown, retried and saved", async () => {
    const id = await freshPreset();
    // Another program takes the database's write lock and keeps it.
    const holder = spawn("sqlite3", [db.path], { stdio: ["pipe", "pipe", "pipe"] });
    let said = "";
    holder.stdout.on("data", (d) => (said += d));
    holder.stderr.on("data", (d) => (said += d));
    try {
      holder.stdin.write("BEGIN EXCLUSIVE;\nSELECT 'locked';\n");
      await until(async () => said, (s) => s.includes("locked"), "the other program's lock", 10000);
      await typeMessage("Written while the database was locked.");
      const failed = await until(saveState, (s) => s.includes("save-failed"), "the failed save shown", 30000);
      assert.ok(!failed.includes("save-saved"), failed);
      await shot(browser(), "31-save-failed-retrying");
      holder.stdin.write("COMMIT;\n.quit\n");
      await until(saveState, (s) => s.includes("save-saved"), "the save retried until it went through", 60000);
      await shot(browser(), "31-save-retried");
      assert.match(await stored(id), /Written while the database was locked\./);
    } finally {
      holder.kill();
    }
  });

  test("a command-line import into the open preset is not undone by the next autosave", async () => {
    const id = await freshPreset();
    const dir = scratchDatabase();
    const file = path.join(path.dirname(dir.path), "world.json");
    writeFileSync(
      file,
      // At depth 1 (SillyTavern's position 4): a new preset's recipe has no world info anchor.
      JSON.stringify({
        entries: {
          0: { uid: 0, key: [], constant: true, content: "Imported by the command line.", order: 100, position: 4, depth: 1 },
        },
      }),
    );
    try {
      const { stdout } = await execFileAsync(CLI, ["import", file, "--db", db.path, "--into", id]);
      assert.match(stdout, /lorebook of preset/);
      // The app still holds the preset as it opened it; its next autosave meets the newer row.
      await typeMessage(" An edit after the import.");
      await until(async () => (await byTest("save-conflict")).isExisting(), (open) => open, "the conflict dialog", 20000);
      await shot(browser(), "32-save-conflict");
      assert.match(await stored(id), /Imported by the command line\./, "the import is still stored");
      await (await byTest("conflict-reload")).click();
      await until(previewText, (t) => t.includes("Imported by the command line."), "the reloaded preset with its lorebook");
      assert.match(await stored(id), /Imported by the command line\./);
    } finally {
      dir.remove();
    }
  });

  test("an edit made just before the window closes is saved on close", async () => {
    const id = await freshPreset();
    await typeMessage("The last words before closing.");
    // Closed at once, within the autosave's quiet time; the close request waits for the save.
    await browser().execute(() => window.__TAURI_INTERNALS__.invoke("plugin:window|close", { label: "main" }));
    await until(
      async () => (await stored(id)).includes("The last words before closing."),
      (ok) => ok,
      "the edit in the database after the window closed",
      15000,
    );
    await current().close();
    replace(await launch(db.path));
    await until(previewText, (t) => t.includes("The last words before closing."), "the edit after the app started again", 15000);
  });

  test("in Chinese, the build's warnings, the pipeline panel and an import report are Chinese", async () => {
    await (await byTest("language")).selectByAttribute("value", "zh-CN");
    const dir = scratchDatabase();
    try {
      await freshPreset();
      await typeMessage("{{nosuchmacro}}");
      const warnings = await until(() => text("warnings"), (t) => t.includes("未知的宏"), "the warning in Chinese");
      assert.doesNotMatch(warnings, /unknown macro/);
      await (await byTest("tab-pipeline")).click();
      const panel = await until(() => text("pipeline-panel"), (t) => t.includes("会话加载器"), "the processors in Chinese");
      assert.doesNotMatch(panel, /Session loader|Reads the session/);
      // Every word the panel shows, the choices of its selects too, is Chinese, but for names
      // (products, units, the model), the processors' ids, and what a user would type: examples
      // in quotes and macros.
      const shown = await browser().execute(() => {
        const panel = document.querySelector('[data-testid="pipeline-panel"]');
        const ids = new Set([...panel.querySelectorAll(".processor-id")].map((e) => e.textContent));
        const options = [...panel.querySelectorAll("option")].map((o) => o.textContent);
        const lines = [...panel.innerText.split("\n"), ...options];
        return lines.filter((line) => !ids.has(line.trim())).join("\n");
      });
      const words = shown.replace(/“[^”]*”|\{\{\w+\}\}/g, "").match(/[A-Za-z][\w-]+/g) ?? [];
      const english = [...new Set(words)].filter((w) => !NAMES.has(w));
      assert.deepEqual(english, [], `English in the Chinese pipeline panel: ${english.join(", ")}`);
      await shot(browser(), "33-zh-pipeline-and-warning");
      await (await byTest("tab-recipe")).click();

      const file = path.join(path.dirname(dir.path), "Tavern.json");
      writeFileSync(
        file,
        JSON.stringify({
          temperature: 0.9,
          // Temperature is mapped; top_a stays unmapped and is reported.
          top_a: 0.2,
          prompts: [{ identifier: "chatHistory", name: "Chat History", system_prompt: true, marker: true }],
          prompt_order: [{ character_id: 100001, order: [{ identifier: "chatHistory", enabled: true }] }],
        }),
      );
      answerDialog(file);
      await (await byTest("import")).click();
      const report = await until(() => text("import-dialog"), (t) => t.includes("未映射（SillyTavern"), "the import report in Chinese");
      assert.doesNotMatch(report, /not mapped \(sampler/);
      assert.match(report, /SillyTavern 聊天补全预设：预设“Tavern”/, "the format and the kind in Chinese");
      await shot(browser(), "34-zh-import-report");
      await browser().execute(() => {
        const buttons = [...document.querySelectorAll('[data-testid="import-dialog"] button')];
        buttons.find((x) => /取消/.test(x.textContent))?.click();
      });
      await until(async () => (await byTest("import-dialog")).isExisting(), (open) => !open, "the dialog closed");
    } finally {
      dir.remove();
      await (await byTest("language")).selectByAttribute("value", "en");
    }
  });
}
