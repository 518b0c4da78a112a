import { memo, useState } from "react";
import { setModel, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { useRunner } from "../../app/useRunner";
import { SessionButtons, SessionPanel, SessionSelect } from "../session/SessionPicker";
import { ConnectionSelect, ConnectionsButton } from "../send/ConnectionsDialog";
import { CompareToggle } from "./ComparePane";

/**
 * The preview's header (RULES 9.4): one row of the model (its recipe in small type beside its
 * label, the recipe and model profile in that note's tooltip), the session (its message count likewise) and the connection, each labelled
 * above its field, then Compare, Connections…, New session, Edit session and Export session… as
 * icon buttons named by their labels and tooltips. The session's editor opens under the row.
 * Not rendered again with each new preview: only the model's recipe note follows the build.
 */
export const PreviewHeader = memo(function PreviewHeader() {
  const t = useT();
  const [editing, setEditing] = useState(false);
  const [error, run] = useRunner();
  const hasSession = useApp((s) => s.session !== null);
  return (
    <header className="preview-head">
      <h2>{t("preview.title")}</h2>
      <div className="preview-head-row">
        <ModelField />
        <SessionSelect run={run} />
        <ConnectionSelect />
        <div className="head-buttons">
          <CompareToggle />
          <ConnectionsButton />
          <SessionButtons editing={editing} setEditing={setEditing} run={run} />
        </div>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {editing && hasSession && <SessionPanel setEditing={setEditing} run={run} />}
    </header>
  );
});

/** The model the preview builds for, with the recipe and model profile that apply to it. */
function ModelField() {
  const t = useT();
  const model = useApp((s) => s.model);
  const models = useApp((s) => s.models);
  // The two texts, not the build's result: the field is not rendered again for a new build that
  // keeps them (React writes a form field's name and type again at each render).
  const recipe = useApp((s) => (s.preview ? (s.preview.result.recipe ?? "—") : null));
  const profile = useApp((s) => s.preview?.result.profile ?? null);
  return (
    <label className="head-field head-model">
      <span className="head-label">
        {t("preview.model")}
        {recipe && (
          <span className="head-note" title={`${t("compare.recipeProfile")}: ${recipe} · ${profile}`}>
            {" "}
            · <span data-testid="preview-recipe">{recipe}</span>
          </span>
        )}
      </span>
      <input
        list="known-models"
        value={model}
        data-testid="model-input"
        onChange={(e) => e.target.value.trim() && setModel(e.target.value.trim())}
      />
      <datalist id="known-models">
        {models.map((m) => (
          <option key={m} value={m} />
        ))}
      </datalist>
    </label>
  );
}
