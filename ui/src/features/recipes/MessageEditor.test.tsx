// The parts of the step editor and the preview that a keystroke does not render again (issue 39:
// memoised with the same props) still follow what they show: the step selected, an undo, the
// preview's anchors and recipe. And a dialog opened from a pane is on the page's body.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { getState, resetForTests, undo } from "../../app/store";
import { set } from "../../app/state";
import { renderApp } from "../../test/renderApp";

const steps = () => getState().preset!.contextRecipes[0]!.steps;
const select = async (id: string, name: string) => {
  fireEvent.click(within(screen.getByTestId(`step-${id}`)).getByText(name));
  await waitFor(() => expect((screen.getByTestId("editor-name") as HTMLInputElement).value).toBe(name));
};

describe("the fields a keystroke does not render again", () => {
  beforeEach(() => resetForTests());

  it("show and edit the step selected after typing in another, and follow an undo", async () => {
    await renderApp(undefined, "step-main");
    await select("main", "Main prompt");
    fireEvent.change(screen.getByTestId("editor-content"), { target: { value: "You are {{char}}. Be kind." } });
    await select("style", "Style note");
    expect((screen.getByTestId("editor-content") as HTMLTextAreaElement).value).toBe("Be brief.");

    // The injection mode goes to the step shown, not to the one typed in before.
    fireEvent.click(screen.getByTestId("mode-depth"));
    await waitFor(() => expect(steps()[2]!.injectionStrategy?.depth).toBe(0));
    expect(steps()[0]!.injectionStrategy).toBeUndefined();
    expect((screen.getByTestId("mode-depth") as HTMLInputElement).checked).toBe(true);

    // A rename, then its undo: the name field shows each.
    fireEvent.change(screen.getByTestId("editor-name"), { target: { value: "Tone" } });
    await waitFor(() => expect(within(screen.getByTestId("step-style")).getByText("Tone")).toBeTruthy());
    act(() => undo());
    await waitFor(() => expect((screen.getByTestId("editor-name") as HTMLInputElement).value).toBe("Style note"));
    act(() => undo());
    await waitFor(() => expect((screen.getByTestId("mode-list") as HTMLInputElement).checked).toBe(true));
    expect(steps()[2]!.injectionStrategy).toBeUndefined();
  });

  it("switch the step typed in, and the role goes to the step shown", async () => {
    await renderApp(undefined, "step-main");
    await select("main", "Main prompt");
    fireEvent.change(screen.getByTestId("editor-content"), { target: { value: "You are {{char}}, always." } });
    fireEvent.click(within(screen.getByTestId("step-main")).getByRole("checkbox"));
    await waitFor(() => expect(steps()[0]!.enabled).toBe(false));
    expect(screen.getByTestId("step-main").className).toContain("disabled");

    await select("style", "Style note");
    fireEvent.change(screen.getByTestId("editor-role"), { target: { value: "user" } });
    await waitFor(() => expect(getState().preset!.messageTemplates.find((t) => t.id === "style")!.role).toBe("user"));
    expect(getState().preset!.messageTemplates.find((t) => t.id === "main")!.role).toBe("system");
  });

  it("offer the anchors of the newest preview", async () => {
    await renderApp(undefined, "step-main");
    await select("style", "Style note");
    fireEvent.click(screen.getByTestId("mode-anchor"));
    const options = () => [...(screen.getByTestId("anchor-select") as HTMLSelectElement).options].map((o) => o.value);
    await waitFor(() => expect(options()).toEqual(["chat_history", "user_profile"]));
    const preview = getState().preview!;
    act(() => set({ preview: { ...preview, anchors: [...preview.anchors, "lore_after"] } }));
    await waitFor(() => expect(options()).toEqual(["chat_history", "user_profile", "lore_after"]));
  });

  it("show the recipe of the newest preview beside the model", async () => {
    await renderApp(undefined, "step-main");
    await waitFor(() => expect(screen.getByTestId("preview-recipe").textContent).toBe("all"));
    const preview = getState().preview!;
    act(() => set({ preview: { ...preview, result: { ...preview.result, recipe: "fallback" } } }));
    await waitFor(() => expect(screen.getByTestId("preview-recipe").textContent).toBe("fallback"));
  });
});

describe("a dialog opened from a pane", () => {
  beforeEach(() => resetForTests());

  it("is on the page's body, over the window, and still answers", async () => {
    await renderApp(undefined, "step-main");
    fireEvent.click(within(screen.getByRole("complementary")).getByText("Delete"));
    const dialog = await screen.findByRole("alertdialog");
    expect(dialog.parentElement!.className).toBe("dialog-backdrop");
    expect(dialog.parentElement!.parentElement).toBe(document.body);
    fireEvent.click(within(dialog).getByText("Cancel"));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(getState().preset?.id).toBe("helper");
  });
});
