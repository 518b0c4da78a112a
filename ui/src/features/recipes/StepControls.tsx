import type { DraggableAttributes, DraggableSyntheticListeners } from "@dnd-kit/core";
import { memo } from "react";
import { useT } from "../../app/useT";

/** A step's drag handle and enable switch, in simple mode and in the workbench alike. Rendered
 * again only when its props change: typing in a step renders its row, not its switch. */
export const StepControls = memo(function StepControls({
  name,
  handleRef,
  attributes,
  listeners,
  handleTestId,
  enabled,
  enabledTestId,
  switchTitle,
  onEnabled,
}: {
  name: string;
  handleRef: (el: HTMLElement | null) => void;
  attributes: DraggableAttributes;
  listeners: DraggableSyntheticListeners;
  handleTestId: string;
  enabled: boolean;
  enabledTestId?: string;
  /** What the switch does, when it is more than "Enabled". */
  switchTitle?: string;
  onEnabled: (enabled: boolean) => void;
}) {
  const t = useT();
  return (
    <>
      <button
        type="button"
        ref={handleRef}
        className="handle"
        aria-label={t("recipe.dragHandle", { name })}
        data-testid={handleTestId}
        {...attributes}
        {...listeners}
      >
        ⠿
      </button>
      <label className="switch" title={switchTitle ?? t("recipe.enabled")}>
        <input
          type="checkbox"
          checked={enabled}
          aria-label={`${t("recipe.enabled")}: ${name}`}
          data-testid={enabledTestId}
          onChange={(e) => onEnabled(e.target.checked)}
        />
        <span aria-hidden="true" />
      </label>
    </>
  );
});
