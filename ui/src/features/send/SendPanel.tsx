import { memo } from "react";
import type { GenerationType } from "../../bindings";
import { setGenerationType, setInput, setPrefill, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import type { MessageKey } from "../../i18n";
import { ReplyMeta } from "./ReplyMeta";
import { openConnections, send, stop, useSend, type SendKind } from "./sending";

/** The kinds of generation the app sends, each with its button (RULES 5.14). */
export const SENT_TYPES = ["normal", "continue", "impersonate"] as const satisfies readonly GenerationType[];
type SentType = (typeof SENT_TYPES)[number];

const BUTTON: Record<SentType, { label: MessageKey; help?: MessageKey; testId: string }> = {
  normal: { label: "send.send", testId: "send" },
  continue: { label: "send.continue", help: "send.continueHelp", testId: "continue" },
  impersonate: { label: "send.impersonate", help: "send.impersonateHelp", testId: "impersonate" },
};

/**
 * The next user message, "Start reply with", Send, Continue and Impersonate (or Stop), and the
 * reply; the connection they send through is chosen in the preview's header. The button of the
 * kind the preview shows is the primary one: what it sends is what the preview shows. Not
 * rendered again with each new preview, which it does not show (docs/PERFORMANCE.md, issue 39).
 */
export const SendPanel = memo(function SendPanel() {
  const t = useT();
  const input = useApp((s) => s.input);
  const prefill = useApp((s) => s.prefill);
  const shownType = useApp((s) => s.generationType);
  const hasSession = useApp((s) => s.session !== null);
  const lastIsReply = useApp((s) => s.session?.messages.at(-1)?.role === "assistant");
  const connections = useSend((s) => s.connections);
  const connection = useSend((s) => s.connection);
  const sending = useSend((s) => s.sending);
  const error = useSend((s) => s.error);
  const notStored = useSend((s) => s.notStored);

  const ready = connection !== null && hasSession && !sending;
  /** Why `kind` cannot be sent now, or null. */
  const blocked = (kind: SentType): string | null => {
    if (connection === null) return t("send.needConnection");
    if (!hasSession) return t("send.needSession");
    if (kind === "continue" && !lastIsReply) return t("send.nothingToContinue");
    return null;
  };
  return (
    <div className="send-panel">
      <div className="send-row">
        <label className="input-field grow">
          {t("preview.input")}
          <input
            value={input}
            data-testid="send-input"
            onChange={(e) => setInput(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey && ready && input.trim()) {
                e.preventDefault();
                void send("normal");
              }
            }}
          />
        </label>
        {sending ? (
          <button type="button" className="danger" data-testid="stop" onClick={stop}>
            ■ {t("send.stop")}
          </button>
        ) : (
          <div className="send-buttons">
            {SENT_TYPES.map((kind) => {
              const b = BUTTON[kind];
              const why = blocked(kind);
              return (
                <button
                  key={kind}
                  type="button"
                  className={kind === shownType ? "primary" : undefined}
                  data-testid={b.testId}
                  disabled={!ready || why !== null}
                  title={why ?? (b.help ? t(b.help) : undefined)}
                  onClick={() => void send(kind)}
                >
                  {t(b.label)}
                </button>
              );
            })}
          </div>
        )}
      </div>
      <div className="send-row">
        <label className="input-field grow" title={t("send.prefillHelp")}>
          {t("send.prefill")}
          <input
            value={prefill}
            data-testid="prefill-input"
            placeholder={t("send.prefillPlaceholder")}
            onChange={(e) => setPrefill(e.target.value)}
          />
        </label>
      </div>
      {connections.length === 0 && !sending && (
        <p className="muted send-hint">
          {t("send.noConnectionsYet")}{" "}
          <button type="button" className="link" onClick={() => openConnections(true)}>
            {t("send.addConnection")}
          </button>
        </p>
      )}
      {error && (
        <p className="error" role="alert" data-testid="send-error">
          {t(notStored ? "send.notStored" : "send.failed", { message: error })}
        </p>
      )}
      <Reply />
    </div>
  );
});

/** The preview's kind of generation (RULES 5.14): the context of the kind about to be sent. */
export const GenerationTypeSwitch = memo(function GenerationTypeSwitch() {
  const t = useT();
  const shown = useApp((s) => s.generationType);
  return (
    <div className="type-switch-row">
      <span className="muted">{t("preview.type")}</span>
      <div className="mode-switch type-switch" role="radiogroup" aria-label={t("preview.type")} data-testid="preview-type">
        {SENT_TYPES.map((kind) => (
          <button
            key={kind}
            type="button"
            role="radio"
            aria-checked={kind === shown}
            data-testid={`preview-type-${kind}`}
            className={kind === shown ? "current" : undefined}
            onClick={() => setGenerationType(kind)}
          >
            {t(`preview.type.${kind}`)}
          </button>
        ))}
      </div>
    </div>
  );
});

const STREAMING: Partial<Record<SendKind, MessageKey>> = {
  continue: "send.continuing",
  impersonate: "send.impersonating",
};

/** The reply arriving, or the session's last reply with its info, swipes and Regenerate. */
function Reply() {
  const t = useT();
  const streamed = useSend((s) => s.streamed);
  const sending = useSend((s) => s.sending);
  const kind = useSend((s) => s.sendingKind);
  const connection = useSend((s) => s.connection);
  const messages = useApp((s) => s.session?.messages);
  const at = (messages?.length ?? 0) - 1;
  const last = messages?.[at];
  if (sending) {
    const label = kind ? STREAMING[kind] : undefined;
    // A continuation arrives at the end of the reply it continues, shown before it.
    const continued = kind === "continue" && last?.role === "assistant" ? last.content : "";
    return (
      <div className="reply-box streaming" data-testid="streaming-reply" data-kind={kind ?? undefined} aria-live="polite">
        {label && <div className="streaming-label muted">{t(label)}</div>}
        {continued && <span className="continued">{continued}</span>}
        {streamed || (!continued && <span className="muted">{t("send.waiting")}</span>)}
      </div>
    );
  }
  if (!last || last.role !== "assistant") return null;
  return (
    <div className="reply-box" data-testid="last-reply">
      <div className="reply-head">
        <strong>{t("send.lastReply")}</strong>
        <ReplyMeta message={last} at={at} />
        <button
          type="button"
          data-testid="regenerate"
          disabled={connection === null}
          title={connection === null ? t("send.needConnection") : undefined}
          onClick={() => void send("regenerate")}
        >
          ↻ {t("send.regenerate")}
        </button>
      </div>
      <div className="reply-text" data-testid="last-reply-text">
        {last.content}
      </div>
    </div>
  );
}
