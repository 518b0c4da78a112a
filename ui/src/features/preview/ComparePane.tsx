import { useMemo, useRef, useState } from "react";
import type { BuiltMessage, Preview } from "../../bindings";
import { setCompareModel, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { MessageHead } from "./MessageHead";
import { alignMessages, defaultCompareModel, foldRows, summarize, type DiffRow } from "./compare";

/** How many rows of a folded run one click shows. */
const SHOW_MORE = 50;

/** The Compare switch of the preview's header, and the second model picker while it is on. */
export function CompareControls() {
  const t = useT();
  const model = useApp((s) => s.model);
  const models = useApp((s) => s.models);
  const compareModel = useApp((s) => s.compareModel);
  // The model compared last, offered again when comparing is switched back on.
  const last = useRef<string | null>(null);
  const on = compareModel !== null;
  return (
    <>
      <button
        type="button"
        className={on ? "compare-toggle on" : "compare-toggle"}
        data-testid="compare-toggle"
        aria-pressed={on}
        title={t("compare.toggleHint")}
        onClick={() => {
          if (on) {
            last.current = compareModel;
            setCompareModel(null);
          } else {
            setCompareModel(last.current ?? defaultCompareModel(model, models));
          }
        }}
      >
        ⇆ {t("compare.toggle")}
      </button>
      {on && (
        <label className="model-picker">
          {t("compare.model")}
          <input
            list="known-models"
            value={compareModel}
            data-testid="compare-model-input"
            onChange={(e) => e.target.value.trim() && setCompareModel(e.target.value.trim())}
          />
        </label>
      )}
    </>
  );
}

/** The builds of the two models side by side, aligned message by message (RULES 9.4). */
export function ComparePane() {
  const t = useT();
  const left = useApp((s) => s.preview);
  const right = useApp((s) => s.comparePreview);
  const leftError = useApp((s) => s.previewError);
  const rightError = useApp((s) => s.compareError);
  const model = useApp((s) => s.model);
  const compareModel = useApp((s) => s.compareModel) ?? "";

  return (
    <div className="compare" data-testid="compare">
      <div className="compare-columns">
        <ColumnHead side="left" model={model} preview={left} error={null} stale={!!leftError} />
        <ColumnHead side="right" model={compareModel} preview={right} error={rightError} stale={!!rightError} other={left} />
      </div>
      {left && right ? (
        <CompareRows left={left} right={right} stale={!!leftError || !!rightError} />
      ) : (
        !leftError && !rightError && <p className="muted">{t("preview.building")}</p>
      )}
    </div>
  );
}

function ColumnHead({
  side,
  model,
  preview,
  error,
  stale,
  other,
}: {
  side: "left" | "right";
  model: string;
  preview: Preview | null;
  error: string | null;
  stale: boolean;
  other?: Preview | null;
}) {
  const t = useT();
  const result = preview?.result;
  const delta = result && other ? result.tokens.total - other.result.tokens.total : null;
  return (
    <div className={`compare-head compare-head-${side}${stale ? " stale" : ""}`}>
      <strong className="compare-model" title={result?.model ?? model}>
        {result?.model ?? model}
      </strong>
      {result && (
        <>
          <span className="recipe-badge" title={t("compare.recipeProfile")}>
            <span data-testid={`compare-recipe-${side}`}>{result.recipe ?? t("compare.noRecipe")}</span> ·{" "}
            {result.profile}
          </span>
          <span className="compare-total">
            <span data-testid={`compare-total-${side}`}>
              {t("preview.tokens", { total: result.tokens.total, budget: result.tokens.budget })}
            </span>
            {delta !== null && (
              <span className={`delta ${delta > 0 ? "up" : delta < 0 ? "down" : ""}`} data-testid="compare-delta">
                {signed(delta)}
              </span>
            )}
          </span>
          <span className="muted compare-counts">
            {t("preview.messages", { count: result.messages.length })}
            {result.dropped.length > 0 && ` · ${t("compare.dropped", { count: result.dropped.length })}`}
            {result.warnings.length > 0 && ` · ${t("compare.warnings", { count: result.warnings.length })}`}
          </span>
        </>
      )}
      {error && (
        <p className="error" role="alert" data-testid={`compare-error-${side}`}>
          {t("compare.failed", { model, message: error })}
        </p>
      )}
    </div>
  );
}

function CompareRows({ left, right, stale }: { left: Preview; right: Preview; stale: boolean }) {
  const t = useT();
  const a = left.result.messages;
  const b = right.result.messages;
  const rows = useMemo(() => alignMessages(a, b), [a, b]);
  const summary = useMemo(() => summarize(rows), [rows]);
  const [expanded, setExpanded] = useState<ReadonlyMap<number, number>>(new Map());
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
  const shown = useMemo(() => foldRows(rows, 2, expanded), [rows, expanded]);

  const leftRecipe = left.result.recipe ?? t("compare.noRecipe");
  const rightRecipe = right.result.recipe ?? t("compare.noRecipe");
  const parts = [
    summary.differ === 0
      ? t("compare.noDiff")
      : t(summary.differ === 1 ? "compare.differOne" : "compare.differ", { count: summary.differ }),
    leftRecipe === rightRecipe
      ? t("compare.sameRecipe", { recipe: leftRecipe })
      : t("compare.recipes", { left: leftRecipe, right: rightRecipe }),
    t("compare.delta", { delta: signed(right.result.tokens.total - left.result.tokens.total) }),
  ];

  return (
    <div className={stale ? "compare-body stale" : "compare-body"}>
      <p className="compare-summary" data-testid="compare-summary">
        {parts.join(t("compare.separator"))}
      </p>
      {summary.differ > 0 && (
        <ul className="compare-legend" aria-hidden="true">
          {summary.changed > 0 && <li className="diff-changed">{t("compare.kind.changed", { count: summary.changed })}</li>}
          {summary.onlyLeft > 0 && (
            <li className="diff-left">{t("compare.kind.left", { count: summary.onlyLeft, model: left.result.model })}</li>
          )}
          {summary.onlyRight > 0 && (
            <li className="diff-right">{t("compare.kind.right", { count: summary.onlyRight, model: right.result.model })}</li>
          )}
        </ul>
      )}
      <ol className="compare-rows" data-testid="compare-rows">
        {shown.map((s) =>
          s.kind === "folded" ? (
            <li key={`f${s.from}`} className="compare-folded" data-testid="compare-folded">
              <span>{t("compare.folded", { count: s.count })}</span>
              <button
                type="button"
                className="link"
                onClick={() => setExpanded((m) => new Map(m).set(s.from, (m.get(s.from) ?? 0) + SHOW_MORE))}
              >
                {t("compare.showMore", { count: Math.min(SHOW_MORE, s.count) })}
              </button>
            </li>
          ) : (
            <CompareRow
              key={s.index}
              row={s.row}
              left={s.row.left === null ? null : a[s.row.left]!}
              right={s.row.right === null ? null : b[s.row.right]!}
              open={open.has(s.index)}
              onToggle={() =>
                setOpen((o) => {
                  const next = new Set(o);
                  if (!next.delete(s.index)) next.add(s.index);
                  return next;
                })
              }
            />
          ),
        )}
      </ol>
    </div>
  );
}

function CompareRow({
  row,
  left,
  right,
  open,
  onToggle,
}: {
  row: DiffRow;
  left: BuiltMessage | null;
  right: BuiltMessage | null;
  open: boolean;
  onToggle: () => void;
}) {
  const t = useT();
  const label = row.kind === "same" ? undefined : t(`compare.row.${row.kind}`);
  return (
    <li className={`compare-row diff-${row.kind}${open ? " open" : ""}`} data-diff={row.kind} title={label}>
      <Cell message={left} open={open} onToggle={onToggle} />
      <Cell message={right} open={open} onToggle={onToggle} />
    </li>
  );
}

function Cell({ message, open, onToggle }: { message: BuiltMessage | null; open: boolean; onToggle: () => void }) {
  const t = useT();
  if (!message) {
    return (
      <div className="compare-cell absent" aria-label={t("compare.absent")}>
        —
      </div>
    );
  }
  const kind = message.source.kind;
  return (
    <div className={`compare-cell role-${message.role} src-${kind}`}>
      <MessageHead message={message} open={open} onToggle={onToggle} />
      <div className={open ? "compare-content open" : "compare-content"}>{message.content}</div>
    </div>
  );
}

/** `+120`, `−40`, `±0`. */
function signed(n: number): string {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0";
}
