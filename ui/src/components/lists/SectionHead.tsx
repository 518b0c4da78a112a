import { useEffect, useRef, type ReactNode } from "react";
import { useT } from "../../app/useT";
import { NO_CATEGORY, type SectionRow } from "./sectionedList";

/** What a section's row shows, inside the row each list draws: the fold button, the header
 * item's own controls (`controls`), the title, a switch for all of the section's items and how
 * many of them are on. */
export function SectionHead({
  section,
  controls,
  onFold,
  onTitle,
  onSwitchAll,
}: {
  section: SectionRow<unknown>;
  controls?: ReactNode;
  onFold: (key: string) => void;
  /** Clicking the title: the header item selected; by default the section folded. */
  onTitle?: () => void;
  /** Switches every item of the section on or off; none for a section of items without switches. */
  onSwitchAll?: (enabled: boolean) => void;
}) {
  const t = useT();
  const title = section.key === NO_CATEGORY ? t("list.noCategory") : section.title || "—";
  const all = section.total > 0 && section.enabled === section.total;
  const some = section.enabled > 0 && !all;
  const box = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (box.current) box.current.indeterminate = some;
  }, [some]);
  return (
    <>
      <button
        type="button"
        className="fold"
        aria-expanded={!section.folded}
        aria-label={t(section.folded ? "list.unfold" : "list.fold", { name: title })}
        data-testid="fold"
        onClick={() => onFold(section.key)}
      >
        {section.folded ? "▸" : "▾"}
      </button>
      {controls}
      <button type="button" className="section-title" onClick={onTitle ?? (() => onFold(section.key))}>
        <strong>{title}</strong>
      </button>
      {onSwitchAll && section.total > 0 && (
        <input
          ref={box}
          type="checkbox"
          className="section-switch"
          checked={all}
          title={t("list.sectionSwitch", { name: title })}
          aria-label={t("list.sectionSwitch", { name: title })}
          data-testid="section-switch"
          onChange={() => onSwitchAll(!all)}
        />
      )}
      <span className="section-count muted" data-testid="section-count">
        {t("list.sectionCount", { enabled: section.enabled, total: section.total })}
      </span>
    </>
  );
}
