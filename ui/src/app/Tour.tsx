import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from "react";
import type { MessageKey } from "../i18n";
import { endTour, showTourStep, TOUR_STEPS, useApp } from "./store";
import { useT } from "./useT";
import { placeBeside } from "./tourPlacement";

/** Each step: what it outlines, and on which side of it its popover prefers to stand. */
const STEPS: { key: "library" | "preview" | "import"; outline: string[]; side: "right" | "left" }[] = [
  { key: "library", outline: [".sidebar", ".editor-pane"], side: "right" },
  { key: "preview", outline: [".preview"], side: "left" },
  { key: "import", outline: ['[data-testid="import"]'], side: "right" },
];

const WIDTH = 300;

/**
 * The first-run tour: a popover beside each pane in turn, the pane outlined, never over what it
 * points at (`placeBeside`). It does not block
 * the window; Escape skips it, Enter or → goes on, ← back, while the focus is in it.
 */
export function Tour() {
  const step = useApp((s) => s.tour);
  return step === null ? null : <TourStep step={step} />;
}

function TourStep({ step }: { step: number }) {
  const t = useT();
  const { key, outline, side } = STEPS[step] ?? STEPS[0];
  const last = step === TOUR_STEPS - 1;
  const popover = useRef<HTMLDivElement>(null);
  const next = useRef<HTMLButtonElement>(null);
  const [place, setPlace] = useState<{ top: number; left: number } | null>(null);

  // What had the focus gets it back when the tour ends.
  useEffect(() => {
    const before = document.activeElement;
    return () => {
      if (before instanceof HTMLElement && before.isConnected) before.focus();
    };
  }, []);

  useEffect(() => {
    next.current?.focus();
    const outlined = outline.flatMap((s) => [...document.querySelectorAll(s)]);
    outlined.forEach((el) => el.classList.add("tour-target"));
    return () => outlined.forEach((el) => el.classList.remove("tour-target"));
  }, [outline]);

  useLayoutEffect(() => {
    const measure = () => {
      const targets = outline.flatMap((sel) => [...document.querySelectorAll(sel)]).map((el) => el.getBoundingClientRect());
      const height = popover.current?.offsetHeight ?? 0;
      const view = { width: window.innerWidth, height: window.innerHeight };
      setPlace(targets.length > 0 ? placeBeside(targets, side, { width: WIDTH, height }, view) : null);
    };
    measure();
    window.addEventListener("resize", measure);
    return () => window.removeEventListener("resize", measure);
  }, [outline, side]);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") endTour();
    else if (e.key === "ArrowRight" || (e.key === "Enter" && !(e.target instanceof HTMLButtonElement))) {
      showTourStep(step + 1);
    } else if (e.key === "ArrowLeft") showTourStep(step - 1);
    else return;
    e.preventDefault();
  };

  return (
    <div
      ref={popover}
      role="dialog"
      aria-modal="false"
      aria-labelledby="tour-title"
      aria-describedby="tour-text"
      className={place ? "tour" : "tour centred"}
      style={place ? { top: place.top, left: place.left, width: WIDTH } : { width: WIDTH }}
      data-testid="tour"
      onKeyDown={onKeyDown}
    >
      <div data-testid="tour-step" data-step={step + 1}>
        <p className="tour-count muted">{t("tour.count", { step: step + 1, total: TOUR_STEPS })}</p>
        <h2 id="tour-title">{t(`tour.${key}.title` as MessageKey)}</h2>
        <p id="tour-text">{t(`tour.${key}.text` as MessageKey)}</p>
      </div>
      <div className="dialog-actions">
        {!last && (
          <button type="button" className="link tour-skip" data-testid="tour-skip" onClick={endTour}>
            {t("tour.skip")}
          </button>
        )}
        {step > 0 && (
          <button type="button" data-testid="tour-back" onClick={() => showTourStep(step - 1)}>
            {t("tour.back")}
          </button>
        )}
        <button type="button" ref={next} className="primary" data-testid="tour-next" onClick={() => showTourStep(step + 1)}>
          {last ? t("tour.done") : t("tour.next")}
        </button>
      </div>
    </div>
  );
}
