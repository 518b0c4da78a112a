import { useEffect } from "react";
import { setInput, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { ReplyMeta } from "./ReplyMeta";
import { chooseConnection, loadConnections, openConnections, send, stop, useSend } from "./sending";

/** The next user message, the connection it goes through, Send and Stop, and the reply. */
export function SendPanel() {
  const t = useT();
  const input = useApp((s) => s.input);
  const hasSession = useApp((s) => s.session !== null);
  const connections = useSend((s) => s.connections);
  const connection = useSend((s) => s.connection);
  const sending = useSend((s) => s.sending);
  const error = useSend((s) => s.error);
  const notStored = useSend((s) => s.notStored);

  useEffect(() => {
    void loadConnections();
  }, []);

  const ready = connection !== null && hasSession && !sending;
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
                void send(false);
              }
            }}
          />
        </label>
        <label>
          {t("send.connection")}
          <select
            data-testid="connection-select"
            value={connection ?? ""}
            disabled={sending}
            onChange={(e) => chooseConnection(e.target.value || null)}
          >
            {connections.length === 0 && <option value="">{t("send.noConnection")}</option>}
            {connections.map((c) => (
              <option key={c.connection.name} value={c.connection.name}>
                {c.connection.name}
              </option>
            ))}
          </select>
        </label>
        {sending ? (
          <button type="button" className="danger" data-testid="stop" onClick={stop}>
            ■ {t("send.stop")}
          </button>
        ) : (
          <button
            type="button"
            className="primary"
            data-testid="send"
            disabled={!ready}
            title={connection === null ? t("send.needConnection") : !hasSession ? t("send.needSession") : undefined}
            onClick={() => void send(false)}
          >
            {t("send.send")}
          </button>
        )}
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
}

/** The reply arriving, or the session's last reply with its info, swipes and Regenerate. */
function Reply() {
  const t = useT();
  const streamed = useSend((s) => s.streamed);
  const sending = useSend((s) => s.sending);
  const connection = useSend((s) => s.connection);
  const messages = useApp((s) => s.session?.messages);
  if (sending) {
    return (
      <div className="reply-box streaming" data-testid="streaming-reply" aria-live="polite">
        {streamed || <span className="muted">{t("send.waiting")}</span>}
      </div>
    );
  }
  const at = (messages?.length ?? 0) - 1;
  const last = messages?.[at];
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
          onClick={() => void send(true)}
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
