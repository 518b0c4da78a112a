import { useCallback, useEffect, useState } from "react";
import type { SummaryView } from "../../bindings";
import { api, CommandError, errorMessage } from "../../app/api";
import { flushSession, showSummary, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { loadConnections, useSend } from "../send/sending";
import { useAutoSummary } from "./autoSummary";

/** An error as the backend said it: its message and its code. */
export function errorText(e: unknown): string {
  return e instanceof CommandError ? `${e.message} (${e.code})` : errorMessage(e);
}

/** The connection a summary or an index is made through, and its model (blank: the
 * connection's default). */
export function ConnectionChoice({
  connection,
  model,
  onConnection,
  onModel,
  testId,
}: {
  connection: string;
  model: string;
  onConnection: (name: string) => void;
  onModel: (model: string) => void;
  testId: string;
}) {
  const t = useT();
  const connections = useSend((s) => s.connections);
  useEffect(() => {
    void loadConnections();
  }, []);
  return (
    <>
      <label>
        {t("sessionMemory.connection")}
        <select value={connection} data-testid={`${testId}-connection`} onChange={(e) => onConnection(e.target.value)}>
          <option value="">—</option>
          {connections.map((c) => (
            <option key={c.connection.name} value={c.connection.name}>
              {c.connection.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t("sessionMemory.model")}
        <input
          value={model}
          placeholder={t("sessionMemory.defaultModel")}
          data-testid={`${testId}-model`}
          onChange={(e) => onModel(e.target.value)}
        />
      </label>
    </>
  );
}

/**
 * The session's summary (RULES 5.15, 9.9): the current one with the range of stored messages it
 * covers and whether it was edited by hand, an edit saved as a new summary marked edited,
 * "Summarize now" through a chosen connection (it runs in the background; the preview goes on
 * with the summary as it is), and the older summaries, each restorable.
 */
export function SummaryEditor({ sessionId }: { sessionId: string }) {
  const t = useT();
  const presetId = useApp((s) => s.preset?.id ?? null);
  const [summaries, setSummaries] = useState<SummaryView[]>([]);
  const [draft, setDraft] = useState("");
  const [connection, setConnection] = useState("");
  const [model, setModel] = useState("");
  const [busy, setBusy] = useState<"summarize" | "save" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const current = summaries.find((s) => s.current) ?? null;
  // One made in the background after a reply (RULES 5.15): shown when done.
  const auto = useAutoSummary(sessionId);

  const reload = useCallback(async () => {
    try {
      const all = await api.sessionSummaries(sessionId);
      setSummaries(all);
      setDraft(all.find((s) => s.current)?.text ?? "");
    } catch (e) {
      setError(errorText(e));
    }
  }, [sessionId]);
  useEffect(() => {
    void reload();
  }, [reload, auto.made]);

  /** Runs one change; the session's summary and the preview follow the one it made current. */
  const change = async (kind: "summarize" | "save" | null, work: () => Promise<SummaryView>) => {
    setBusy(kind);
    setError(null);
    try {
      // The backend reads the stored session: an edit still being written goes first.
      await flushSession();
      const made = await work();
      showSummary(sessionId, made.text);
      await reload();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(null);
    }
  };

  const older = summaries.filter((s) => !s.current);
  return (
    <fieldset className="memory-box" data-testid="summary-editor">
      <legend>{t("sessionMemory.summary")}</legend>
      {current ? (
        <p className="muted" data-testid="summary-range">
          {t("sessionMemory.covers", { first: current.firstPosition, last: current.lastPosition })}
          {current.edited
            ? ` · ${t("sessionMemory.editedByHand")}`
            : current.model
              ? ` · ${t("sessionMemory.writtenBy", { model: current.model })}`
              : ""}
        </p>
      ) : (
        <p className="muted">{t("sessionMemory.noSummary")}</p>
      )}
      <textarea
        rows={3}
        value={draft}
        aria-label={t("sessionMemory.summary")}
        data-testid="summary-text"
        onChange={(e) => setDraft(e.target.value)}
      />
      <div className="field-row">
        <button
          type="button"
          data-testid="summary-save"
          disabled={busy !== null || !draft.trim() || draft === (current?.text ?? "")}
          onClick={() => void change("save", () => api.editSummary(sessionId, draft))}
        >
          {t("sessionMemory.saveEdit")}
        </button>
        <ConnectionChoice
          connection={connection}
          model={model}
          onConnection={setConnection}
          onModel={setModel}
          testId="summarize"
        />
        <button
          type="button"
          data-testid="summarize-now"
          disabled={busy !== null || auto.running || !connection}
          onClick={() =>
            void change("summarize", () => api.summarizeSession(sessionId, connection, model.trim() || null, presetId))
          }
        >
          {busy === "summarize" || auto.running ? t("sessionMemory.summarizing") : t("sessionMemory.summarizeNow")}
        </button>
      </div>
      {auto.error && (
        <p className="error" role="alert" data-testid="summary-auto-error">
          {t("sessionMemory.autoFailed", { error: auto.error })}
        </p>
      )}
      {error && (
        <p className="error" role="alert" data-testid="summary-error">
          {error}
        </p>
      )}
      {older.length > 0 && (
        <details data-testid="older-summaries">
          <summary>{t("sessionMemory.older", { count: older.length })}</summary>
          <ul className="older">
            {older.map((s) => (
              <li key={s.id} data-testid={`older-summary-${s.id}`}>
                <span className="muted">
                  #{s.firstPosition}–#{s.lastPosition}
                  {s.edited ? " ✎" : ""}
                </span>
                <span className="text" title={s.text}>
                  {s.text}
                </span>
                <button
                  type="button"
                  data-testid={`restore-summary-${s.id}`}
                  disabled={busy !== null}
                  onClick={() => void change(null, () => api.restoreSummary(sessionId, s.id))}
                >
                  {t("sessionMemory.restore")}
                </button>
              </li>
            ))}
          </ul>
        </details>
      )}
    </fieldset>
  );
}
