import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { Channel } from "@tauri-apps/api/core";
import { beforeEach, describe, expect, it } from "vitest";
import type { IndexProgress, MemoryStatus, SummaryView } from "../../bindings";
import { editSession, getState, resetForTests, showSummary, undo } from "../../app/store";
import { set } from "../../app/state";
import { resetSending } from "../send/sending";
import { MemoryIndex } from "./MemoryIndex";
import { SummaryEditor } from "./SummaryEditor";
import { hearSummaryUpdate, resetAutoSummaryForTests } from "./autoSummary";

const summary = (id: number, text: string, over: Partial<SummaryView> = {}): SummaryView => ({
  id,
  text,
  firstPosition: 0,
  lastPosition: 5,
  connection: "local",
  model: "m",
  edited: false,
  current: false,
  createdAt: id,
  ...over,
});

/** A backend of summaries and an index as the shell keeps them, with the calls made. */
function backend() {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  let finish = () => {};
  /** Indexing goes on until the test lets it finish. */
  const indexing = new Promise<void>((resolve) => (finish = resolve));
  let summaries: SummaryView[] = [summary(1, "They met.", { current: true })];
  let status: MemoryStatus = { model: null, connection: null, dim: 0, indexed: 0, messages: 10, pending: 10 };
  const make = (text: string, over: Partial<SummaryView>) => {
    const made = summary(summaries.length + 1, text, { ...over, current: true });
    summaries = [made, ...summaries.map((s) => ({ ...s, current: false }))];
    return made;
  };
  mockIPC((cmd, payload) => {
    const args = (payload ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args });
    switch (cmd) {
      case "session_summaries":
        return summaries;
      case "edit_summary":
        return make(args.text as string, { edited: true });
      case "summarize_session":
        if (args.connection === "broken") throw { code: "http_status", message: "the provider answered 500" };
        return make("They met and sailed.", { lastPosition: 7 });
      case "restore_summary":
        summaries = summaries.map((s) => ({ ...s, current: s.id === args.id }));
        return summaries.find((s) => s.current);
      case "memory_status":
        return status;
      case "index_memory": {
        const progress = args.progress as Channel<IndexProgress>;
        progress.onmessage({ done: 8, total: 10 });
        return indexing.then(() => {
          progress.onmessage({ done: 10, total: 10 });
          status = { model: "embed-1", connection: "local", dim: 8, indexed: 10, messages: 10, pending: 0 };
          return { model: "embed-1", dim: 8, embedded: 10, unchanged: 0, removed: 0, stale: 0 };
        });
      }
      case "list_connections":
        return ["local", "broken"].map((name) => ({
          connection: { name, dialect: "openaiCompatible", baseUrl: "http://127.0.0.1:1/v1" },
          hasKey: true,
        }));
      case "get_setting":
        return null;
      case "set_setting":
        return null;
      default:
        return null;
    }
  });
  return { calls, called: (cmd: string) => calls.filter((c) => c.cmd === cmd), finish: () => finish(), make };
}

describe("the summary editor", () => {
  beforeEach(() => {
    resetForTests();
    resetSending();
    resetAutoSummaryForTests();
  });

  it("shows the current summary with its range, saves an edit marked by hand, and restores an older one", async () => {
    const b = backend();
    render(<SummaryEditor sessionId="trip" />);
    const text = (await screen.findByDisplayValue("They met.")) as HTMLTextAreaElement;
    expect(screen.getByTestId("summary-range").textContent).toMatch(/#0 to #5/);
    fireEvent.change(text, { target: { value: "They met at the mill." } });
    fireEvent.click(screen.getByTestId("summary-save"));
    await waitFor(() => expect(screen.getByTestId("summary-range").textContent).toMatch(/edited by hand/));
    expect(b.called("edit_summary")[0]!.args).toEqual({ sessionId: "trip", text: "They met at the mill." });
    const older = await screen.findByTestId("older-summaries");
    fireEvent.click(within(older).getByTestId("restore-summary-1"));
    await waitFor(() => expect((screen.getByTestId("summary-text") as HTMLTextAreaElement).value).toBe("They met."));
    expect(b.called("restore_summary")[0]!.args).toEqual({ sessionId: "trip", id: 1 });
  });

  it("summarizes through the chosen connection and shows a failure with its code", async () => {
    const b = backend();
    render(<SummaryEditor sessionId="trip" />);
    await screen.findByDisplayValue("They met.");
    expect((screen.getByTestId("summarize-now") as HTMLButtonElement).disabled).toBe(true);
    await screen.findByRole("option", { name: "broken" });
    fireEvent.change(screen.getByTestId("summarize-connection"), { target: { value: "broken" } });
    fireEvent.click(screen.getByTestId("summarize-now"));
    expect((await screen.findByTestId("summary-error")).textContent).toBe("the provider answered 500 (http_status)");
    fireEvent.change(screen.getByTestId("summarize-connection"), { target: { value: "local" } });
    fireEvent.change(screen.getByTestId("summarize-model"), { target: { value: "small" } });
    fireEvent.click(screen.getByTestId("summarize-now"));
    await screen.findByDisplayValue("They met and sailed.");
    expect(screen.getByTestId("summary-range").textContent).toMatch(/#0 to #7/);
    expect(b.called("summarize_session").at(-1)!.args).toMatchObject({
      sessionId: "trip",
      connection: "local",
      model: "small",
    });
    expect(screen.queryByTestId("summary-error")).toBeNull();
  });

  it("shows a summary made in the background after a reply: Summarizing… while it runs, then it, or the error", async () => {
    const b = backend();
    render(<SummaryEditor sessionId="trip" />);
    await screen.findByDisplayValue("They met.");
    const update = { sessionId: "trip", running: true, summary: null, error: null };
    // Another session's summary is not this one's.
    act(() => hearSummaryUpdate({ ...update, sessionId: "other" }));
    expect(screen.getByTestId("summarize-now").textContent).toBe("Summarize now");
    act(() => hearSummaryUpdate(update));
    expect(screen.getByTestId("summarize-now").textContent).toBe("Summarizing…");
    expect((screen.getByTestId("summarize-now") as HTMLButtonElement).disabled).toBe(true);
    const made = b.make("They met and sailed on.", { lastPosition: 9 });
    act(() => hearSummaryUpdate({ ...update, running: false, summary: made }));
    await screen.findByDisplayValue("They met and sailed on.");
    expect(screen.getByTestId("summary-range").textContent).toMatch(/#0 to #9/);
    expect(screen.getByTestId("summarize-now").textContent).toBe("Summarize now");
    act(() => hearSummaryUpdate(update));
    const error = { code: "network", message: "the connection was refused" };
    act(() => hearSummaryUpdate({ ...update, running: false, error }));
    expect(screen.getByTestId("summary-auto-error").textContent).toBe(
      "The automatic summary failed: the connection was refused (network)",
    );
    expect(screen.getByDisplayValue("They met and sailed on.")).toBeTruthy();
  });
});

describe("the memory index status", () => {
  beforeEach(() => {
    resetForTests();
    resetSending();
  });

  it("indexes through a connection with its progress and then says how much is indexed with what", async () => {
    const b = backend();
    render(<MemoryIndex sessionId="trip" />);
    expect((await screen.findByTestId("memory-status")).textContent).toMatch(/Not indexed yet \(10 messages\)/);
    await screen.findByRole("option", { name: "local" });
    fireEvent.change(screen.getByTestId("index-connection"), { target: { value: "local" } });
    fireEvent.click(screen.getByTestId("index-now"));
    // It runs in the background: its progress is shown, and the button waits.
    await waitFor(() => expect(screen.getByTestId("index-progress").textContent).toBe("Embedded 8 of 10"));
    expect((screen.getByTestId("index-now") as HTMLButtonElement).disabled).toBe(true);
    await act(async () => b.finish());
    await waitFor(() =>
      expect(screen.getByTestId("memory-status").textContent).toBe(
        "10 of 10 messages indexed with embed-1 through local",
      ),
    );
    expect(screen.getByTestId("index-done").textContent).toMatch(/10 messages embedded with embed-1/);
    expect(b.called("index_memory")[0]!.args).toMatchObject({ sessionId: "trip", connection: "local", model: null });
    // Another model than the index's: the user is told the session is indexed again.
    fireEvent.change(screen.getByTestId("index-model"), { target: { value: "embed-2" } });
    expect(screen.getByTestId("model-change").textContent).toMatch(/indexed again from nothing/);
  });
});

describe("the summary the backend keeps", () => {
  beforeEach(() => resetForTests());

  it("stays when an earlier edit of the session is undone", async () => {
    const b = backend();
    set({ session: { formatVersion: 1, id: "trip", summary: null, messages: [{ role: "user", content: "Hi" }] } });
    await editSession((s) => ({ ...s, title: "Trip" }));
    showSummary("trip", "They met.");
    undo();
    expect(getState().session?.title).toBeUndefined();
    expect(getState().session?.summary).toBe("They met.");
    await waitFor(() => expect(b.called("save_session").length).toBe(2));
    const saved = b.called("save_session").at(-1)!.args.session as { summary: string | null };
    expect(saved.summary).toBe("They met.");
  });
});
