import { useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { defaultCompareModel } from "../preview/compare";
import { newestSwipes, type Pick } from "./changes";

/** "Pick two": another session of the list, another model, or another swipe of the newest reply. */
export function PickControls({ pick, onChange }: { pick: Pick; onChange: (pick: Pick) => void }) {
  const t = useT();
  const sessions = useApp((s) => s.sessions);
  const session = useApp((s) => s.session);
  const model = useApp((s) => s.model);
  const models = useApp((s) => s.models);
  const others = sessions.filter((s) => s.id !== session?.id);
  const swipes = newestSwipes(session);
  const kinds: Pick["kind"][] = swipes ? ["session", "model", "swipe"] : ["session", "model"];

  const first = (kind: Pick["kind"]): Pick => {
    if (kind === "session") return { kind, sessionId: others[0]?.id ?? null };
    if (kind === "model") return { kind, model: defaultCompareModel(model, models) };
    const position = swipes ? (swipes.shown === 0 ? 1 : swipes.shown - 1) : null;
    return { kind, position };
  };

  return (
    <div className="changes-pick" data-testid="changes-pick">
      <label>
        {t("changes.pick.kind")}
        <select
          data-testid="changes-pick-kind"
          value={pick.kind}
          onChange={(e) => onChange(first(e.target.value as Pick["kind"]))}
        >
          {kinds.map((k) => (
            <option key={k} value={k}>
              {t(`changes.pick.${k}`)}
            </option>
          ))}
        </select>
      </label>
      {pick.kind === "session" && (
        <label>
          {t("changes.pick.session")}
          <select
            data-testid="changes-pick-session"
            value={pick.sessionId ?? ""}
            onChange={(e) => onChange({ kind: "session", sessionId: e.target.value || null })}
          >
            <option value="">{t("changes.pick.choose")}</option>
            {others.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {pick.kind === "model" && (
        <label className="model-picker">
          {t("changes.pick.model")}
          <input
            list="known-models"
            data-testid="changes-pick-model"
            value={pick.model}
            onChange={(e) => onChange({ kind: "model", model: e.target.value })}
          />
        </label>
      )}
      {pick.kind === "swipe" && swipes && (
        <label>
          {t("changes.pick.swipe")}
          <select
            data-testid="changes-pick-swipe"
            value={pick.position ?? ""}
            onChange={(e) => onChange({ kind: "swipe", position: e.target.value === "" ? null : Number(e.target.value) })}
          >
            {Array.from({ length: swipes.count }, (_, p) => p)
              .filter((p) => p !== swipes.shown)
              .map((p) => (
                <option key={p} value={p}>
                  {t("changes.pick.swipeItem", { position: p + 1, count: swipes.count })}
                </option>
              ))}
          </select>
        </label>
      )}
    </div>
  );
}
