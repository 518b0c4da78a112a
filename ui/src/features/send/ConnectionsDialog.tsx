import { useEffect, useState } from "react";
import type { ConnectionDoc, ConnectionView } from "../../bindings";
import { api, errorMessage } from "../../app/api";
import { ConfirmDialog } from "../../app/ConfirmDialog";
import { useT } from "../../app/useT";
import { ConnectionForm } from "./ConnectionForm";
import { Icon } from "../../components/Icon";
import { OnBody } from "../../components/OnBody";
import { chooseConnection, getSendState, loadConnections, openConnections, refreshConnections, useSend } from "./sending";

const BLANK: ConnectionDoc = { name: "", dialect: "openai-compatible", baseUrl: "" };

/** The "Connections…" button of the preview's header (an icon, named by its label and
 * tooltip) and, when it is open, the dialog. */
export function ConnectionsButton() {
  const t = useT();
  const open = useSend((s) => s.dialogOpen);
  return (
    <>
      <button
        type="button"
        className="head-icon"
        data-testid="open-connections"
        aria-label={t("connections.open")}
        title={t("connections.open")}
        aria-haspopup="dialog"
        onClick={() => openConnections(true)}
      >
        <Icon name="connections" />
      </button>
      {open && (
        <OnBody>
          <ConnectionsDialog />
        </OnBody>
      )}
    </>
  );
}

/** The connection Send uses, in the preview's header. */
export function ConnectionSelect() {
  const t = useT();
  const connections = useSend((s) => s.connections);
  const connection = useSend((s) => s.connection);
  const sending = useSend((s) => s.sending);
  useEffect(() => {
    void loadConnections();
  }, []);
  return (
    <label className="head-field head-connection">
      {t("send.connection")}
      <select
        data-testid="connection-select"
        value={connection ?? ""}
        title={connection ?? undefined}
        disabled={sending}
        onChange={(e) => chooseConnection(e.target.value || null)}
      >
        {connections.length === 0 && <option value="">{t("send.noConnection")}</option>}
        {connections.map((c) => (
          <option key={c.connection.name} value={c.connection.name}>
            {c.connection.name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Lists the connections; adds, edits and removes them, and sets their keys. */
function ConnectionsDialog() {
  const t = useT();
  const connections = useSend((s) => s.connections);
  const listError = useSend((s) => s.listError);
  const [wellKnown, setWellKnown] = useState<ConnectionDoc[]>([]);
  const [from, setFrom] = useState("");
  const [editing, setEditing] = useState<{ doc: ConnectionDoc; existing: boolean } | null>(null);
  const [removing, setRemoving] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    void refreshConnections();
    api.wellKnownConnections().then(setWellKnown, () => setWellKnown([]));
  }, []);

  /** Runs `work`, then reads the list again; a failure is shown in the dialog. */
  const run = async (work: () => Promise<unknown>): Promise<boolean> => {
    try {
      await work();
      setError(null);
      return true;
    } catch (e) {
      setError(errorMessage(e));
      return false;
    } finally {
      await refreshConnections();
    }
  };

  const close = () => openConnections(false);
  return (
    <div
      className="dialog-backdrop"
      onKeyDown={(e) => {
        if (e.key === "Escape" && !removing) close();
      }}
    >
      <div role="dialog" aria-modal="true" aria-label={t("connections.title")} className="dialog connections-dialog" data-testid="connections-dialog">
        <h2>{t("connections.title")}</h2>
        <p className="muted">{t("connections.keysNote")}</p>
        {listError && <p className="error">{listError}</p>}
        {connections.length === 0 && <p className="muted">{t("connections.none")}</p>}
        <ul className="connection-list">
          {connections.map((view) => (
            <ConnectionRow
              key={view.connection.name}
              view={view}
              onEdit={() => setEditing({ doc: view.connection, existing: true })}
              onRemove={() => setRemoving(view.connection.name)}
              onKey={(key) => run(() => api.setConnectionKey(view.connection.name, key))}
            />
          ))}
        </ul>
        {error && (
          <p className="error" role="alert" data-testid="connections-error">
            {error}
          </p>
        )}
        {editing ? (
          <ConnectionForm
            key={editing.doc.name + String(editing.existing)}
            start={editing.doc}
            editing={editing.existing}
            onCancel={() => setEditing(null)}
            onSave={(doc) =>
              void run(() => api.saveConnection(doc)).then((saved) => {
                if (!saved) return;
                setEditing(null);
                // The first connection is the one the preview sends through.
                if (getSendState().connection === null) chooseConnection(doc.name);
              })
            }
          />
        ) : (
          <div className="field-row">
            <label className="grow">
              {t("connections.startFrom")}
              <select value={from} data-testid="connection-from" onChange={(e) => setFrom(e.target.value)}>
                <option value="">{t("connections.blank")}</option>
                {wellKnown.map((w) => (
                  <option key={w.name} value={w.name}>
                    {w.name} · {w.baseUrl}
                  </option>
                ))}
              </select>
            </label>
            <button
              type="button"
              data-testid="add-connection"
              onClick={() => setEditing({ doc: wellKnown.find((w) => w.name === from) ?? BLANK, existing: false })}
            >
              + {t("connections.add")}
            </button>
          </div>
        )}
        <div className="dialog-actions">
          <button type="button" data-testid="close-connections" onClick={close}>
            {t("export.close")}
          </button>
        </div>
      </div>
      {removing && (
        <ConfirmDialog
          message={t("connections.confirmRemove", { name: removing })}
          confirm={t("connections.remove")}
          onCancel={() => setRemoving(null)}
          onConfirm={() => {
            const name = removing;
            setRemoving(null);
            void run(() => api.deleteConnection(name));
          }}
        />
      )}
    </div>
  );
}

/** One connection: what it is, whether its key is set, and a field to set the key. */
function ConnectionRow({
  view,
  onEdit,
  onRemove,
  onKey,
}: {
  view: ConnectionView;
  onEdit: () => void;
  onRemove: () => void;
  onKey: (key: string) => Promise<boolean>;
}) {
  const t = useT();
  const c = view.connection;
  const [key, setKey] = useState("");
  const status = view.keyProblem
    ? view.keyProblem
    : view.hasKey
      ? t("connections.keySet")
      : c.keyEnv
        ? t("connections.keyFromEnv", { name: c.keyEnv })
        : t("connections.noKey");
  return (
    <li className="connection" data-testid="connection-row" data-name={c.name}>
      <div className="connection-head">
        <strong>{c.name}</strong>
        <span className="recipe-badge">{c.dialect}</span>
        <code className="connection-url">{c.baseUrl}</code>
        {c.defaultModel && <span className="muted">{c.defaultModel}</span>}
      </div>
      <div className="connection-actions">
        <span
          className={view.keyProblem ? "error" : view.hasKey ? "key-set" : "muted"}
          data-testid="connection-key-state"
        >
          {status}
        </span>
        <form
          className="key-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (!key) return;
            // The field is emptied at once: the page keeps no copy of the key.
            const typed = key;
            setKey("");
            void onKey(typed);
          }}
        >
          <input
            type="password"
            autoComplete="off"
            value={key}
            placeholder={t("connections.keyPlaceholder")}
            aria-label={t("connections.key", { name: c.name })}
            data-testid="connection-key-input"
            onChange={(e) => setKey(e.target.value)}
          />
          <button type="submit" data-testid="connection-set-key" disabled={!key}>
            {t("connections.setKey")}
          </button>
        </form>
        <button type="button" data-testid="connection-edit" onClick={onEdit}>
          {t("connections.edit")}
        </button>
        <button type="button" className="danger" data-testid="connection-remove" onClick={onRemove}>
          {t("connections.remove")}
        </button>
      </div>
    </li>
  );
}
