import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { resetForTests, setLanguage, start } from "../../app/store";
import { fakeBackend } from "../../test/fakeBackend";
import { resetSending } from "../send/sending";

async function renderApp() {
  const backend = fakeBackend();
  backend.connections.set("local", { name: "local", dialect: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1" });
  render(<App />);
  await act(async () => {
    await start();
  });
  await screen.findByTestId("step-main");
  return backend;
}

const row = () => document.querySelector(".preview-head-row") as HTMLElement;

/** The names and tooltips of the header's icon buttons, in order. */
const buttons = () =>
  within(row())
    .getAllByRole("button")
    .map((b) => [b.getAttribute("aria-label"), b.getAttribute("title")]);

describe("the preview's header", () => {
  beforeEach(() => {
    resetForTests();
    resetSending();
  });

  it("holds the model, the session and the connection in one row, with icon buttons named in English and Chinese", async () => {
    await renderApp();
    const head = within(row());
    expect(head.getByTestId("model-input")).toBeTruthy();
    expect(head.getByTestId("session-select")).toBeTruthy();
    await waitFor(() => expect((head.getByTestId("connection-select") as HTMLSelectElement).value).toBe("local"));
    // The connection is no longer in the Messages view, which keeps Send and "Start reply with".
    const panel = document.querySelector(".preview-panel") as HTMLElement;
    expect(within(panel).queryByTestId("connection-select")).toBeNull();
    expect(within(panel).getByTestId("prefill-input")).toBeTruthy();
    expect(head.getByTestId("session-count").textContent).toBe(" · 2 messages");
    // A name cut in the narrow field shows whole on hover.
    const session = head.getByTestId("session-select") as HTMLSelectElement;
    expect(session.title).toBe(session.selectedOptions[0]?.textContent);
    expect(session.title).not.toBe("");
    expect((head.getByTestId("connection-select") as HTMLSelectElement).title).toBe("local");
    expect(head.getByTestId("preview-recipe").textContent).toBe("all");
    expect(head.getByTestId("preview-recipe").parentElement?.title).toContain("Recipe · model profile: all · ");
    expect(buttons()).toEqual([
      ["Compare", "Compare the build with one for a second model, side by side"],
      ["Connections…", "Connections…"],
      ["New session", "New session"],
      ["Edit session", "Edit session"],
      ["Export session…", "Export session…"],
    ]);

    act(() => setLanguage("zh-CN"));
    expect(buttons().map(([label]) => label)).toEqual(["对比", "连接…", "新建会话", "编辑会话", "导出会话…"]);
    expect(head.getByTestId("session-count").textContent).toBe(" · 2 条消息");
    expect(head.getByText("连接")).toBeTruthy();
  });

  it("opens the session's editor under the row, and closes it from the row or the panel", async () => {
    await renderApp();
    const edit = screen.getByTestId("edit-session");
    expect(edit.getAttribute("aria-expanded")).toBe("false");
    fireEvent.click(edit);
    const editor = screen.getByTestId("session-editor");
    expect(row().contains(editor)).toBe(false);
    expect(edit.getAttribute("aria-expanded")).toBe("true");
    expect(edit.getAttribute("aria-label")).toBe("Close the session editor");
    fireEvent.click(edit);
    expect(screen.queryByTestId("session-editor")).toBeNull();

    fireEvent.click(edit);
    const panel = screen.getByRole("region", { name: "Edit session" });
    expect(within(panel).getByRole("button", { name: "Delete session" })).toBeTruthy();
    fireEvent.click(within(panel).getByRole("button", { name: "Done" }));
    expect(screen.queryByTestId("session-editor")).toBeNull();
    expect(screen.getByTestId("edit-session").getAttribute("aria-label")).toBe("Edit session");
  });
});
