import { memo } from "react";
import { useT } from "../../app/useT";
import type { Grouping, SectionedList } from "./sectionedList";
import { setFolded, setListView, useListView, type ListId } from "./listView";

/** Above a long list: the filter, "enabled only", the grouping (when the items give categories),
 * fold all / unfold all, and how many items are on. Its parts' test ids start with the list's. */
export function ListTools({
  listId,
  list,
  presetId,
  filterLabel,
  hasCategories = false,
}: {
  listId: ListId;
  list: SectionedList<unknown>;
  presetId: string;
  /** The filter's placeholder, which names what the list holds. */
  filterLabel: string;
  hasCategories?: boolean;
}) {
  const t = useT();
  const view = useListView(listId);
  const sections = list.rows.filter((r) => r.kind === "section");
  const filtering = view.query.trim() !== "" || view.enabledOnly;
  return (
    <div className="list-tools" data-testid={`${listId}-tools`}>
      <ListFilter listId={listId} filterLabel={filterLabel} hasCategories={hasCategories} />
      {sections.length > 1 && (
        <button
          type="button"
          className="link"
          data-testid={`${listId}-fold-all`}
          onClick={() => setFolded(listId, presetId, sections.some((s) => !s.folded) ? sections.map((s) => s.key) : [])}
        >
          {t(sections.some((s) => !s.folded) ? "list.foldAll" : "list.unfoldAll")}
        </button>
      )}
      <span className="list-count muted" data-testid={`${listId}-count`}>
        {filtering
          ? t("list.countFiltered", { shown: list.matching, enabled: list.enabled, total: list.total })
          : t("list.count", { enabled: list.enabled, total: list.total })}
      </span>
    </div>
  );
}

/** The filter, "enabled only" and the grouping: rendered again only when the list's view
 * changes, not with each edit of the list's items (React writes a form field's name and type
 * again at each render; docs/PERFORMANCE.md, issue 39). */
const ListFilter = memo(function ListFilter({
  listId,
  filterLabel,
  hasCategories,
}: {
  listId: ListId;
  filterLabel: string;
  hasCategories: boolean;
}) {
  const t = useT();
  const view = useListView(listId);
  return (
    <>
      <input
        type="search"
        className="list-filter"
        placeholder={filterLabel}
        aria-label={filterLabel}
        value={view.query}
        data-testid={`${listId}-filter`}
        onChange={(e) => setListView(listId, { query: e.target.value })}
      />
      <label className="check">
        <input
          type="checkbox"
          checked={view.enabledOnly}
          data-testid={`${listId}-enabled-only`}
          onChange={(e) => setListView(listId, { enabledOnly: e.target.checked })}
        />
        {t("list.enabledOnly")}
      </label>
      {hasCategories && (
        <select
          aria-label={t("list.grouping")}
          value={view.grouping}
          data-testid={`${listId}-grouping`}
          onChange={(e) => setListView(listId, { grouping: e.target.value as Grouping })}
        >
          <option value="sections">{t("list.groupSections")}</option>
          <option value="category">{t("list.groupCategory")}</option>
        </select>
      )}
    </>
  );
});
