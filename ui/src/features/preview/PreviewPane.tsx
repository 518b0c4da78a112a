import { memo, useEffect, useRef, useState } from "react";
import { MessageList } from "./MessageList";
import { WhatFires } from "../lorebook/WhatFires";
import type { BuiltMessage, Preview, RenderedPrompt, ShownRequest } from "../../bindings";
import { previewRequest, setModel, useApp } from "../../app/store";
import { api, errorMessage } from "../../app/api";
import { useSay, useT } from "../../app/useT";
import { CalibrationNote } from "../send/CalibrationNote";
import { CountExactly } from "../send/CountExactly";
import { MessageHead } from "./MessageHead";
import { SessionPicker } from "../session/SessionPicker";
import { TokenBar } from "./TokenBar";
import { sourceLabel } from "./source";
import { CompareControls, ComparePane } from "./ComparePane";
import { ChangesToggle } from "../changes/ChangesToggle";
import { ChangesPane } from "../changes/ChangesPane";
import { CacheBreakpointMark, useBreakpointMarks } from "./CacheBreakpoint";
import type { BreakpointMark } from "./breakpoints";
import { ConnectionsButton } from "../send/ConnectionsDialog";
import { GenerationTypeSwitch, SendPanel } from "../send/SendPanel";
import { useSend } from "../send/sending";
import { PromptString } from "../instruct/PromptString";
import { templateNameOf, useBuiltInTemplates } from "../instruct/templates";
import { LeadText } from "../../components/LeadText";
import { LEAD_CHARS, leadOf } from "../recipes/stepText";

/** The live preview (RULES 9.4): model and session pickers, then the exact context and its cost. */
export function PreviewPane() {
  const t = useT();
  const preview = useApp((s) => s.preview);
  const error = useApp((s) => s.previewError);
  const model = useApp((s) => s.model);
  const models = useApp((s) => s.models);
  const comparing = useApp((s) => s.compareModel !== null);
  const changing = useApp((s) => s.changesMode !== null);

  return (
    <section className="preview" aria-label={t("preview.title")}>
      <header className="preview-head">
        <h2>{t("preview.title")}</h2>
        <label className="model-picker">
          {t("preview.model")}
          <input
            list="known-models"
            value={model}
            data-testid="model-input"
            onChange={(e) => e.target.value.trim() && setModel(e.target.value.trim())}
          />
          <datalist id="known-models">
            {models.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </label>
        {preview && (
          <span className="recipe-badge" data-testid="preview-recipe">
            {preview.result.recipe ?? "—"} · {preview.result.profile}
          </span>
        )}
        <CompareControls />
        <ChangesToggle />
        <ConnectionsButton />
      </header>
      <SessionPicker />
      <SendPanel />
      <GenerationTypeSwitch />
      {error && (
        <p className="error" role="alert" data-testid="preview-error">
          {t("preview.failed", { message: error })}
        </p>
      )}
      {comparing ? (
        <ComparePane />
      ) : changing ? (
        <ChangesPane />
      ) : preview ? (
        <PreviewBody preview={preview} stale={!!error} />
      ) : (
        !error && <p className="muted">{t("preview.building")}</p>
      )}
    </section>
  );
}

function PreviewBody({ preview, stale }: { preview: Preview; stale: boolean }) {
  const t = useT();
  const say = useSay();
  const { result } = preview;
  const [open, setOpen] = useState<number | null>(null);
  // In text completion the prompt string is what is sent, so it is shown first; the message
  // list it was written from stays one click away.
  const [view, setView] = useState<"prompt" | "messages">("prompt");
  const prompt = result.prompt ?? null;
  const shown = prompt ? view : "messages";
  const marks = useBreakpointMarks(preview);
  // Memory was asked for and gave nothing in time, or failed: said above the messages too.
  const memorySkipped = result.warnings.find((w) => w.said.code === "memory.skipped");
  return (
    <div className={stale ? "preview-body stale" : "preview-body"}>
      <div className="totals">
        <strong data-testid="token-total">
          {t("preview.tokens", { total: result.tokens.total, budget: result.tokens.budget })}
        </strong>
        <span className={preview.exact ? "muted" : "warn-text"} data-testid="preview-tokenizer">
          {preview.tokenizer} · {t(preview.exact ? "preview.exact" : "preview.estimate")}
        </span>
        <CountExactly preview={preview} />
        <CalibrationNote model={result.model} />
        <span className="muted">
          {t("preview.messages", { count: result.messages.length })} ·{" "}
          {t("preview.buildTime", { ms: (preview.buildMs ?? 0).toFixed(1) })}
        </span>
      </div>
      <TokenBar summary={result.tokens} />
      {memorySkipped && (
        <p className="memory-notice" role="status" data-testid="memory-skipped">
          {say(memorySkipped.said, memorySkipped.message)}
        </p>
      )}
      {prompt && (
        <div role="tablist" className="tablist preview-views" aria-label={t("prompt.views")}>
          {(["prompt", "messages"] as const).map((v) => (
            <button
              key={v}
              type="button"
              role="tab"
              aria-selected={shown === v}
              data-testid={`preview-view-${v}`}
              className={shown === v ? "tab current" : "tab"}
              onClick={() => setView(v)}
            >
              {t(v === "prompt" ? "prompt.viewPrompt" : "prompt.viewMessages")}
            </button>
          ))}
        </div>
      )}
      {prompt && shown === "prompt" ? (
        <PromptView prompt={prompt} messages={result.messages} tokens={result.tokens.total} />
      ) : (
        <MessageList
          count={result.messages.length}
          open={open}
          renderRow={(i, style, measure) => (
            <BuiltRow
              key={i}
              message={result.messages[i]!}
              mark={marks.get(i)}
              open={open === i}
              style={style}
              measure={measure}
              onToggle={() => setOpen((o) => (o === i ? null : i))}
            />
          )}
        />
      )}
      {result.dropped.length > 0 && (
        <details open className="dropped" data-testid="dropped">
          <summary>
            {t("preview.dropped")} ({result.dropped.length})
          </summary>
          <ul>
            {result.dropped.map((d, i) => (
              <li key={i}>
                {t("preview.droppedItem", {
                  action: d.action,
                  source: sourceLabel(d.source),
                  count: d.count,
                  reason: say(d.said, d.reason),
                })}
              </li>
            ))}
          </ul>
        </details>
      )}
      <WhatFires />
      {result.warnings.length > 0 && (
        <details open className="warnings" data-testid="warnings">
          <summary>
            {t("preview.warnings")} ({result.warnings.length})
          </summary>
          <ul>
            {result.warnings.map((w, i) => (
              <li key={i}>
                <code>{w.processor}</code> {say(w.said, w.message)}
              </li>
            ))}
          </ul>
        </details>
      )}
      <details className="logs">
        <summary>
          {t("preview.logs")} ({result.logs.length})
        </summary>
        <ul>
          {result.logs.map((l, i) => (
            <li key={i} className={`log-${l.level}`}>
              <code>{l.processor}</code> {say(l.said, l.message)}
            </li>
          ))}
        </ul>
      </details>
      <ProviderRequest />
    </div>
  );
}

/** The text-completion view: the prompt string with the instruct template's name. */
function PromptView({ prompt, messages, tokens }: { prompt: RenderedPrompt; messages: BuiltMessage[]; tokens: number }) {
  const preset = useApp((s) => s.preset);
  const builtIns = useBuiltInTemplates();
  return (
    <PromptString
      prompt={prompt}
      messages={messages}
      templateName={templateNameOf(prompt.template, preset, builtIns)}
      tokens={tokens}
    />
  );
}

/**
 * The provider's request, built when the user opens it (a long session's is large) and again
 * after each build while it is open. Through the chosen connection it is what Send sends: the
 * URL, the headers with the key redacted, and the body byte for byte.
 */
function ProviderRequest() {
  const t = useT();
  const [open, setOpen] = useState(false);
  const [shown, setShown] = useState<{ request: ShownRequest | null; body: string } | null>(null);
  const preview = useApp((s) => s.preview);
  const connection = useSend((s) => s.connection);
  // One request at a time: builds that come while one is being made leave only the newest to
  // make next (the preview rebuilds on every keystroke; each of these is a whole build too).
  const busy = useRef(false);
  const next = useRef<(() => void) | null>(null);
  useEffect(() => {
    if (!open) {
      next.current = null;
      return setShown(null);
    }
    let current = true;
    const ask = () => {
      const request = previewRequest();
      if (!request) return;
      busy.current = true;
      const answer = connection
        ? api.connectionRequest(request, connection).then((r) => ({ request: r, body: r.body }))
        : api.providerRequest(request).then((body) => ({ request: null, body }));
      void answer
        .then(
          (s) => current && setShown(s),
          (err) => current && setShown({ request: null, body: errorMessage(err) }),
        )
        .finally(() => {
          busy.current = false;
          const then = next.current;
          next.current = null;
          then?.();
        });
    };
    if (busy.current) next.current = ask;
    else ask();
    return () => {
      current = false;
    };
  }, [open, preview, connection]);
  return (
    <details className="request" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        {t("preview.request")}
        {connection && <span className="muted"> · {connection}</span>}
      </summary>
      {shown?.request && (
        <div className="request-head" data-testid="provider-request-head">
          <code data-testid="provider-request-url">POST {shown.request.url}</code>
          <ul className="request-headers">
            {shown.request.headers.map(([name, value], i) => (
              <li key={i}>
                <code>
                  {name}: {value}
                </code>
              </li>
            ))}
          </ul>
        </div>
      )}
      <pre data-testid="provider-request">{shown?.body ?? t("preview.building")}</pre>
    </details>
  );
}

/** One message of the built context. Rows whose text, cost and provenance did not change are
 * not rendered again: after a keystroke over a long session, only what moved is. */
const BuiltRow = memo(BuiltRowView, (a, b) => {
  const x = a.message;
  const y = b.message;
  return (
    a.open === b.open &&
    a.mark?.depth === b.mark?.depth &&
    a.mark?.stable === b.mark?.stable &&
    a.style?.top === b.style?.top &&
    a.measure === b.measure &&
    x.role === y.role &&
    x.content === y.content &&
    x.tokens === y.tokens &&
    x.exact === y.exact &&
    x.truncated === y.truncated &&
    sourceLabel(x.source) === sourceLabel(y.source)
  );
});

function BuiltRowView({
  message,
  mark,
  open,
  style,
  measure,
  onToggle,
}: {
  message: BuiltMessage;
  /** The request's cache breakpoint after this message, if it has one. */
  mark?: BreakpointMark;
  open: boolean;
  style?: React.CSSProperties;
  measure?: (el: HTMLElement | null) => void;
  onToggle: () => void;
}) {
  const t = useT();
  const kind = message.source.kind;
  return (
    <li
      ref={measure}
      style={style}
      className={`built-message role-${message.role} src-${kind}${open ? " open" : ""}${mark ? " cache-mark" : ""}`}
      data-source={sourceLabel(message.source)}
    >
      <MessageHead message={message} open={open} onToggle={onToggle} />
      {open ? (
        <div className="built-content open">{message.content}</div>
      ) : (
        // Closed, a row shows the first lines that say something: a big prompt often starts
        // with blank lines, and its first two lines would show nothing.
        <div className="built-content" data-testid="built-lead">
          <LeadText lead={leadOf(message.content, LEAD_CHARS)} emptyText={t("preview.emptyMessage")} />
        </div>
      )}
      {mark && <CacheBreakpointMark mark={mark} />}
    </li>
  );
}
