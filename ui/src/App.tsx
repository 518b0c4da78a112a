import { useEffect, useState } from "react";
import { LANGUAGES, type Language } from "./i18n";
import { events } from "./bindings";
import { redo, setEditorMode, setLanguage, setTheme, undo, useApp } from "./app/store";
import { listenInEffect } from "./app/tauriListen";
import { SaveState } from "./app/SaveState";
import { CrashNotice } from "./app/CrashNotice";
import { ConflictDialog } from "./app/ConflictDialog";
import { CloseGuard } from "./app/CloseGuard";
import { AboutButton } from "./app/AboutDialog";
import { Tour } from "./app/Tour";
import { ImportDialog } from "./features/presets/ImportDialog";
import { inspectImport } from "./features/presets/importing";
import { listenToSummaryUpdates } from "./features/session/autoSummary";
import { ExportDialog } from "./features/presets/ExportDialog";
import { useT } from "./app/useT";
import { PresetSidebar } from "./features/presets/PresetSidebar";
import { SimpleEditor } from "./features/recipes/SimpleEditor";
import { AdvancedEditor } from "./features/recipes/AdvancedEditor";
import { PreviewPane } from "./features/preview/PreviewPane";
import { LorebookEditor } from "./features/lorebook/LorebookEditor";
import { PipelinePanel } from "./features/pipeline/PipelinePanel";
import { GenerationPanel } from "./features/generation/GenerationPanel";

export function App() {
  const t = useT();
  const ready = useApp((s) => s.ready);
  const fatal = useApp((s) => s.fatal);
  const theme = useApp((s) => s.theme);
  const language = useApp((s) => s.language);
  const canUndo = useApp((s) => s.undo.length > 0);
  const canRedo = useApp((s) => s.redo.length > 0);

  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    document.documentElement.lang = language;
  }, [theme, language]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey)) return;
      const key = e.key.toLowerCase();
      if (key === "z" && !e.shiftKey) {
        e.preventDefault();
        undo();
      } else if ((key === "z" && e.shiftKey) || key === "y") {
        e.preventDefault();
        redo();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  // A file dropped onto the window is imported like one chosen in the dialog; Rust has read its
  // path, the page gets a number for it.
  useEffect(() => listenInEffect(() => events.fileDropped.listen((e) => void inspectImport(e.payload.file))), []);
  // A summary made in the background after a reply: the session shows it when it is done.
  useEffect(() => listenInEffect(listenToSummaryUpdates), []);

  if (!ready) return <p className="loading">{t("app.loading")}</p>;
  if (fatal) return <p className="error fatal" role="alert">{t("app.error", { message: fatal })}</p>;

  return (
    <div className="app">
      <header className="topbar">
        <h1>
          <span className="logo" aria-hidden="true">
            ⋮⋮⋮
          </span>{" "}
          {t("app.title")}
        </h1>
        <SaveState />
        <div className="topbar-actions">
          <button type="button" onClick={undo} disabled={!canUndo} title={t("app.undo")} aria-label={t("app.undo")}>
            ↶
          </button>
          <button type="button" onClick={redo} disabled={!canRedo} title={t("app.redo")} aria-label={t("app.redo")}>
            ↷
          </button>
          <button
            type="button"
            data-testid="theme-toggle"
            aria-label={t("app.theme")}
            onClick={() => setTheme(theme === "dark" ? "light" : "dark")}
          >
            {theme === "dark" ? `☀ ${t("app.theme.light")}` : `☾ ${t("app.theme.dark")}`}
          </button>
          <select
            aria-label={t("app.language")}
            data-testid="language"
            value={language}
            onChange={(e) => setLanguage(e.target.value as Language)}
          >
            {LANGUAGES.map((l) => (
              <option key={l.id} value={l.id}>
                {l.label}
              </option>
            ))}
          </select>
          <AboutButton />
        </div>
      </header>
      <CrashNotice />
      <main className="panes">
        <PresetSidebar />
        <EditorPane />
        <PreviewPane />
      </main>
      <ImportDialog />
      <ExportDialog />
      <ConflictDialog />
      <CloseGuard />
      <Tour />
    </div>
  );
}

/** The middle pane: the recipe in simple mode, or the preset's lorebook. */
function EditorPane() {
  const t = useT();
  const [tab, setTab] = useState<"recipe" | "lorebook" | "pipeline" | "generation">("recipe");
  const hasPreset = useApp((s) => s.preset !== null);
  return (
    <div className="editor-pane">
      {hasPreset && (
        <div className="tabs">
          <div role="tablist" className="tablist">
            {(["recipe", "lorebook", "pipeline", "generation"] as const).map((id) => (
              <button
                key={id}
                id={`editor-tab-${id}`}
                type="button"
                role="tab"
                aria-selected={tab === id}
                aria-controls="editor-tabpanel"
                data-testid={`tab-${id}`}
                className={tab === id ? "tab current" : "tab"}
                onClick={() => setTab(id)}
              >
                {id === "generation" ? t("generation.tab") : t(`tabs.${id}`)}
              </button>
            ))}
          </div>
          {tab === "recipe" && <ModeSwitch />}
        </div>
      )}
      <div id="editor-tabpanel" role="tabpanel" aria-labelledby={`editor-tab-${tab}`} className="editor-tabpanel">
        {tab === "recipe" || !hasPreset ? (
          <RecipeEditor />
        ) : tab === "pipeline" ? (
          <PipelinePanel />
        ) : tab === "generation" ? (
          <GenerationPanel />
        ) : (
          <LorebookEditor />
        )}
      </div>
    </div>
  );
}

/** Simple mode edits the recipe the chosen model gets; advanced mode all templates and recipes. */
function RecipeEditor() {
  const mode = useApp((s) => s.editorMode);
  return mode === "advanced" ? <AdvancedEditor /> : <SimpleEditor />;
}

function ModeSwitch() {
  const t = useT();
  const mode = useApp((s) => s.editorMode);
  return (
    <div className="mode-switch" role="radiogroup" aria-label={t("mode.label")}>
      {(["simple", "advanced"] as const).map((m) => (
        <button
          key={m}
          type="button"
          role="radio"
          aria-checked={mode === m}
          data-testid={`editor-mode-${m}`}
          className={mode === m ? "current" : ""}
          onClick={() => setEditorMode(m)}
        >
          {t(`mode.${m}`)}
        </button>
      ))}
    </div>
  );
}
