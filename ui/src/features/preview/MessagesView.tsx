import { memo, useEffect, useRef, useState } from "react";
import type { BuiltMessage, Preview, RenderedPrompt } from "../../bindings";
import { useApp } from "../../app/store";
import { useSay, useT } from "../../app/useT";
import { WhatFires } from "../lorebook/WhatFires";
import { CalibrationNote } from "../send/CalibrationNote";
import { CountExactly } from "../send/CountExactly";
import { PromptString } from "../instruct/PromptString";
import { templateNameOf, useBuiltInTemplates } from "../instruct/templates";
import { LeadText } from "../../components/LeadText";
import { LEAD_CHARS, leadOf } from "../recipes/stepText";
import { MessageHead } from "./MessageHead";
import { MessageList } from "./MessageList";
import { TokenBar } from "./TokenBar";
import { sourceLabel } from "./source";
import { CacheBreakpointMark, useBreakpointMarks } from "./CacheBreakpoint";
import type { BreakpointMark } from "./breakpoints";
import { MarkedText, revealMark } from "../macros/markInMessage";

// The Messages view of the preview (RULES 9.4): the build's totals, its messages (one opened at
// a macro the Macros view marked), what was dropped, what the lorebook fired, the warnings and
// the processors' logs; and the Prompt string view of a text-completion build.

/** The build's totals and its messages. */
export function PreviewBody({ preview, stale }: { preview: Preview; stale: boolean }) {
  const t = useT();
  const say = useSay();
  const { result } = preview;
  const [open, setOpen] = useState<number | null>(null);
  const macroMark = useApp((s) => s.macroMark);
  const list = useRef<HTMLDivElement>(null);
  // An expansion marked in the Macros view: its message opens and the mark scrolls into view.
  useEffect(() => {
    if (!macroMark) return;
    setOpen(macroMark.message);
    return revealMark(list.current, macroMark.message, result.messages.length);
  }, [macroMark, result.messages.length]);
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
      <div ref={list}>
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
              highlight={macroMark?.message === i ? macroMark : undefined}
              onToggle={() => setOpen((o) => (o === i ? null : i))}
            />
          )}
        />
      </div>
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
    </div>
  );
}

/** The text-completion view: the prompt string with the instruct template's name. */
export function PromptView({ prompt, messages, tokens }: { prompt: RenderedPrompt; messages: BuiltMessage[]; tokens: number }) {
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

/** One message of the built context. Rows whose text, cost and provenance did not change are
 * not rendered again: after a keystroke over a long session, only what moved is. */
const BuiltRow = memo(BuiltRowView, (a, b) => {
  const x = a.message;
  const y = b.message;
  return (
    a.open === b.open &&
    a.highlight === b.highlight &&
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
  highlight,
  onToggle,
}: {
  message: BuiltMessage;
  /** The span of a macro's output the Macros view marked in this message. */
  highlight?: { start: number; end: number };
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
        <div className="built-content open">
          {highlight ? <MarkedText text={message.content} start={highlight.start} end={highlight.end} /> : message.content}
        </div>
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
