import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { getState, resetForTests, showStoredSession, start } from "../../app/store";
import type { PreviewRequest, SendRequest } from "../../bindings";
import { fakeBackend } from "../../test/fakeBackend";
import { resetSending } from "./sending";

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

/** A backend with one connection whose key is set, chosen in the preview. */
function withConnection(backend: ReturnType<typeof fakeBackend>) {
  backend.connections.set("local", { name: "local", dialect: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1" });
  backend.keys.add("local");
  backend.settings.set("ui.connection", "local");
}

const type = (id: string, value: string) => fireEvent.change(screen.getByTestId(id), { target: { value } });

/**
 * The app with a connection, a send of `input` started and its reply streamed in, waiting at the
 * gate; `release` lets it end. `setup` prepares the backend first.
 */
async function startGatedSend(input: string, setup?: (backend: ReturnType<typeof fakeBackend>) => void) {
  const backend = await renderApp((b) => {
    withConnection(b);
    setup?.(b);
  });
  await waitFor(() => expect((screen.getByTestId("connection-select") as HTMLSelectElement).value).toBe("local"));
  let release = () => {};
  backend.sending.gate = new Promise((r) => (release = r));
  type("send-input", input);
  fireEvent.click(screen.getByTestId("send"));
  await waitFor(() => expect(screen.getByTestId("streaming-reply").textContent).toBe("Hello back"));
  return { backend, release: () => release() };
}

describe("connections", () => {
  beforeEach(() => {
    resetForTests();
    resetSending();
  });

  it("adds a connection from a well-known endpoint, sets its key without keeping it, and removes it", async () => {
    const { calls, connections, keys } = await renderApp();
    fireEvent.click(screen.getByTestId("open-connections"));
    const dialog = await screen.findByTestId("connections-dialog");
    await waitFor(() => expect(within(dialog).getAllByRole("option").length).toBe(3));
    fireEvent.change(within(dialog).getByTestId("connection-from"), { target: { value: "openrouter" } });
    fireEvent.click(within(dialog).getByTestId("add-connection"));
    expect((screen.getByTestId("connection-url") as HTMLInputElement).value).toBe("https://openrouter.ai/api/v1");
    expect((screen.getByTestId("connection-dialect") as HTMLSelectElement).value).toBe("openai-compatible");
    type("connection-name", "router");
    type("connection-model", "meta/llama");
    type("connection-body", '{"max_tokens": 64}');
    fireEvent.click(screen.getByTestId("connection-save"));

    const row = await screen.findByTestId("connection-row");
    expect(connections.get("router")).toMatchObject({
      name: "router",
      baseUrl: "https://openrouter.ai/api/v1",
      defaultModel: "meta/llama",
      extraBody: { max_tokens: 64 },
      keyEnv: null,
    });
    expect(row.textContent).toContain("router");
    expect(row.textContent).toContain("meta/llama");
    expect(within(row).getByTestId("connection-key-state").textContent).toBe("no key");
    // The first connection is the one the preview sends through.
    expect((screen.getByTestId("connection-select") as HTMLSelectElement).value).toBe("router");

    const field = within(row).getByTestId("connection-key-input") as HTMLInputElement;
    expect(field.type).toBe("password");
    fireEvent.change(field, { target: { value: "sk-secret-123" } });
    fireEvent.click(within(row).getByTestId("connection-set-key"));
    expect(field.value).toBe("");
    await waitFor(() => expect(within(screen.getByTestId("connection-row")).getByTestId("connection-key-state").textContent).toBe("key set"));
    expect(keys.has("router")).toBe(true);
    expect(calls.find((c) => c.cmd === "set_connection_key")?.args).toEqual({ name: "router", key: "sk-secret-123" });
    // The key is nowhere on the page.
    expect(document.body.innerHTML).not.toContain("sk-secret-123");

    fireEvent.click(within(screen.getByTestId("connection-row")).getByTestId("connection-remove"));
    fireEvent.click(within(screen.getByRole("alertdialog")).getByText("Remove"));
    await waitFor(() => expect(screen.queryByTestId("connection-row")).toBeNull());
    expect(connections.size).toBe(0);
    expect(keys.size).toBe(0);
  });

  it("shows what the backend refuses, and what is not JSON, in the dialog", async () => {
    const { connections } = await renderApp();
    fireEvent.click(screen.getByTestId("open-connections"));
    fireEvent.click(await screen.findByTestId("add-connection"));
    type("connection-name", "bad");
    type("connection-url", "ftp://nowhere");
    type("connection-headers", "[1, 2]");
    fireEvent.click(screen.getByTestId("connection-save"));
    expect(screen.getByTestId("connection-form-error").textContent).toContain("Extra headers must be a JSON object");
    type("connection-headers", "");
    fireEvent.click(screen.getByTestId("connection-save"));
    expect((await screen.findByTestId("connections-error")).textContent).toContain('base URL "ftp://nowhere" is not http(s)');
    expect(connections.size).toBe(0);
    // The form stays, with what was typed.
    expect((screen.getByTestId("connection-url") as HTMLInputElement).value).toBe("ftp://nowhere");
  });

  it("keeps a connection's own timeouts, and refuses one that is not 1 s to a day", async () => {
    const { connections } = await renderApp();
    fireEvent.click(screen.getByTestId("open-connections"));
    fireEvent.click(await screen.findByTestId("add-connection"));
    type("connection-name", "slow");
    type("connection-url", "http://127.0.0.1:8080/v1");
    expect((screen.getByTestId("connection-totalSecs") as HTMLInputElement).placeholder).toBe("600");
    type("connection-totalSecs", "0");
    fireEvent.click(screen.getByTestId("connection-save"));
    expect(screen.getByTestId("connection-form-error").textContent).toBe("A timeout must be whole seconds from 1 to 86400");
    expect(connections.size).toBe(0);
    type("connection-totalSecs", "1800");
    type("connection-firstByteSecs", "300");
    fireEvent.click(screen.getByTestId("connection-save"));
    await waitFor(() =>
      expect(connections.get("slow")?.timeouts).toEqual({ connectSecs: null, firstByteSecs: 300, idleSecs: null, totalSecs: 1800 }),
    );
  });
});

describe("sending", () => {
  beforeEach(() => {
    resetForTests();
    resetSending();
  });

  it("streams the reply, then shows the stored one and clears the input", async () => {
    const { backend, release } = await startGatedSend("How are you?");
    expect(screen.getByTestId("stop")).toBeTruthy();
    await act(async () => release());

    const reply = await screen.findByTestId("last-reply");
    expect(screen.queryByTestId("streaming-reply")).toBeNull();
    expect(within(reply).getByTestId("last-reply-text").textContent).toBe("Hello back");
    expect(within(reply).getByTestId("reply-info").textContent).toBe("gpt-4o · prompt 11 (counted 12) · reply 3 · 250 ms");
    expect((screen.getByTestId("send-input") as HTMLInputElement).value).toBe("");
    // Calibration: the provider counted 11 where we counted 12, said beside the token total.
    await waitFor(() =>
      expect(screen.getByTestId("calibration").textContent).toBe("provider: -8.3% against our count (replies measured: 1)"),
    );
    const sent = backend.calls.find((c) => c.cmd === "send_message")!.args.request as { preview: { input: string }; connection: string; regenerate: boolean };
    expect(sent).toMatchObject({ connection: "local", regenerate: false, preview: { input: "How are you?", sessionId: "chat-1" } });
    // The store holds the stored session, and the preview is built over it.
    expect(getState().session?.messages.map((m) => m.content)).toEqual(["Hello", "Hi there", "How are you?", "Hello back"]);
    const sentAt = backend.calls.findIndex((c) => c.cmd === "send_message");
    await waitFor(() =>
      expect(
        backend.calls.some(
          (c, i) => i > sentAt && c.cmd === "preview" && (c.args.request as { input: string | null }).input === null,
        ),
      ).toBe(true),
    );
  });

  it("keeps an edit of the session made while the reply arrives, and the reply", async () => {
    const { backend, release } = await startGatedSend("How are you?");
    fireEvent.click(screen.getByTestId("edit-session"));
    type("user-name", "Ada");
    // Shown at once, written only after the reply: a write now would be overwritten by the
    // reply's, or overwrite it.
    expect(getState().session?.userProfile?.name).toBe("Ada");
    const sentAt = backend.calls.findIndex((c) => c.cmd === "send_message");
    expect(backend.calls.slice(sentAt).some((c) => c.cmd === "save_session")).toBe(false);
    await act(async () => release());

    await waitFor(() => expect(backend.sessions.get("chat-1")?.userProfile?.name).toBe("Ada"));
    expect(backend.sessions.get("chat-1")!.messages.map((m) => m.content)).toEqual(["Hello", "Hi there", "How are you?", "Hello back"]);
    expect(getState().session?.userProfile?.name).toBe("Ada");
    expect(getState().session?.messages).toHaveLength(4);
  });

  it("writes an edit made while a send fails, over the session as stored", async () => {
    const { backend, release } = await startGatedSend("Anyone there?", (b) => {
      b.sending.error = { code: "timeout", message: "no answer in 1 s" };
    });
    fireEvent.click(screen.getByTestId("edit-session"));
    type("user-name", "Ada");
    expect(backend.sessions.get("chat-1")?.userProfile?.name).not.toBe("Ada");
    await act(async () => release());
    expect((await screen.findByTestId("send-error")).textContent).toBe("Not sent: no answer in 1 s");
    await waitFor(() => expect(backend.sessions.get("chat-1")?.userProfile?.name).toBe("Ada"));
    expect(backend.sessions.get("chat-1")!.messages).toHaveLength(2);
    expect((screen.getByTestId("send-input") as HTMLInputElement).value).toBe("Anyone there?");
  });

  it("keeps a stopped reply, marked incomplete", async () => {
    const backend = await renderApp(withConnection);
    await waitFor(() => expect((screen.getByTestId("connection-select") as HTMLSelectElement).value).toBe("local"));
    backend.sending.gate = new Promise(() => {});
    type("send-input", "Tell me a long story");
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() => expect(screen.getByTestId("streaming-reply").textContent).toBe("Hello back"));
    fireEvent.click(screen.getByTestId("stop"));
    const reply = await screen.findByTestId("last-reply");
    expect(within(reply).getByTestId("reply-incomplete").textContent).toContain("incomplete");
    expect(backend.sessions.get("chat-1")!.messages.at(-1)?.reply?.incomplete).toBe(true);
  });

  it("says a reply that arrived but could not be stored apart from one not sent", async () => {
    const backend = await renderApp(withConnection);
    await waitFor(() => expect((screen.getByTestId("connection-select") as HTMLSelectElement).value).toBe("local"));
    backend.sending.error = { code: "reply_not_stored", message: "no session (the reply is kept in /x.txt)" };
    type("send-input", "Hi");
    fireEvent.click(screen.getByTestId("send"));
    expect((await screen.findByTestId("send-error")).textContent).toBe(
      "Received but not stored: no session (the reply is kept in /x.txt)",
    );
    backend.sending.error = null;
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() => expect(screen.queryByTestId("send-error")).toBeNull());
  });

  it("keeps the input when a stop came before any text", async () => {
    const backend = await renderApp(withConnection);
    await waitFor(() => expect((screen.getByTestId("connection-select") as HTMLSelectElement).value).toBe("local"));
    backend.sending.parts = [];
    backend.sending.gate = new Promise(() => {});
    type("send-input", "Are you there?");
    fireEvent.click(screen.getByTestId("send"));
    fireEvent.click(await screen.findByTestId("stop"));
    await waitFor(() => expect(screen.queryByTestId("stop")).toBeNull());
    expect((screen.getByTestId("send-input") as HTMLInputElement).value).toBe("Are you there?");
    expect(backend.sessions.get("chat-1")!.messages).toHaveLength(2);
  });

  it("shows a failure and changes nothing", async () => {
    const backend = await renderApp(withConnection);
    await waitFor(() => expect((screen.getByTestId("connection-select") as HTMLSelectElement).value).toBe("local"));
    backend.fail("send_message", 1, { code: "http", message: "the provider answered 401 Unauthorized: bad key" });
    type("send-input", "Anyone there?");
    fireEvent.click(screen.getByTestId("send"));
    expect((await screen.findByTestId("send-error")).textContent).toBe("Not sent: the provider answered 401 Unauthorized: bad key");
    expect((screen.getByTestId("send-input") as HTMLInputElement).value).toBe("Anyone there?");
    expect(backend.sessions.get("chat-1")!.messages).toHaveLength(2);
    expect(getState().session?.messages).toHaveLength(2);
    expect(screen.queryByTestId("streaming-reply")).toBeNull();
    // The last reply is still the one that was there.
    expect(screen.getByTestId("last-reply-text").textContent).toBe("Hi there");
  });

  it("regenerates the last reply and flips between the replies", async () => {
    const backend = await renderApp(withConnection);
    await waitFor(() => expect((screen.getByTestId("connection-select") as HTMLSelectElement).value).toBe("local"));
    type("send-input", "ignored when regenerating");
    backend.sending.parts = ["Second"];
    fireEvent.click(screen.getByTestId("regenerate"));
    await waitFor(() => expect(screen.getByTestId("last-reply-text").textContent).toBe("Second"));
    backend.sending.parts = ["Third"];
    fireEvent.click(screen.getByTestId("regenerate"));
    await waitFor(() => expect(screen.getByTestId("last-reply-text").textContent).toBe("Third"));
    const call = backend.calls.filter((c) => c.cmd === "send_message").at(-1)!;
    expect((call.args.request as { regenerate: boolean }).regenerate).toBe(true);
    expect(backend.sessions.get("chat-1")!.messages).toHaveLength(2);

    const position = () => screen.getByTestId("swipe-position-1").textContent;
    expect(position()).toBe("3/3");
    expect((screen.getByTestId("swipe-next-1") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId("swipe-prev-1"));
    await waitFor(() => expect(position()).toBe("2/3"));
    expect(screen.getByTestId("last-reply-text").textContent).toBe("Second");
    fireEvent.click(screen.getByTestId("swipe-prev-1"));
    await waitFor(() => expect(position()).toBe("1/3"));
    expect(screen.getByTestId("last-reply-text").textContent).toBe("Hi there");
    // The original reply had no reply info; the stored message is the one shown.
    expect(backend.sessions.get("chat-1")!.messages[1]!.content).toBe("Hi there");
    fireEvent.click(screen.getByTestId("swipe-next-1"));
    await waitFor(() => expect(position()).toBe("2/3"));
    fireEvent.click(screen.getByTestId("swipe-next-1"));
    await waitFor(() => expect(position()).toBe("3/3"));
    expect(screen.getByTestId("last-reply-text").textContent).toBe("Third");
    // Each flip names the reply's position among all of them, oldest first.
    expect(backend.calls.filter((c) => c.cmd === "choose_swipe").map((c) => c.args.swipe)).toEqual([1, 0, 1, 2]);
    expect(backend.sessions.get("chat-1")!.messages[1]!.swipeAt ?? null).toBeNull();
    // The input was not sent and stays.
    expect((screen.getByTestId("send-input") as HTMLInputElement).value).toBe("ignored when regenerating");
  });
});

describe("kinds of generation (RULES 5.14)", () => {
  beforeEach(() => {
    resetForTests();
    resetSending();
  });

  const sends = (backend: ReturnType<typeof fakeBackend>) =>
    backend.calls.filter((c) => c.cmd === "send_message").map((c) => c.args.request as SendRequest);
  const previews = (backend: ReturnType<typeof fakeBackend>) =>
    backend.calls.filter((c) => c.cmd === "preview").map((c) => c.args.request as PreviewRequest);

  async function ready() {
    const backend = await renderApp(withConnection);
    await waitFor(() => expect((screen.getByTestId("connection-select") as HTMLSelectElement).value).toBe("local"));
    return backend;
  }

  it("Continue adds what comes back to the last reply, shown growing, and leaves the input alone", async () => {
    const backend = await ready();
    type("send-input", "not sent with a continuation");
    backend.sending.parts = ["and", " more"];
    let release = () => {};
    backend.sending.gate = new Promise((r) => (release = r));
    fireEvent.click(screen.getByTestId("continue"));
    // The reply being continued, then the joiner and what arrives.
    await waitFor(() => expect(screen.getByTestId("streaming-reply").textContent).toBe("Continuing the last reply…Hi there and more"));
    await act(async () => release());
    await waitFor(() => expect(screen.getByTestId("last-reply-text").textContent).toBe("Hi there and more"));
    expect(sends(backend).at(-1)).toMatchObject({ regenerate: false, preview: { generationType: "continue" } });
    expect(backend.sessions.get("chat-1")!.messages.map((m) => m.content)).toEqual(["Hello", "Hi there and more"]);
    expect((screen.getByTestId("send-input") as HTMLInputElement).value).toBe("not sent with a continuation");
  });

  it("Impersonate puts the user's next message, its prefill first, into the message box and stores nothing", async () => {
    const backend = await ready();
    type("send-input", "replaced");
    type("prefill-input", "Well, ");
    backend.sending.parts = ["I think", " so."];
    fireEvent.click(screen.getByTestId("impersonate"));
    await waitFor(() => expect((screen.getByTestId("send-input") as HTMLInputElement).value).toBe("Well, I think so."));
    expect(sends(backend).at(-1)).toMatchObject({ preview: { generationType: "impersonate", prefill: "Well, " } });
    expect(backend.sessions.get("chat-1")!.messages.map((m) => m.content)).toEqual(["Hello", "Hi there"]);
    expect(getState().session?.messages).toHaveLength(2);
    expect(screen.getByTestId("last-reply-text").textContent).toBe("Hi there");
  });

  it("a reply with a prefill shows it first while it arrives and is stored with it; the prefill stays for the next send", async () => {
    const { backend, release } = await startGatedSend("Go on", (b) => b.settings.set("ui.connection", "local"));
    // startGatedSend typed no prefill: this send has none.
    expect(sends(backend).at(-1)?.preview.prefill).toBeNull();
    await act(async () => release());
    await screen.findByTestId("last-reply");
    backend.sending.gate = null;
    type("prefill-input", "Sure! ");
    type("send-input", "Again");
    let hold = () => {};
    backend.sending.gate = new Promise((r) => (hold = r));
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() => expect(screen.getByTestId("streaming-reply").textContent).toBe("Sure! Hello back"));
    await act(async () => hold());
    await waitFor(() => expect(screen.getByTestId("last-reply-text").textContent).toBe("Sure! Hello back"));
    expect(sends(backend).at(-1)).toMatchObject({ preview: { generationType: "normal", prefill: "Sure! ", input: "Again" } });
    expect(backend.sessions.get("chat-1")!.messages.at(-1)?.content).toBe("Sure! Hello back");
    expect((screen.getByTestId("send-input") as HTMLInputElement).value).toBe("");
    expect((screen.getByTestId("prefill-input") as HTMLInputElement).value).toBe("Sure! ");
  });

  it("the preview's type switch builds the context of that kind, with the same options a send of it uses", async () => {
    const backend = await ready();
    expect(screen.getByTestId("send").className).toBe("primary");
    type("prefill-input", "Me: ");
    fireEvent.click(screen.getByTestId("preview-type-impersonate"));
    await waitFor(() => expect(previews(backend).at(-1)).toMatchObject({ generationType: "impersonate", prefill: "Me: " }));
    // The fake assembler adds the impersonation prompt and the prefill at the end.
    await waitFor(() => expect(screen.getAllByTestId("built-lead").at(-1)!.textContent).toBe("Me:"));
    expect(screen.getByTestId("preview-type-impersonate").getAttribute("aria-checked")).toBe("true");
    // The button of the kind shown is the primary one.
    expect(screen.getByTestId("impersonate").className).toBe("primary");
    expect(screen.getByTestId("send").className).toBe("");
    const { preset: shownPreset, ...shownOptions } = previews(backend).at(-1)!;
    fireEvent.click(screen.getByTestId("impersonate"));
    await waitFor(() => expect(sends(backend)).toHaveLength(1));
    const { preset: sentPreset, ...sentOptions } = sends(backend)[0]!.preview;
    expect(sentOptions).toEqual(shownOptions);
    expect(sentPreset).toEqual(shownPreset);

    fireEvent.click(screen.getByTestId("preview-type-continue"));
    await waitFor(() => expect(previews(backend).at(-1)?.generationType).toBe("continue"));
    expect(screen.getByTestId("continue").className).toBe("primary");
  });

  it("Continue is not offered when the last message is not a reply of the model's", async () => {
    const backend = await ready();
    backend.sending.parts = ["x"];
    // Sending makes the user's message and a reply; a session ending with the user's has none.
    const session = backend.sessions.get("chat-1")!;
    backend.sessions.set("chat-1", { ...session, messages: [session.messages[0]!] });
    act(() => {
      showStoredSession(backend.sessions.get("chat-1")!, false);
    });
    const button = screen.getByTestId("continue") as HTMLButtonElement;
    await waitFor(() => expect(button.disabled).toBe(true));
    expect(button.title).toBe("The last message is not a reply of the model's: there is nothing to continue");
    expect((screen.getByTestId("impersonate") as HTMLButtonElement).disabled).toBe(false);
  });
});
