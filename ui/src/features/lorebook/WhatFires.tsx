import { useApp } from "../../app/store";
import { useSay, useT } from "../../app/useT";
import { activationText } from "./lorebook";

/** What the lorebook activated for the chosen session and model, and what its budget cut. */
export function WhatFires() {
  const t = useT();
  const say = useSay();
  const report = useApp((s) => s.preview?.result.lorebook ?? null);
  const hasBook = useApp((s) => (s.preset?.lorebook?.entries?.length ?? 0) > 0);
  if (!hasBook) return null;
  return (
    <section className="what-fires" data-testid="what-fires" aria-label={t("lore.whatFires")}>
      <h3>{t("lore.whatFires")}</h3>
      {!report || (report.activated.length === 0 && report.cut.length === 0 && !report.skipped?.length) ? (
        <p className="muted">{t("lore.nothingFires")}</p>
      ) : (
        <ul>
          {report.activated.map((a) => {
            const why = activationText(a);
            return (
              <li key={a.entryId} data-fired={a.entryId}>
                <strong>{a.name || a.entryId}</strong>{" "}
                {why.kind === "constant"
                  ? t("lore.why.constant")
                  : why.kind === "recursion"
                    ? t("lore.why.recursion", { key: why.key ?? "", entry: why.where ?? "" })
                    : why.kind === "sticky"
                      ? t("lore.why.sticky", { ago: why.where ?? "" })
                      : why.where
                        ? t("lore.why.key", { key: why.key ?? "", message: why.where })
                        : t("lore.why.input", { key: why.key ?? "" })}{" "}
                <span className="muted">· {a.tokens} tokens</span>
              </li>
            );
          })}
          {report.cut.map((c) => (
            <li key={`cut-${c.entryId}`} className="warn-text" data-cut={c.entryId}>
              <strong>{c.entryId}</strong> {t("lore.why.cut", { reason: say(c.said, c.reason) })}
            </li>
          ))}
          {(report.skipped ?? []).map((c) => (
            <li key={`skipped-${c.entryId}`} className="muted" data-skipped={c.entryId}>
              <strong>{c.entryId}</strong> {t("lore.why.skipped", { reason: say(c.said, c.reason) })}
            </li>
          ))}
        </ul>
      )}
      {report && <p className="muted">{t("lore.budgetUsed", { budget: report.budget })}</p>}
    </section>
  );
}
