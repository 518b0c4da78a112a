import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { resetForTests, setLanguage, setModel, start } from "../../app/store";
import { fakeBackend } from "../../test/fakeBackend";
import type { ProcessorConfig } from "../../bindings";

async function openPipeline(processors?: ProcessorConfig[]) {
  const backend = fakeBackend();
  if (processors) backend.presets.get("helper")!.processors = processors;
  render(<App />);
  await act(async () => {
    await start();
  });
  fireEvent.click(await screen.findByTestId("tab-pipeline"));
  await screen.findByTestId("processor-token-limiter");
  const saved = () => backend.presets.get("helper")?.processors;
  const pipelineCalls = () => backend.calls.filter((c) => c.cmd === "pipeline").length;
  return { ...backend, saved, pipelineCalls };
}

const origin = (id: string) => screen.getByTestId(`origin-${id}`).textContent;

describe("the pipeline panel", () => {
  beforeEach(() => resetForTests());

  it("lists the processors in run order with their switches and origins", async () => {
    await openPipeline();
    const panel = screen.getByTestId("pipeline-panel");
    const ids = [...panel.querySelectorAll("[data-testid^='processor-']")]
      .map((e) => e.getAttribute("data-testid"))
      .filter((id) => !id!.startsWith("processor-enabled-"));
    expect(ids).toEqual(["processor-session-loader", "processor-token-limiter", "processor-ensure-alternation"]);
    // In sections by what they work on, in run order.
    const sections = [...panel.querySelectorAll("[data-testid^='processors-section-']")].map((e) => e.textContent);
    expect(sections).toEqual(["▾The history1/1 on", "▾Budget and after1/1 on", "▾Formatters0/1 on"]);

    const core = screen.getByTestId("processor-enabled-session-loader") as HTMLInputElement;
    expect(core.checked).toBe(true);
    expect(core.disabled).toBe(true);
    expect(core.title).toContain("cannot be disabled");
    expect((screen.getByTestId("processor-enabled-ensure-alternation") as HTMLInputElement).checked).toBe(false);
    expect((screen.getByTestId("priority-token-limiter") as HTMLInputElement).value).toBe("400");

    expect(origin("token-limiter-shareHistory")).toBe("model profile");
    expect((screen.getByTestId("setting-token-limiter-shareHistory") as HTMLInputElement).value).toBe("60");
    expect(origin("token-limiter-strategy")).toBe("pipeline default");
    expect(screen.queryByTestId("reset-token-limiter-shareHistory")).toBeNull();
    expect(screen.queryByTestId("reset-processor-token-limiter")).toBeNull();
  });

  it("filters the processors by name or id", async () => {
    await openPipeline();
    fireEvent.change(screen.getByTestId("processors-filter"), { target: { value: "alternation" } });
    await waitFor(() => expect(screen.queryByTestId("processor-token-limiter")).toBeNull());
    expect(screen.getByTestId("processor-ensure-alternation")).toBeTruthy();
    fireEvent.change(screen.getByTestId("processors-filter"), { target: { value: "no such processor" } });
    await screen.findByText("No processor matches the filter.");
  });

  it("shows the enabled only, counts what is on, folds a section and switches a whole section", async () => {
    const { saved } = await openPipeline();
    expect(screen.getByTestId("processors-count").textContent).toBe("2 of 3 on");
    fireEvent.click(screen.getByTestId("processors-enabled-only"));
    await waitFor(() => expect(screen.queryByTestId("processor-ensure-alternation")).toBeNull());
    expect(screen.queryByTestId("processors-section-formatters")).toBeNull();
    fireEvent.click(screen.getByTestId("processors-enabled-only"));

    const history = await screen.findByTestId("processors-section-history");
    fireEvent.click(within(history).getByTestId("fold"));
    await waitFor(() => expect(screen.queryByTestId("processor-session-loader")).toBeNull());
    fireEvent.click(within(screen.getByTestId("processors-section-history")).getByTestId("fold"));
    await screen.findByTestId("processor-session-loader");

    fireEvent.click(within(screen.getByTestId("processors-section-formatters")).getByTestId("section-switch"));
    await waitFor(() => expect((screen.getByTestId("processor-enabled-ensure-alternation") as HTMLInputElement).checked).toBe(true));
    expect(screen.getByTestId("processors-count").textContent).toBe("3 of 3 on");
    await waitFor(() => expect(saved()).toContainEqual(expect.objectContaining({ id: "ensure-alternation", enabled: true })));
    // A core processor stays on when its section is switched off.
    fireEvent.click(within(screen.getByTestId("processors-section-history")).getByTestId("section-switch"));
    expect((screen.getByTestId("processor-enabled-session-loader") as HTMLInputElement).checked).toBe(true);
  });

  it("writes the preset's processors when a processor is switched and a setting changed", async () => {
    const { saved } = await openPipeline();
    fireEvent.click(screen.getByTestId("processor-enabled-ensure-alternation"));
    await waitFor(() => expect(saved()).toEqual([{ id: "ensure-alternation", enabled: true }]), { timeout: 2000 });
    expect(origin("ensure-alternation")).toBe("preset");
    expect(screen.getByTestId("processor-ensure-alternation").className).not.toContain("disabled");

    // The first edit of the token limiter starts from the model profile's config.
    fireEvent.change(screen.getByTestId("setting-token-limiter-strategy"), { target: { value: "proportional" } });
    await waitFor(
      () =>
        expect(saved()).toEqual([
          { id: "ensure-alternation", enabled: true },
          { id: "token-limiter", settings: { shareHistory: 60, strategy: "proportional" } },
        ]),
      { timeout: 2000 },
    );
    expect(origin("token-limiter-strategy")).toBe("preset");
    expect(origin("token-limiter-shareHistory")).toBe("preset");
    expect(screen.getByTestId("reset-token-limiter-strategy")).toBeTruthy();
    expect(screen.queryByTestId("reset-token-limiter-shareHistory")).toBeNull();

    fireEvent.click(screen.getByTestId("setting-token-limiter-truncateOverflowing"));
    fireEvent.change(screen.getByTestId("setting-token-limiter-shareHistory"), { target: { value: "70" } });
    await waitFor(() =>
      expect(saved()?.[1]).toEqual({
        id: "token-limiter",
        settings: { shareHistory: 70, strategy: "proportional", truncateOverflowing: true },
      }),
      { timeout: 2000 },
    );
    expect(origin("token-limiter-shareHistory")).toBe("preset");
    expect(origin("token-limiter-truncateOverflowing")).toBe("preset");

    // A reset of a value the model profile sets goes back to the model's value.
    fireEvent.click(screen.getByTestId("reset-token-limiter-shareHistory"));
    await waitFor(() => expect(saved()?.[1]?.settings?.shareHistory).toBe(60), { timeout: 2000 });
    expect(origin("token-limiter-shareHistory")).toBe("preset");
    expect((screen.getByTestId("setting-token-limiter-shareHistory") as HTMLInputElement).value).toBe("60");

    // Resetting the processor removes the preset's entry.
    fireEvent.click(screen.getByTestId("reset-processor-token-limiter"));
    await waitFor(() => expect(saved()).toEqual([{ id: "ensure-alternation", enabled: true }]), { timeout: 2000 });
    expect(origin("token-limiter-strategy")).toBe("pipeline default");

    // Switching back off is a switch of its own; the entry stays (it is not the model's config).
    fireEvent.click(screen.getByTestId("processor-enabled-ensure-alternation"));
    await waitFor(() => expect(saved()).toEqual([{ id: "ensure-alternation", enabled: false }]), { timeout: 2000 });
  });

  it("asks the engine again once after a burst of edits, and shows its notes", async () => {
    const { pipelineCalls } = await openPipeline([
      { id: "session-loader", enabled: false },
      { id: "ensure-alternation", settings: { userPlaceholder: "Hi", colour: "blue" } },
    ]);
    const notes = await screen.findByTestId("notes-session-loader");
    expect(notes.textContent).toContain("cannot be disabled");
    expect(screen.getByTestId("notes-ensure-alternation").textContent).toContain('unknown setting "colour"');
    expect(origin("ensure-alternation-userPlaceholder")).toBe("preset");

    const before = pipelineCalls();
    const field = screen.getByTestId("setting-ensure-alternation-userPlaceholder");
    for (const value of ["Hi!", "Hi!!", "Hi!!!"]) fireEvent.change(field, { target: { value } });
    await waitFor(() => expect(pipelineCalls()).toBe(before + 1));
    await new Promise((r) => setTimeout(r, 300));
    expect(pipelineCalls()).toBe(before + 1);
    expect((field as HTMLInputElement).value).toBe("Hi!!!");
  });

  it("says the processors, their settings and notes in Chinese", async () => {
    await openPipeline([{ id: "ensure-alternation", settings: { colour: "blue" } }]);
    act(() => setLanguage("zh-CN"));
    const limiter = screen.getByTestId("processor-token-limiter");
    expect(limiter.textContent).toContain("Token 限制器");
    expect(limiter.textContent).toContain("份额：聊天记录");
    expect(limiter.textContent).not.toContain("Share: history");
    expect(screen.getByTestId("notes-ensure-alternation").textContent).toContain("已忽略未知设置“colour”");
  });

  it("moves a processor when its priority is changed", async () => {
    const { saved } = await openPipeline();
    const priority = screen.getByTestId("priority-ensure-alternation");
    fireEvent.change(priority, { target: { value: "5" } });
    fireEvent.change(priority, { target: { value: "50" } });
    expect(saved()).toBeUndefined();
    fireEvent.keyDown(priority, { key: "Enter" });
    await waitFor(() => expect(saved()).toEqual([{ id: "ensure-alternation", priority: 50 }]), { timeout: 2000 });
    const cards = [...screen.getByTestId("pipeline-panel").querySelectorAll("li.processor")];
    expect(cards.map((c) => c.getAttribute("data-testid"))[0]).toBe("processor-ensure-alternation");
    expect(origin("ensure-alternation")).toBe("preset");
  });

  it("follows the model and shows a clear error when the pipeline cannot be read", async () => {
    await openPipeline();
    act(() => setModel("claude-3-5-sonnet"));
    await waitFor(() =>
      expect((screen.getByTestId("processor-enabled-ensure-alternation") as HTMLInputElement).checked).toBe(true),
    );
    expect(origin("ensure-alternation")).toBe("model profile");
    expect(screen.getByTestId("pipeline-panel").textContent).toContain("claude-3-5-sonnet");

    act(() => setModel("broken"));
    const error = await screen.findByTestId("pipeline-error");
    expect(error.textContent).toBe("The pipeline could not be loaded: no model profile for broken");
    expect(within(screen.getByTestId("pipeline-panel")).getByTestId("processor-token-limiter")).toBeTruthy();
  });

  it("switches SillyTavern compatibility: the processors it changes start from SillyTavern's values, the preset's own still win", async () => {
    const backend = await openPipeline();
    const box = screen.getByTestId("compatibility-sillytavern") as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(screen.getByTestId("compatibility-changes").textContent).toContain("alternates turns as SillyTavern does");
    fireEvent.click(box);
    await waitFor(() => expect(backend.presets.get("helper")?.compatibility).toBe("sillytavern"), { timeout: 2000 });
    await waitFor(() => expect(origin("ensure-alternation")).toBe("SillyTavern"));
    expect((screen.getByTestId("processor-enabled-ensure-alternation") as HTMLInputElement).checked).toBe(true);
    expect(origin("ensure-alternation-userPlaceholder")).toBe("SillyTavern");
    expect((screen.getByTestId("setting-ensure-alternation-userPlaceholder") as HTMLInputElement).value).toBe(
      "[Start a new Chat]",
    );
    // The preset's own value wins over SillyTavern's, and a reset goes back to SillyTavern's.
    fireEvent.change(screen.getByTestId("setting-ensure-alternation-userPlaceholder"), { target: { value: "(go on)" } });
    fireEvent.blur(screen.getByTestId("setting-ensure-alternation-userPlaceholder"));
    await waitFor(() => expect(origin("ensure-alternation-userPlaceholder")).toBe("preset"));
    expect(origin("ensure-alternation")).toBe("SillyTavern");
    fireEvent.click(screen.getByTestId("reset-ensure-alternation-userPlaceholder"));
    await waitFor(() => expect(origin("ensure-alternation-userPlaceholder")).toBe("SillyTavern"));
    // Off again: the native rules, and the preset no longer says sillytavern.
    fireEvent.click(screen.getByTestId("compatibility-sillytavern"));
    await waitFor(() => expect(backend.presets.get("helper")?.compatibility).toBeUndefined(), { timeout: 2000 });
    await waitFor(() => expect(origin("ensure-alternation")).not.toBe("SillyTavern"));
  });
});
