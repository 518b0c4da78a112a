import type { Source } from "../../bindings";
import { useT } from "../../app/useT";
import { sourceDetail } from "./source";

/** What produced a message: its kind as a coloured badge, then its template, entry or index. */
export function SourceBadge({ source }: { source: Source }) {
  const t = useT();
  return (
    <>
      <span className={`badge badge-${source.kind}`}>{t(`source.${source.kind}`)}</span>
      <span className="badge-detail">{sourceDetail(source)}</span>
    </>
  );
}
