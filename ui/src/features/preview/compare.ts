// Comparing two builds (RULES 9.4, 9.5): the engine lines their messages up (`commands.changes`,
// crates/engine/src/diff); these pure functions summarize and fold its rows and pick the model
// to compare with.
import type { BuiltMessage, DiffRow, RowKind } from "../../bindings";

/** What the functions here read of a row of the engine's diff. */
export interface Row {
  kind: RowKind;
}

/**
 * One side's message of a row as its cell shows it: that build's message at the row's index, with
 * the row's tokens; null when the side has none. Should the build no longer have it (the rows
 * came from a build before it), the row's own role, source and text stand in.
 */
export function cellMessage(row: DiffRow, side: "left" | "right", messages: readonly BuiltMessage[]): BuiltMessage | null {
  const index = side === "left" ? row.left : row.right;
  if (index === null) return null;
  const m = messages[index];
  return {
    role: m?.role ?? row.role,
    content: m?.content ?? row.text ?? "",
    tokens: side === "left" ? row.leftTokens : row.rightTokens,
    exact: m?.exact ?? true,
    source: m?.source ?? row.source,
    truncated: m?.truncated,
  };
}

/** What the summary line says. */
export interface CompareSummary {
  /** Rows that are not `same`. */
  differ: number;
  changed: number;
  onlyLeft: number;
  onlyRight: number;
}

export function summarize(rows: readonly Row[]): CompareSummary {
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
export type ShownRow<R extends Row = Row> =
  | { kind: "row"; row: R; index: number }
  | { kind: "folded"; from: number; count: number };

/**
 * Folds runs of `same` rows longer than `2 * context + 1`, keeping `context` rows next to each
 * difference (and at the ends), so that a long shared history is one line. `expanded` holds, by
 * the run's first row, how many more of its rows to show.
 */
export function foldRows<R extends Row>(
  rows: readonly R[],
  context = 2,
  expanded: ReadonlyMap<number, number> = new Map(),
): ShownRow<R>[] {
  const shown: ShownRow<R>[] = [];
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

/** `+120`, `−40`, `±0`. */
export function signed(n: number): string {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0";
}
