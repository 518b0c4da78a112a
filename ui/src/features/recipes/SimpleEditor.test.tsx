import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { getState, resetForTests } from "../../app/store";
import { renderApp } from "../../test/renderApp";
import { samplePreset } from "../../test/fakeBackend";
import type { MessageTemplate } from "../../bindings";

// Counts the sortable rows rendered: a keystroke should render the row it changes, not all.
const sortableRenders = vi.hoisted(() => ({ count: 0 }));
vi.mock("@dnd-kit/sortable", async (original) => {
  const real = await original<typeof import("@dnd-kit/sortable")>();
  return {
    ...real,
    useSortable: (args: Parameters<typeof real.useSortable>[0]) => {
      sortableRenders.count++;
      return real.useSortable(args);
    },
  };
});

/** The sample preset with a community preset's sections after its steps: two headers, each with
 * ten prompts that open with the author's comments, every other one off. */
function bigPreset() {
  const preset = samplePreset();
  const templates: MessageTemplate[] = [];
  const steps = [];
  for (const [s, header] of ["=== 🎭 Core ===", "━━ ✨ Style ━━"].entries()) {
    templates.push({ id: `h${s}`, name: header, role: "system", content: "" });
    steps.push({ messageId: `h${s}`, enabled: true });
    for (let i = 0; i < 10; i++) {
      const id = `s${s}-${i}`;
      templates.push({
        id,
        name: `Prompt ${s}.${i}`,
        role: "system",
        content: `{{// @category Cat${s} }}\n{{// @tooltip Does thing ${i} }}\n\nSays ${s}.${i}.`,
      });
      steps.push({ messageId: id, enabled: i % 2 === 0 });
    }
  }
  preset.messageTemplates.push(...templates);
  preset.contextRecipes[0]!.steps.push(...steps);
  return preset;
}

const rows = () => [...screen.getByTestId("steps").children] as HTMLElement[];

describe("simple mode with a big preset", () => {
  beforeEach(() => resetForTests());

  it("shows what each step says, its category, sections with their counts, and how many are on", async () => {
    await renderApp((b) => b.presets.set("helper", bigPreset()), "step-main");
    expect(screen.getByTestId("steps-count").textContent).toBe("15 of 25 on");
    const step = screen.getByTestId("step-s0-1");
    expect(within(step).getByTestId("step-summary").textContent).toBe("//2Says 0.1.");
    expect(step.getAttribute("title")).toBe("Does thing 1");
    expect(within(step).getByText("Cat0")).toBeTruthy();
    const core = screen.getByTestId("section-h0");
    expect(within(core).getByText("🎭 Core")).toBeTruthy();
    expect(within(core).getByTestId("section-count").textContent).toBe("5/10 on");
  });

  it("filters by words, shows the enabled only, folds a section", async () => {
    await renderApp((b) => b.presets.set("helper", bigPreset()), "step-main");
    fireEvent.change(screen.getByTestId("steps-filter"), { target: { value: "thing 3" } });
    await waitFor(() => expect(rows().map((r) => r.dataset.stepId)).toEqual(["h0", "s0-3", "h1", "s1-3"]));
    expect(screen.getByTestId("steps-count").textContent).toBe("2 shown · 15 of 25 on");

    fireEvent.change(screen.getByTestId("steps-filter"), { target: { value: "" } });
    fireEvent.click(screen.getByTestId("steps-enabled-only"));
    await waitFor(() => expect(rows().every((r) => !r.className.includes("disabled"))).toBe(true));
    fireEvent.click(screen.getByTestId("steps-enabled-only"));

    fireEvent.click(within(screen.getByTestId("section-h1")).getByTestId("fold"));
    await waitFor(() => expect(screen.queryByTestId("step-s1-0")).toBeNull());
    expect(screen.getByTestId("step-s0-0")).toBeTruthy();
    fireEvent.click(within(screen.getByTestId("section-h1")).getByTestId("fold"));
    await screen.findByTestId("step-s1-0");
  });

  it("groups by the comments' categories", async () => {
    await renderApp((b) => b.presets.set("helper", bigPreset()), "step-main");
    fireEvent.change(screen.getByTestId("steps-grouping"), { target: { value: "category" } });
    await screen.findByTestId("section-category:Cat1");
    expect(within(screen.getByTestId("section-category:")).getByText("No category")).toBeTruthy();
  });

  it("renders again, on a keystroke in one step, that step's row only", async () => {
    await renderApp((b) => b.presets.set("helper", bigPreset()), "step-main");
    fireEvent.click(within(screen.getByTestId("step-s1-4")).getByText("Prompt 1.4"));
    const content = await screen.findByTestId("editor-content");
    sortableRenders.count = 0;
    fireEvent.change(content, { target: { value: "Says something else." } });
    await waitFor(() => expect(within(screen.getByTestId("step-s1-4")).getByTestId("step-summary").textContent).toBe("Says something else."));
    // One of 25 rows: the edited step's.
    expect(sortableRenders.count).toBe(1);
  });

  it("adds a section by hand: a header step, switched off, that starts a section", async () => {
    await renderApp((b) => b.presets.set("helper", bigPreset()), "step-main");
    fireEvent.click(screen.getByTestId("add-section"));
    const section = await screen.findByTestId("section-section");
    expect(within(section).getByText("Section")).toBeTruthy();
    const steps = getState().preset!.contextRecipes[0]!.steps;
    expect(steps.at(-1)).toEqual({ messageId: "section", enabled: false });
    expect(getState().selectedStep).toBe(steps.length - 1);
  });

  it("switches a whole section on and off as one edit, its header step left as it was", async () => {
    await renderApp((b) => b.presets.set("helper", bigPreset()), "step-main");
    const style = screen.getByTestId("section-h1");
    const all = within(style).getByTestId("section-switch") as HTMLInputElement;
    expect(all.checked).toBe(false);
    expect(all.indeterminate).toBe(true);
    const undo = getState().undo.length;
    fireEvent.click(all);
    await waitFor(() => expect(within(screen.getByTestId("section-h1")).getByTestId("section-count").textContent).toBe("10/10 on"));
    const enabled = () => getState().preset!.contextRecipes[0]!.steps.filter((s) => s.messageId.startsWith("s1-")).map((s) => s.enabled);
    expect(enabled()).toEqual(Array(10).fill(true));
    expect(getState().undo.length).toBe(undo + 1);
    // The other section is untouched.
    expect(within(screen.getByTestId("section-h0")).getByTestId("section-count").textContent).toBe("5/10 on");
    fireEvent.click(within(screen.getByTestId("section-h1")).getByTestId("section-switch"));
    await waitFor(() => expect(enabled()).toEqual(Array(10).fill(false)));
    expect(getState().preset!.contextRecipes[0]!.steps.find((s) => s.messageId === "h1")?.enabled).toBe(true);
    expect(screen.getByTestId("steps-count").textContent).toBe("10 of 25 on");
  });
});
