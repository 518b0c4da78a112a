// Where the first-run tour's popover stands (issue 39): beside what a step points at, never over
// it. A step outlines one or more panes; the popover goes beside all of them together, on the
// side the step prefers when it fits there, else on the other; beside a pane taller than itself
// it stands low in the window, away from the controls at the top of the pane beside.

export interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export const GAP = 12;

function union(boxes: Box[]): Box {
  return {
    left: Math.min(...boxes.map((b) => b.left)),
    top: Math.min(...boxes.map((b) => b.top)),
    right: Math.max(...boxes.map((b) => b.right)),
    bottom: Math.max(...boxes.map((b) => b.bottom)),
  };
}

/** The popover's top left corner, `size` big, beside `targets` in a `view` of that size. */
export function placeBeside(
  targets: Box[],
  side: "right" | "left",
  size: { width: number; height: number },
  view: { width: number; height: number },
): { top: number; left: number } {
  const all = union(targets);
  const clampX = (x: number) => Math.max(GAP, Math.min(x, view.width - size.width - GAP));
  const clampY = (y: number) => Math.max(GAP, Math.min(y, view.height - size.height - GAP));
  const right = all.right + GAP;
  const left = all.left - GAP - size.width;
  const fitsRight = right + size.width <= view.width - GAP;
  const fitsLeft = left >= GAP;
  const tall = all.bottom - all.top > size.height + 2 * GAP;
  // Beside a tall pane: low in the window. Beside a small target: level with it.
  const y = clampY(tall ? view.height - size.height - GAP : all.top);
  if (side === "right" ? fitsRight : fitsLeft) return { top: y, left: side === "right" ? right : left };
  if (side === "right" ? fitsLeft : fitsRight) return { top: y, left: side === "right" ? left : right };
  // No room on either side: below the targets, else above them, else (a window too small for
  // both) in its bottom corner on the preferred side.
  const x = clampX(side === "right" ? all.right - size.width : all.left);
  if (all.bottom + GAP + size.height <= view.height - GAP) return { top: all.bottom + GAP, left: x };
  if (all.top - GAP - size.height >= GAP) return { top: all.top - GAP - size.height, left: x };
  return { top: clampY(view.height), left: x };
}

/** Whether two boxes overlap. */
export function overlaps(a: Box, b: Box): boolean {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}
