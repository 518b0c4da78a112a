import { memo, useCallback, useMemo, useState, type ReactNode } from "react";
import type { BuiltMessage, RenderedPrompt, SpanSource } from "../../bindings";
import { useT } from "../../app/useT";
import { sourceDetail, sourceLabel } from "../preview/source";
import { escapeText, markSpecial, runsOf, segmentsOf, specialTokenPattern, trailingWhitespace, type Run } from "./segments";
import { ChatTemplateCheck } from "./ChatTemplateCheck";
import { CopyButton } from "../../components/CopyButton";

/**
 * The text-completion view of the preview (RULES 5.12): the prompt string exactly as the model
 * reads it, each part marked as the template's or a message's (hover or click one for where it
 * came from), the template's special tokens highlighted; a copy button; the stop sequences; the
 * string's token count; and the check against the model's own chat template.
 */
export function PromptString({
  prompt,
  messages,
  templateName,
  tokens,
}: {
  prompt: RenderedPrompt;
  messages: BuiltMessage[];
  /** The instruct template's name, for the template's parts. */
  templateName: string;
  tokens: number;
}) {
  const t = useT();
  const [hovered, setHovered] = useState<number | null>(null);
  const [picked, setPicked] = useState<number | null>(null);
  const shown = hovered ?? picked;
  const onHover = useCallback((target: EventTarget | null) => setHovered(target ? messageAt(target) : null), []);
  const onPick = useCallback((target: EventTarget) => {
    const i = messageAt(target);
    setPicked((p) => (i === null || p === i ? null : i));
  }, []);
  return (
    <div className="prompt-view" data-testid="prompt-view">
      <div className="prompt-toolbar">
        <span className="muted" data-testid="prompt-template">
          {t("prompt.template", { name: templateName })}
        </span>
        <span className="prompt-legend">
          <span className="ps-template">{t("prompt.legendTemplate")}</span>
          <span className="ps-message">{t("prompt.legendMessage")}</span>
          <mark className="special-token">{t("prompt.legendSpecial")}</mark>
        </span>
        <CopyButton text={prompt.prompt} testId="prompt-copy" />
      </div>
      <PromptText
        prompt={prompt}
        messages={messages}
        templateName={templateName}
        picked={picked}
        onHover={onHover}
        onPick={onPick}
      />
      <Provenance index={shown} message={shown === null ? undefined : messages[shown]} templateName={templateName} />
      <dl className="prompt-facts">
        <dt>{t("prompt.stop")}</dt>
        <dd data-testid="prompt-stop">
          {prompt.stop.length === 0 ? (
            <span className="muted">{t("prompt.noStop")}</span>
          ) : (
            prompt.stop.map((s, i) => (
              <code key={i} className="stop-sequence">
                {escapeText(s)}
              </code>
            ))
          )}
        </dd>
        {prompt.serverBos ? (
          <>
            <dt>{t("prompt.serverBos")}</dt>
            <dd data-testid="prompt-server-bos">
              <code className="stop-sequence">{escapeText(prompt.serverBos)}</code>{" "}
              <span className="muted">{t("prompt.serverBosNote")}</span>
            </dd>
          </>
        ) : null}
        <dt>{t("prompt.tokens")}</dt>
        <dd data-testid="prompt-tokens">{t("prompt.tokenCount", { total: tokens })}</dd>
      </dl>
      <ChatTemplateCheck templateName={templateName} />
    </div>
  );
}

/** The message whose part `target` is in, by its index in the build's messages. */
function messageAt(target: EventTarget): number | null {
  const el = (target as HTMLElement).closest?.("[data-message]") as HTMLElement | null;
  return el ? Number(el.dataset.message) : null;
}

/** Which message a part is: its provenance as the message list labels it. */
function Provenance({ index, message, templateName }: { index: number | null; message?: BuiltMessage; templateName: string }) {
  const t = useT();
  return (
    <p className="prompt-provenance" data-testid="prompt-provenance" aria-live="polite">
      {index === null || !message ? (
        <span className="muted">{t("prompt.hoverHint", { name: templateName })}</span>
      ) : (
        <>
          <span className="muted">{t("prompt.messageNumber", { index: index + 1 })}</span>
          <span className={`badge badge-${message.source.kind}`}>{t(`source.${message.source.kind}`)}</span>
          <span className="badge-detail">{sourceDetail(message.source)}</span>
          <span className="muted">
            {message.role} · {message.tokens}
          </span>
        </>
      )}
    </p>
  );
}

/** The string itself. Rendered again only when the prompt or the picked message changes. */
const PromptText = memo(function PromptText({
  prompt,
  messages,
  templateName,
  picked,
  onHover,
  onPick,
}: {
  prompt: RenderedPrompt;
  messages: BuiltMessage[];
  templateName: string;
  picked: number | null;
  onHover: (target: EventTarget | null) => void;
  onPick: (target: EventTarget) => void;
}) {
  const t = useT();
  const parts = useMemo(() => {
    const pattern = specialTokenPattern(prompt.specialTokens);
    const trailing = trailingWhitespace(prompt.prompt);
    return segmentsOf(prompt).map((segment) => {
      let at = segment.start;
      const pieces = markSpecial(segment.text, pattern).map((piece) => {
        const runs = runsOf(piece.text, at, trailing);
        at += piece.text.length;
        return { special: piece.special, runs };
      });
      return { segment, pieces };
    });
  }, [prompt]);
  const title = (source: SpanSource) => {
    if (source.kind === "template") return t("prompt.templatePart", { name: templateName });
    const m = messages[source.index];
    return m
      ? `${t("prompt.messageNumber", { index: source.index + 1 })} · ${t(`source.${m.source.kind}`)} ${sourceDetail(m.source)}`.trim()
      : t("prompt.messageNumber", { index: source.index + 1 });
  };
  return (
    <pre
      className="prompt-string"
      data-testid="prompt-string"
      onMouseOver={(e) => onHover(e.target)}
      onMouseLeave={() => onHover(null)}
      onClick={(e) => onPick(e.target)}
    >
      {parts.map(({ segment, pieces }) => {
        const source = segment.source;
        const content = pieces.map((p, k) =>
          p.special ? (
            <mark key={k} className="special-token">
              {p.runs.map(runNode)}
            </mark>
          ) : (
            p.runs.map((r, j) => runNode(r, `${k}.${j}`))
          ),
        );
        if (source.kind === "template") {
          return (
            <span key={segment.start} className="ps-template" title={title(source)}>
              {content}
            </span>
          );
        }
        const m = messages[source.index];
        const kind = m?.source.kind ?? "processor";
        return (
          <span
            key={segment.start}
            className={`ps-message ps-kind-${kind}${picked === source.index ? " picked" : ""}`}
            data-message={source.index}
            data-source={m ? sourceLabel(m.source) : undefined}
            title={title(source)}
          >
            {content}
          </span>
        );
      })}
    </pre>
  );
});

/** A run as shown: a line break with a faint mark before it, white space at a line's end
 * shaded; the marks are drawn by CSS, so the text (and what a selection copies) is exact. */
function runNode(run: Run, key: string | number): ReactNode {
  if (run.kind === "newline") {
    return (
      <span key={key} className="ws-newline">
        {run.text}
      </span>
    );
  }
  if (run.kind === "trailing") {
    return (
      <span key={key} className="ws-trailing">
        {run.text}
      </span>
    );
  }
  return <span key={key}>{run.text}</span>;
}
