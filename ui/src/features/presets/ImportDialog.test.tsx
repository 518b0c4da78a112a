import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { getState, resetForTests, start } from "../../app/store";
import { fakeBackend, samplePreset, type FakeFile } from "../../test/fakeBackend";
import type { LorebookEntry, Said } from "../../bindings";

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

const entries = (n: number): LorebookEntry[] =>
  Array.from({ length: n }, (_, i) => ({ id: `e${i}`, keys: [`k${i}`], content: `Entry ${i}.` }));

/** World info that goes into a preset; the import says what it did to the lorebook there. */
function worldInfo(backend: Backend): FakeFile {
  return {
    name: "World.json",
    preview: {
      format: "SillyTavern world info",
      formatSaid: { code: "import.format.sillytavern-world-info", params: {}, parts: {} },
      kind: "lorebook",
      name: "1 entry",
      nameSaid: { code: "import.name.entry", params: { count: "1" }, parts: {} },
      needsPreset: true,
      notMapped: [],
    },
    importAs: (into, lorebook) => {
      const preset = backend.presets.get(into!)!;
      const before = preset.lorebook?.entries?.length ?? 0;
      backend.storeElsewhere({ ...preset, lorebook: { entries: [...(lorebook === "merge" ? (preset.lorebook?.entries ?? []) : []), ...entries(1)] } });
      const said = (code: string, params: Record<string, string>, parts: Record<string, Said> = {}): Said => ({
        code,
        params,
        parts,
      });
      const howMany = (count: number) =>
        count === 1 ? said("import.one-entry", {}) : said("import.entries", { count: String(count) });
      const [notes, notesSaid] =
        lorebook === "merge"
          ? [
              [
                `1 entry added to the lorebook of preset "${into}", which keeps its 4 entries and settings`,
                `entry "e0" is taken in the lorebook; added as "e0-2"`,
              ],
              [
                said("import.lorebook-merged", { preset: into! }, { added: howMany(1), kept: howMany(4) }),
                said("import.entry-renamed", { entry: "e0", renamed: "e0-2" }),
              ],
            ]
          : [
              [`the lorebook of preset "${into}" was replaced; it had ${before} entries`],
              [said("import.lorebook-replaced", { preset: into! }, { entries: howMany(before) })],
            ];
      return { kind: "preset", id: into!, notes, notesSaid };
    },
  };
}

async function chooseFile() {
  await act(async () => {
    fireEvent.click(screen.getByTestId("import"));
  });
  return screen.findByTestId("import-dialog");
}

describe("importing a file", () => {
  beforeEach(() => resetForTests());

  it("shows what the chosen file holds and what was not mapped before saving, then opens it", async () => {
    const { calls } = await renderApp();
    const dialog = await chooseFile();
    expect(calls.find((c) => c.cmd === "choose_import_file")?.args).toEqual({
      text: { title: "Import a file", filter: "Presets, cards, world info, chats" },
    });
    expect(dialog.textContent).toContain("Default.json");
    await waitFor(() =>
      expect(within(dialog).getByTestId("import-summary").textContent).toBe(
        "SillyTavern chat-completion preset: preset “Default”",
      ),
    );
    expect(calls.find((c) => c.cmd === "inspect_import")?.args).toEqual({ file: 1 });
    expect(dialog.textContent).toContain("not mapped (sampler, API and formatting settings of SillyTavern)");
    expect(calls.some((c) => c.cmd === "import_file")).toBe(false);
    fireEvent.click(within(dialog).getByTestId("confirm-import"));
    await waitFor(() => expect(screen.queryByTestId("import-dialog")).toBeNull());
    expect(calls.find((c) => c.cmd === "import_file")?.args).toEqual({ file: 1, into: null, lorebook: "replace" });
    await waitFor(() => expect(getState().preset?.id).toBe("default"));
  });

  it("does nothing when the open dialog is cancelled", async () => {
    const { calls, dialogs } = await renderApp();
    dialogs.open = null;
    await act(async () => {
      fireEvent.click(screen.getByTestId("import"));
    });
    expect(calls.some((c) => c.cmd === "choose_import_file")).toBe(true);
    expect(screen.queryByTestId("import-dialog")).toBeNull();
    expect(calls.some((c) => c.cmd === "inspect_import")).toBe(false);
  });

  it("names the file and the problem when it cannot be read, and saves nothing", async () => {
    const { calls, dialogs } = await renderApp();
    dialogs.open = { name: "notes.txt" };
    await chooseFile();
    expect((await screen.findByRole("alert")).textContent).toContain("notes.txt: not a file Promptloom reads");
    expect((screen.getByTestId("confirm-import") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(within(screen.getByTestId("import-dialog")).getByText("Cancel"));
    expect(screen.queryByTestId("import-dialog")).toBeNull();
    expect(calls.some((c) => c.cmd === "import_file")).toBe(false);
  });

  it("shows a file dropped on the window", async () => {
    const backend = await renderApp();
    await act(async () => {
      await backend.drop({ name: "Dropped preset.json" });
    });
    const dialog = await screen.findByTestId("import-dialog");
    expect(dialog.textContent).toContain("Dropped preset.json");
    await waitFor(() => expect(within(dialog).getByTestId("import-summary")).toBeTruthy());
    expect(backend.calls.find((c) => c.cmd === "inspect_import")?.args).toEqual({ file: 1 });
    fireEvent.keyDown(window, { key: "Escape" });
    expect(screen.queryByTestId("import-dialog")).toBeNull();
  });

  it("warns before world info replaces a lorebook, and merges when asked; then shows what it did", async () => {
    const backend = await renderApp(({ presets }) => {
      presets.get("helper")!.lorebook = { scanDepth: 4, entries: entries(4) };
    });
    backend.dialogs.open = worldInfo(backend);
    const dialog = await chooseFile();
    const warning = await within(dialog).findByTestId("import-lorebook-exists");
    expect(warning.textContent).toBe("“Helper” already has a lorebook of 4 entries.");
    const replace = screen.getByTestId("import-lorebook-replace") as HTMLInputElement;
    const merge = screen.getByTestId("import-lorebook-merge") as HTMLInputElement;
    expect(replace.checked).toBe(true);
    expect(dialog.textContent).toContain("Add the new entries; keep its settings.");
    fireEvent.click(merge);
    expect(merge.checked).toBe(true);
    fireEvent.click(within(dialog).getByTestId("confirm-import"));

    const notes = await screen.findByTestId("import-notes");
    expect(backend.calls.find((c) => c.cmd === "import_file")?.args).toEqual({ file: 1, into: "helper", lorebook: "merge" });
    expect([...notes.querySelectorAll("li")].map((li) => li.textContent)).toEqual([
      '1 entry added to the lorebook of preset "helper", which keeps its 4 entries and settings',
      'entry "e0" is taken in the lorebook; added as "e0-2"',
    ]);
    // The preset was reloaded with what the import made, at its new revision.
    await waitFor(() => expect(getState().preset?.lorebook?.entries).toHaveLength(5));
    expect(getState().revision).toBe(backend.revisions.get("helper"));
    // The OK button has the focus, so Enter or Space closes.
    const ok = screen.getByTestId("import-ok");
    expect(document.activeElement).toBe(ok);
    fireEvent.click(ok);
    expect(screen.queryByTestId("import-dialog")).toBeNull();
  });

  it("counts the lorebook of another target preset as stored, and says nothing without one", async () => {
    const backend = await renderApp(({ presets, revisions }) => {
      presets.set("other", { ...samplePreset(), id: "other", name: "Other", lorebook: { entries: entries(1) } });
      presets.set("plain", { ...samplePreset(), id: "plain", name: "Plain" });
      revisions.set("other", 1);
      revisions.set("plain", 1);
    });
    backend.dialogs.open = worldInfo(backend);
    const dialog = await chooseFile();
    await within(dialog).findByTestId("import-summary");
    // The open preset has no lorebook.
    expect(within(dialog).queryByTestId("import-lorebook-exists")).toBeNull();
    fireEvent.change(within(dialog).getByRole("combobox"), { target: { value: "other" } });
    expect((await within(dialog).findByTestId("import-lorebook-exists")).textContent).toBe(
      "“Other” already has a lorebook of 1 entry.",
    );
    expect(backend.calls.some((c) => c.cmd === "get_preset" && c.args.id === "other")).toBe(true);
    fireEvent.change(within(dialog).getByRole("combobox"), { target: { value: "plain" } });
    await waitFor(() => expect(within(dialog).queryByTestId("import-lorebook-exists")).toBeNull());
    fireEvent.click(within(dialog).getByTestId("confirm-import"));
    await screen.findByTestId("import-notes");
    expect(backend.calls.find((c) => c.cmd === "import_file")?.args).toEqual({ file: 1, into: "plain", lorebook: "replace" });
    await waitFor(() => expect(getState().preset?.id).toBe("plain"));
  });

  it("does not import while the open preset's last edit is not saved", async () => {
    const backend = await renderApp();
    backend.fail("save_preset", 100, { code: "database", message: "database is locked" });
    fireEvent.click(within(screen.getByTestId("step-main")).getByText("Main prompt"));
    fireEvent.change(await screen.findByTestId("editor-content"), { target: { value: "Unsaved words." } });
    const dialog = await chooseFile();
    await within(dialog).findByTestId("import-summary");
    fireEvent.click(within(dialog).getByTestId("confirm-import"));
    expect((await within(dialog).findByRole("alert")).textContent).toBe(
      "Your last edit is not saved yet (database is locked); nothing else was done.",
    );
    expect(backend.calls.some((c) => c.cmd === "import_file")).toBe(false);
    expect(getState().preset?.messageTemplates[0]?.content).toBe("Unsaved words.");
  });
});
