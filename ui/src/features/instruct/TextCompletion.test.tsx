import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { App } from "../../App";
import { getState, resetForTests, setLanguage, start, undo } from "../../app/store";
import { FAKE_INSTRUCT_TEMPLATES, fakeBackend } from "../../test/fakeBackend";
import { getCheckState, resetChecking } from "./checking";
import { forgetBuiltInTemplates } from "./templates";
import { forgetOwnTemplates } from "./TextCompletionSettings";
import type { InstructTemplate } from "../../bindings";

async function openGeneration(own?: InstructTemplate) {
  const backend = fakeBackend();
  if (own) backend.presets.get("helper")!.instruct = own;
  render(<App />);
  await act(async () => {
    await start();
  });
  fireEvent.click(await screen.findByTestId("tab-generation"));
  await screen.findByTestId("text-completion");
  // The built-in templates have arrived.
  await screen.findByRole("option", { name: "ChatML" });
  return backend;
}

const choice = () => screen.getByTestId("instruct-choice") as HTMLSelectElement;
const chatml = FAKE_INSTRUCT_TEMPLATES[0]!;

describe("text completion", () => {
  beforeEach(() => {
    resetForTests();
    resetChecking();
    forgetBuiltInTemplates();
    forgetOwnTemplates();
  });

  it("is off for a preset without a template; a built-in chosen is stored whole, off removes it", async () => {
    const backend = await openGeneration();
    expect(choice().value).toBe("off");
    expect(screen.queryByTestId("instruct-fields")).toBeNull();
    expect(screen.queryByTestId("prompt-view")).toBeNull();

    fireEvent.change(choice(), { target: { value: "builtin:chatml" } });
    expect(getState().preset?.instruct).toEqual(chatml);
    await waitFor(() => expect(backend.presets.get("helper")?.instruct).toEqual(chatml), { timeout: 2000 });
    // Its fields, read only, white space escaped.
    const fields = screen.getByTestId("instruct-fields");
    expect(fields.textContent).toContain("ChatML (chatml)");
    expect(fields.textContent).toContain("<|im_start|>user\\n");
    expect(fields.textContent).toContain("a turn of their own");
    expect(fields.querySelector("input, textarea, select")).toBeNull();

    // The preview shows the prompt string, the message list one click away.
    const view = await screen.findByTestId("prompt-view");
    expect(within(view).getByTestId("prompt-template").textContent).toBe("Text completion · ChatML");
    const block = within(view).getByTestId("prompt-string");
    expect(block.textContent).toBe(getState().preview?.result.prompt?.prompt);
    expect(block.querySelector("mark.special-token")?.textContent).toBe("<|im_start|>");
    fireEvent.click(screen.getByTestId("preview-view-messages"));
    expect(screen.getByTestId("preview-messages")).toBeTruthy();
    expect(screen.queryByTestId("prompt-view")).toBeNull();
    fireEvent.click(screen.getByTestId("preview-view-prompt"));
    expect(screen.getByTestId("prompt-view")).toBeTruthy();

    fireEvent.change(choice(), { target: { value: "off" } });
    expect(getState().preset).not.toHaveProperty("instruct");
    await waitFor(() => expect(backend.presets.get("helper")).not.toHaveProperty("instruct"), { timeout: 2000 });
    await waitFor(() => expect(screen.queryByTestId("prompt-view")).toBeNull());
    expect(screen.getByTestId("preview-messages")).toBeTruthy();
    expect(screen.queryByTestId("preview-view-prompt")).toBeNull();

    // Undo brings the template back.
    act(() => undo());
    expect(getState().preset?.instruct).toEqual(chatml);
    expect(choice().value).toBe("builtin:chatml");
  });

  it("offers a preset's own template, and gives it back after a built-in was chosen", async () => {
    const own: InstructTemplate = { ...chatml, id: "st-custom", name: "Imported ChatML", stop: ["<|im_end|>", "\n\nUser:"] };
    await openGeneration(own);
    expect(choice().value).toBe("own");
    expect(screen.getByRole("option", { name: "This preset's own: Imported ChatML" })).toBeTruthy();
    expect(screen.getByTestId("instruct-fields").textContent).toContain("\\n\\nUser:");

    fireEvent.change(choice(), { target: { value: "builtin:alpaca" } });
    expect(getState().preset?.instruct?.id).toBe("alpaca");
    // Still offered: choosing it again puts the imported template back.
    fireEvent.change(choice(), { target: { value: "own" } });
    expect(getState().preset?.instruct).toEqual(own);
  });

  it("checks the build against a pasted chat template: identical, a difference, an error", async () => {
    const backend = await openGeneration();
    fireEvent.change(choice(), { target: { value: "builtin:chatml" } });
    const view = await screen.findByTestId("prompt-view");
    fireEvent.click(within(view).getByText("Check against the model's chat template"));
    const run = screen.getByTestId("jinja-run") as HTMLButtonElement;
    expect(run.disabled).toBe(true);

    fireEvent.change(screen.getByTestId("jinja-template"), {
      target: { value: "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}" },
    });
    fireEvent.click(run);
    const identical = await screen.findByTestId("jinja-result");
    expect(identical.dataset.identical).toBe("true");
    expect(identical.textContent).toContain("Identical");
    const call = backend.calls.find((c) => c.cmd === "check_chat_template")!;
    expect(call.args).toMatchObject({ bos: "", eos: "", request: { model: getState().model } });
    expect((call.args.request as { preset: { instruct: unknown } }).preset.instruct).toEqual(chatml);

    fireEvent.change(screen.getByTestId("jinja-template"), { target: { value: "{{ bos_token }}[INST]" } });
    fireEvent.change(screen.getByTestId("jinja-bos"), { target: { value: "<s>" } });
    fireEvent.click(run);
    await waitFor(() => expect(screen.getByTestId("jinja-result").dataset.identical).toBe("false"));
    expect(screen.getByTestId("jinja-result").textContent).toContain("differ from byte 0 on (line 1, column 1)");
    expect(screen.getByTestId("jinja-ours-changed").textContent).toContain("<|im_start|>user");
    expect(screen.getByTestId("jinja-theirs-changed").textContent).toBe("<s>[INST] Hello [/INST]");

    // A template that does not parse: the engine's words, and the preview goes on.
    fireEvent.change(screen.getByTestId("jinja-template"), { target: { value: "{% for m in messages" } });
    fireEvent.click(run);
    const error = await screen.findByTestId("jinja-error");
    expect(error.textContent).toBe('The check failed: chat template "pasted": line 1: unexpected end of input');
    expect(screen.queryByTestId("jinja-result")).toBeNull();
    expect(screen.getByTestId("prompt-string")).toBeTruthy();
    expect(getState().previewError).toBeNull();
    expect(getCheckState().running).toBe(false);
  });

  it("speaks Chinese", async () => {
    await openGeneration();
    act(() => setLanguage("zh-CN"));
    fireEvent.change(choice(), { target: { value: "builtin:chatml" } });
    expect(screen.getByTestId("text-completion").textContent).toContain("文本补全");
    expect(screen.getByRole("option", { name: "关闭：聊天补全" })).toBeTruthy();
    const view = await screen.findByTestId("prompt-view");
    expect(within(view).getByTestId("prompt-template").textContent).toBe("文本补全 · ChatML");
    expect(within(view).getByText("与模型自带的聊天模板核对")).toBeTruthy();
  });
});
