import { useEffect, useMemo, useRef, useState } from "react";
import type { Changes, ChangesSide, DiffRow, FirstDifference } from "../../bindings";
import { useT } from "../../app/useT";
import { RoleIcon } from "../../app/RoleIcon";
import { signed } from "../preview/compare";
import { FoldedRow, useFoldedRows } from "../preview/Folded";
import { SourceBadge } from "../preview/SourceBadge";
import { causeText } from "./changes";
import { ChangedText } from "./ChangedText";

/** What a comparison found: the two sides, the stable prefix, the first difference, the rows. */
export function ChangesBody({ changes, stale }: { changes: Changes; stale: boolean }) {
  const { diff } = changes;
  const first = diff.firstDifference;
  // The row Jump went to; it stays marked while it is still where the two part.
  const [jumped, setJumped] = useState<number | null>(null);
  const marked = jumped !== null && first?.row === jumped ? jumped : null;
  const list = useRef<HTMLOListElement>(null);
  const [asked, setAsked] = useState(0);

  useEffect(() => {
    if (asked === 0 || marked === null) return;
    const row = list.current?.querySelector<HTMLElement>(`[data-row="${marked}"]`);
    const target = row?.querySelector<HTMLElement>(".piece.marked") ?? row;
    target?.scrollIntoView?.({ block: "center" });
  }, [asked, marked]);

  return (
    <div className={stale ? "changes-body stale" : "changes-body"}>
      <div className="changes-summary" data-testid="changes-summary">
        <p className="changes-sides">
          <Side label="changes.before" side={changes.left} /> → <Side label="changes.now" side={changes.right} />
        </p>
        <StablePrefixLine tokens={diff.stablePrefix.tokens} bytes={diff.stablePrefix.bytes} />
        <FirstDifferenceLine
          first={first}
          onJump={() => {
            setJumped(first?.row ?? null);
            setAsked((n) => n + 1);
          }}
        />
        <TotalLine left={diff.leftTokens} right={diff.rightTokens} />
      </div>
      <Rows rows={diff.messages} marked={marked} list={list} />
    </div>
  );
}

function Side({ label, side }: { label: "changes.before" | "changes.now"; side: ChangesSide }) {
  const t = useT();
  return (
    <span className="changes-side">
      <strong>{t(label)}</strong>{" "}
      {t("changes.side", { model: side.model, recipe: side.recipe ?? t("compare.noRecipe"), count: side.messages })}
    </span>
  );
}

function StablePrefixLine({ tokens, bytes }: { tokens: number; bytes: number }) {
  const t = useT();
  return (
    <p className="changes-prefix" title={t("changes.stablePrefixHint")} data-testid="changes-stable-prefix">
      {t("changes.stablePrefix", { tokens, bytes })}
    </p>
  );
}

function TotalLine({ left, right }: { left: number; right: number }) {
  const t = useT();
  const delta = right - left;
  return (
    <p className="changes-total" data-testid="changes-total">
      {t("changes.total", { left, right, delta: signed(delta) })}
    </p>
  );
}

/** "First difference: message 3 · [template] main · the macro {{random}} gave another value". */
function FirstDifferenceLine({ first, onJump }: { first: FirstDifference | null; onJump: () => void }) {
  const t = useT();
  if (!first) {
    return (
      <p className="changes-first identical" data-testid="changes-first-difference">
        {t("changes.identical")}
      </p>
    );
  }
  const cause = causeText(first.cause);
  return (
    <p
      className="changes-first"
      data-testid="changes-first-difference"
      data-row={first.row ?? undefined}
      data-message-index={first.messageIndex ?? undefined}
    >
      <strong>{t("changes.firstDifference")}</strong>{" "}
      {first.messageIndex !== null ? t("changes.message", { index: first.messageIndex }) : t("changes.outsideMessages")}
      {first.source && (
        <>
          {" · "}
          <SourceBadge source={first.source} />
        </>
      )}
      {" · "}
      <span className="changes-cause" data-testid="changes-cause" data-cause={first.cause}>
        {t(cause.key, cause.vars)} <code>{first.cause}</code>
      </span>
      {first.row !== null && (
        <button type="button" className="changes-jump" data-testid="changes-jump" title={t("changes.jumpHint")} onClick={onJump}>
          ↓ {t("changes.jump")}
        </button>
      )}
    </p>
  );
}

function Rows({
  rows,
  marked,
  list,
}: {
  rows: DiffRow[];
  marked: number | null;
  list: React.RefObject<HTMLOListElement | null>;
}) {
  const { shown, more } = useFoldedRows(rows);
  return (
    <ol className="changes-rows" ref={list}>
      {shown.map((s) =>
        s.kind === "folded" ? (
          <FoldedRow key={`f${s.from}`} count={s.count} testId="changes-folded" onMore={() => more(s.from)} />
        ) : (
          <ChangeRow key={s.index} row={s.row} index={s.index} marked={marked === s.index} />
        ),
      )}
    </ol>
  );
}

const KIND_LABEL = { changed: "changes.changed", left: "changes.onlyBefore", right: "changes.onlyNow" } as const;

/** One row: role, source, tokens before and now and their difference; what changed in it. */
function ChangeRow({ row, index, marked }: { row: DiffRow; index: number; marked: boolean }) {
  const t = useT();
  const kind = row.kind;
  // A message only one side has shows whole, as deleted or inserted.
  const pieces = useMemo(
    () =>
      kind === "changed"
        ? (row.changes ?? [])
        : kind === "same"
          ? []
          : [{ op: kind === "left" ? ("delete" as const) : ("insert" as const), text: row.text ?? "" }],
    [kind, row.changes, row.text],
  );
  return (
    <li
      className={`changes-row diff-${kind}${marked ? " jumped" : ""}`}
      data-testid="changes-row"
      data-kind={kind}
      data-row={index}
      data-jumped={marked || undefined}
    >
      <div className="changes-row-head">
        <RoleIcon role={row.role} />
        <SourceBadge source={row.source} />
        {kind !== "same" && <span className={`tag tag-${kind}`}>{t(KIND_LABEL[kind])}</span>}
        <span className="tokens" title={t("changes.rowTokens")}>
          {kind === "same" ? row.rightTokens : `${row.leftTokens} → ${row.rightTokens}`}
        </span>
        {row.tokenDelta !== 0 && (
          <span className={`delta ${row.tokenDelta > 0 ? "up" : "down"}`}>{signed(row.tokenDelta)}</span>
        )}
      </div>
      {pieces.length > 0 && <ChangedText changes={pieces} marked={marked} />}
    </li>
  );
}
