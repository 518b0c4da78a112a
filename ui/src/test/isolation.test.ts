import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { MOCKS } from "../../vite.config";

/** Every test file under `dir`, as a path from ui/. */
function testFiles(dir: string, root: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path, root);
    return /\.test\.tsx?$/.test(e.name) ? [relative(root, path)] : [];
  });
}

describe("test isolation", () => {
  // Files share one module graph (vite.config.ts): a module replaced with vi.mock after another
  // file loaded the real one would stay real, so such a file must run in the isolated project.
  it("runs every file that mocks a module in the isolated project", () => {
    const root = join(__dirname, "..", "..");
    const mocking = testFiles(join(root, "src"), root).filter((f) =>
      /^\s*vi\.mock\(/m.test(readFileSync(join(root, f), "utf8")),
    );
    expect(mocking.sort()).toEqual([...MOCKS].sort());
  });
});
