import type { BuiltMessage } from "../../bindings";
import { useT } from "../../app/useT";
import { RoleIcon } from "../../app/RoleIcon";
import { useApp } from "../../app/store";
import { SourceBadge } from "./SourceBadge";
import { writesSummary } from "./source";

/** The line above a built message: role, provenance badge, its detail, cut mark, tokens. A click
 * opens or closes the message's text. */
export function MessageHead({
  message,
  open,
  onToggle,
}: {
  message: BuiltMessage;
  open: boolean;
  onToggle: () => void;
}) {
  const t = useT();
  // The message that writes the session's summary shows that it is the summary, and what it
  // covers (RULES 5.15).
  const summary = useApp((s) =>
    s.preview?.summary && writesSummary(message.source, s.preset?.messageTemplates ?? []) ? s.preview.summary : null,
  );
  return (
    <button type="button" className="built-head" onClick={onToggle} aria-expanded={open}>
      <RoleIcon role={message.role} />
      <SourceBadge source={message.source} />
      {summary && (
        <span
          className="badge badge-summary"
          data-testid="summary-badge"
          title={summary.edited ? t("sessionMemory.editedByHand") : undefined}
        >
          {t("sessionMemory.summaryBadge", { first: summary.firstPosition, last: summary.lastPosition })}
          {summary.edited ? " ✎" : ""}
        </span>
      )}
      {message.truncated && <span className="badge badge-truncated">✂</span>}
      <span
        className={message.exact ? "tokens" : "tokens estimate"}
        title={t(message.exact ? "preview.messageExact" : "preview.messageEstimate")}
        data-testid="message-tokens"
      >
        {message.exact ? message.tokens : `~${message.tokens}`}
      </span>
    </button>
  );
}
