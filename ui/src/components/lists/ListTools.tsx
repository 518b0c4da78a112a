import { useT } from "../../app/useT";
import type { StepView } from "./recipe";
import { stepTextOf, type Grouping, type RecipeList } from "./recipeList";
import { setFolded, setListView, useListView } from "./listView";

/** Above the recipe list: the filter, "enabled only", the grouping (when the authors' comments
 * give categories), fold all / unfold all, and how many steps are on. */
export function ListTools({ list, views, presetId }: { list: RecipeList; views: StepView[]; presetId: string }) {
  const t = useT();
  const view = useListView();
  const hasCategories = views.some((v) => stepTextOf(v.template).meta.category);
  const sections = list.rows.filter((r) => r.kind === "section");
  const filtering = view.query.trim() !== "" || view.enabledOnly;
  return (
    <div className="list-tools" data-testid="list-tools">
      <input
        type="search"
        className="list-filter"
        placeholder={t("recipe.filter")}
        aria-label={t("recipe.filter")}
        value={view.query}
        data-testid="steps-filter"
        onChange={(e) => setListView({ query: e.target.value })}
      />
      <label className="check">
        <input
          type="checkbox"
          checked={view.enabledOnly}
          data-testid="steps-enabled-only"
          onChange={(e) => setListView({ enabledOnly: e.target.checked })}
        />
        {t("recipe.enabledOnly")}
      </label>
      {hasCategories && (
        <select
          aria-label={t("recipe.grouping")}
          value={view.grouping}
          data-testid="steps-grouping"
          onChange={(e) => setListView({ grouping: e.target.value as Grouping })}
        >
          <option value="sections">{t("recipe.groupSections")}</option>
          <option value="category">{t("recipe.groupCategory")}</option>
        </select>
      )}
      {sections.length > 1 && (
        <button
          type="button"
          className="link"
          data-testid="fold-all"
          onClick={() => setFolded(presetId, sections.some((s) => !s.folded) ? sections.map((s) => s.key) : [])}
        >
          {t(sections.some((s) => !s.folded) ? "recipe.foldAll" : "recipe.unfoldAll")}
        </button>
      )}
      <span className="list-count muted" data-testid="steps-count">
        {filtering
          ? t("recipe.countFiltered", { shown: list.matching, enabled: list.enabled, total: list.total })
          : t("recipe.count", { enabled: list.enabled, total: list.total })}
      </span>
    </div>
  );
}
