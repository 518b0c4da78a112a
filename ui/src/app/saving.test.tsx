import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { App } from "../App";
import { getState, resetForTests, start } from "./store";
import { fakeBackend, samplePreset, type Call } from "../test/fakeBackend";
import type { Preset } from "./model";

type Backend = ReturnType<typeof fakeBackend>;

async function renderApp(setup?: (backend: Backend) => void) {
  const backend = fakeBackend();
  setup?.(backend);
  render(<App />);
  await act(async () => {
    await start();
  });
  await screen.findByTestId("step-main");
  return backend;
}

const LOCKED = { code: "database", message: "database is locked" };
const saveState = () => screen.getByTestId("save-state");
const saves = (calls: Call[]) => calls.filter((c) => c.cmd === "save_preset");
const stored = (backend: Backend) => backend.presets.get("helper")!.messageTemplates[0]!.content;
const destroyed = (calls: Call[]) => calls.some((c) => c.cmd === "plugin:window|destroy");

/** Opens the main prompt in the editor. */
async function openMain() {
  fireEvent.click(within(screen.getByTestId("step-main")).getByText("Main prompt"));
  return screen.findByTestId("editor-content");
}

async function typeMain(text: string) {
  fireEvent.change(await openMain(), { target: { value: text } });
}

/** Lets the fake timers run `ms` and the backend's answers arrive. */
const pass = (ms: number) => act(() => vi.advanceTimersByTimeAsync(ms));

describe("autosave", () => {
  beforeEach(() => resetForTests());
  afterEach(() => vi.useRealTimers());

  it("sends the revision the preset was read at, and keeps the one the save returns", async () => {
    const backend = await renderApp();
    expect(getState().revision).toBe(1);
    await typeMain("First.");
    await waitFor(() => expect(stored(backend)).toBe("First."), { timeout: 2000 });
    await typeMain("Second.");
    await waitFor(() => expect(stored(backend)).toBe("Second."), { timeout: 2000 });
    expect(saves(backend.calls).map((c) => c.args.revision)).toEqual([1, 2]);
    expect(getState().revision).toBe(3);
  });

  it("shows a failed save, keeps the edit, retries it with a growing wait and ends saved", async () => {
    const backend = await renderApp();
    const editor = await openMain();
    backend.fail("save_preset", 2, LOCKED);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    fireEvent.change(editor, { target: { value: "Kept through a locked database." } });
    await pass(400);
    expect(saves(backend.calls)).toHaveLength(1);
    expect(saveState().textContent).toBe("Not saved: database is locked. Retrying in 1 s");
    expect(saveState().className).toContain("save-failed");
    expect(screen.getByTestId("save-retry")).toBeTruthy();
    expect(getState().preset!.messageTemplates[0]!.content).toBe("Kept through a locked database.");

    await pass(999);
    expect(saves(backend.calls)).toHaveLength(1);
    await pass(1);
    expect(saves(backend.calls)).toHaveLength(2);
    expect(saveState().textContent).toBe("Not saved: database is locked. Retrying in 2 s");

    await pass(2000);
    expect(saves(backend.calls)).toHaveLength(3);
    expect(saveState().textContent).toBe("Saved");
    expect(saveState().className).toContain("save-saved");
    expect(screen.queryByTestId("save-retry")).toBeNull();
    expect(stored(backend)).toBe("Kept through a locked database.");
  });

  it("starts the wait over after a new edit, and retries at once when asked", async () => {
    const backend = await renderApp();
    const editor = await openMain();
    backend.fail("save_preset", 3, LOCKED);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    fireEvent.change(editor, { target: { value: "One." } });
    await pass(400);
    await pass(1000);
    expect(saveState().textContent).toBe("Not saved: database is locked. Retrying in 2 s");
    fireEvent.change(editor, { target: { value: "One, two." } });
    expect(saveState().textContent).toBe("Saving…");
    await pass(400);
    expect(saveState().textContent).toBe("Not saved: database is locked. Retrying in 1 s");

    fireEvent.click(screen.getByTestId("save-retry"));
    await pass(0);
    expect(saves(backend.calls)).toHaveLength(4);
    expect(saveState().textContent).toBe("Saved");
    expect(stored(backend)).toBe("One, two.");
  });

  it("retries a failed session save the same way", async () => {
    const backend = await renderApp();
    fireEvent.click(screen.getByTestId("edit-session"));
    backend.fail("save_session", 1, LOCKED);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    fireEvent.click(screen.getByTestId("add-session-message"));
    await pass(0);
    expect(saveState().textContent).toBe("Not saved: database is locked. Retrying in 1 s");
    expect(backend.sessions.get("chat-1")!.messages).toHaveLength(2);
    await pass(1000);
    expect(saveState().textContent).toBe("Saved");
    expect(backend.sessions.get("chat-1")!.messages).toHaveLength(3);
  });

  it("stays on the preset whose last edit is not saved, and says why", async () => {
    const backend = await renderApp(({ presets, revisions }) => {
      presets.set("other", { ...samplePreset(), id: "other", name: "Other" });
      revisions.set("other", 1);
    });
    backend.fail("save_preset", 1000, LOCKED);
    await typeMain("Not lost.");
    fireEvent.click(screen.getByTestId("preset-other"));
    const sidebar = screen.getByRole("complementary", { name: "Presets" });
    expect((await within(sidebar).findByRole("alert")).textContent).toBe(
      "Your last edit is not saved yet (database is locked); nothing else was done.",
    );
    expect(getState().preset!.id).toBe("helper");
    expect(getState().preset!.messageTemplates[0]!.content).toBe("Not lost.");
    fireEvent.click(screen.getByTestId("new-preset"));
    await waitFor(() => expect(within(sidebar).getByRole("alert")).toBeTruthy());
    expect(backend.calls.some((c) => c.cmd === "create_preset")).toBe(false);

    // Once the database takes it, the preset is saved before the other one opens.
    backend.fail("save_preset", 0, LOCKED);
    fireEvent.click(screen.getByTestId("preset-other"));
    await waitFor(() => expect(getState().preset!.id).toBe("other"));
    expect(stored(backend)).toBe("Not lost.");
  });
});

describe("a preset another program changed", () => {
  beforeEach(() => resetForTests());

  /** A command-line import puts a lorebook into the open preset. */
  const importElsewhere = (backend: Backend) =>
    backend.storeElsewhere({
      ...samplePreset(),
      lorebook: { entries: [{ id: "cli", constant: true, content: "Imported by the command line." }] },
    } as Preset);

  it("is not saved over: the user is asked, and Reload it takes the stored preset", async () => {
    const backend = await renderApp();
    importElsewhere(backend);
    await typeMain("My edit.");
    const dialog = await screen.findByTestId("save-conflict", {}, { timeout: 2000 });
    expect(dialog.textContent).toContain(
      "“Helper” was changed by another program since you opened it (a command-line import, for example).",
    );
    expect(backend.presets.get("helper")!.lorebook?.entries?.[0]?.id).toBe("cli");
    expect(stored(backend)).toBe("You are {{char}}.");
    expect(saveState().className).toContain("save-failed");
    expect(screen.queryByTestId("save-retry")).toBeNull();
    expect(getState().undo.length).toBeGreaterThan(0);

    fireEvent.click(within(dialog).getByTestId("conflict-reload"));
    await waitFor(() => expect(screen.queryByTestId("save-conflict")).toBeNull());
    const preset = getState().preset!;
    expect(preset.lorebook?.entries?.[0]?.id).toBe("cli");
    expect(preset.messageTemplates[0]!.content).toBe("You are {{char}}.");
    expect(getState().revision).toBe(2);
    expect(getState().undo).toEqual([]);
    expect(getState().redo).toEqual([]);
    expect(saveState().textContent).toBe("Saved");
    await waitFor(() => {
      const previews = backend.calls.filter((c) => c.cmd === "preview");
      expect((previews.at(-1)!.args.request as { preset: Preset }).preset.lorebook?.entries?.[0]?.id).toBe("cli");
    });
    expect(saves(backend.calls)).toHaveLength(1);

    // The next edit saves over the revision it reloaded.
    await typeMain("After the reload.");
    await waitFor(() => expect(stored(backend)).toBe("After the reload."), { timeout: 2000 });
    expect(saves(backend.calls).at(-1)!.args.revision).toBe(2);
    expect(backend.presets.get("helper")!.lorebook?.entries?.[0]?.id).toBe("cli");
  });

  it("Keep mine saves the edit over it, then saves over the revision that made", async () => {
    const backend = await renderApp();
    importElsewhere(backend);
    await typeMain("Mine.");
    fireEvent.click(await screen.findByTestId("conflict-keep", {}, { timeout: 2000 }));
    await waitFor(() => expect(stored(backend)).toBe("Mine."));
    expect(screen.queryByTestId("save-conflict")).toBeNull();
    expect(saves(backend.calls).at(-1)!.args.revision).toBeNull();
    expect(getState().revision).toBe(3);
    expect(saveState().textContent).toBe("Saved");

    await typeMain("Mine again.");
    await waitFor(() => expect(stored(backend)).toBe("Mine again."), { timeout: 2000 });
    expect(saves(backend.calls).at(-1)!.args.revision).toBe(3);
    expect(screen.queryByTestId("save-conflict")).toBeNull();
  });
});

describe("closing the window", () => {
  beforeEach(() => resetForTests());

  it("saves an edit still waiting for its autosave, then closes", async () => {
    const backend = await renderApp();
    await typeMain("The last words.");
    await act(() => backend.requestClose());
    await waitFor(() => expect(destroyed(backend.calls)).toBe(true));
    expect(stored(backend)).toBe("The last words.");
    const saved = backend.calls.findIndex((c) => c.cmd === "save_preset");
    expect(saved).toBeLessThan(backend.calls.findIndex((c) => c.cmd === "plugin:window|destroy"));
  });

  it("asks before closing when the last edit cannot be saved", async () => {
    const backend = await renderApp();
    backend.fail("save_preset", 1000, LOCKED);
    await typeMain("Doomed words.");
    await act(() => backend.requestClose());
    const ask = await screen.findByRole("alertdialog");
    expect(ask.textContent).toContain("Your last edit could not be saved: database is locked. Close anyway?");
    expect(destroyed(backend.calls)).toBe(false);

    fireEvent.click(within(ask).getByText("Keep open"));
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(destroyed(backend.calls)).toBe(false);
    expect(getState().preset!.messageTemplates[0]!.content).toBe("Doomed words.");

    await act(() => backend.requestClose());
    fireEvent.click(within(await screen.findByRole("alertdialog")).getByText("Close anyway"));
    await waitFor(() => expect(destroyed(backend.calls)).toBe(true));
  });
});

describe("a new chat", () => {
  beforeEach(() => resetForTests());

  it("is made for the open preset once its pending edit is saved", async () => {
    const backend = await renderApp();
    await typeMain("Written just before the new chat.");
    fireEvent.click(screen.getByRole("button", { name: "New session" }));
    await waitFor(() => expect(backend.calls.some((c) => c.cmd === "create_session")).toBe(true));
    const created = backend.calls.findIndex((c) => c.cmd === "create_session");
    expect(backend.calls[created]!.args).toMatchObject({ title: "New session", preset: "helper" });
    // The greeting is read from the stored preset: the edit went first.
    const saved = backend.calls.findIndex((c) => c.cmd === "save_preset");
    expect(saved).toBeGreaterThanOrEqual(0);
    expect(saved).toBeLessThan(created);
    expect(stored(backend)).toBe("Written just before the new chat.");
  });
});
