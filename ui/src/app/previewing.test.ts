import { beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import type { Preview } from "../bindings";
import { editPreset, getState, openSession, resetForTests, setCompareModel, setInput, start, subscribe } from "./store";
import { updateTemplate } from "../features/recipes/recipe";
import { fakeBackend, sampleSession } from "../test/fakeBackend";

/** What the preview shows of the session's history. */
const history = (preview: Preview | null) =>
  preview?.result.messages.filter((m) => m.source.kind === "history").map((m) => m.content);

/** The app started on session `chat-1` ("Hello", "Hi there"), with `chat-2` to switch to; the
 * preview leaves the history out and the UI puts it back from the session. */
async function startWithTwoSessions() {
  const backend = fakeBackend();
  backend.options.elideHistory = true;
  const other = sampleSession();
  other.id = "chat-2";
  other.title = "Chat two";
  other.messages = [
    { role: "user", content: "One" },
    { role: "assistant", content: "Two" },
    { role: "user", content: "Three" },
  ];
  backend.sessions.set("chat-2", other);
  await start();
  await vi.waitFor(() => expect(history(getState().preview)).toEqual(["Hello", "Hi there"]));
  return backend;
}

/** Every `pick` the store shows from now on, with the session open when it is shown. */
function record(pick: (s: ReturnType<typeof getState>) => Preview | null) {
  const shown: { session: string | undefined; history: string[] | undefined }[] = [];
  let last = pick(getState());
  const stop = subscribe(() => {
    const now = pick(getState());
    if (now === last) return;
    last = now;
    shown.push({ session: getState().session?.id, history: history(now) });
  });
  onTestFinished(stop);
  return shown;
}

const previews = (backend: ReturnType<typeof fakeBackend>) => backend.calls.filter((c) => c.cmd === "preview");

describe("a preview answer that arrives after the session was switched", () => {
  beforeEach(() => resetForTests());

  it("never shows the other session's messages in the places of the first one's", async () => {
    const backend = await startWithTwoSessions();
    const shown = record((s) => s.preview);
    const release = backend.hold("preview");
    const before = previews(backend).length;
    setInput("And now?");
    // The build for chat-1 is under way when chat-2 is opened.
    await vi.waitFor(() => expect(previews(backend)).toHaveLength(before + 1));
    await openSession("chat-2");
    release();

    await vi.waitFor(() => expect(history(getState().preview)).toEqual(["One", "Two", "Three"]));
    // Rebuilt with chat-2, chat-1's answer would show "One", "Two" in the places of its two messages.
    expect(shown).toEqual([{ session: "chat-2", history: ["One", "Two", "Three"] }]);
  });

  it("of the compared model is not shown with the other session's messages either", async () => {
    const backend = await startWithTwoSessions();
    const shown = record((s) => s.comparePreview);
    const release = backend.hold("preview", (args) => (args.request as { model: string }).model.startsWith("claude"));
    setCompareModel("claude-3-5-sonnet");
    // The compared build for chat-1 is under way when chat-2 is opened and previewed.
    await vi.waitFor(() => expect(previews(backend).at(-1)?.args.request).toMatchObject({ sessionId: "chat-1" }));
    await openSession("chat-2");
    await vi.waitFor(() => expect(history(getState().preview)).toEqual(["One", "Two", "Three"]));
    release();

    await vi.waitFor(() => expect(history(getState().comparePreview)).toEqual(["One", "Two", "Three"]));
    expect(shown).toEqual([{ session: "chat-2", history: ["One", "Two", "Three"] }]);
  });
});

describe("the live preview's draft", () => {
  beforeEach(() => resetForTests());

  it("sends the whole preset first, then only the template a keystroke changed", async () => {
    const backend = fakeBackend();
    await start();
    await vi.waitFor(() => expect(getState().preview).not.toBeNull());
    expect(backend.edits.map((e) => e.kind)).toEqual(["whole"]);
    editPreset((p) => updateTemplate(p, "style", { content: "Be very brief." }));
    await vi.waitFor(() => expect(backend.edits).toHaveLength(2));
    const [first, second] = backend.edits;
    expect(second).toEqual({
      kind: "changes",
      base: first!.revision,
      revision: first!.revision + 1,
      changes: [{ kind: "template", index: 2, template: { id: "style", name: "Style note", role: "system", content: "Be very brief." } }],
    });
    // What was built is the preset as edited.
    await vi.waitFor(() =>
      expect(getState().preview?.result.messages.map((m) => m.content)).toContain("Be very brief."),
    );
    expect((previews(backend).at(-1)?.args.request as { preset: unknown }).preset).toEqual(getState().preset);
  });

  it("sends the whole preset again when the backend keeps another draft (it started again)", async () => {
    const backend = fakeBackend();
    await start();
    await vi.waitFor(() => expect(getState().preview).not.toBeNull());
    backend.forgetDraft();
    editPreset((p) => updateTemplate(p, "style", { content: "Again." }));
    await vi.waitFor(() => expect(getState().preview?.result.messages.map((m) => m.content)).toContain("Again."));
    expect(backend.edits.map((e) => e.kind)).toEqual(["whole", "changes", "whole"]);
    expect(getState().previewError).toBeNull();
  });

  it("sends the whole preset after a build that failed", async () => {
    const backend = fakeBackend();
    await start();
    await vi.waitFor(() => expect(getState().preview).not.toBeNull());
    backend.fail("preview", 1, { code: "invalid_document", message: "no" });
    editPreset((p) => updateTemplate(p, "style", { content: "One." }));
    await vi.waitFor(() => expect(getState().previewError).toBe("no"));
    editPreset((p) => updateTemplate(p, "style", { content: "Two." }));
    await vi.waitFor(() => expect(getState().previewError).toBeNull());
    expect(backend.edits.map((e) => e.kind)).toEqual(["whole", "changes", "whole"]);
  });
});
