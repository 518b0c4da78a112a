import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { getState, resetForTests, setLanguage, setModel, start, undo } from "../../app/store";
import { fakeBackend } from "../../test/fakeBackend";
import type { GenerationSettings } from "../../bindings";

async function openGeneration(generation?: GenerationSettings) {
  const backend = fakeBackend();
  if (generation) backend.presets.get("helper")!.generation = generation;
  render(<App />);
  await act(async () => {
    await start();
  });
  fireEvent.click(await screen.findByTestId("tab-generation"));
  await screen.findByTestId("generation-panel");
  const saved = () => backend.presets.get("helper")?.generation;
  return { ...backend, saved };
}

const origin = (key: string) => screen.getByTestId(`generation-origin-${key}`).getAttribute("data-origin");
const input = (key: string) => screen.getByTestId(`generation-${key}`) as HTMLInputElement;
const type = (key: string, value: string) => fireEvent.change(input(key), { target: { value } });

describe("the generation panel", () => {
  beforeEach(() => resetForTests());

  it("shows every setting, none set, with the line about provider names and warnings", async () => {
    await openGeneration();
    for (const key of ["temperature", "topP", "topK", "maxOutputTokens", "stop", "frequencyPenalty", "presencePenalty", "seed", "extra"]) {
      expect(input(key).value, key).toBe("");
      expect(origin(key), key).toBe("default");
      expect(screen.queryByTestId(`generation-reset-${key}`), key).toBeNull();
    }
    expect(screen.getByTestId("generation-origin-temperature").textContent).toBe("provider default");
    expect(screen.getByTestId("generation-intro").textContent).toContain("each provider's own names");
    expect(screen.getByTestId("generation-intro").textContent).toContain("left out with a warning");
  });

  it("writes a value into the preset, shows it as the preset's, and resets it", async () => {
    const { saved } = await openGeneration();
    type("temperature", "0.7");
    expect(getState().preset?.generation).toEqual({ temperature: 0.7 });
    expect(origin("temperature")).toBe("preset");
    expect(screen.getByTestId("generation-origin-temperature").textContent).toBe("preset");
    await waitFor(() => expect(saved()).toEqual({ temperature: 0.7 }), { timeout: 2000 });
    // The preview's build carries it as the preset's.
    await waitFor(() => expect(getState().preview?.result.generation?.origins.temperature).toBe("preset"));

    type("seed", "42");
    await waitFor(() => expect(saved()).toEqual({ temperature: 0.7, seed: 42 }), { timeout: 2000 });

    fireEvent.click(screen.getByTestId("generation-reset-temperature"));
    expect(input("temperature").value).toBe("");
    expect(origin("temperature")).toBe("default");
    await waitFor(() => expect(saved()).toEqual({ seed: 42 }), { timeout: 2000 });

    // Emptying a field is the same as a reset; with nothing left, the preset has no generation.
    type("seed", "");
    fireEvent.blur(input("seed"));
    await waitFor(() => expect(saved()).toBeUndefined(), { timeout: 2000 });
    expect(getState().preset).not.toHaveProperty("generation");

    // Undo brings the value back, and the field shows it.
    act(() => undo());
    expect(input("seed").value).toBe("42");
    expect(origin("seed")).toBe("preset");
  });

  it("does not write a value out of its range and says the range", async () => {
    const { saved } = await openGeneration({ temperature: 1 });
    type("temperature", "2.5");
    expect(screen.getByTestId("generation-error-temperature").textContent).toBe("Must be between 0 and 2. Not saved.");
    expect(getState().preset?.generation).toEqual({ temperature: 1 });
    // The field keeps what was typed, with the error, after it is left.
    fireEvent.blur(input("temperature"));
    expect(input("temperature").value).toBe("2.5");
    expect(screen.getByTestId("generation-error-temperature")).toBeTruthy();

    // Typed key by key: "1" is taken on the way, "1.5" is not, and the preset gets back what it
    // had before the typing began (nothing), not the "1" on the way.
    type("topP", "1");
    expect(getState().preset?.generation).toEqual({ temperature: 1, topP: 1 });
    type("topP", "1.5");
    expect(screen.getByTestId("generation-error-topP").textContent).toContain("between 0 and 1");
    expect(getState().preset?.generation).toEqual({ temperature: 1 });
    expect(input("topP").value).toBe("1.5");
    type("frequencyPenalty", "-3");
    expect(screen.getByTestId("generation-error-frequencyPenalty").textContent).toContain("between -2 and 2");
    type("topK", "0");
    expect(screen.getByTestId("generation-error-topK").textContent).toContain("at least 1");
    type("maxOutputTokens", "10.5");
    expect(screen.getByTestId("generation-error-maxOutputTokens").textContent).toContain("whole number");
    expect(getState().preset?.generation).toEqual({ temperature: 1 });

    // A value in range is written, and the error goes.
    type("temperature", "1.5");
    expect(screen.queryByTestId("generation-error-temperature")).toBeNull();
    await waitFor(() => expect(saved()).toEqual({ temperature: 1.5 }), { timeout: 2000 });
  });

  it("takes stop sequences one a line, with \\n for a line break, and refuses more than 16", async () => {
    const { saved } = await openGeneration();
    type("stop", "###\n\\nUser:\n");
    expect(getState().preset?.generation).toEqual({ stop: ["###", "\nUser:"] });
    expect(origin("stop")).toBe("preset");
    await waitFor(() => expect(saved()).toEqual({ stop: ["###", "\nUser:"] }), { timeout: 2000 });
    fireEvent.blur(input("stop"));
    expect(input("stop").value).toBe("###\n\\nUser:");

    type("stop", Array.from({ length: 17 }, (_, i) => `s${i}`).join("\n"));
    expect(screen.getByTestId("generation-error-stop").textContent).toBe("17 stop sequences; at most 16 are taken. Not saved.");
    expect(getState().preset?.generation).toEqual({ stop: ["###", "\nUser:"] });
  });

  it("writes extra only while it is a JSON object without the engine's own keys", async () => {
    const { saved } = await openGeneration();
    type("extra", '{ "user": "abc"');
    expect(screen.getByTestId("generation-error-extra").textContent).toContain("Not valid JSON");
    expect(getState().preset?.generation ?? undefined).toBeUndefined();

    type("extra", "[1, 2]");
    expect(screen.getByTestId("generation-error-extra").textContent).toBe("Must be a JSON object, in braces. Not saved.");
    type("extra", '{ "model": "x" }');
    expect(screen.getByTestId("generation-error-extra").textContent).toContain('"model" is written by the engine itself');
    expect(getState().preset?.generation ?? undefined).toBeUndefined();

    type("extra", '{ "user": "abc" }');
    expect(screen.queryByTestId("generation-error-extra")).toBeNull();
    expect(origin("extra")).toBe("preset");
    await waitFor(() => expect(saved()).toEqual({ extra: { user: "abc" } }), { timeout: 2000 });

    fireEvent.click(screen.getByTestId("generation-reset-extra"));
    expect(input("extra").value).toBe("");
    await waitFor(() => expect(saved()).toBeUndefined(), { timeout: 2000 });
  });

  it("shows the model profile's values as the model's, and the preset's over them", async () => {
    const { saved } = await openGeneration();
    act(() => setModel("claude-3-5-sonnet"));
    await waitFor(() => expect(origin("maxOutputTokens")).toBe("model"));
    expect(input("maxOutputTokens").value).toBe("1024");
    expect(screen.getByTestId("generation-origin-maxOutputTokens").textContent).toBe("model profile");
    expect(origin("topK")).toBe("model");
    expect(input("topK").value).toBe("40");
    expect(screen.queryByTestId("generation-reset-maxOutputTokens")).toBeNull();
    expect(origin("extra")).toBe("model");
    expect(screen.getByTestId("generation-inherited-extra").textContent).toBe(
      'From the model profile: {"metadata":{"user_id":"fake"}}',
    );

    // The preset's value wins; a reset goes back to the model profile's.
    type("maxOutputTokens", "2048");
    expect(origin("maxOutputTokens")).toBe("preset");
    await waitFor(() => expect(saved()).toEqual({ maxOutputTokens: 2048 }), { timeout: 2000 });
    fireEvent.blur(input("maxOutputTokens"));
    fireEvent.click(screen.getByTestId("generation-reset-maxOutputTokens"));
    await waitFor(() => expect(origin("maxOutputTokens")).toBe("model"));
    expect(input("maxOutputTokens").value).toBe("1024");
    await waitFor(() => expect(saved()).toBeUndefined(), { timeout: 2000 });
  });

  it("shows the build's warning for a setting the provider does not take", async () => {
    await openGeneration({ topK: 20 });
    const warning = await screen.findByTestId("generation-warning-topK");
    expect(warning.textContent).toContain("not taken by the openai format");
  });

  it("says everything in Chinese", async () => {
    await openGeneration({ topK: 20 });
    act(() => setLanguage("zh-CN"));
    expect(screen.getByTestId("tab-generation").textContent).toBe("生成");
    const panel = screen.getByTestId("generation-panel");
    expect(panel.textContent).toContain("生成设置");
    expect(panel.textContent).toContain("温度");
    expect(screen.getByTestId("generation-origin-topK").textContent).toBe("预设");
    expect(screen.getByTestId("generation-origin-temperature").textContent).toBe("服务商默认");
    type("temperature", "3");
    expect(screen.getByTestId("generation-error-temperature").textContent).toBe("必须在 0 到 2 之间。未保存。");
    expect((await screen.findByTestId("generation-warning-topK")).textContent).toContain("格式不接受生成设置 topK");
  });

  it("sets cache breakpoints for Anthropic models: the system part and depths, refusing what the engine would", async () => {
    const { saved } = await openGeneration();
    expect(screen.getByTestId("generation-row-cacheBreakpoints").textContent).toContain("Anthropic models only");
    expect(origin("cacheBreakpoints")).toBe("default");
    fireEvent.click(screen.getByTestId("generation-cacheSystem"));
    expect(getState().preset?.generation).toEqual({ cacheBreakpoints: { system: true } });
    type("cacheBreakpoints", "0, 2");
    expect(getState().preset?.generation).toEqual({ cacheBreakpoints: { system: true, depths: [0, 2] } });
    expect(origin("cacheBreakpoints")).toBe("preset");
    await waitFor(() => expect(saved()).toEqual({ cacheBreakpoints: { system: true, depths: [0, 2] } }), { timeout: 2000 });
    // A GPT model's format does not take them: the build says so under the setting.
    const warning = await screen.findByTestId("generation-warning-cacheBreakpoints");
    expect(warning.textContent).toContain("not taken by the openai format");

    type("cacheBreakpoints", "0, 2, 0");
    expect(screen.getByTestId("generation-error-cacheBreakpoints").textContent).toBe("Depth 0 is named twice. Not saved.");
    // As with every field: while the text is refused, the preset has what it had before the typing.
    expect(getState().preset?.generation).toEqual({ cacheBreakpoints: { system: true } });
    type("cacheBreakpoints", "a");
    expect(screen.getByTestId("generation-error-cacheBreakpoints").textContent).toBe(
      "Depths are whole numbers from 0, separated by commas. Not saved.",
    );
    type("cacheBreakpoints", "0, 1, 2, 3");
    expect(screen.getByTestId("generation-error-cacheBreakpoints").textContent).toBe(
      "5 breakpoints; a request takes at most 4. Not saved.",
    );
    expect(getState().preset?.generation).toEqual({ cacheBreakpoints: { system: true } });

    // Without the system part the four depths are taken; the system part on top of them is
    // refused, and its box stays clear.
    fireEvent.click(screen.getByTestId("generation-cacheSystem"));
    expect(getState().preset?.generation).toEqual({ cacheBreakpoints: { depths: [0, 1, 2, 3] } });
    expect(screen.queryByTestId("generation-error-cacheBreakpoints")).toBeNull();
    fireEvent.click(screen.getByTestId("generation-cacheSystem"));
    expect(screen.getByTestId("generation-error-cacheBreakpoints").textContent).toBe(
      "5 breakpoints; a request takes at most 4. Not saved.",
    );
    expect((screen.getByTestId("generation-cacheSystem") as HTMLInputElement).checked).toBe(false);
    expect(getState().preset?.generation).toEqual({ cacheBreakpoints: { depths: [0, 1, 2, 3] } });

    fireEvent.click(screen.getByTestId("generation-reset-cacheBreakpoints"));
    expect(input("cacheBreakpoints").value).toBe("");
    expect(screen.queryByTestId("generation-error-cacheBreakpoints")).toBeNull();
    await waitFor(() => expect(saved()).toBeUndefined(), { timeout: 2000 });
  });

  it("shows a model profile's cache breakpoints as the model's; a depth typed makes them the preset's", async () => {
    const { saved } = await openGeneration();
    act(() => setModel("claude-3-5-sonnet"));
    await waitFor(() => expect(origin("cacheBreakpoints")).toBe("model"));
    expect((screen.getByTestId("generation-cacheSystem") as HTMLInputElement).checked).toBe(true);
    expect(input("cacheBreakpoints").value).toBe("");
    // The preset's value replaces the model profile's whole: it keeps the system part shown.
    type("cacheBreakpoints", "1");
    expect(origin("cacheBreakpoints")).toBe("preset");
    await waitFor(() => expect(saved()).toEqual({ cacheBreakpoints: { system: true, depths: [1] } }), { timeout: 2000 });
    act(() => setLanguage("zh-CN"));
    const row = screen.getByTestId("generation-row-cacheBreakpoints");
    expect(row.textContent).toContain("仅适用于 Anthropic 模型");
    expect(row.textContent).toContain("系统部分之后");
  });
});
