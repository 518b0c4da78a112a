import { useMemo, useState } from "react";
import type { BuiltMessage, DiffRow, Preview, TextChange } from "../../bindings";
import { previewRequest, setCompareModel, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { MessageHead } from "./MessageHead";
import { cellMessage, defaultCompareModel, signed, summarize } from "./compare";
import { FoldedRow, useFoldedRows } from "./Folded";
import { ViewToggle } from "./ViewToggle";
import { Icon } from "../../components/Icon";
import { useChanges } from "../changes/useChanges";
import { ChangedText } from "../changes/ChangedText";
import { sidePieces } from "../changes/changes";
import { LeadText } from "../../components/LeadText";
import { LEAD_CHARS, leadOf } from "../recipes/stepText";

/** The Compare switch of the preview's header, an icon button; the second model is chosen at
 * the top of the compare view's right column. */
export function CompareToggle() {
  const t = useT();
  const model = useApp((s) => s.model);
  const models = useApp((s) => s.models);
  const compareModel = useApp((s) => s.compareModel);
  // Switched back on, it compares with the model compared last.
  return (
    <ViewToggle
      value={compareModel}
      set={setCompareModel}
      first={() => defaultCompareModel(model, models)}
      testId="compare-toggle"
      className="compare-toggle head-icon"
      label={t("compare.toggle")}
      hint={t("compare.toggleHint")}
    >
      <Icon name="compare" />
    </ViewToggle>
  );
}

/** The model compared with, in the right column's head. */
function CompareModelInput() {
  const t = useT();
  const compareModel = useApp((s) => s.compareModel);
  if (compareModel === null) return null;
  return (
    <label className="compare-model-picker">
      {t("compare.model")}
      <input
        list="known-models"
        value={compareModel}
        data-testid="compare-model-input"
        title={compareModel}
        onChange={(e) => e.target.value.trim() && setCompareModel(e.target.value.trim())}
      />
    </label>
  );
}

/** The builds of the two models side by side, aligned message by message by the engine (RULES 9.4). */
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
      {side === "right" ? (
        <CompareModelInput />
      ) : (
        <strong className="compare-model" title={result?.model ?? model}>
          {result?.model ?? model}
        </strong>
      )}
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
  const compareModel = useApp((s) => s.compareModel) ?? "";
  // The engine lines the two builds up: the compared model's request against the main one's.
  const answer = useChanges(
    () => {
      const request = previewRequest();
      return request && compareModel ? { request: { ...request, model: compareModel }, against: { kind: "request", request } } : null;
    },
    right,
    compareModel,
  );
  const diff = answer.changes?.diff;
  if (!diff) {
    return answer.error ? (
      <p className="error" role="alert" data-testid="compare-rows-error">
        {t("changes.failed", { message: answer.error })}
      </p>
    ) : (
      <p className="muted">{t("preview.building")}</p>
    );
  }
  return (
    <AlignedRows
      rows={diff.messages}
      delta={diff.rightTokens - diff.leftTokens}
      left={left}
      right={right}
      stale={stale || answer.stale}
    />
  );
}

function AlignedRows({
  rows,
  delta,
  left,
  right,
  stale,
}: {
  rows: DiffRow[];
  delta: number;
  left: Preview;
  right: Preview;
  stale: boolean;
}) {
  const t = useT();
  const a = left.result.messages;
  const b = right.result.messages;
  const summary = useMemo(() => summarize(rows), [rows]);
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
  const { shown, more } = useFoldedRows(rows);

  const leftRecipe = left.result.recipe ?? t("compare.noRecipe");
  const rightRecipe = right.result.recipe ?? t("compare.noRecipe");
  const parts = [
    summary.differ === 0
      ? t("compare.noDiff")
      : t(summary.differ === 1 ? "compare.differOne" : "compare.differ", { count: summary.differ }),
    leftRecipe === rightRecipe
      ? t("compare.sameRecipe", { recipe: leftRecipe })
      : t("compare.recipes", { left: leftRecipe, right: rightRecipe }),
    t("compare.delta", { delta: signed(delta) }),
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
            <FoldedRow key={`f${s.from}`} count={s.count} testId="compare-folded" onMore={() => more(s.from)} />
          ) : (
            <CompareRow
              key={s.index}
              row={s.row}
              left={cellMessage(s.row, "left", a)}
              right={cellMessage(s.row, "right", b)}
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
  const changes = row.changes?.length ? row.changes : null;
  return (
    <li className={`compare-row diff-${row.kind}${open ? " open" : ""}`} data-diff={row.kind} title={label}>
      <Cell message={left} changes={changes && sidePieces(changes, "left")} open={open} onToggle={onToggle} />
      <Cell message={right} changes={changes && sidePieces(changes, "right")} open={open} onToggle={onToggle} />
    </li>
  );
}

/** One side of a row; a changed message marks what the other side does not have. */
function Cell({
  message,
  changes,
  open,
  onToggle,
}: {
  message: BuiltMessage | null;
  changes: TextChange[] | null;
  open: boolean;
  onToggle: () => void;
}) {
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
      <div className={open ? "compare-content open" : "compare-content"}>
        {changes ? (
          <ChangedText changes={changes} whole />
        ) : open ? (
          message.content
        ) : (
          <LeadText lead={leadOf(message.content, LEAD_CHARS)} emptyText={t("preview.emptyMessage")} />
        )}
      </div>
    </div>
  );
}
