import { useState } from "react";
import { previewRequest, setChangesMode, useApp, type ChangesMode } from "../../app/store";
import { useT } from "../../app/useT";
import { againstFor, MODES, newestSwipes, type Pick } from "./changes";
import { useChanges } from "./useChanges";
import { PickControls } from "./PickControls";
import { ChangesBody } from "./ChangesBody";

/**
 * The Changes view (RULES 9.8): the preview's build against the session's previous turn, the
 * preset before its last edit, or a pick of the user's; rebuilt a moment after the preview is.
 */
export function ChangesPane() {
  const t = useT();
  const mode = useApp((s) => s.changesMode) ?? "lastTurn";
  const preview = useApp((s) => s.preview);
  const beforeEdit = useApp((s) => s.beforeEdit);
  const session = useApp((s) => s.session);
  const [chosen, setPick] = useState<Pick>({ kind: "session", sessionId: null });
  // A swipe picked in a session whose newest reply has none any more is no pick.
  const pick: Pick = chosen.kind === "swipe" && !newestSwipes(session) ? { kind: "swipe", position: null } : chosen;

  const request = previewRequest();
  const asked = request ? againstFor(mode, pick, request, beforeEdit) : null;
  const answer = useChanges(
    () => {
      const now = previewRequest();
      const against = now ? againstFor(mode, pick, now, beforeEdit) : null;
      return now && against?.ok ? { request: now, against: against.against } : null;
    },
    preview,
    JSON.stringify([mode, pick, session?.id ?? null]),
  );

  return (
    <div className="changes" data-testid="changes">
      <ModePicker mode={mode} />
      {mode === "pick" && <PickControls pick={pick} onChange={setPick} />}
      {asked && !asked.ok ? (
        <p className="muted" data-testid="changes-missing">
          {t(`changes.missing.${asked.missing}`)}
        </p>
      ) : answer.error ? (
        <p className="error" role="alert" data-testid="changes-error">
          {t("changes.failed", { message: answer.error })}
        </p>
      ) : answer.changes ? (
        <ChangesBody changes={answer.changes} stale={answer.stale} />
      ) : (
        <p className="muted">{t("preview.building")}</p>
      )}
    </div>
  );
}

function ModePicker({ mode }: { mode: ChangesMode }) {
  const t = useT();
  return (
    <div className="mode-switch changes-mode" role="radiogroup" aria-label={t("changes.mode")} data-testid="changes-mode">
      {MODES.map((m) => (
        <button
          key={m}
          type="button"
          role="radio"
          aria-checked={m === mode}
          data-mode={m}
          className={m === mode ? "current" : undefined}
          title={t(`changes.modeHint.${m}`)}
          onClick={() => setChangesMode(m)}
        >
          {t(`changes.mode.${m}`)}
        </button>
      ))}
    </div>
  );
}
