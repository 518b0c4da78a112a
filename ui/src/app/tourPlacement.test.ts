import { describe, expect, it } from "vitest";
import { overlaps, placeBeside, type Box } from "./tourPlacement";

const box = (left: number, top: number, right: number, bottom: number): Box => ({ left, top, right, bottom });
const SIZE = { width: 300, height: 180 };
const at = (p: { top: number; left: number }) => box(p.left, p.top, p.left + SIZE.width, p.top + SIZE.height);

describe("the tour's popover", () => {
  // The window at 1280x800: presets, the recipe, the preview with its model field at the top.
  const view = { width: 1280, height: 800 };
  const sidebar = box(0, 56, 220, 800);
  const editor = box(220, 56, 726, 800);
  const preview = box(726, 56, 1280, 800);
  const modelField = box(808, 70, 996, 120);

  it("stands beside the library and the recipe, over neither, and not over the model field", () => {
    const p = at(placeBeside([sidebar, editor], "right", SIZE, view));
    expect(overlaps(p, sidebar) || overlaps(p, editor)).toBe(false);
    expect(overlaps(p, modelField)).toBe(false);
    expect(p.right).toBeLessThanOrEqual(view.width);
    expect(p.bottom).toBeLessThanOrEqual(view.height);
  });

  it("stands beside the preview, on its left", () => {
    const p = at(placeBeside([preview], "left", SIZE, view));
    expect(overlaps(p, preview)).toBe(false);
  });

  it("stands level with a small target, beside it", () => {
    const button = box(12, 360, 207, 390);
    const p = at(placeBeside([button], "right", SIZE, view));
    expect(overlaps(p, button)).toBe(false);
    expect(p.top).toBe(360);
  });

  it("takes the other side, then below, when the preferred one has no room", () => {
    const narrow = { width: 900, height: 560 };
    const p = at(placeBeside([box(0, 56, 560, 560)], "left", SIZE, narrow));
    expect(p.left).toBe(572);
    const wide = box(0, 56, 900, 300);
    const q = at(placeBeside([wide], "right", SIZE, narrow));
    expect(overlaps(q, wide)).toBe(false);
  });
});
