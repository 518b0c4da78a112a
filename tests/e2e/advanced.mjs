// End-to-end tests of advanced mode (issue 6), run by run.mjs in the same app window: a
// multi-model preset (a default, a Claude and a GPT recipe) built from a new one by dragging
// templates into recipes, a step's strategy overridden and reset, the Claude and GPT contexts
// compared, the preset exported, and a card imported through the dialog's path.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { answerDialog, dragTo, previewSources, ROOT, scratchDatabase, shot, until } from "./harness.mjs";

export function advancedTests(test, current) {
  const browser = () => current().browser;
  const $ = (selector) => browser().$(selector);
  const byTest = (id) => $(`[data-testid="${id}"]`);
  const workbenchSteps = () =>
    browser().execute(() =>
      [...document.querySelectorAll('[data-testid="workbench-steps"] > li')].map((li) => li.dataset.stepId),
    );
  const recipeBadge = async () => (await byTest("preview-recipe")).getText();

  /** A new template of `type` with the id `id` and, for a message, the content `content`. */
  async function newTemplate(type, id, content) {
    await (await byTest("new-template-type")).selectByAttribute("value", type);
    await (await byTest("new-template")).click();
    const idInput = await byTest("template-id-input");
    await idInput.setValue(id);
    await browser().keys(["Enter"]);
    await until(
      async () => (await byTest(`template-${id}`)).isExisting(),
      (ok) => ok,
      `the template ${id} in the library`,
    );
    if (content) {
      const area = await byTest("template-content");
      await area.setValue(content);
      await until(() => area.getValue(), (v) => v === content, `the content of ${id}`);
    }
    // Close the card's editor: the library stays short.
    await (await $(`[data-testid="template-${id}"] .template-card-body`)).click();
  }

  /** Exports the open preset in `format` through the export dialog and the save dialog. */
  async function exportAs(format, file) {
    await (await byTest("export-preset")).click();
    await (await byTest(`export-format-${format}`)).click();
    answerDialog(file);
    await (await byTest("export-save")).click();
    await until(
      async () => ((await byTest("export-path").then((e) => e.isExisting())) ? (await byTest("export-path")).getText() : ""),
      (text) => text.includes(path.basename(file)),
      `the export to ${file}`,
    );
  }

  async function openRecipe(id) {
    await (await byTest(`recipe-tab-${id}`)).click();
    await byTest(`recipe-panel-${id}`).then((e) => e.waitForExist({ timeout: 4000 }));
  }

  async function dropTemplate(templateId, onto) {
    const handle = await byTest(`drag-template-${templateId}`);
    const target = onto === "end" ? await byTest("steps-drop-end") : await $(`[data-testid="workbench-steps"] [data-step-id="${onto}"]`);
    await dragTo(browser(), handle, target);
  }

  async function setRecipeIdAndFilter(id, pattern) {
    const input = await byTest("recipe-id-input");
    await input.setValue(id);
    await browser().keys(["Enter"]);
    await byTest(`recipe-panel-${id}`).then((e) => e.waitForExist({ timeout: 4000 }));
    const filter = await $('[data-testid="model-filter"] input');
    await filter.setValue(pattern);
    await browser().keys(["Enter"]);
    await until(
      async () => (await $('[data-testid="model-filter"]')).getText(),
      (text) => text.includes(pattern),
      `the pattern ${pattern}`,
    );
    // The models it reaches appear below it; wait, so that nothing moves under a drag.
    await $('[data-testid="filter-matches"] .tag-wins').then((e) => e.waitForExist({ timeout: 4000 }));
  }

  /** Expands step `templateId` of the open recipe and gives it a strategy override. */
  async function overrideStep(templateId, set) {
    await (await byTest(`wtoggle-${templateId}`)).click();
    await byTest("step-overrides").then((e) => e.waitForExist({ timeout: 4000 }));
    await set();
    await until(
      async () => (await byTest("override-strategy")).getAttribute("data-overridden"),
      (v) => v === "true",
      `the override of ${templateId}`,
    );
    await (await byTest(`wtoggle-${templateId}`)).click();
  }

  test("advanced mode: the library and the workbench, switching keeps the preset", async () => {
    // A short session, so that the whole preview is on screen.
    const short = await browser().execute(() =>
      [...document.querySelectorAll('[data-testid="session-select"] option')]
        .map((o) => o.value)
        .find((v) => v && v !== "long-session"),
    );
    await (await byTest("session-select")).selectByAttribute("value", short);
    await (await byTest("new-preset")).click();
    await until(() => previewSources(browser()), (s) => s[0]?.startsWith("template system-prompt"), "the new preset's preview");
    await (await byTest("editor-mode-advanced")).click();
    await byTest("template-library").then((e) => e.waitForExist({ timeout: 4000 }));
    assert.deepEqual(await workbenchSteps(), ["system-prompt", "chat-history"]);
    await shot(browser(), "20-advanced-mode");
  });

  test("build the seed's multi-model preset by dragging templates into recipes", async () => {
    await newTemplate("placeholder", "world_info_anchor");
    await newTemplate("message", "world_info", "The city of Vell floats above a sea of glass.");
    await newTemplate("message", "claude_cot", "<thinking>Think it through first.</thinking>");
    await newTemplate("message", "gpt_cot", "Think step by step.");
    await shot(browser(), "21-library");

    // The default recipe: the anchor between the prompt and the history, by pointer.
    await dropTemplate("world_info_anchor", "chat-history");
    await until(workbenchSteps, (s) => s.join() === "system-prompt,world_info_anchor,chat-history", "the anchor dropped before the history");
    // The world info at the end, by keyboard: Space picks the card up, the arrows walk it over
    // the steps and the drop zone, Space drops it.
    const handle = await byTest("drag-template-world_info");
    await handle.click();
    await browser().keys([" "]);
    await browser().pause(150);
    for (let i = 0; i < 4; i++) {
      await browser().keys(["ArrowDown"]);
      await browser().pause(120);
    }
    await browser().keys([" "]);
    await until(workbenchSteps, (s) => s.join() === "system-prompt,world_info_anchor,chat-history,world_info", "the world info dropped at the end by keyboard");
    await overrideStep("world_info", async () => {
      await (await byTest("step-mode-anchor")).click();
      const picker = await byTest("step-anchor-select");
      await picker.waitForExist({ timeout: 4000 });
      await picker.selectByAttribute("value", "world_info_anchor");
    });
    await until(
      () => previewSources(browser()),
      (s) => s[1] === "template world_info · ⚓ after world_info_anchor",
      "the world info after its anchor in the preview",
    );
    await shot(browser(), "22-default-recipe");

    // The Claude recipe: a copy of the default one, its filter, its chain of thought at depth 0.
    await (await byTest("duplicate-recipe")).click();
    await setRecipeIdAndFilter("claude-recipe", "claude-*");
    await dropTemplate("claude_cot", "end");
    await until(workbenchSteps, (s) => s.at(-1) === "claude_cot", "the Claude chain of thought at the end");
    await overrideStep("claude_cot", async () => (await byTest("step-mode-depth")).click());

    // The GPT recipe, the same way.
    await openRecipe("default");
    await (await byTest("duplicate-recipe")).click();
    await setRecipeIdAndFilter("gpt-recipe", "gpt-*");
    await dropTemplate("gpt_cot", "end");
    await until(workbenchSteps, (s) => s.at(-1) === "gpt_cot", "the GPT chain of thought at the end");
    await overrideStep("gpt_cot", async () => (await byTest("step-mode-depth")).click());
    await until(
      async () => (await $('[data-testid="filter-matches"]')).getText(),
      (text) => text.includes("gpt-4o"),
      "gpt-4o among the models the GPT recipe gets",
    );
    await shot(browser(), "23-gpt-recipe");

    assert.equal(await (await byTest("model-input")).getValue(), "gpt-4o");
    await until(recipeBadge, (t) => t.startsWith("gpt-recipe"), "the GPT recipe chosen for gpt-4o");
    await until(
      () => previewSources(browser()),
      (s) => s.includes("template gpt_cot · depth 0") && !s.some((x) => x.includes("claude_cot")),
      "the GPT chain of thought at depth 0",
    );
  });

  test("override a step's strategy, see the preview change, reset it", async () => {
    await openRecipe("gpt-recipe");
    await overrideStep("system-prompt", async () => {
      await (await byTest("step-mode-depth")).click();
      const depth = await byTest("step-depth-input");
      await depth.setValue("2");
    });
    await until(
      () => previewSources(browser()),
      (s) => s.includes("template system-prompt · depth 2"),
      "the system prompt moved to depth 2",
    );
    await (await byTest("wtoggle-system-prompt")).click();
    await shot(browser(), "24-step-override");
    await (await byTest("reset-strategy")).click();
    await until(
      () => previewSources(browser()),
      (s) => s[0] === "template system-prompt",
      "the system prompt back in first place",
    );
    await (await byTest("wtoggle-system-prompt")).click();
  });

  test("pipeline panel: a processor switched on by the preset changes the preview, and resets", async () => {
    await (await byTest("tab-pipeline")).click();
    await byTest("pipeline-panel").then((e) => e.waitForExist({ timeout: 4000 }));
    const order = await until(
      () =>
        browser().execute(() =>
          [...document.querySelectorAll('[data-testid^="processor-enabled-"]')].map((e) => e.dataset.testid.slice(18)),
        ),
      (ids) => ids.length > 5,
      "the processors in the panel",
    );
    assert.ok(order.indexOf("session-loader") < order.indexOf("token-limiter"), `processors in priority order: ${order}`);
    // For gpt-4o the system prompt and the world info arrive as two system messages; merging
    // them into the head leaves one.
    const merge = await byTest("processor-enabled-merge-system-to-head");
    assert.equal(await merge.isSelected(), false);
    await merge.click();
    await until(
      () => previewSources(browser()),
      (s) => !s.some((x) => x.startsWith("template world_info")),
      "the world info merged into the first system message",
    );
    await (await byTest("processor-merge-system-to-head")).scrollIntoView();
    await browser().pause(200);
    await shot(browser(), "25-pipeline-panel");
    await (await byTest("reset-processor-merge-system-to-head")).click();
    await until(
      () => previewSources(browser()),
      (s) => s.some((x) => x.startsWith("template world_info")),
      "the world info on its own again after the reset",
    );
    // SillyTavern compatibility: the settings it changes start from SillyTavern's values, marked
    // so, and the switch lists what it changes; off again, the native rules.
    const compat = await byTest("compatibility-sillytavern");
    await compat.scrollIntoView({ block: "center" });
    await compat.click();
    await until(
      async () => (await byTest("origin-injection-assembler-depthGrouping")).getText(),
      (t) => t === "SillyTavern",
      "the assembler's depth grouping from SillyTavern",
    );
    assert.match(await (await byTest("compatibility-changes")).getText(), /\(\d+ processors\)/);
    await browser().pause(200);
    await shot(browser(), "46-sillytavern-compatibility");
    await (await byTest("compatibility-sillytavern")).click();
    await until(
      async () => (await byTest("origin-injection-assembler-depthGrouping")).getText(),
      (t) => t !== "SillyTavern",
      "the native rules again",
    );
    await (await byTest("tab-recipe")).click();
  });

  test("compare: Claude and GPT contexts side by side, the differences marked", async () => {
    // Earlier steps leave the preview pane scrolled with the toggle at its top edge, where
    // WebKitWebDriver calls it not interactable (WebdriverIO then retries): bring it in first.
    const toggle = await byTest("compare-toggle");
    await toggle.scrollIntoView({ block: "center" });
    await toggle.click();
    // Against a GPT model, compare offers a Claude one.
    assert.equal(await (await byTest("compare-model-input")).getValue(), "claude-3-5-sonnet");
    await until(
      async () => [await (await byTest("compare-recipe-left")).getText(), await (await byTest("compare-recipe-right")).getText()],
      ([l, r]) => l.includes("gpt-recipe") && r.includes("claude-recipe"),
      "each side's recipe",
    );
    const diffs = await until(
      () =>
        browser().execute(() =>
          [...document.querySelectorAll('[data-testid="compare-rows"] [data-diff]')].map((e) => e.dataset.diff),
        ),
      (d) => d.some((x) => x !== "same"),
      "rows marked as different",
    );
    assert.ok(diffs.includes("same"), `the shared messages are marked the same: ${diffs}`);
    const summary = await (await byTest("compare-summary")).getText();
    assert.match(summary, /gpt-recipe.*claude-recipe/, `the summary names both recipes: ${summary}`);
    // The two columns at the top of the pane, under its tabs.
    await (await byTest("compare")).scrollIntoView({ block: "start" });
    await shot(browser(), "25-compare");
    await (await byTest("compare-toggle")).click();
  });

  test("export the preset: native JSON that reads back, and a SillyTavern preset with its report", async () => {
    const dir = scratchDatabase();
    const native = path.join(path.dirname(dir.path), "multi-model.json");
    const tavern = path.join(path.dirname(dir.path), "multi-model.st.json");
    try {
      // The native save dialog answers with the path (harness.mjs, answerDialog).
      await exportAs("native", native);
      const preset = JSON.parse(readFileSync(native, "utf8"));
      const recipes = Object.fromEntries(preset.contextRecipes.map((r) => [r.id, r]));
      assert.deepEqual(recipes["claude-recipe"].modelFilter, ["claude-*"]);
      assert.deepEqual(recipes["gpt-recipe"].modelFilter, ["gpt-*"]);
      assert.deepEqual(recipes.default.modelFilter, ["*"]);
      assert.deepEqual(
        recipes["claude-recipe"].steps.map((s) => s.messageId),
        ["system-prompt", "world_info_anchor", "chat-history", "world_info", "claude_cot"],
      );
      assert.deepEqual(recipes["gpt-recipe"].steps.at(-1), { messageId: "gpt_cot", enabled: true, injectionStrategy: { depth: 0 } });
      assert.deepEqual(recipes.default.steps.at(-1).injectionStrategy, { anchorTarget: "world_info_anchor", anchorPosition: "after" });
      await until(async () => (await byTest("export-dialog")).isExisting(), (ok) => ok, "the export result");
      await shot(browser(), "26-export-native");
      await (await byTest("export-close")).click();

      await exportAs("sillyTavernPreset", tavern);
      const st = JSON.parse(readFileSync(tavern, "utf8"));
      assert.ok(Array.isArray(st.prompts) && Array.isArray(st.prompt_order));
      const report = await (await byTest("export-dialog")).getText();
      assert.match(report, /recipe/i, `the other recipes are reported as not exported: ${report}`);
      await shot(browser(), "26-export-sillytavern");
      await (await byTest("export-close")).click();
    } finally {
      dir.remove();
    }
  });

  test("import a character card through the dialog's path and preview it", async () => {
    const dir = scratchDatabase();
    const file = path.join(path.dirname(dir.path), "Mara.json");
    writeFileSync(
      file,
      JSON.stringify({
        spec: "chara_card_v2",
        spec_version: "2.0",
        data: {
          name: "Mara",
          description: "A lighthouse keeper on a storm coast.",
          personality: "patient",
          scenario: "A storm night.",
          first_mes: "You made it in before the rain.",
          mes_example: "",
          system_prompt: "",
          post_history_instructions: "",
          tags: [],
          character_book: {
            entries: [{ id: 0, keys: ["lamp"], content: "The lamp has not gone out in forty years.", enabled: true, insertion_order: 100, extensions: { position: 0 } }],
          },
        },
      }),
    );
    try {
      answerDialog(file);
      await (await byTest("import")).click();
      const summary = await until(
        async () => ((await byTest("import-summary").then((e) => e.isExisting())) ? (await byTest("import-summary")).getText() : ""),
        (text) => text.length > 0,
        "the import report of the card",
      );
      assert.match(summary, /card/i);
      await shot(browser(), "27-import-card-report");
      await (await byTest("confirm-import")).click();
      const previewText = () =>
        browser().execute(() => document.querySelector('[data-testid="preview-messages"]')?.textContent ?? "");
      await until(
        previewText,
        (text) => text.includes("A lighthouse keeper on a storm coast."),
        "the card's description in the preview",
      );
      await shot(browser(), "27-import-card");

      // SillyTavern's settings.json: its world info settings go into the open preset's lorebook.
      const settings = path.join(path.dirname(dir.path), "settings.json");
      writeFileSync(
        settings,
        JSON.stringify({
          username: "Ana",
          power_user: {},
          world_info_settings: { world_info_depth: 6, world_info_budget: 30, world_info_include_names: true },
        }),
      );
      answerDialog(settings);
      await (await byTest("import")).click();
      const settingsSummary = await until(
        async () => ((await byTest("import-summary").then((e) => e.isExisting())) ? (await byTest("import-summary")).getText() : ""),
        (text) => text.length > 0,
        "the import report of settings.json",
      );
      assert.match(settingsSummary, /world info settings/);
      assert.match(await (await byTest("import-dialog")).getText(), /Into the preset/);
      await (await byTest("confirm-import")).click();
      const notes = await until(
        async () => ((await byTest("import-notes").then((e) => e.isExisting())) ? (await byTest("import-notes")).getText() : ""),
        (text) => text.length > 0,
        "the note of the settings import",
      );
      assert.match(notes, /takes SillyTavern's world info settings .* and keeps its 1 entry/);
      await shot(browser(), "27-import-world-info-settings");
      await (await byTest("import-ok")).click();

      const fixture = path.join(ROOT, "../shared/fixtures/sillytavern/default_Seraphina.png");
      if (!existsSync(fixture)) {
        console.log("     (the SillyTavern fixtures are not here; the Seraphina card import is skipped)");
        return;
      }
      answerDialog(fixture);
      await (await byTest("import")).click();
      await until(
        async () => ((await byTest("import-summary").then((e) => e.isExisting())) ? (await byTest("import-summary")).getText() : ""),
        (text) => text.length > 0,
        "the import report of the Seraphina card",
      );
      await (await byTest("confirm-import")).click();
      await until(
        previewText,
        (t) => t.includes("Seraphina"),
        "Seraphina's preview",
      );
      await shot(browser(), "27-import-seraphina");
    } finally {
      dir.remove();
    }
  });
}
