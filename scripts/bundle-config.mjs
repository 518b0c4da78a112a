// Prints what the bundler's config adds to tauri.conf.json for a package build, as JSON for the
// tauri CLI's --config: the built UI and the third-party licences file (written by
// scripts/third-party-licenses), both as absolute paths, since the CLI runs from src-tauri/ and
// would read relative ones from there (docs/RELEASING.md).
//
//   node scripts/bundle-config.mjs LICENCES_FILE
import path from "node:path";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const licences = process.argv[2];
if (!licences || !existsSync(licences)) {
  console.error(`bundle-config: no licences file ${licences ?? ""} (run scripts/third-party-licenses FILE first)`);
  process.exit(2);
}
const config = {
  build: { frontendDist: path.join(root, "ui", "dist") },
  bundle: { resources: { [path.resolve(licences)]: "licenses/THIRD-PARTY-LICENSES.md" } },
};
console.log(JSON.stringify(config));
