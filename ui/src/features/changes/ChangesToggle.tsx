import { setChangesMode, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { ViewToggle } from "../preview/ViewToggle";

/** The Changes switch of the preview's header (RULES 9.8); it comes back in the mode used last. */
export function ChangesToggle() {
  const t = useT();
  const mode = useApp((s) => s.changesMode);
  return (
    <ViewToggle
      value={mode}
      set={setChangesMode}
      first={() => "lastTurn" as const}
      testId="changes-toggle"
      className="changes-toggle"
      hint={t("changes.toggleHint")}
    >
      Δ {t("changes.toggle")}
    </ViewToggle>
  );
}
