import type { BuiltMessage } from "../../bindings";
import { useT } from "../../app/useT";
import { RoleIcon } from "../../app/RoleIcon";
import { SourceBadge } from "./SourceBadge";

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
  return (
    <button type="button" className="built-head" onClick={onToggle} aria-expanded={open}>
      <RoleIcon role={message.role} />
      <SourceBadge source={message.source} />
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
