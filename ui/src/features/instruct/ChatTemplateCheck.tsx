import { useEffect } from "react";
import type { JinjaCheck } from "../../bindings";
import { useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { recheckAfterBuild, runCheck, setCheckInput, useCheck } from "./checking";
import { byteLength, differenceAt, runsOf, trailingWhitespace, type DiffSide } from "./segments";

/**
 * The check against the model's own Jinja chat template (RULES 5.12): the user pastes the
 * model's `chat_template` (and the bos and eos tokens it reads); the backend renders the build's
 * messages through it and through the instruct template, and the panel says whether the strings
 * are identical or shows where they first differ. A template that does not parse, loops or
 * raises is said in the engine's words; the preview goes on as before.
 */
export function ChatTemplateCheck({ templateName }: { templateName: string }) {
  const t = useT();
  const check = useCheck((s) => s);
  const preview = useApp((s) => s.preview);
  // Each rebuild while a finding is shown checks again, so the finding is this build's.
  useEffect(() => recheckAfterBuild(), [preview]);
  return (
    <details
      className="jinja-check"
      data-testid="jinja-check"
      open={check.open}
      onToggle={(e) => {
        const open = e.currentTarget.open;
        if (open !== check.open) setCheckInput({ open });
      }}
    >
      <summary>{t("jinja.title")}</summary>
      <p className="muted jinja-intro">{t("jinja.intro", { name: templateName })}</p>
      <label className="jinja-field">
        {t("jinja.template")}
        <textarea
          data-testid="jinja-template"
          rows={6}
          spellCheck={false}
          value={check.chatTemplate}
          placeholder="{% for message in messages %}…"
          onChange={(e) => setCheckInput({ chatTemplate: e.target.value })}
        />
      </label>
      <div className="jinja-row">
        <label>
          {t("jinja.bos")}
          <input
            data-testid="jinja-bos"
            value={check.bos}
            spellCheck={false}
            placeholder="<s>"
            onChange={(e) => setCheckInput({ bos: e.target.value })}
          />
        </label>
        <label>
          {t("jinja.eos")}
          <input
            data-testid="jinja-eos"
            value={check.eos}
            spellCheck={false}
            placeholder="</s>"
            onChange={(e) => setCheckInput({ eos: e.target.value })}
          />
        </label>
        <button
          type="button"
          className="primary"
          data-testid="jinja-run"
          disabled={!check.chatTemplate.trim()}
          onClick={() => void runCheck()}
        >
          {check.running ? t("jinja.checking") : t("jinja.run")}
        </button>
      </div>
      {check.error !== null && (
        <p className="error jinja-error" role="alert" data-testid="jinja-error">
          {t("jinja.failed", { message: check.error })}
        </p>
      )}
      {check.result && <Finding result={check.result} templateName={templateName} />}
    </details>
  );
}

function Finding({ result, templateName }: { result: JinjaCheck; templateName: string }) {
  const t = useT();
  if (result.firstDifference === null || result.firstDifference === undefined) {
    return (
      <p className="jinja-identical" data-testid="jinja-result" data-identical="true">
        ✓ {t("jinja.identical", { bytes: byteLength(result.ours) })}
      </p>
    );
  }
  const d = differenceAt(result.ours, result.theirs, result.firstDifference);
  return (
    <div className="jinja-differs" data-testid="jinja-result" data-identical="false">
      <p className="warn-text">
        ≠ {t("jinja.differs", { byte: result.firstDifference, line: d.line, column: d.column })}
      </p>
      <Side label={t("jinja.ours", { name: templateName })} side={d.ours} testId="jinja-ours" />
      <Side label={t("jinja.theirs")} side={d.theirs} testId="jinja-theirs" />
    </div>
  );
}

/** One side around the difference, white space visible, what differs highlighted (an empty
 * difference, where the other side has text, is a caret). */
function Side({ label, side, testId }: { label: string; side: DiffSide; testId: string }) {
  const t = useT();
  // White space at a line's end is judged on the whole side, not on each part of it.
  const flags = trailingWhitespace(side.before + side.changed + side.after);
  const visible = (text: string, at: number) => {
    return runsOf(text, at, flags).map((r, i) => (
      <span key={i} className={r.kind === "newline" ? "ws-newline" : r.kind === "trailing" ? "ws-trailing" : undefined}>
        {r.text}
      </span>
    ));
  };
  return (
    <div className="jinja-side">
      <div className="jinja-side-label">{label}</div>
      <pre className="prompt-string jinja-side-text" data-testid={testId}>
        {side.cutBefore && <span className="cut" />}
        {visible(side.before, 0)}
        <mark className={side.changed ? "jinja-changed" : "jinja-changed empty"} data-testid={`${testId}-changed`} title={t("jinja.changedTitle")}>
          {visible(side.changed, side.before.length)}
        </mark>
        {side.cutChanged && <span className="cut" />}
        {visible(side.after, side.before.length + side.changed.length)}
        {side.cutAfter && <span className="cut" />}
      </pre>
    </div>
  );
}
