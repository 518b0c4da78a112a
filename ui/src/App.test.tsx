import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "./App";
import { getState, resetForTests, start } from "./app/store";
import { fakeBackend, type Call } from "./test/fakeBackend";
import type { Preset } from "./app/model";

function lastPreviewPreset(calls: Call[]): Preset {
  const previews = calls.filter((c) => c.cmd === "preview");
  return (previews.at(-1)?.args.request as { preset: Preset }).preset;
}

async function renderApp(setup?: (backend: ReturnType<typeof fakeBackend>) => void) {
  const backend = fakeBackend();
  setup?.(backend);
  render(<App />);
  await act(async () => {
    await start();
  });
  await screen.findByTestId("step-main");
  return backend;
}

describe("the app", () => {
  beforeEach(() => resetForTests());

  it("shows the recipe, the slots apart from messages, and the preview with its provenance", async () => {
    await renderApp();
    expect(screen.getByTestId("step-chat").className).toContain("slot");
    expect(screen.getByTestId("step-main").className).toContain("message");
    await screen.findByTestId("preview-messages");
    expect(screen.getByTestId("token-total").textContent).toBe("18 / 100 tokens");
    expect(screen.getByTestId("dropped").textContent).toContain("over the budget");
    expect(screen.getByTestId("preview-recipe").textContent).toContain("all");
  });

  it("a depth set in the editor reaches the preview, tags the step and can be undone", async () => {
    const { calls } = await renderApp();
    fireEvent.click(within(screen.getByTestId("step-style")).getByText("Style note"));
    fireEvent.click(await screen.findByTestId("mode-depth"));
    await waitFor(() =>
      expect(lastPreviewPreset(calls).contextRecipes[0]?.steps[2]?.injectionStrategy).toEqual({ depth: 0 }),
    );
    const row = screen.getByTestId("step-style");
    expect(row.className).toContain("moves-depth");
    expect(row.getAttribute("title")).toContain("0 messages before its end");
    expect(within(row).getByText("Depth: 0")).toBeTruthy();

    fireEvent.change(screen.getByTestId("depth-input"), { target: { value: "4" } });
    await waitFor(() => expect(within(row).getByText("Depth: 4")).toBeTruthy());

    fireEvent.keyDown(window, { key: "z", ctrlKey: true });
    await waitFor(() => expect(within(row).getByText("Depth: 0")).toBeTruthy());
    fireEvent.keyDown(window, { key: "z", ctrlKey: true });
    await waitFor(() => expect(row.className).not.toContain("moves-depth"));
    fireEvent.keyDown(window, { key: "z", ctrlKey: true, shiftKey: true });
    await waitFor(() => expect(row.className).toContain("moves-depth"));
  });

  it("autosaves an edit of the content", async () => {
    const { presets } = await renderApp();
    fireEvent.click(within(screen.getByTestId("step-main")).getByText("Main prompt"));
    fireEvent.change(await screen.findByTestId("editor-content"), { target: { value: "You are {{char}}, kind." } });
    await waitFor(() => expect(presets.get("helper")?.messageTemplates[0]?.content).toBe("You are {{char}}, kind."), {
      timeout: 2000,
    });
    expect(getState().save.state).toBe("saved");
    expect(screen.getByTestId("save-state").textContent).toBe("Saved");
  });

  it("a disabled step leaves the preview", async () => {
    const { calls } = await renderApp();
    fireEvent.click(screen.getByLabelText("Enabled: Style note"));
    await waitFor(() => expect(lastPreviewPreset(calls).contextRecipes[0]?.steps[2]?.enabled).toBe(false));
    expect(screen.getByTestId("step-style").className).toContain("disabled");
  });

  it("asks before deleting a preset", async () => {
    const { calls } = await renderApp();
    fireEvent.click(screen.getByText("Delete"));
    expect(screen.getByRole("alertdialog").textContent).toContain("Helper");
    fireEvent.click(within(screen.getByRole("alertdialog")).getByText("Cancel"));
    expect(calls.some((c) => c.cmd === "delete_preset")).toBe(false);
    fireEvent.click(screen.getByText("Delete"));
    fireEvent.click(within(screen.getByRole("alertdialog")).getByText("Delete"));
    await waitFor(() => expect(calls.some((c) => c.cmd === "delete_preset")).toBe(true));
  });

  it("switches to Chinese and to the dark theme", async () => {
    await renderApp();
    fireEvent.change(screen.getByTestId("language"), { target: { value: "zh-CN" } });
    expect(screen.getByTestId("add-message").textContent).toContain("添加消息");
    // What the engine said comes as codes, and is said in Chinese too.
    expect(screen.getByTestId("dropped").textContent).toContain("超出 100 个 token 的预算（从最早的聊天记录开始丢弃）");
    fireEvent.click(screen.getByTestId("theme-toggle"));
    await waitFor(() => expect(document.documentElement.dataset.theme).toBe("dark"));
  });

  it("edits the session and rebuilds the preview from the saved one", async () => {
    const { sessions, calls } = await renderApp();
    fireEvent.click(screen.getByTestId("edit-session"));
    fireEvent.click(screen.getByTestId("add-session-message"));
    await waitFor(() => expect(sessions.get("chat-1")?.messages).toHaveLength(3));
    expect(sessions.get("chat-1")?.messages[2]?.role).toBe("user");
    const saveAt = calls.findIndex((c) => c.cmd === "save_session");
    await waitFor(() => expect(calls.slice(saveAt).some((c) => c.cmd === "preview")).toBe(true));
  });
});

describe("the lorebook editor", () => {
  beforeEach(() => resetForTests());

  it("adds an entry with a key and shows what fires for the session", async () => {
    const { calls } = await renderApp();
    fireEvent.click(screen.getByTestId("tab-lorebook"));
    fireEvent.click(screen.getByTestId("add-entry"));
    const keys = within(await screen.findByTestId("entry-keys")).getByRole("textbox");
    fireEvent.change(keys, { target: { value: "hello" } });
    fireEvent.keyDown(keys, { key: "Enter" });
    fireEvent.change(screen.getByTestId("entry-content"), { target: { value: "Greetings matter here." } });
    await waitFor(() =>
      expect(lastPreviewPreset(calls).lorebook?.entries?.[0]).toMatchObject({
        keys: ["hello"],
        content: "Greetings matter here.",
        enabled: true,
      }),
    );
    const panel = (await screen.findAllByTestId("what-fires"))[0]!;
    await waitFor(() => expect(panel.textContent).toContain("matched “hello” in message #0"));
    expect(screen.getByText("fires")).toBeTruthy();

    // A key no message mentions: nothing fires.
    fireEvent.click(within(screen.getByTestId("entry-keys")).getByLabelText("Keys: hello ×"));
    await waitFor(() => expect(lastPreviewPreset(calls).lorebook?.entries?.[0]?.keys).toEqual([]));
    await waitFor(() =>
      expect(screen.getAllByTestId("what-fires")[0]!.textContent).toContain("No entry fires for this session."),
    );
  });

  it("filters the entries by name, key or content", async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId("tab-lorebook"));
    for (const content of ["The lighthouse keeper", "A ferry at dawn"]) {
      fireEvent.click(screen.getByTestId("add-entry"));
      fireEvent.change(await screen.findByTestId("entry-content"), { target: { value: content } });
    }
    const entries = () => screen.getByTestId("entries").children.length;
    await waitFor(() => expect(entries()).toBe(2));
    fireEvent.change(screen.getByTestId("entries-filter"), { target: { value: "ferry" } });
    await waitFor(() => expect(entries()).toBe(1));
    expect(screen.getByTestId("entries-count").textContent).toBe("1 shown · 2 of 2 on");
  });

  it("puts entries in sections: a header entry, made by hand, folded, switched whole, enabled only", async () => {
    await renderApp((b) => {
      b.presets.get("helper")!.lorebook = {
        entries: [
          { id: "sea", name: "Sea", keys: ["sea"], content: "Waves.", enabled: true },
          { id: "h", name: "━━ 🏰 Places ━━", keys: [], content: "", enabled: false },
          { id: "castle", name: "Castle", keys: ["castle"], content: "Stone.", enabled: true },
          { id: "town", name: "Town", keys: ["town"], content: "Market.", enabled: false },
        ],
      };
    });
    fireEvent.click(screen.getByTestId("tab-lorebook"));
    const ids = () => [...screen.getByTestId("entries").children].map((li) => (li as HTMLElement).dataset.entryId);
    const places = await screen.findByTestId("entry-section-h");
    expect(within(places).getByText("🏰 Places")).toBeTruthy();
    expect(within(places).getByTestId("section-count").textContent).toBe("1/2 on");
    expect(screen.getByTestId("entries-count").textContent).toBe("2 of 4 on");

    fireEvent.click(within(places).getByTestId("fold"));
    await waitFor(() => expect(ids()).toEqual(["sea", "h"]));
    fireEvent.click(within(screen.getByTestId("entry-section-h")).getByTestId("fold"));
    await waitFor(() => expect(ids()).toEqual(["sea", "h", "castle", "town"]));

    fireEvent.click(within(screen.getByTestId("entry-section-h")).getByTestId("section-switch"));
    await waitFor(() => expect(screen.getByTestId("entries-count").textContent).toBe("3 of 4 on"));
    expect(getState().preset!.lorebook!.entries!.map((e) => e.enabled)).toEqual([true, false, true, true]);

    fireEvent.click(screen.getByTestId("entries-enabled-only"));
    // The header entry is off, but its section has entries on: its row stays.
    await waitFor(() => expect(screen.getByTestId("entries-count").textContent).toBe("3 shown · 3 of 4 on"));
    expect(ids()).toEqual(["sea", "h", "castle", "town"]);
    fireEvent.click(within(screen.getByTestId("entry-section-h")).getByTestId("section-switch"));
    await waitFor(() => expect(ids()).toEqual(["sea"]));
    fireEvent.click(screen.getByTestId("entries-enabled-only"));

    fireEvent.click(screen.getByTestId("add-entry-section"));
    const added = await screen.findByTestId("entry-section-section");
    expect(within(added).getByText("Section")).toBeTruthy();
    expect(getState().preset!.lorebook!.entries!.at(-1)).toMatchObject({ name: "=== Section ===", keys: [], enabled: false });
    await screen.findByTestId("entry-editor");
  });

  it("places an entry at a depth with the shared strategy editor", async () => {
    const { calls } = await renderApp();
    fireEvent.click(screen.getByTestId("tab-lorebook"));
    fireEvent.click(screen.getByTestId("add-entry"));
    fireEvent.click(within(await screen.findByTestId("entry-editor")).getByTestId("mode-depth"));
    fireEvent.change(screen.getByTestId("depth-input"), { target: { value: "3" } });
    await waitFor(() =>
      expect(lastPreviewPreset(calls).lorebook?.entries?.[0]?.strategy).toEqual({ depth: 3 }),
    );
    expect(screen.getByText("Depth: 3")).toBeTruthy();
  });
});
