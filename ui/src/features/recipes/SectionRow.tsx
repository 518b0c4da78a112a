import { memo } from "react";
import { useSortable } from "@dnd-kit/sortable";
import { CSS } from "@dnd-kit/utilities";
import { editPreset, selectStep } from "../../app/store";
import { useT } from "../../app/useT";
import { StepControls } from "./StepControls";
import { setStepEnabled, setStepsEnabled, type StepView } from "./recipe";
import type { SectionRow as Section } from "./recipeList";
import { SectionHead } from "../../components/lists/SectionHead";
import { simpleStepId } from "./dragIds";

/** A section of the recipe list: its fold button, title, a switch for all its steps and how many
 * of them are on. A section a header step starts is that step too: it is dragged, switched and
 * selected as one. Rendered again only when what it shows changed. */
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
    x.items.length === y.items.length &&
    x.items.every((s, i) => s.view.index === y.items[i]!.view.index) &&
    x.header?.view.index === y.header?.view.index &&
    x.header?.view.step === y.header?.view.step &&
    x.header?.view.template === y.header?.view.template
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
  const header = section.header?.view ?? null;
  const indices = section.items.map((s) => s.view.index);
  return (
    <SectionShell header={header} selected={selected} testId={`section-${section.key}`}>
      {(controls) => (
        <SectionHead
          section={section}
          controls={header ? controls(recipeAt, header) : undefined}
          onFold={onFold}
          onTitle={header ? () => selectStep(header.index) : undefined}
          onSwitchAll={(enabled) => editPreset((p) => setStepsEnabled(p, recipeAt, indices, enabled))}
        />
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
