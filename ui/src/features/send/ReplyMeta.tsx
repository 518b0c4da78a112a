import type { ChatMessage, ReplyInfo } from "../../bindings";
import { useT } from "../../app/useT";
import { flipSwipe, swipePosition, useSend } from "./sending";

/** What came back with a reply, compactly: the model, the provider's prompt tokens beside ours
 * (the calibration), the time, and whether it was stopped. */
export function ReplyInfoLine({ info }: { info: ReplyInfo }) {
  const t = useT();
  const parts: string[] = [info.model];
  if (info.promptTokens != null) {
    parts.push(
      info.countedPromptTokens != null
        ? t("send.promptCounted", { prompt: info.promptTokens, counted: info.countedPromptTokens })
        : t("send.prompt", { prompt: info.promptTokens }),
    );
  } else if (info.countedPromptTokens != null) {
    parts.push(t("send.counted", { counted: info.countedPromptTokens }));
  }
  if (info.completionTokens != null) parts.push(t("send.completion", { count: info.completionTokens }));
  if (info.totalMs != null) parts.push(t("send.ms", { ms: info.totalMs }));
  return (
    <span className="reply-info" data-testid="reply-info" title={info.connection}>
      {parts.join(" · ")}
      {info.incomplete && (
        <span className="reply-incomplete" data-testid="reply-incomplete">
          {" "}
          · {t("send.incomplete")}
        </span>
      )}
    </span>
  );
}

/** "‹ 1/3 ›" for a message with other replies to flip to. */
export function SwipeControls({ message, at }: { message: ChatMessage; at: number }) {
  const t = useT();
  const count = (message.swipes?.length ?? 0) + 1;
  const position = swipePosition(message);
  const sending = useSend((s) => s.sending);
  if (count < 2) return null;
  return (
    <span className="swipes" data-testid={`swipes-${at}`}>
      <button
        type="button"
        className="icon"
        data-testid={`swipe-prev-${at}`}
        aria-label={t("send.swipePrev")}
        title={t("send.swipePrev")}
        disabled={sending || position === 0}
        onClick={() => void flipSwipe(at, -1)}
      >
        ‹
      </button>
      <span data-testid={`swipe-position-${at}`}>
        {position + 1}/{count}
      </span>
      <button
        type="button"
        className="icon"
        data-testid={`swipe-next-${at}`}
        aria-label={t("send.swipeNext")}
        title={t("send.swipeNext")}
        disabled={sending || position === count - 1}
        onClick={() => void flipSwipe(at, 1)}
      >
        ›
      </button>
    </span>
  );
}

/** The reply info and swipe controls of a stored message, when it has either. */
export function ReplyMeta({ message, at }: { message: ChatMessage; at: number }) {
  if (!message.reply && !message.swipes?.length) return null;
  return (
    <div className="reply-meta">
      <SwipeControls message={message} at={at} />
      {message.reply && <ReplyInfoLine info={message.reply} />}
    </div>
  );
}
