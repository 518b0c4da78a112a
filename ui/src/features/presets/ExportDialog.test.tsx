import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { save } from "@tauri-apps/plugin-dialog";
import { App } from "../../App";
import { resetForTests, start } from "../../app/store";
import { fakeBackend } from "../../test/fakeBackend";
import { closeExport, defaultFileName } from "./exporting";
import type { ExportFormat, NotMapped } from "../../bindings";

vi.mock("@tauri-apps/plugin-dialog", () => ({ open: vi.fn(), save: vi.fn() }));

type ExportHook = (format: ExportFormat, path: string) => Promise<NotMapped[]>;
const exportHook = () => (globalThis as { __promptloomExport?: ExportHook }).__promptloomExport!;

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

const radio = (format: ExportFormat) => screen.getByTestId(`export-format-${format}`) as HTMLInputElement;

describe("exporting", () => {
  beforeEach(() => {
    resetForTests();
    closeExport();
    vi.mocked(save).mockReset();
  });

  it("proposes a file name per format", () => {
    expect(defaultFileName("helper", "native")).toBe("helper.json");
    expect(defaultFileName("helper", "sillyTavernPreset")).toBe("helper.st-preset.json");
    expect(defaultFileName("helper", "sillyTavernCard")).toBe("helper.card.json");
    expect(defaultFileName("helper", "sillyTavernWorldInfo")).toBe("helper.world-info.json");
    expect(defaultFileName("a/b c", "native")).toBe("a-b-c.json");
  });

  it("exports the open preset through the save dialog and reports what the format could not hold", async () => {
    const { calls, exported } = await renderApp();
    vi.mocked(save).mockResolvedValue("/home/me/helper.st-preset.json");
    fireEvent.click(screen.getByTestId("export-preset"));
    const dialog = screen.getByTestId("export-dialog");
    expect(dialog.textContent).toContain("Export “Helper”");
    expect(radio("native").checked).toBe(true);
    // The sample preset has neither a character nor a lorebook.
    expect(radio("sillyTavernCard").disabled).toBe(true);
    expect(radio("sillyTavernWorldInfo").disabled).toBe(true);
    expect(dialog.textContent).toContain("The preset has no character.");
    expect(dialog.textContent).toContain("The preset has no lorebook.");

    fireEvent.click(radio("sillyTavernPreset"));
    fireEvent.click(within(dialog).getByTestId("export-save"));
    const report = await screen.findByTestId("export-report");
    expect(vi.mocked(save)).toHaveBeenCalledWith(
      expect.objectContaining({ defaultPath: "helper.st-preset.json", filters: [{ name: "JSON", extensions: ["json"] }] }),
    );
    const call = calls.find((c) => c.cmd === "export_preset")!;
    expect(call.args).toMatchObject({ format: "sillyTavernPreset", path: "/home/me/helper.st-preset.json" });
    expect(exported.get("/home/me/helper.st-preset.json")?.preset?.id).toBe("helper");
    expect(screen.getByTestId("export-path").textContent).toBe("/home/me/helper.st-preset.json");
    expect(report.textContent).toContain("Not exported (1)");
    expect(report.textContent).toContain("a SillyTavern preset does not choose by model");

    fireEvent.click(within(screen.getByTestId("export-dialog")).getByText("Close"));
    expect(screen.queryByTestId("export-dialog")).toBeNull();
  });

  it("writes nothing when the save dialog is cancelled", async () => {
    const { calls } = await renderApp();
    vi.mocked(save).mockResolvedValue(null);
    fireEvent.click(screen.getByTestId("export-preset"));
    fireEvent.click(screen.getByTestId("export-save"));
    await waitFor(() => expect(vi.mocked(save)).toHaveBeenCalled());
    await waitFor(() => expect((screen.getByTestId("export-save") as HTMLButtonElement).disabled).toBe(false));
    expect(calls.some((c) => c.cmd === "export_preset")).toBe(false);
    expect(radio("native")).toBeTruthy();
  });

  it("offers card and world info for a preset with a character and a lorebook", async () => {
    const { calls } = await renderApp(({ presets }) => {
      const p = presets.get("helper")!;
      p.character = { name: "Ann", description: "A helper." };
      p.lorebook = { entries: [] };
    });
    vi.mocked(save).mockResolvedValue("/tmp/helper.card.json");
    fireEvent.click(screen.getByTestId("export-preset"));
    expect(radio("sillyTavernCard").disabled).toBe(false);
    expect(radio("sillyTavernWorldInfo").disabled).toBe(false);
    fireEvent.click(radio("sillyTavernCard"));
    fireEvent.click(screen.getByTestId("export-save"));
    await screen.findByTestId("export-report");
    expect(vi.mocked(save)).toHaveBeenCalledWith(expect.objectContaining({ defaultPath: "helper.card.json" }));
    expect(calls.find((c) => c.cmd === "export_preset")?.args.format).toBe("sillyTavernCard");
    expect(screen.getByTestId("export-report").textContent).toContain("Everything was exported.");
  });

  it("exports the preset as edited, through the hook the end-to-end tests call", async () => {
    const { exported } = await renderApp();
    fireEvent.click(within(screen.getByTestId("step-main")).getByText("Main prompt"));
    fireEvent.change(await screen.findByTestId("editor-content"), { target: { value: "You are {{char}}, kind." } });
    let notMapped: NotMapped[] | undefined;
    await act(async () => {
      notMapped = await exportHook()("native", "/tmp/helper.json");
    });
    expect(notMapped).toEqual([]);
    expect(exported.get("/tmp/helper.json")?.preset?.messageTemplates?.[0]?.content).toBe("You are {{char}}, kind.");
    expect(screen.getByTestId("export-path").textContent).toBe("/tmp/helper.json");
    expect(screen.getByTestId("export-report").textContent).toContain("Everything was exported.");
  });

  it("shows the error when the preset has nothing to export in the format, and goes back", async () => {
    const { exported } = await renderApp();
    let code: string | undefined;
    await act(async () => {
      await exportHook()("sillyTavernCard", "/tmp/helper.card.json").catch((e: { code?: string }) => (code = e.code));
    });
    expect(code).toBe("nothing_to_export");
    expect(exported.size).toBe(0);
    expect(screen.getByTestId("export-error").textContent).toBe(
      'Not exported: preset "helper" has no character to export as a card',
    );
    fireEvent.click(screen.getByText("Back"));
    expect(radio("sillyTavernCard").disabled).toBe(true);
    expect(radio("native").checked).toBe(true);
    expect(screen.queryByTestId("export-error")).toBeNull();
    fireEvent.keyDown(radio("native"), { key: "Escape" });
    expect(screen.queryByTestId("export-dialog")).toBeNull();
  });

  it("exports the open session as native JSON", async () => {
    const { calls, exported } = await renderApp();
    vi.mocked(save).mockResolvedValue("/home/me/chat-1.json");
    fireEvent.click(screen.getByTestId("export-session"));
    const report = await screen.findByTestId("export-report");
    expect(vi.mocked(save)).toHaveBeenCalledWith(expect.objectContaining({ defaultPath: "chat-1.json" }));
    expect(calls.find((c) => c.cmd === "export_session")?.args).toEqual({ id: "chat-1", path: "/home/me/chat-1.json" });
    expect(exported.get("/home/me/chat-1.json")?.session?.id).toBe("chat-1");
    expect(screen.getByTestId("export-dialog").textContent).toContain("Export the session “Chat one”");
    expect(report.textContent).toContain("Everything was exported.");
  });
});
