import { useT } from "../app/useT";
import type { Lead } from "../features/recipes/stepText";

/** A row's first meaningful text (`leadOf`), after a quiet mark of what was skipped to get
 * there: the author's comments, which are never sent, and blank lines. Never an empty row. */
export function LeadText({ lead, emptyText }: { lead: Lead; emptyText: string }) {
  const t = useT();
  const marks: string[] = [];
  if (lead.comments > 0) marks.push(t("lead.comments", { count: lead.comments }));
  if (lead.skippedLines > 0) marks.push(t("lead.skippedLines", { count: lead.skippedLines }));
  return (
    <>
      {marks.length > 0 && (
        <span className="lead-skipped" title={marks.join(" · ")} data-testid="lead-skipped">
          {lead.comments > 0 ? "//" : "↧"}
          {lead.comments > 0 ? lead.comments : lead.skippedLines}
        </span>
      )}
      {lead.text ? lead.text : <span className="lead-empty">{emptyText}</span>}
    </>
  );
}
