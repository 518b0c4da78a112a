// Comparing the builds of two models (RULES 9.4): which messages the two contexts share, which
// changed, and which only one of them has. Pure functions, so that the alignment is tested alone.
import type { BuiltMessage } from "../../bindings";

/** How a row of the comparison differs: `left` and `right` are the messages only one side has. */
export type DiffKind = "same" | "changed" | "left" | "right";

/** One row of the comparison: indexes into the left and the right message lists. */
export interface DiffRow {
  kind: DiffKind;
  left: number | null;
  right: number | null;
}

/**
 * What produced a message, whatever its text: the template, lorebook entry, stored history
 * message or processor. Two messages with the same source and different texts are one message
 * that changed.
 */
export function sourceKey(m: BuiltMessage): string {
  const s = m.source;
  const id =
    s.kind === "history" || s.kind === "input"
      ? (s.historyIndex ?? "")
      : (s.templateId ?? s.entryId ?? s.processor ?? s.ephemeral ?? "");
  return `${s.kind}:${id}`;
}

/** A message as the comparison sees it: its source, its role and its text. */
function fullKey(m: BuiltMessage): string {
  return `${sourceKey(m)}\u0000${m.role}\u0000${m.content}`;
}

/** Above this many cells (middle length × middle length) the LCS table is not built. */
export const LCS_LIMIT = 1_000_000;

/**
 * Lines up two built contexts row by row. The rows are in the order of both lists; a pair of
 * messages from the same source is `same` when role and text agree, else `changed`; the rest
 * are `left` or `right`.
 *
 * Runs of identical messages the two contexts share at the start and the end (a long history,
 * mostly) are paired in one pass; the part between is aligned by a longest common subsequence that prefers identical pairs
 * to changed ones. Should that part be too long for the table, messages whose source occurs
 * once on each side are paired in order (patience), and the gaps between them aligned again.
 */
export function alignMessages(left: readonly BuiltMessage[], right: readonly BuiltMessage[]): DiffRow[] {
  const lk = left.map(sourceKey);
  const rk = right.map(sourceKey);
  const lf = left.map(fullKey);
  const rf = right.map(fullKey);

  let head = 0;
  const shorter = Math.min(left.length, right.length);
  while (head < shorter && lf[head] === rf[head]) head++;
  let tail = 0;
  while (tail < shorter - head && lf[left.length - 1 - tail] === rf[right.length - 1 - tail]) tail++;

  const rows: DiffRow[] = [];
  for (let i = 0; i < head; i++) rows.push({ kind: "same", left: i, right: i });
  alignMiddle(head, left.length - tail, head, right.length - tail, { lk, rk, lf, rf, rows }, true);
  for (let t = tail; t > 0; t--) rows.push({ kind: "same", left: left.length - t, right: right.length - t });
  return rows;
}

/** Both sides' keys (by source, and in full) and the rows being written. */
interface Sides {
  lk: string[];
  rk: string[];
  lf: string[];
  rf: string[];
  rows: DiffRow[];
}

/** Aligns `left[a0..a1)` with `right[b0..b1)` onto `rows`. */
function alignMiddle(
  a0: number,
  a1: number,
  b0: number,
  b1: number,
  sides: Sides,
  patience: boolean,
) {
  const { lf, rf, rows } = sides;
  const n = a1 - a0;
  const m = b1 - b0;
  if (n === 0 || m === 0) {
    for (let i = a0; i < a1; i++) rows.push({ kind: "left", left: i, right: null });
    for (let j = b0; j < b1; j++) rows.push({ kind: "right", left: null, right: j });
    return;
  }
  if (n * m <= LCS_LIMIT) {
    lcs(a0, a1, b0, b1, sides);
    return;
  }
  const anchors = patience ? uniqueAnchors(a0, a1, b0, b1, sides) : [];
  if (anchors.length === 0) {
    // Nothing to hold on to: one side's messages, then the other's.
    alignMiddle(a0, a1, b1, b1, sides, false);
    alignMiddle(a1, a1, b0, b1, sides, false);
    return;
  }
  let i = a0;
  let j = b0;
  for (const [ai, bj] of anchors) {
    alignMiddle(i, ai, j, bj, sides, false);
    rows.push({ kind: lf[ai] === rf[bj] ? "same" : "changed", left: ai, right: bj });
    i = ai + 1;
    j = bj + 1;
  }
  alignMiddle(i, a1, j, b1, sides, false);
}

/** The table of a longest common subsequence of sources, an identical pair counting double. */
function lcs(
  a0: number,
  a1: number,
  b0: number,
  b1: number,
  sides: Sides,
) {
  const { lk, rk, lf, rf, rows } = sides;
  const n = a1 - a0;
  const m = b1 - b0;
  const w = m + 1;
  // score[i][j]: the best alignment of left[a0+i..a1) with right[b0+j..b1).
  const score = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      let best = Math.max(score[(i + 1) * w + j]!, score[i * w + j + 1]!);
      if (lk[a0 + i] === rk[b0 + j]) {
        const gain = lf[a0 + i] === rf[b0 + j] ? 2 : 1;
        best = Math.max(best, score[(i + 1) * w + j + 1]! + gain);
      }
      score[i * w + j] = best;
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    const here = score[i * w + j]!;
    if (lk[a0 + i] === rk[b0 + j]) {
      const same = lf[a0 + i] === rf[b0 + j];
      if (here === score[(i + 1) * w + j + 1]! + (same ? 2 : 1)) {
        rows.push({ kind: same ? "same" : "changed", left: a0 + i, right: b0 + j });
        i++;
        j++;
        continue;
      }
    }
    if (score[(i + 1) * w + j]! >= score[i * w + j + 1]!) {
      rows.push({ kind: "left", left: a0 + i, right: null });
      i++;
    } else {
      rows.push({ kind: "right", left: null, right: b0 + j });
      j++;
    }
  }
  for (; i < n; i++) rows.push({ kind: "left", left: a0 + i, right: null });
  for (; j < m; j++) rows.push({ kind: "right", left: null, right: b0 + j });
}

/**
 * Pairs of positions whose source occurs exactly once on each side, the longest run of them that
 * is in order on both sides (patience diff): O(n log n).
 */
function uniqueAnchors(a0: number, a1: number, b0: number, b1: number, { lk, rk }: Sides): [number, number][] {
  const count = (keys: string[], from: number, to: number) => {
    const seen = new Map<string, number>();
    for (let i = from; i < to; i++) seen.set(keys[i]!, seen.has(keys[i]!) ? -1 : i);
    return seen;
  };
  const onLeft = count(lk, a0, a1);
  const onRight = count(rk, b0, b1);
  const pairs: [number, number][] = [];
  for (let i = a0; i < a1; i++) {
    const at = onLeft.get(lk[i]!);
    const bj = onRight.get(lk[i]!);
    if (at === i && bj !== undefined && bj >= 0) pairs.push([i, bj]);
  }
  // The longest increasing subsequence of the right positions, in the left order.
  const tails: number[] = [];
  const previous: number[] = new Array(pairs.length).fill(-1);
  for (let p = 0; p < pairs.length; p++) {
    const bj = pairs[p]![1];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pairs[tails[mid]!]![1] < bj) lo = mid + 1;
      else hi = mid;
    }
    previous[p] = lo > 0 ? tails[lo - 1]! : -1;
    tails[lo] = p;
  }
  const chain: [number, number][] = [];
  for (let p = tails.length > 0 ? tails[tails.length - 1]! : -1; p >= 0; p = previous[p]!) chain.push(pairs[p]!);
  return chain.reverse();
}

/** What the summary line says. */
export interface CompareSummary {
  /** Rows that are not `same`. */
  differ: number;
  changed: number;
  onlyLeft: number;
  onlyRight: number;
}

export function summarize(rows: readonly DiffRow[]): CompareSummary {
  const s: CompareSummary = { differ: 0, changed: 0, onlyLeft: 0, onlyRight: 0 };
  for (const r of rows) {
    if (r.kind === "same") continue;
    s.differ++;
    if (r.kind === "changed") s.changed++;
    else if (r.kind === "left") s.onlyLeft++;
    else s.onlyRight++;
  }
  return s;
}

/** What the rows show: a row, or a run of identical rows folded into one line. */
export type ShownRow =
  | { kind: "row"; row: DiffRow; index: number }
  | { kind: "folded"; from: number; count: number };

/**
 * Folds runs of `same` rows longer than `2 * context + 1`, keeping `context` rows next to each
 * difference (and at the ends), so that a long shared history is one line. `expanded` holds, by
 * the run's first row, how many more of its rows to show.
 */
export function foldRows(rows: readonly DiffRow[], context = 2, expanded: ReadonlyMap<number, number> = new Map()): ShownRow[] {
  const shown: ShownRow[] = [];
  let i = 0;
  while (i < rows.length) {
    if (rows[i]!.kind !== "same") {
      shown.push({ kind: "row", row: rows[i]!, index: i });
      i++;
      continue;
    }
    let end = i;
    while (end < rows.length && rows[end]!.kind === "same") end++;
    const run = end - i;
    const keepHead = i === 0 ? 0 : context;
    const keepTail = end === rows.length ? 0 : context;
    const extra = expanded.get(i) ?? 0;
    if (run - keepHead - keepTail - extra <= 1) {
      for (let k = i; k < end; k++) shown.push({ kind: "row", row: rows[k]!, index: k });
    } else {
      const head = keepHead + extra;
      for (let k = i; k < i + head; k++) shown.push({ kind: "row", row: rows[k]!, index: k });
      shown.push({ kind: "folded", from: i, count: run - head - keepTail });
      for (let k = end - keepTail; k < end; k++) shown.push({ kind: "row", row: rows[k]!, index: k });
    }
    i = end;
  }
  return shown;
}

/**
 * A model to compare `model` with: a Claude model for a GPT one and a GPT model for the rest,
 * preferring one the pickers know.
 */
export function defaultCompareModel(model: string, known: readonly string[]): string {
  const m = model.toLowerCase();
  const gptLike = m.startsWith("gpt") || /^o\d/.test(m) || m.startsWith("chatgpt");
  const family = gptLike ? "claude" : "gpt";
  const fallback = gptLike ? "claude-3-5-sonnet" : "gpt-4o";
  const found = known.find((k) => k.toLowerCase().startsWith(family) && k !== model);
  return found ?? (fallback !== model ? fallback : "gpt-4o-mini");
}
