import { fireEvent, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { renderApp } from "../test/renderApp";
import { getState, resetForTests } from "./store";

beforeEach(() => resetForTests());

/** The app at its first start: no tour seen yet. */
const firstStart = () => renderApp((b) => b.settings.delete("ui.tourSeen"));

const step = () => screen.getByTestId("tour-step").dataset.step;

describe("the About dialog", () => {
  it("shows the version line, the commit in a title, and the database path under Settings", async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId("about-button"));
    const version = await screen.findByTestId("about-version");
    expect(version.textContent).toBe("0.1.0 (269d4c6a1b2c)");
    expect(version.title).toContain("269d4c6a1b2c3d4e5f60718293a4b5c6d7e8f901");
    expect(screen.queryByTestId("about-dirty")).toBeNull();
    expect(screen.getByTestId("about-database-path").textContent).toBe(
      "/home/someone/.local/share/promptloom/promptloom.db",
    );
    expect(screen.getByRole("heading", { name: "Settings" })).toBeTruthy();
    expect(document.activeElement).toBe(screen.getByTestId("about-close"));
  });

  it("says when the build had uncommitted changes", async () => {
    const backend = await renderApp();
    Object.assign(backend.about, { dirty: true, versionLine: "0.1.0 (269d4c6a1b2c-dirty)" });
    fireEvent.click(screen.getByTestId("about-button"));
    expect((await screen.findByTestId("about-version")).textContent).toBe("0.1.0 (269d4c6a1b2c-dirty)");
    expect(screen.getByTestId("about-dirty").textContent).toContain("uncommitted changes");
  });

  it("copies the path, and shows why the folder could not be opened", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const backend = await renderApp();
    fireEvent.click(screen.getByTestId("about-button"));
    fireEvent.click(await screen.findByTestId("about-copy-path"));
    expect(writeText).toHaveBeenCalledWith("/home/someone/.local/share/promptloom/promptloom.db");
    expect(await screen.findByText("Copied")).toBeTruthy();

    backend.fail("open_database_folder", 1, { code: "io", message: "xdg-open did not start (not found)" });
    fireEvent.click(screen.getByTestId("about-open-folder"));
    expect((await screen.findByTestId("about-folder-error")).textContent).toBe(
      "Could not open the folder: xdg-open did not start (not found)",
    );
    fireEvent.click(screen.getByTestId("about-open-folder"));
    await waitFor(() => expect(screen.queryByTestId("about-folder-error")).toBeNull());
    expect(backend.calls.filter((c) => c.cmd === "open_database_folder")).toHaveLength(2);
  });

  it("closes with Escape or Close, and gives the focus back to its button", async () => {
    await renderApp();
    const button = screen.getByTestId("about-button");
    button.focus();
    fireEvent.click(button);
    fireEvent.keyDown(await screen.findByTestId("about-close"), { key: "Escape" });
    expect(screen.queryByTestId("about-dialog")).toBeNull();
    expect(document.activeElement).toBe(button);
    fireEvent.click(button);
    fireEvent.click(await screen.findByTestId("about-close"));
    expect(screen.queryByTestId("about-dialog")).toBeNull();
    expect(document.activeElement).toBe(button);
  });

  it("keeps Tab within the dialog", async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId("about-button"));
    const close = await screen.findByTestId("about-close");
    await screen.findByTestId("about-version");
    fireEvent.keyDown(close, { key: "Tab" });
    expect(document.activeElement).toBe(screen.getByTestId("about-copy-path"));
    fireEvent.keyDown(document.activeElement!, { key: "Tab", shiftKey: true });
    expect(document.activeElement).toBe(close);
  });

  it("is in Chinese too", async () => {
    await renderApp((b) => b.settings.set("ui.language", "zh-CN"));
    expect(screen.getByTestId("about-button").textContent).toContain("关于");
    fireEvent.click(screen.getByTestId("about-button"));
    await screen.findByTestId("about-version");
    expect(screen.getByTestId("about-open-folder").textContent).toBe("打开文件夹");
    expect(screen.getByTestId("about-tour").textContent).toBe("再看一遍导览");
  });
});

describe("the first-run tour", () => {
  it("shows at the first start only", async () => {
    await firstStart();
    expect(step()).toBe("1");
    expect(screen.getByTestId("tour").textContent).toContain("Library and recipe");
    expect(document.querySelector(".sidebar")!.classList).toContain("tour-target");
    expect(document.activeElement).toBe(screen.getByTestId("tour-next"));
  });

  it("is not shown once it was seen", async () => {
    await renderApp();
    expect(screen.queryByTestId("tour")).toBeNull();
  });

  it("steps forward and back with the buttons and the keys, then is done and not shown again", async () => {
    const backend = await firstStart();
    expect(screen.queryByTestId("tour-back")).toBeNull();
    fireEvent.click(screen.getByTestId("tour-next"));
    expect(step()).toBe("2");
    expect(document.querySelector(".sidebar")!.classList).not.toContain("tour-target");
    expect(document.querySelector(".preview")!.classList).toContain("tour-target");
    fireEvent.click(screen.getByTestId("tour-back"));
    expect(step()).toBe("1");
    fireEvent.keyDown(screen.getByTestId("tour"), { key: "ArrowRight" });
    expect(step()).toBe("2");
    fireEvent.keyDown(screen.getByTestId("tour"), { key: "ArrowLeft" });
    expect(step()).toBe("1");
    fireEvent.keyDown(screen.getByTestId("tour"), { key: "Enter" });
    fireEvent.keyDown(screen.getByTestId("tour"), { key: "Enter" });
    expect(step()).toBe("3");
    expect(screen.getByTestId("import").classList).toContain("tour-target");
    expect(screen.queryByTestId("tour-skip")).toBeNull();
    expect(screen.getByTestId("tour-next").textContent).toBe("Done");
    expect(backend.settings.get("ui.tourSeen")).toBeUndefined();
    fireEvent.click(screen.getByTestId("tour-next"));
    expect(screen.queryByTestId("tour")).toBeNull();
    expect(document.querySelector(".tour-target")).toBeNull();
    await waitFor(() => expect(backend.settings.get("ui.tourSeen")).toBe("1"));
  });

  it("is skipped with its button, and the skip is stored", async () => {
    const backend = await firstStart();
    fireEvent.click(screen.getByTestId("tour-skip"));
    expect(screen.queryByTestId("tour")).toBeNull();
    await waitFor(() => expect(backend.settings.get("ui.tourSeen")).toBe("1"));
  });

  it("is skipped with Escape", async () => {
    const backend = await firstStart();
    fireEvent.keyDown(screen.getByTestId("tour-next"), { key: "Escape" });
    expect(getState().tour).toBeNull();
    await waitFor(() => expect(backend.settings.get("ui.tourSeen")).toBe("1"));
  });

  it("opens again from the About dialog, and gives the focus back to its button at the end", async () => {
    await renderApp();
    const button = screen.getByTestId("about-button");
    fireEvent.click(button);
    fireEvent.click(await screen.findByTestId("about-tour"));
    expect(screen.queryByTestId("about-dialog")).toBeNull();
    expect(step()).toBe("1");
    expect(document.activeElement).toBe(screen.getByTestId("tour-next"));
    fireEvent.keyDown(screen.getByTestId("tour"), { key: "Escape" });
    expect(screen.queryByTestId("tour")).toBeNull();
    expect(document.activeElement).toBe(button);
  });

  it("speaks Chinese", async () => {
    await renderApp((b) => {
      b.settings.delete("ui.tourSeen");
      b.settings.set("ui.language", "zh-CN");
    });
    expect(screen.getByTestId("tour").textContent).toContain("预设库与配方");
    expect(screen.getByTestId("tour-skip").textContent).toBe("跳过导览");
    expect(screen.getByTestId("tour-next").textContent).toBe("下一步");
  });
});
