import { useMemo, useState } from "react";
import { useT } from "../../app/useT";
import { foldRows, type Row } from "./compare";

/** How many rows of a folded run one click shows. */
const SHOW_MORE = 50;

/** `rows` with their long runs of identical rows folded (`foldRows`), and `more(from)`, which
 * shows more of the run that starts at row `from`. */
export function useFoldedRows<R extends Row>(rows: readonly R[]) {
  const [expanded, setExpanded] = useState<ReadonlyMap<number, number>>(new Map());
  const shown = useMemo(() => foldRows(rows, 2, expanded), [rows, expanded]);
  const more = (from: number) => setExpanded((m) => new Map(m).set(from, (m.get(from) ?? 0) + SHOW_MORE));
  return { shown, more };
}

/** A folded run: how many identical messages it holds, and a button that shows more of them. */
export function FoldedRow({ count, testId, onMore }: { count: number; testId: string; onMore: () => void }) {
  const t = useT();
  return (
    <li className="compare-folded" data-testid={testId}>
      <span>{t("compare.folded", { count })}</span>
      <button type="button" className="link" onClick={onMore}>
        {t("compare.showMore", { count: Math.min(SHOW_MORE, count) })}
      </button>
    </li>
  );
}
