import type { SourceKind, TokenSummary } from "../../bindings";
import { useT } from "../../app/useT";

const ORDER = ["template", "profile", "lorebook", "memory", "history", "input", "ephemeral", "processor"];

/** Tokens by source against the budget, as one stacked bar. */
export function TokenBar({ summary }: { summary: TokenSummary }) {
  const t = useT();
  const name = (kind: string) => (ORDER.includes(kind) ? t(`source.${kind as SourceKind}`) : kind);
  const scale = Math.max(summary.budget, summary.total, 1);
  const entries = Object.entries(summary.bySource)
    .filter((e): e is [string, number] => typeof e[1] === "number" && e[1] > 0)
    .sort((a, b) => ORDER.indexOf(a[0]) - ORDER.indexOf(b[0]));
  return (
    <div className="token-bar-wrap">
      <div
        className="token-bar"
        role="img"
        aria-label={entries.map(([k, v]) => `${name(k)} ${v}`).join(", ")}
        data-testid="token-bar"
      >
        {entries.map(([kind, n]) => (
          <span
            key={kind}
            className={`seg seg-${kind}`}
            style={{ width: `${(100 * n) / scale}%` }}
            title={`${name(kind)}: ${n}`}
          />
        ))}
        {summary.total > summary.budget && <span className="over" />}
      </div>
      <ul className="legend">
        {entries.map(([kind, n]) => (
          <li key={kind}>
            <span className={`dot seg-${kind}`} /> {name(kind)} {n}
          </li>
        ))}
        <li className="muted">{t("preview.budget", { budget: summary.budget })}</li>
      </ul>
    </div>
  );
}
