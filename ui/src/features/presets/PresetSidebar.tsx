import { useState } from "react";
import {
  createPreset,
  deletePreset,
  duplicatePreset,
  openPreset,
  renamePreset,
  restoreBuiltins,
  useApp,
} from "../../app/store";
import { useT } from "../../app/useT";
import { useRunner } from "../../app/useRunner";
import { ConfirmDialog } from "../../app/ConfirmDialog";
import { startPresetExport } from "./exporting";
import { chooseImport } from "./importing";

/** The presets list: search, open, new, duplicate, rename, delete with confirmation. */
export function PresetSidebar() {
  const t = useT();
  const presets = useApp((s) => s.presets);
  const currentId = useApp((s) => s.preset?.id ?? null);
  const [query, setQuery] = useState("");
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
  const [confirming, setConfirming] = useState<{ id: string; name: string } | null>(null);
  const [error, run] = useRunner();

  const q = query.trim().toLowerCase();
  const shown = presets.filter(
    (p) => !q || p.name.toLowerCase().includes(q) || p.id.toLowerCase().includes(q),
  );

  return (
    <aside className="sidebar" aria-label={t("presets.title")}>
      <div className="sidebar-head">
        <h2>{t("presets.title")}</h2>
        <button
          type="button"
          className="primary"
          data-testid="new-preset"
          onClick={() => run(createPreset(t("presets.newName")))}
        >
          + {t("presets.new")}
        </button>
      </div>
      <input
        type="search"
        className="search"
        placeholder={t("presets.search")}
        aria-label={t("presets.search")}
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      {error && <p className="error" role="alert">{error}</p>}
      <ul className="preset-list">
        {shown.map((p) => (
          <li key={p.id} className={p.id === currentId ? "current" : undefined}>
            {renaming?.id === p.id ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  const name = renaming.name.trim();
                  setRenaming(null);
                  if (name && name !== p.name) run(renamePreset(p.id, name));
                }}
              >
                <input
                  autoFocus
                  aria-label={t("presets.rename")}
                  value={renaming.name}
                  onChange={(e) => setRenaming({ id: p.id, name: e.target.value })}
                  onBlur={(e) => e.currentTarget.form?.requestSubmit()}
                  onKeyDown={(e) => e.key === "Escape" && setRenaming(null)}
                />
              </form>
            ) : (
              <button
                type="button"
                className="preset-name"
                data-testid={`preset-${p.id}`}
                onClick={() => run(openPreset(p.id))}
                onDoubleClick={() => setRenaming({ id: p.id, name: p.name })}
                title={p.id}
              >
                {p.name}
              </button>
            )}
            {p.id === currentId && !renaming && (
              <div className="preset-actions">
                <button type="button" onClick={() => setRenaming({ id: p.id, name: p.name })}>
                  {t("presets.rename")}
                </button>
                <button
                  type="button"
                  onClick={() => run(duplicatePreset(p.id, t("presets.copyOf", { name: p.name })))}
                >
                  {t("presets.duplicate")}
                </button>
                <button type="button" data-testid="export-preset" onClick={startPresetExport}>
                  {t("export.button")}
                </button>
                <button
                  type="button"
                  className="danger"
                  onClick={() => setConfirming({ id: p.id, name: p.name })}
                >
                  {t("presets.delete")}
                </button>
              </div>
            )}
          </li>
        ))}
        {shown.length === 0 && <li className="muted">{t("presets.empty")}</li>}
      </ul>
      <button
        type="button"
        data-testid="import"
        onClick={() => run(chooseImport({ title: t("import.chooseTitle"), filter: t("import.filter") }))}
      >
        {t("import.button")}
      </button>
      <button type="button" className="link" onClick={() => run(restoreBuiltins())}>
        {t("presets.restore")}
      </button>
      {confirming && (
        <ConfirmDialog
          message={t("presets.confirmDelete", { name: confirming.name })}
          confirm={t("presets.delete")}
          onCancel={() => setConfirming(null)}
          onConfirm={() => {
            setConfirming(null);
            run(deletePreset(confirming.id));
          }}
        />
      )}
    </aside>
  );
}
