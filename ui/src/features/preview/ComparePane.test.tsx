import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { getState, resetForTests, start } from "../../app/store";
import { fakeBackend } from "../../test/fakeBackend";
import type { Preset } from "../../app/model";
import type { ChangesRequest } from "../../bindings";

/** The sample preset with a recipe of its own for Claude models and the model named in a prompt. */
function withClaudeRecipe(preset: Preset, extraSteps = 0) {
  preset.messageTemplates[0]!.content = "You are {{char}} on {{model}}.";
  preset.messageTemplates.push({ id: "claude-note", role: "system", content: "Think step by step." });
  for (let i = 0; i < extraSteps; i++) {
    preset.messageTemplates.push({ id: `extra-${i}`, role: "system", content: `Rule ${i}.` });
  }
  const extras = Array.from({ length: extraSteps }, (_, i) => ({ messageId: `extra-${i}`, enabled: true }));
  const all = preset.contextRecipes[0]!;
  all.steps.push(...extras);
  preset.contextRecipes.push({
    id: "claude",
    name: "Claude",
    modelFilter: ["claude*"],
    steps: [
      { messageId: "main", enabled: true },
      { messageId: "chat", enabled: true },
      { messageId: "claude-note", enabled: true },
      { messageId: "style", enabled: true },
      ...extras,
    ],
  });
}

async function renderApp(extraSteps = 0) {
  const backend = fakeBackend();
  withClaudeRecipe(backend.presets.get("helper")!, extraSteps);
  render(<App />);
  await act(async () => {
    await start();
  });
  await screen.findByTestId("preview-messages");
  return backend;
}

const diffs = () =>
  [...screen.getByTestId("compare-rows").querySelectorAll<HTMLElement>("[data-diff]")].map((r) => r.dataset.diff);

describe("comparing two models", () => {
  beforeEach(() => resetForTests());

  it("shows both builds side by side with the differing rows, recipes and token totals", async () => {
    const { calls } = await renderApp();
    fireEvent.click(screen.getByTestId("compare-toggle"));
    expect((screen.getByTestId("compare-model-input") as HTMLInputElement).value).toBe("claude-3-5-sonnet");

    const summary = await screen.findByTestId("compare-summary");
    expect(summary.textContent).toBe("3 messages differ; recipe all vs claude; +10 tokens");
    expect(screen.getByTestId("compare-recipe-left").textContent).toBe("all");
    expect(screen.getByTestId("compare-recipe-right").textContent).toBe("claude");
    expect(screen.getByTestId("compare-total-left").textContent).toBe("18 / 100 tokens");
    expect(screen.getByTestId("compare-total-right").textContent).toBe("28 / 100 tokens");
    expect(screen.getByTestId("compare-delta").textContent).toBe("+10");
    expect(diffs()).toEqual(["changed", "same", "right", "same", "right"]);

    const rows = screen.getByTestId("compare-rows").querySelectorAll<HTMLElement>("[data-diff]");
    expect(rows[0]!.textContent).toContain("You are {{char}} on gpt-4o.");
    expect(rows[0]!.textContent).toContain("You are {{char}} on claude-3-5-sonnet.");
    expect(rows[2]!.textContent).toContain("Think step by step.");
    expect(rows[4]!.textContent).toContain("role-alternation");
    // The main preview's list is not shown while comparing.
    expect(screen.queryByTestId("preview-messages")).toBeNull();

    const models = calls.filter((c) => c.cmd === "preview").map((c) => (c.args.request as { model: string }).model);
    expect(models.slice(-2)).toEqual(["gpt-4o", "claude-3-5-sonnet"]);

    // The engine lines them up: the compared model's request against the main model's.
    const asked = calls.filter((c) => c.cmd === "changes").at(-1)!.args.request as ChangesRequest;
    expect(asked.request.model).toBe("claude-3-5-sonnet");
    expect(asked.against).toMatchObject({ kind: "request", request: { model: "gpt-4o" } });
    // Each side of a changed message marks what the other does not have.
    const [left, right] = rows[0]!.querySelectorAll(".compare-cell");
    expect(left!.querySelector("del")?.textContent).toBe("gpt-4o");
    expect(left!.querySelector("ins")).toBeNull();
    expect(right!.querySelector("ins")?.textContent).toBe("claude-3-5-sonnet");
  });

  it("shows the engine's refusal to compare in place of the rows", async () => {
    const backend = await renderApp();
    backend.fail("changes", 5, { code: "engine", message: "the builds could not be compared" });
    fireEvent.click(screen.getByTestId("compare-toggle"));
    const error = await screen.findByTestId("compare-rows-error");
    expect(error.textContent).toBe("The comparison failed: the builds could not be compared");
    expect(screen.getByTestId("compare-recipe-right").textContent).toBe("claude");
  });

  it("follows every edit with both builds", async () => {
    const { calls } = await renderApp();
    fireEvent.click(screen.getByTestId("compare-toggle"));
    await screen.findByTestId("compare-summary");

    // Simple mode edits the recipe of the main model: Claude's keeps the style note.
    fireEvent.click(screen.getByLabelText("Enabled: Style note"));
    await waitFor(() => expect(diffs()).toEqual(["changed", "same", "right", "right", "right"]));
    expect(screen.getByTestId("compare-summary").textContent).toBe("4 messages differ; recipe all vs claude; +15 tokens");
    const last = calls.filter((c) => c.cmd === "preview").slice(-2);
    expect(last.map((c) => (c.args.request as { model: string }).model)).toEqual(["gpt-4o", "claude-3-5-sonnet"]);
    for (const c of last) {
      const preset = (c.args.request as { preset: Preset }).preset;
      expect(preset.contextRecipes.find((r) => r.id === "all")?.steps[2]?.enabled).toBe(false);
    }
  });

  it("compares with another model when its picker changes, and stops when switched off", async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId("compare-toggle"));
    await screen.findByTestId("compare-summary");
    fireEvent.change(screen.getByTestId("compare-model-input"), { target: { value: "gpt-4o-mini" } });
    await waitFor(() =>
      expect(screen.getByTestId("compare-summary").textContent).toBe("1 message differs; same recipe all; ±0 tokens"),
    );
    expect(diffs()).toEqual(["changed", "same", "same"]);

    fireEvent.click(screen.getByTestId("compare-toggle"));
    expect(screen.queryByTestId("compare-rows")).toBeNull();
    expect(screen.queryByTestId("compare-model-input")).toBeNull();
    expect(getState().comparePreview).toBeNull();
    await screen.findByTestId("preview-messages");

    // Switched on again, it compares with the model chosen last.
    fireEvent.click(screen.getByTestId("compare-toggle"));
    expect((screen.getByTestId("compare-model-input") as HTMLInputElement).value).toBe("gpt-4o-mini");
  });

  it("folds a long run of identical messages into one row that can be opened", async () => {
    await renderApp(30);
    fireEvent.click(screen.getByTestId("compare-toggle"));
    await screen.findByTestId("compare-summary");
    // changed main, same chat, right claude-note, same style, 30 same rules, right filler
    const folded = screen.getByTestId("compare-folded");
    expect(folded.textContent).toContain("27 identical messages");
    expect(diffs()).toEqual(["changed", "same", "right", "same", "same", "same", "same", "right"]);
    fireEvent.click(within(folded).getByText("Show 27 more"));
    expect(screen.queryByTestId("compare-folded")).toBeNull();
    expect(diffs()).toHaveLength(35);
  });

  it("shows the compared build's failure in its column and keeps the main one", async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId("compare-toggle"));
    await screen.findByTestId("compare-summary");
    fireEvent.change(screen.getByTestId("compare-model-input"), { target: { value: "broken" } });
    const error = await screen.findByTestId("compare-error-right");
    expect(error.textContent).toBe("The build for broken failed: no model profile for broken");
    expect(screen.getByTestId("compare-recipe-left").textContent).toBe("all");
    expect(screen.queryByTestId("preview-error")).toBeNull();

    fireEvent.change(screen.getByTestId("compare-model-input"), { target: { value: "claude-3-opus" } });
    await waitFor(() => expect(screen.queryByTestId("compare-error-right")).toBeNull());
    expect(screen.getByTestId("compare-recipe-right").textContent).toBe("claude");
  });
});
