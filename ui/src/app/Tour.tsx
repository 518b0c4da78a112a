import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from "react";
import type { MessageKey } from "../i18n";
import { endTour, showTourStep, TOUR_STEPS, useApp } from "./store";
import { useT } from "./useT";

/** Each step: what it outlines, what its popover stands beside, and on which side. */
const STEPS: { key: "library" | "preview" | "import"; outline: string[]; anchor: string; side: "right" | "left" }[] = [
  { key: "library", outline: [".sidebar", ".editor-pane"], anchor: ".editor-pane", side: "right" },
  { key: "preview", outline: [".preview"], anchor: ".preview", side: "left" },
  { key: "import", outline: ['[data-testid="import"]'], anchor: '[data-testid="import"]', side: "right" },
];

const WIDTH = 300;
const GAP = 12;

/**
 * The first-run tour: a popover beside each pane in turn, the pane outlined. It does not block
 * the window; Escape skips it, Enter or → goes on, ← back, while the focus is in it.
 */
export function Tour() {
  const step = useApp((s) => s.tour);
  return step === null ? null : <TourStep step={step} />;
}

function TourStep({ step }: { step: number }) {
  const t = useT();
  const { key, outline, anchor, side } = STEPS[step] ?? STEPS[0];
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
      const target = document.querySelector(anchor)?.getBoundingClientRect();
      const height = popover.current?.offsetHeight ?? 0;
      setPlace(target ? beside(target, side, height) : null);
    };
    measure();
    window.addEventListener("resize", measure);
    return () => window.removeEventListener("resize", measure);
  }, [anchor, side]);

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

/** Where a popover `height` high stands beside `target`: on `side` when it fits there, else on
 * the other side, else over the target's edge; always within the window. */
function beside(target: DOMRect, side: "right" | "left", height: number): { top: number; left: number } {
  const right = target.right + GAP;
  const left = target.left - GAP - WIDTH;
  const fitsRight = right + WIDTH <= window.innerWidth;
  const fitsLeft = left >= 0;
  const x =
    side === "right" ? (fitsRight ? right : fitsLeft ? left : target.right - WIDTH - GAP) : fitsLeft ? left : fitsRight ? right : target.left + GAP;
  // Level with the target's top, or with its bottom for a small target low in the window.
  const y = Math.min(target.top + (target.height > height ? 48 : 0), window.innerHeight - height - GAP);
  return { top: Math.max(GAP, y), left: Math.max(GAP, Math.min(x, window.innerWidth - WIDTH - GAP)) };
}
