import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../App";
import { getState, resetForTests, start } from "./store";
import { fakeBackend, type Call } from "../test/fakeBackend";

type Backend = ReturnType<typeof fakeBackend>;

async function startWith(settings: Record<string, string>): Promise<Backend> {
  const backend = fakeBackend();
  for (const [key, value] of Object.entries(settings)) backend.settings.set(key, value);
  render(<App />);
  await act(async () => {
    await start();
  });
  return backend;
}

const marked = (calls: Call[], value: string) =>
  calls.findIndex((c) => c.cmd === "set_setting" && c.args.key === "ui.opening" && c.args.value === value);

describe("a preset whose preview brought the app down", () => {
  beforeEach(() => resetForTests());

  it("is named before the first preview at start and cleared once it returns", async () => {
    const backend = await startWith({});
    await screen.findByTestId("step-main");
    await waitFor(() => expect(backend.settings.get("ui.opening")).toBe(""));
    const preview = backend.calls.findIndex((c) => c.cmd === "preview");
    expect(marked(backend.calls, "helper")).toBeGreaterThanOrEqual(0);
    expect(marked(backend.calls, "helper")).toBeLessThan(preview);
    expect(preview).toBeLessThan(marked(backend.calls, ""));
  });

  it("is cleared when the preview returns an error too", async () => {
    const backend = await startWith({ "ui.model": "broken" });
    await screen.findByTestId("step-main");
    await waitFor(() => expect(backend.settings.get("ui.opening")).toBe(""));
    expect(getState().previewError).toContain("no model profile for broken");
  });

  it("is not opened again at the next start, and the notice says so until dismissed", async () => {
    const backend = await startWith({ "ui.preset": "helper", "ui.opening": "helper" });
    const notice = await screen.findByTestId("crash-notice");
    expect(notice.textContent).toContain(
      "Promptloom closed while previewing “Helper” last time; it was not opened again. Open it from the list when you want to.",
    );
    expect(getState().preset).toBeNull();
    expect(backend.calls.some((c) => c.cmd === "get_preset" || c.cmd === "preview")).toBe(false);
    expect(screen.getByTestId("preset-helper")).toBeTruthy();
    expect(backend.settings.get("ui.opening")).toBe("helper");

    fireEvent.click(screen.getByTestId("crash-notice-dismiss"));
    expect(screen.queryByTestId("crash-notice")).toBeNull();

    // Opened from the list, it previews; once that returned, the next start opens it again.
    fireEvent.click(screen.getByTestId("preset-helper"));
    await screen.findByTestId("step-main");
    await waitFor(() => expect(backend.settings.get("ui.opening")).toBe(""));
  });

  it("opens the preset as usual when the mark names another one", async () => {
    const backend = await startWith({ "ui.preset": "helper", "ui.opening": "gone" });
    await screen.findByTestId("step-main");
    expect(screen.queryByTestId("crash-notice")).toBeNull();
    expect(getState().preset?.id).toBe("helper");
    await waitFor(() => expect(backend.settings.get("ui.opening")).toBe(""));
  });
});
