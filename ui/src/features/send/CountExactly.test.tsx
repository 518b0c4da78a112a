import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { resetForTests, setLanguage, setModel, start } from "../../app/store";
import { fakeBackend } from "../../test/fakeBackend";
import type { ConnectionView } from "../../bindings";
import { countingConnection } from "./CountExactly";
import { resetSending } from "./sending";

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

/** An Anthropic connection with its key, and a Claude model, whose count is an estimate. */
function withClaude(backend: Backend) {
  backend.connections.set("claude", { name: "claude", dialect: "anthropic", baseUrl: "https://api.anthropic.com" });
  backend.keys.add("claude");
  backend.settings.set("ui.model", "claude-3-5-sonnet");
}

const asked = (backend: Backend) => backend.calls.filter((c) => c.cmd === "count_exactly");

describe("count exactly", () => {
  beforeEach(() => {
    resetForTests();
    resetSending();
  });

  it("asks only when clicked, says the provider's count and its difference, and asks once per content", async () => {
    const backend = await renderApp(withClaude);
    const button = await screen.findByTestId("count-exactly");
    expect(button.textContent).toBe("Count exactly");
    expect(button.getAttribute("title")).toContain("claude");
    // Nothing is asked on its own, not even after a rebuild.
    act(() => setModel("claude-3-opus"));
    await screen.findByTestId("count-exactly");
    act(() => setModel("claude-3-5-sonnet"));
    await screen.findByTestId("count-exactly");
    expect(asked(backend)).toHaveLength(0);

    fireEvent.click(screen.getByTestId("count-exactly"));
    const shown = await screen.findByTestId("exact-count");
    // The fake build of a Claude model counts 23; the fake provider, 7 more.
    expect(shown.textContent).toContain("30 tokens, exact (Anthropic count_tokens)");
    expect(screen.getByTestId("exact-count-difference").textContent).toBe("+7 against the estimate");
    expect(asked(backend)).toHaveLength(1);
    expect(asked(backend)[0]!.args).toMatchObject({ connection: "claude", request: { model: "claude-3-5-sonnet" } });
    expect(backend.counting.requests).toBe(1);

    // Another build shows the button again; the same content is answered from what was kept.
    act(() => setModel("claude-3-opus"));
    act(() => setModel("claude-3-5-sonnet"));
    fireEvent.click(await screen.findByTestId("count-exactly"));
    expect((await screen.findByTestId("exact-count-difference")).textContent).toBe(
      "+7 against the estimate · kept from an earlier count",
    );
    expect(backend.counting.requests).toBe(1);
  });

  it("is not offered without a key or a connection that can count, nor for an exact count", async () => {
    const backend = await renderApp((b) => {
      withClaude(b);
      b.keys.delete("claude");
      b.connections.set("local", { name: "local", dialect: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1" });
      b.keys.add("local");
    });
    await waitFor(() => expect(screen.getByTestId("token-total").textContent).toContain("23"));
    expect(screen.queryByTestId("count-exactly")).toBeNull();
    expect(asked(backend)).toHaveLength(0);
  });

  it("is not offered when the count is exact already", async () => {
    const backend = await renderApp(withClaude);
    await screen.findByTestId("count-exactly");
    act(() => setModel("gpt-4o"));
    await waitFor(() => expect(screen.getByTestId("token-total").textContent).toContain("18"));
    expect(screen.queryByTestId("count-exactly")).toBeNull();
    expect(asked(backend)).toHaveLength(0);
  });

  it("shows the provider's refusal as the app shows errors, and says it in Chinese", async () => {
    const backend = await renderApp(withClaude);
    backend.fail("count_exactly", 1, {
      code: "http_status",
      message: "HTTP 401 Unauthorized from https://api.anthropic.com/v1/messages/count_tokens: invalid x-api-key",
    });
    fireEvent.click(await screen.findByTestId("count-exactly"));
    const error = await screen.findByTestId("exact-count-error");
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toBe(
      "Not counted: HTTP 401 Unauthorized from https://api.anthropic.com/v1/messages/count_tokens: invalid x-api-key",
    );
    // The button stays, to try again.
    backend.counting.tokens = 19;
    act(() => setLanguage("zh-CN"));
    fireEvent.click(screen.getByTestId("count-exactly"));
    expect((await screen.findByTestId("exact-count")).textContent).toContain("19 个 token，精确（Anthropic count_tokens）");
    expect(screen.getByTestId("exact-count-difference").textContent).toBe("与估算相差 −4");
  });

  it("asks the chosen connection when it can count the model's requests, else the first that can", () => {
    const view = (name: string, dialect: string, hasKey = true): ConnectionView => ({
      connection: { name, dialect, baseUrl: "https://h", defaultModel: null, extraHeaders: {}, extraBody: {}, keyEnv: null },
      hasKey,
      keyProblem: null,
      counts: dialect === "anthropic" ? "anthropic-messages" : dialect === "gemini" ? "gemini" : null,
    });
    const all = [view("a-local", "openai-compatible"), view("b-gem", "gemini"), view("c-claude", "anthropic"), view("d-nokey", "anthropic", false)];
    const all2 = [...all, view("e-claude", "anthropic")];
    expect(countingConnection(all2, "e-claude", "anthropic-messages")).toBe("e-claude");
    expect(countingConnection(all2, "a-local", "anthropic-messages")).toBe("c-claude");
    expect(countingConnection(all2, "d-nokey", "anthropic-messages")).toBe("c-claude");
    expect(countingConnection(all2, "c-claude", "gemini")).toBe("b-gem");
    // A Gemini connection does not count a Claude model's request, nor anything an OpenAI one.
    expect(countingConnection([all[0]!, all[1]!, all[3]!], "a-local", "anthropic-messages")).toBeNull();
    expect(countingConnection(all2, "c-claude", "openai-chat")).toBeNull();
  });
});
