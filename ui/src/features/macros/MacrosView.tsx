import { useState } from "react";
import type { MacroTrace, TracedMacro, VariableState } from "../../bindings";
import { markMacro, useApp } from "../../app/store";
import { useSay, useT } from "../../app/useT";
import { englishOf } from "../../i18n/said";
import { spanOf } from "./markInMessage";

/** Rows shown at first; the rest one click away (the trace itself stops at its cap). */
const SHOWN = 500;

/**
 * The Macros view (RULES 4.6, 9.4): every macro of the preview's build in the order it was
 * expanded, with where, as written, what it became and what it did to a variable; the
 * variables before and after the build. Its builds carry the trace only while it is open.
 */
export function MacrosView() {
  const t = useT();
  const say = useSay();
  const trace = useApp((s) => s.preview?.macros ?? null);
  if (!trace) return <p className="muted" data-testid="macros-tracing">{t("macros.tracing")}</p>;
  return (
    <section className="macros-view" data-testid="macros-view" aria-label={t("views.macros")}>
      <p className="muted">{t("macros.hint")}</p>
      {trace.stopped && (
        <p className="warn-text" role="status" data-testid="macros-stopped">
          {t("macros.stopped", { reason: say(trace.stopped, englishOf(trace.stopped)) })}
        </p>
      )}
      <Expansions trace={trace} />
      <Variables trace={trace} />
    </section>
  );
}

function Expansions({ trace }: { trace: MacroTrace }) {
  const t = useT();
  const [limit, setLimit] = useState(SHOWN);
  const messages = useApp((s) => s.preview?.result.messages ?? []);
  const marked = useApp((s) => s.macroMark?.expansion ?? null);
  const all = trace.expansions;
  if (all.length === 0) return <p className="muted">{t("macros.none")}</p>;
  const show = (i: number) => {
    const m = all[i]!;
    if (m.message == null) return;
    const content = messages[m.message]?.content ?? "";
    const span = spanOf(all, i, content) ?? { start: 0, end: 0 };
    markMacro({ expansion: i, message: m.message, ...span });
  };
  return (
    <>
      <h3>{t("macros.count", { count: all.length })}</h3>
      <ol className="macro-trace" data-testid="macro-trace">
        {all.slice(0, limit).map((m, i) => (
          <li key={i} className={marked === i ? "current" : undefined} data-testid="macro-expansion" data-name={m.name}>
            <button
              type="button"
              className="macro-row"
              disabled={m.message == null}
              title={m.message == null ? t("macros.noMessage") : t("macros.show", { written: m.written, index: m.message })}
              onClick={() => show(i)}
            >
              <span className="macro-where muted" data-testid="macro-where">
                {i + 1}. {m.message == null ? t("macros.noMessage") : t("macros.message", { index: m.message })} ·{" "}
                <code>{m.position}</code> · {t("macros.offset", { offset: m.offset })}
                {m.depth > 0 && <> · {t("macros.depth", { depth: m.depth })}</>}
                {m.block && <> · {t("macros.block", { block: m.block })}</>}
              </span>
              <span className="macro-io">
                <code className="macro-written" data-testid="macro-written">{m.written}</code>
                <span aria-hidden="true"> → </span>
                <code className="macro-output" data-testid="macro-output">
                  {m.kept ? t("macros.kept") : m.output === "" ? t("macros.empty") : m.output}
                </code>
              </span>
              {m.variable && <VariableChangeLine m={m} />}
            </button>
          </li>
        ))}
      </ol>
      {all.length > limit && (
        <button type="button" onClick={() => setLimit((l) => l + SHOWN)}>
          + {all.length - limit}
        </button>
      )}
    </>
  );
}

function VariableChangeLine({ m }: { m: TracedMacro }) {
  const t = useT();
  const v = m.variable!;
  const value = (s: string | null | undefined) => (s == null ? t("macros.unset") : s === "" ? t("macros.empty") : s);
  return (
    <span className="macro-variable" data-testid="macro-variable">
      {t(v.scope === "global" ? "macros.global" : "macros.local")} <code>{v.name}</code>:{" "}
      <code data-testid="macro-variable-before">{value(v.before)}</code> →{" "}
      <code data-testid="macro-variable-after">{value(v.after)}</code>
    </span>
  );
}

function Variables({ trace }: { trace: MacroTrace }) {
  const t = useT();
  return (
    <section className="macro-variables" data-testid="macro-variables" aria-label={t("macros.variables")}>
      <h3>{t("macros.variables")}</h3>
      <div className="macro-variable-columns">
        <VariableTable title={t("macros.before")} state={trace.before} testId="variables-before" />
        <VariableTable title={t("macros.after")} state={trace.after} testId="variables-after" />
      </div>
    </section>
  );
}

function VariableTable({ title, state, testId }: { title: string; state: VariableState; testId: string }) {
  const t = useT();
  return (
    <div data-testid={testId}>
      <h4>{title}</h4>
      {(["local", "global"] as const).map((scope) => {
        const entries = Object.entries(state[scope] ?? {});
        return (
          <dl key={scope} className="variable-list">
            <dt className="muted">{t(scope === "local" ? "macros.local" : "macros.global")}</dt>
            {entries.length === 0 ? (
              <dd className="muted">{t("macros.noVariables")}</dd>
            ) : (
              entries.map(([name, value]) => (
                <dd key={name} data-variable={name}>
                  <code>{name}</code> = <code>{value === "" ? t("macros.empty") : value}</code>
                </dd>
              ))
            )}
          </dl>
        );
      })}
    </div>
  );
}

/** What the macro `written` became the last time a build was traced, for the editor's hover. */
export function lastValueOf(trace: MacroTrace | null, written: string): string | null {
  if (!trace) return null;
  for (let i = trace.expansions.length - 1; i >= 0; i--) {
    const m = trace.expansions[i]!;
    if (m.written === written) return m.output;
  }
  return null;
}
