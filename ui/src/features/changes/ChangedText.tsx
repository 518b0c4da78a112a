import { useMemo } from "react";
import type { TextChange } from "../../bindings";
import { useT } from "../../app/useT";
import { shortenPieces, type ShownPiece } from "./changes";

/**
 * A changed message's text, piece by piece: what was deleted struck through in red, what came in
 * green. Long pieces keep a head and a tail around an ellipsis unless `whole`; `marked` marks
 * the first changed piece (where Jump lands).
 */
export function ChangedText({
  changes,
  whole = false,
  marked = false,
}: {
  changes: readonly TextChange[];
  whole?: boolean;
  marked?: boolean;
}) {
  const pieces = useMemo(
    () => (whole ? changes.map((c) => ({ op: c.op, head: c.text, hidden: 0, tail: "" })) : shortenPieces(changes)),
    [changes, whole],
  );
  const first = pieces.findIndex((p) => p.op !== "equal");
  return (
    <div className="changed-text" data-testid="changed-text">
      {pieces.map((p, i) => (
        <Piece key={i} piece={p} marked={marked && i === first} />
      ))}
    </div>
  );
}

function Piece({ piece, marked }: { piece: ShownPiece; marked: boolean }) {
  const t = useT();
  const Tag = piece.op === "delete" ? "del" : piece.op === "insert" ? "ins" : "span";
  return (
    <Tag className={`piece piece-${piece.op}${marked ? " marked" : ""}`} data-op={piece.op} data-marked={marked || undefined}>
      {piece.head}
      {piece.hidden > 0 && <span className="piece-hidden">{t("changes.hidden", { count: piece.hidden })}</span>}
      {piece.tail}
    </Tag>
  );
}
