import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { resetForTests, start } from "../../app/store";
import { fakeBackend } from "../../test/fakeBackend";

async function openSessionEditor() {
  const backend = fakeBackend();
  render(<App />);
  await act(async () => {
    await start();
  });
  await screen.findByTestId("step-main");
  fireEvent.click(screen.getByTestId("edit-session"));
  return { backend, note: await screen.findByTestId("authors-note") };
}

describe("the author's note in the session editor", () => {
  beforeEach(() => resetForTests());

  it("starts from SillyTavern's defaults when the session has none", async () => {
    const { note } = await openSessionEditor();
    expect((within(note).getByTestId("note-content") as HTMLTextAreaElement).value).toBe("");
    expect((within(note).getByTestId("note-position") as HTMLSelectElement).value).toBe("in_chat");
    expect((within(note).getByTestId("note-depth") as HTMLInputElement).value).toBe("4");
    expect((within(note).getByTestId("note-role") as HTMLSelectElement).value).toBe("system");
    expect((within(note).getByTestId("note-interval") as HTMLInputElement).value).toBe("1");
  });

  it("edits the content, position, depth, role and interval and saves them with the session", async () => {
    const { backend, note } = await openSessionEditor();
    fireEvent.change(within(note).getByTestId("note-content"), { target: { value: "Keep it short." } });
    fireEvent.change(within(note).getByTestId("note-depth"), { target: { value: "2" } });
    fireEvent.change(within(note).getByTestId("note-role"), { target: { value: "user" } });
    fireEvent.change(within(note).getByTestId("note-interval"), { target: { value: "3" } });
    await waitFor(() =>
      expect(backend.sessions.get("chat-1")?.authorsNote).toEqual({
        content: "Keep it short.",
        position: "in_chat",
        depth: 2,
        role: "user",
        interval: 3,
      }),
    );
    // Before the prompt there is no depth to set.
    fireEvent.change(within(note).getByTestId("note-position"), { target: { value: "before_prompt" } });
    await waitFor(() => expect(backend.sessions.get("chat-1")?.authorsNote?.position).toBe("before_prompt"));
    expect((within(note).getByTestId("note-depth") as HTMLInputElement).disabled).toBe(true);
    // A value that is not a whole number of 0 or more is not taken.
    fireEvent.change(within(note).getByTestId("note-interval"), { target: { value: "-1" } });
    fireEvent.change(within(note).getByTestId("note-content"), { target: { value: "Later." } });
    await waitFor(() => expect(backend.sessions.get("chat-1")?.authorsNote?.content).toBe("Later."));
    expect(backend.sessions.get("chat-1")?.authorsNote?.interval).toBe(3);
  });
});
