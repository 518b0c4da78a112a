import type { Preview } from "../../bindings";
import { previewRequest, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { hasEarlierTurn } from "../changes/changes";
import { useChanges } from "../changes/useChanges";
import { breakpointMarks, type BreakpointMark } from "./breakpoints";

/**
 * The preview's cache breakpoints by the message each follows; with a session that has a turn
 * before this one, whether each one's prefix is the same as then (the previous turn compared a
 * moment after the preview is built, only while the build has breakpoints).
 */
export function useBreakpointMarks(preview: Preview): Map<number, BreakpointMark> {
  const session = useApp((s) => s.session);
  const breakpoints = preview.result.cacheBreakpoints;
  const compared = (breakpoints?.length ?? 0) > 0 && hasEarlierTurn(session);
  const answer = useChanges(
    () => {
      const request = previewRequest();
      return compared && request ? { request, against: { kind: "previousTurn" } } : null;
    },
    preview,
    `${session?.id ?? ""}:${compared}`,
  );
  // Until the newest build is compared, the last comparison's marks stand where they still match.
  return breakpointMarks(breakpoints, answer.changes?.diff.breakpoints);
}

/** The thin line after a message where the request's cache breakpoint falls. */
export function CacheBreakpointMark({ mark }: { mark: BreakpointMark }) {
  const t = useT();
  const stable = mark.stable === null ? "unknown" : String(mark.stable);
  return (
    <div className="cache-breakpoint" data-testid="cache-breakpoint" data-stable={stable} data-depth={mark.depth ?? "system"}>
      <span className="cache-breakpoint-label">
        {mark.depth === null ? t("cache.breakpoint.system") : t("cache.breakpoint.depth", { depth: mark.depth })}
        {mark.stable !== null && (
          <span
            className={mark.stable ? "cache-stable" : "cache-changed"}
            title={t(mark.stable ? "cache.stableHint" : "cache.changedHint")}
          >
            {" · "}
            {t(mark.stable ? "cache.stable" : "cache.changed")}
          </span>
        )}
      </span>
    </div>
  );
}
