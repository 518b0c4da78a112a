import { useRef, type KeyboardEvent } from "react";
import { setPreviewTab, type PreviewTab } from "../../app/store";
import { useT } from "../../app/useT";
import type { MessageKey } from "../../i18n";

const LABEL: Record<PreviewTab, MessageKey> = {
  messages: "prompt.viewMessages",
  prompt: "prompt.viewPrompt",
  changes: "changes.toggle",
  request: "views.request",
  macros: "views.macros",
  lorebook: "views.lorebook",
};

/** The id of a view's tab and of its panel, for `aria-controls` and `aria-labelledby`. */
export const tabId = (tab: PreviewTab) => `preview-tab-${tab}`;
export const panelId = "preview-panel";

/**
 * The preview's views, one tab each (RULES 9.4). One tab is in the Tab order, the shown one; the
 * arrow keys, Home and End move between them and show the view they reach.
 */
export function PreviewTabs({ tabs, shown }: { tabs: PreviewTab[]; shown: PreviewTab }) {
  const t = useT();
  const list = useRef<HTMLDivElement>(null);
  const onKey = (e: KeyboardEvent) => {
    // From the tab the key was pressed on: a second key can come before the view shows.
    const from = tabs.findIndex((tab) => tabId(tab) === (e.target as HTMLElement).id);
    const at = from >= 0 ? from : tabs.indexOf(shown);
    const to =
      e.key === "ArrowRight" ? (at + 1) % tabs.length
      : e.key === "ArrowLeft" ? (at - 1 + tabs.length) % tabs.length
      : e.key === "Home" ? 0
      : e.key === "End" ? tabs.length - 1
      : null;
    if (to === null) return;
    e.preventDefault();
    const tab = tabs[to]!;
    setPreviewTab(tab);
    list.current?.querySelector<HTMLElement>(`#${tabId(tab)}`)?.focus();
  };
  return (
    <div ref={list} role="tablist" className="tablist preview-views" aria-label={t("prompt.views")} onKeyDown={onKey}>
      {tabs.map((tab) => (
        <button
          key={tab}
          id={tabId(tab)}
          type="button"
          role="tab"
          aria-selected={shown === tab}
          aria-controls={panelId}
          tabIndex={shown === tab ? 0 : -1}
          data-testid={`preview-view-${tab}`}
          className={shown === tab ? "tab current" : "tab"}
          title={tab === "changes" ? t("changes.toggleHint") : undefined}
          onClick={() => setPreviewTab(tab)}
        >
          {tab === "changes" && "Δ "}
          {t(LABEL[tab])}
        </button>
      ))}
    </div>
  );
}
