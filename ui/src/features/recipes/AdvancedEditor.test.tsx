import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { getState, resetForTests, start } from "../../app/store";
import { fakeBackend } from "../../test/fakeBackend";

async function renderAdvanced() {
  const backend = fakeBackend();
  render(<App />);
  await act(async () => {
    await start();
  });
  await screen.findByTestId("step-main");
  fireEvent.click(screen.getByTestId("editor-mode-advanced"));
  await screen.findByTestId("template-library");
  return backend;
}

const steps = () => getState().preset!.contextRecipes.map((r) => r.steps.map((s) => s.messageId));

describe("advanced mode", () => {
  beforeEach(() => resetForTests());

  it("switching modes keeps every bit of the preset", async () => {
    await renderAdvanced();
    const before = structuredClone(getState().preset);
    expect(screen.getByTestId("template-main")).toBeTruthy();
    expect(screen.getByTestId("recipe-tab-all").getAttribute("aria-selected")).toBe("true");
    fireEvent.click(screen.getByTestId("editor-mode-simple"));
    await screen.findByTestId("step-main");
    expect(getState().preset).toEqual(before);
  });

  it("library: create, search, and delete a used template only after saying how many steps go", async () => {
    await renderAdvanced();
    fireEvent.click(screen.getByTestId("new-template"));
    const editor = await screen.findByTestId("template-editor");
    fireEvent.change(within(editor).getByTestId("template-content"), { target: { value: "Think first." } });
    expect(getState().preset!.messageTemplates.at(-1)).toMatchObject({ id: "template", content: "Think first." });

    fireEvent.change(screen.getByTestId("library-search"), { target: { value: "brief" } });
    expect(screen.queryByTestId("template-main")).toBeNull();
    expect(screen.getByTestId("template-style")).toBeTruthy();
    fireEvent.change(screen.getByTestId("library-search"), { target: { value: "" } });

    fireEvent.click(within(screen.getByTestId("template-style")).getByText("Style note"));
    fireEvent.click(screen.getByTestId("delete-template"));
    const dialog = await screen.findByRole("alertdialog");
    expect(dialog.textContent).toContain("used by 1 step");
    fireEvent.click(within(dialog).getByText("Delete and remove 1 step(s)"));
    expect(steps()).toEqual([["main", "chat"]]);
    expect(getState().preset!.messageTemplates.map((t) => t.id)).not.toContain("style");
  });

  it("a template id that is taken is refused with the reason", async () => {
    await renderAdvanced();
    fireEvent.click(within(screen.getByTestId("template-style")).getByText("Style note"));
    const id = screen.getByTestId("template-id-input");
    fireEvent.change(id, { target: { value: "main" } });
    expect(screen.getByRole("alert").textContent).toBe("That id is taken.");
    fireEvent.blur(id);
    expect(getState().preset!.messageTemplates.map((t) => t.id)).toEqual(["main", "chat", "style"]);
    fireEvent.change(screen.getByTestId("template-id-input"), { target: { value: "tone" } });
    fireEvent.blur(screen.getByTestId("template-id-input"));
    expect(steps()).toEqual([["main", "chat", "tone"]]);
  });

  it("recipes: add one with a model filter, see which models it gets, refuse a bad pattern", async () => {
    await renderAdvanced();
    fireEvent.click(screen.getByTestId("add-recipe"));
    await screen.findByTestId("recipe-panel-recipe");
    const filter = within(screen.getByTestId("model-filter")).getByRole("textbox");
    fireEvent.change(filter, { target: { value: "claude-*" } });
    fireEvent.keyDown(filter, { key: "Enter" });
    await waitFor(() => expect(getState().preset!.contextRecipes[1]!.modelFilter).toEqual(["claude-*"]));
    await screen.findByTestId("wins-claude-3-5-sonnet");

    fireEvent.change(filter, { target: { value: "gpt 4" } });
    fireEvent.keyDown(filter, { key: "Enter" });
    expect((await screen.findByRole("alert")).textContent).toContain("contains a space");
    expect(getState().preset!.contextRecipes[1]!.modelFilter).toEqual(["claude-*"]);

    // The catch-all recipe still matches Claude, but this one wins it.
    fireEvent.click(screen.getByTestId("recipe-tab-all"));
    await screen.findByTestId("shadowed-claude-3-5-sonnet");
    expect(await screen.findByTestId("wins-gpt-4o")).toBeTruthy();
  });

  it("a template added from the library becomes a step; a step's strategy is overridden and reset", async () => {
    const { calls } = await renderAdvanced();
    fireEvent.click(screen.getByTestId("add-template-main"));
    expect(steps()).toEqual([["main", "chat", "style", "main"]]);

    fireEvent.click(screen.getByTestId("wtoggle-style"));
    const strategy = screen.getByTestId("override-strategy");
    expect(strategy.dataset.overridden).toBe("false");
    fireEvent.click(within(strategy).getByTestId("step-mode-depth"));
    await waitFor(() => expect(screen.getByTestId("override-strategy").dataset.overridden).toBe("true"));
    const lastPreview = () =>
      (calls.filter((c) => c.cmd === "preview").at(-1)?.args.request as { preset: { contextRecipes: { steps: { injectionStrategy?: unknown }[] }[] } })
        .preset.contextRecipes[0]!.steps[2]!.injectionStrategy;
    await waitFor(() => expect(lastPreview()).toEqual({ depth: 0 }));
    fireEvent.click(screen.getByTestId("reset-strategy"));
    await waitFor(() => expect(lastPreview()).toBeUndefined());

    fireEvent.change(screen.getByTestId("step-content"), { target: { value: "Be very brief." } });
    expect(getState().preset!.contextRecipes[0]!.steps[2]!.overrides).toEqual({ content: "Be very brief." });
    expect(getState().preset!.messageTemplates.find((t) => t.id === "style")!.content).toBe("Be brief.");
    fireEvent.click(screen.getByTestId("reset-content"));
    expect(getState().preset!.contextRecipes[0]!.steps[2]!.overrides).toBeUndefined();
  });
});
