import { useEffect, useState } from "react";
import type { CalibrationView } from "../../bindings";
import { api } from "../../app/api";
import { useApp } from "../../app/store";
import { useT } from "../../app/useT";

/**
 * How far our count has been from the provider's for this model, over its last replies that
 * reported one (the backend keeps them per model). Asked again when the model changes or the
 * session gains a message (a reply was stored).
 */
export function CalibrationNote({ model }: { model: string }) {
  const t = useT();
  const messages = useApp((s) => s.session?.messages.length ?? 0);
  const [calibration, setCalibration] = useState<CalibrationView | null>(null);
  useEffect(() => {
    let current = true;
    api.calibration(model).then(
      (c) => current && setCalibration(c),
      () => current && setCalibration(null),
    );
    return () => {
      current = false;
    };
  }, [model, messages]);
  const mean = calibration?.meanDifferencePercent;
  if (!calibration || !calibration.samples || mean === null || mean === undefined) return null;
  const percent = `${mean >= 0 ? "+" : ""}${mean.toFixed(1)}%`;
  return (
    <span className="muted" data-testid="calibration" title={t("send.calibrationHelp")}>
      {t("send.calibration", { percent, count: calibration.samples })}
    </span>
  );
}
