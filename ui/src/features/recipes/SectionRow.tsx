import { memo } from "react";
import { useSortable } from "@dnd-kit/sortable";
import { CSS } from "@dnd-kit/utilities";
import { editPreset, selectStep } from "../../app/store";
import { useT } from "../../app/useT";
import { StepControls } from "./StepControls";
import { setStepEnabled, type StepView } from "./recipe";
import { NO_CATEGORY, type SectionRow as Section } from "./recipeList";
import { simpleStepId } from "./dragIds";

/** A section of the recipe list: its fold button, title and how many of its steps are on. A
 * section a header step starts is that step too: it is dragged, switched and selected as one.
 * Rendered again only when what it shows changed. */
export const SectionRow = memo(SectionRowView, (a, b) => {
  const x = a.section;
  const y = b.section;
  return (
    a.recipeAt === b.recipeAt &&
    a.selected === b.selected &&
    a.onFold === b.onFold &&
    x.key === y.key &&
    x.title === y.title &&
    x.enabled === y.enabled &&
    x.total === y.total &&
    x.folded === y.folded &&
    x.header?.index === y.header?.index &&
    x.header?.step === y.header?.step &&
    x.header?.template === y.header?.template
  );
});

function SectionRowView({
  section,
  recipeAt,
  selected,
  onFold,
}: {
  section: Section;
  recipeAt: number;
  selected: boolean;
  onFold: (key: string) => void;
}) {
  const t = useT();
  const { header } = section;
  const title = section.key === NO_CATEGORY ? t("recipe.noCategory") : section.title || "—";
  return (
    <SectionShell header={header} selected={selected} testId={`section-${section.key}`}>
      {(controls) => (
        <>
          <button
            type="button"
            className="fold"
            aria-expanded={!section.folded}
            aria-label={t(section.folded ? "recipe.unfold" : "recipe.fold", { name: title })}
            data-testid="fold"
            onClick={() => onFold(section.key)}
          >
            {section.folded ? "▸" : "▾"}
          </button>
          {header && controls(recipeAt, header)}
          <button
            type="button"
            className="section-title"
            onClick={() => (header ? selectStep(header.index) : onFold(section.key))}
          >
            <strong>{title}</strong>
          </button>
          <span className="section-count muted" data-testid="section-count">
            {t("recipe.sectionCount", { enabled: section.enabled, total: section.total })}
          </span>
        </>
      )}
    </SectionShell>
  );
}

type Controls = (recipeAt: number, header: StepView) => React.ReactNode;

/** The row itself: sortable when a header step makes it, a plain row for a category. */
function SectionShell({
  header,
  selected,
  testId,
  children,
}: {
  header: StepView | null;
  selected: boolean;
  testId: string;
  children: (controls: Controls) => React.ReactNode;
}) {
  return header ? (
    <SortableSection header={header} selected={selected} testId={testId}>
      {children}
    </SortableSection>
  ) : (
    <li className="section" data-testid={testId}>
      {children(() => null)}
    </li>
  );
}

function SortableSection({
  header,
  selected,
  testId,
  children,
}: {
  header: StepView;
  selected: boolean;
  testId: string;
  children: (controls: Controls) => React.ReactNode;
}) {
  const t = useT();
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, transform, transition, isDragging } =
    useSortable({ id: simpleStepId(header.key) });
  const name = header.template?.name || header.step.messageId;
  const classes = ["section", "step", selected ? "selected" : "", header.step.enabled ? "" : "off", isDragging ? "dragging" : ""];
  return (
    <li
      ref={setNodeRef}
      style={{ transform: CSS.Transform.toString(transform), transition }}
      className={classes.filter(Boolean).join(" ")}
      data-testid={testId}
      data-step-id={header.step.messageId}
    >
      {children((recipeAt, h) => (
        <StepControls
          name={name}
          handleRef={setActivatorNodeRef}
          attributes={attributes}
          listeners={listeners}
          handleTestId={`handle-${h.key}`}
          enabled={h.step.enabled}
          switchTitle={t("recipe.headerSwitch")}
          onEnabled={(enabled) => editPreset((p) => setStepEnabled(p, recipeAt, h.index, enabled))}
        />
      ))}
    </li>
  );
}
