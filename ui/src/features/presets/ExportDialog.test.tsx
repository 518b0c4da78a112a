import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { resetForTests, start } from "../../app/store";
import { fakeBackend } from "../../test/fakeBackend";
import { closeExport } from "./exporting";
import type { ExportFormat } from "../../bindings";

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
  });

  it("exports the open preset through the save dialog and reports what the format could not hold", async () => {
    const { calls, exported, dialogs } = await renderApp();
    dialogs.save = "/home/me/helper.st-preset.json";
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
    const call = calls.find((c) => c.cmd === "export_preset")!;
    expect(call.args).toMatchObject({ format: "sillyTavernPreset", text: { title: "Export as", filter: "JSON" } });
    expect(exported.get("/home/me/helper.st-preset.json")?.preset?.id).toBe("helper");
    expect(screen.getByTestId("export-path").textContent).toBe("/home/me/helper.st-preset.json");
    expect(report.textContent).toContain("Not exported (1)");
    expect(report.textContent).toContain("not exported: a SillyTavern preset has one prompt order");

    fireEvent.click(within(screen.getByTestId("export-dialog")).getByText("Close"));
    expect(screen.queryByTestId("export-dialog")).toBeNull();
  });

  it("goes back to the choice of format when the save dialog is cancelled", async () => {
    const { calls, exported, dialogs } = await renderApp();
    dialogs.save = null;
    fireEvent.click(screen.getByTestId("export-preset"));
    fireEvent.click(radio("sillyTavernPreset"));
    fireEvent.click(screen.getByTestId("export-save"));
    await waitFor(() => expect(calls.some((c) => c.cmd === "export_preset")).toBe(true));
    await waitFor(() => expect((screen.getByTestId("export-save") as HTMLButtonElement).disabled).toBe(false));
    expect(exported.size).toBe(0);
    expect(radio("sillyTavernPreset").checked).toBe(true);
    expect(screen.queryByTestId("export-error")).toBeNull();
    expect(screen.queryByTestId("export-report")).toBeNull();
  });

  it("offers card and world info for a preset with a character and a lorebook", async () => {
    const { calls } = await renderApp(({ presets }) => {
      const p = presets.get("helper")!;
      p.character = { name: "Ann", description: "A helper." };
      p.lorebook = { entries: [] };
    });
    fireEvent.click(screen.getByTestId("export-preset"));
    expect(radio("sillyTavernCard").disabled).toBe(false);
    expect(radio("sillyTavernWorldInfo").disabled).toBe(false);
    fireEvent.click(radio("sillyTavernCard"));
    fireEvent.click(screen.getByTestId("export-save"));
    await screen.findByTestId("export-report");
    expect(calls.find((c) => c.cmd === "export_preset")?.args.format).toBe("sillyTavernCard");
    // The fake proposes the name Rust would.
    expect(screen.getByTestId("export-path").textContent).toBe("/tmp/helper.card.json");
    expect(screen.getByTestId("export-report").textContent).toContain("Everything was exported.");
  });

  it("exports the preset as edited, before its autosave", async () => {
    const { exported } = await renderApp();
    fireEvent.click(within(screen.getByTestId("step-main")).getByText("Main prompt"));
    fireEvent.change(await screen.findByTestId("editor-content"), { target: { value: "You are {{char}}, kind." } });
    fireEvent.click(screen.getByTestId("export-preset"));
    fireEvent.click(screen.getByTestId("export-save"));
    await screen.findByTestId("export-report");
    expect(exported.get("/tmp/helper.json")?.preset?.messageTemplates?.[0]?.content).toBe("You are {{char}}, kind.");
    expect(screen.getByTestId("export-path").textContent).toBe("/tmp/helper.json");
    expect(screen.getByTestId("export-report").textContent).toContain("Everything was exported.");
  });

  it("shows why a file was not written, and goes back", async () => {
    const backend = await renderApp();
    backend.fail("export_preset", 1, { code: "io", message: "/tmp/helper.json: no space left on device" });
    fireEvent.click(screen.getByTestId("export-preset"));
    fireEvent.click(screen.getByTestId("export-save"));
    expect((await screen.findByTestId("export-error")).textContent).toBe(
      "Not exported: /tmp/helper.json: no space left on device",
    );
    expect(backend.exported.size).toBe(0);
    fireEvent.click(screen.getByText("Back"));
    expect(radio("sillyTavernCard").disabled).toBe(true);
    expect(radio("native").checked).toBe(true);
    expect(screen.queryByTestId("export-error")).toBeNull();
    fireEvent.keyDown(radio("native"), { key: "Escape" });
    expect(screen.queryByTestId("export-dialog")).toBeNull();
  });

  it("exports the open session as native JSON", async () => {
    const { calls, exported, dialogs } = await renderApp();
    dialogs.save = "/home/me/chat-1.json";
    fireEvent.click(screen.getByTestId("export-session"));
    const report = await screen.findByTestId("export-report");
    expect(calls.find((c) => c.cmd === "export_session")?.args).toEqual({
      id: "chat-1",
      text: { title: "Export as", filter: "JSON" },
    });
    expect(exported.get("/home/me/chat-1.json")?.session?.id).toBe("chat-1");
    expect(screen.getByTestId("export-dialog").textContent).toContain("Export the session “Chat one”");
    expect(screen.getByTestId("export-path").textContent).toBe("/home/me/chat-1.json");
    expect(report.textContent).toContain("Everything was exported.");
  });

  it("shows nothing when the session's save dialog is cancelled", async () => {
    const { calls, dialogs } = await renderApp();
    dialogs.save = null;
    fireEvent.click(screen.getByTestId("export-session"));
    await waitFor(() => expect(calls.some((c) => c.cmd === "export_session")).toBe(true));
    expect(screen.queryByTestId("export-dialog")).toBeNull();
  });
});
