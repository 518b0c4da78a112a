// End-to-end tests of the About dialog and the first-run tour (issue 23), run by run.mjs: a new
// database's first start shows the tour, which steps through its three panes and is not shown
// again; the About dialog shows the line `promptloom --version` prints and the database the app
// was started on; "Show the tour again" opens the tour from it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { CLI, launch, scratchDatabase, shot, until } from "./harness.mjs";

const execFileAsync = promisify(execFile);

export function aboutTests(test, current, replace, db) {
  const browser = () => current().browser;
  const byTest = (id) => browser().$(`[data-testid="${id}"]`);
  const step = async () => ((await byTest("tour").then((e) => e.isExisting())) ? (await byTest("tour-step")).getAttribute("data-step") : null);
  const outlined = () => browser().execute(() => [...document.querySelectorAll(".tour-target")].map((e) => e.className));
  // The popover covers none of what its step outlines, nor the model field (issue 39).
  const covered = () =>
    browser().execute(() => {
      const tour = document.querySelector('[data-testid="tour"]').getBoundingClientRect();
      const over = (r) => tour.left < r.right && r.left < tour.right && tour.top < r.bottom && r.top < tour.bottom;
      const targets = [...document.querySelectorAll(".tour-target")];
      const model = document.querySelector('[data-testid="model-input"]');
      return [...targets, ...(targets.some((e) => e.classList.contains("preview")) ? [] : [model])]
        .filter((e) => e && over(e.getBoundingClientRect()))
        .map((e) => e.className || e.dataset.testid);
    });
  // A database of its own: the tour shows at its first start only.
  const fresh = scratchDatabase();

  test("the first start shows the tour, which steps through the panes and is not shown again", async () => {
    await current()?.close();
    replace(await launch(fresh.path, undefined, { tour: true }));
    assert.equal(await step(), "1");
    assert.match(await (await byTest("tour")).getText(), /Library and recipe/);
    const first = await outlined();
    assert.ok(first.some((c) => c.includes("sidebar")) && first.some((c) => c.includes("editor-pane")), `${first}`);
    assert.deepEqual(await covered(), [], "what the first step covers");
    await shot(browser(), "60-first-run-tour");

    await (await byTest("tour-next")).click();
    await until(step, (s) => s === "2", "the preview step");
    assert.ok((await outlined()).some((c) => c.includes("preview")));
    assert.deepEqual(await covered(), [], "what the preview step covers");
    await shot(browser(), "60-first-run-tour-preview");
    await (await byTest("tour-back")).click();
    await until(step, (s) => s === "1", "back at the first step");
    // The keys, with the focus on Next.
    await browser().keys(["ArrowRight"]);
    await until(step, (s) => s === "2", "→ to the second step");
    await browser().keys(["Enter"]);
    await until(step, (s) => s === "3", "Enter to the import step");
    assert.match(await (await byTest("tour")).getText(), /Import…/);
    assert.deepEqual(await covered(), [], "what the import step covers");
    await shot(browser(), "60-first-run-tour-import");
    assert.equal(await (await byTest("tour-next")).getText(), "Done");
    await (await byTest("tour-next")).click();
    await until(step, (s) => s === null, "the tour gone when done");

    await current().close();
    replace(await launch(fresh.path, undefined, { tour: true }));
    // The panes are shown; the tour would have been in the same render.
    assert.equal(await step(), null, "no tour at the second start");
  });

  test("the About dialog shows the version promptloom --version prints and the database in use", async () => {
    const { stdout } = await execFileAsync(CLI, ["--version"]);
    await (await byTest("about-button")).click();
    const version = await until(
      async () => ((await byTest("about-version").then((e) => e.isExisting())) ? (await byTest("about-version")).getText() : ""),
      (v) => v.length > 0,
      "the version in the About dialog",
    );
    assert.equal(stdout.trim(), `promptloom ${version}`);
    assert.equal(await (await byTest("about-database-path")).getText(), fresh.path);
    const dirty = await byTest("about-dirty").then((e) => e.isExisting());
    assert.equal(dirty, version.endsWith("-dirty)"), "the dirty note shows with a dirty build only");
    await shot(browser(), "61-about");
  });

  test("Show the tour again opens the tour from the About dialog; Escape skips it", async () => {
    await (await byTest("about-tour")).click();
    await until(step, (s) => s === "1", "the tour again");
    assert.equal(await byTest("about-dialog").then((e) => e.isExisting()), false, "the About dialog closed");
    await browser().keys(["Escape"]);
    await until(step, (s) => s === null, "the tour skipped with Escape");
    // Back to the database of the tests before.
    await current().close();
    fresh.remove();
    replace(await launch(db.path));
  });
}
