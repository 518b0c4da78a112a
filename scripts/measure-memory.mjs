// Measures the app's host process (resident memory, from /proc) at rest and after each
// vocabulary is loaded, by previewing a model of each family in the real window:
//
//   npm run build && cargo build --release -p promptloom-app
//   PROMPTLOOM_APP=target/release/promptloom-app scripts/with-test-keychain \
//     xvfb-run -a -s "-screen 0 1280x800x24" node scripts/measure-memory.mjs
//
// MEASURE_MODELS="gpt-4=cl100k_base,gemma3:27b=gemma3" picks the models previewed after the
// first, in order, each with the vocabulary the preview must name. Linux only. The figures go to
// docs/PERFORMANCE.md; nothing here is asserted.
import { readFileSync, readdirSync } from "node:fs";
import { APP, launch, scratchDatabase, until } from "../tests/e2e/harness.mjs";

function appPid() {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0];
      if (cmd === APP) return pid;
    } catch {
      // A process that ended while we looked.
    }
  }
  throw new Error(`no process runs ${APP}`);
}

function resident(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field) => Number(status.match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
  return { rss: kib("VmRSS"), anon: kib("RssAnon"), file: kib("RssFile") };
}

const db = scratchDatabase();
const { browser, close } = await launch(db.path);
try {
  const byTest = (id) => browser.$(`[data-testid="${id}"]`);
  const tokenizer = async () => (await byTest("preview-tokenizer")).getText();
  const settle = () => new Promise((r) => setTimeout(r, 3000));
  const pid = appPid();
  const rows = [];
  const note = (stage) => {
    const r = resident(pid);
    rows.push({ stage, ...r });
    console.log(`${stage.padEnd(40)} ${(r.rss / 1024).toFixed(1)} MiB resident (anonymous ${(r.anon / 1024).toFixed(1)}, file ${(r.file / 1024).toFixed(1)})`);
  };
  await until(tokenizer, (t) => t.includes("o200k_base"), "the first preview");
  await settle();
  note("at rest, gpt-4o previewed (o200k_base)");
  const models = (process.env.MEASURE_MODELS ?? "gpt-4=cl100k_base,llama3.1:8b=llama3,gemma3:27b=gemma3")
    .split(",")
    .map((pair) => pair.split("="));
  for (const [model, name] of models) {
    const input = await byTest("model-input");
    await input.clearValue();
    await input.setValue(model);
    await until(tokenizer, (t) => t.includes(name), `the preview of ${model}`, 20000);
    await settle();
    note(`+ ${model} previewed (${name})`);
  }
} finally {
  await close();
  db.remove();
}
