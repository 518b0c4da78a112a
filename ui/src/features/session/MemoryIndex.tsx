import { useCallback, useEffect, useRef, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import type { IndexDone, IndexProgress, MemoryStatus } from "../../bindings";
import { api } from "../../app/api";
import { flushSession, requestPreview, useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { ConnectionChoice, errorText } from "./SummaryEditor";

/** How long the messages stay unchanged before the status is read again. */
const STATUS_QUIET_MS = 400;

/**
 * The session's long-term memory index (RULES 5.15, 9.9): how many messages have a vector for
 * their text, with which embeddings model and connection, how many wait; "Index now" embeds them
 * in the background with its progress, each batch kept as it comes (closing the app loses only
 * the batch under way). Another model indexes the session again from nothing.
 */
export function MemoryIndex({ sessionId }: { sessionId: string }) {
  const t = useT();
  // The messages change: what waits to be indexed is read again.
  const messages = useApp((s) => s.session?.messages);
  const [status, setStatus] = useState<MemoryStatus | null>(null);
  const [connection, setConnection] = useState("");
  const [model, setModel] = useState("");
  const [progress, setProgress] = useState<IndexProgress | null>(null);
  const [running, setRunning] = useState(false);
  const [done, setDone] = useState<IndexDone | null>(null);
  const [error, setError] = useState<string | null>(null);

  const reload = useCallback(async () => {
    try {
      const s = await api.memoryStatus(sessionId);
      setStatus(s);
      if (s.connection) setConnection((c) => c || s.connection!);
      if (s.model) setModel((m) => m || s.model!);
    } catch (e) {
      setError(errorText(e));
    }
  }, [sessionId]);
  // Read once at first, then after the messages stop changing for a moment: the status reads the
  // whole stored session, and typing in a message would read it at every keystroke.
  const first = useRef(true);
  useEffect(() => {
    if (running) return;
    if (first.current) {
      first.current = false;
      void reload();
      return;
    }
    const timer = setTimeout(() => void reload(), STATUS_QUIET_MS);
    return () => clearTimeout(timer);
  }, [reload, messages, running]);

  const index = async () => {
    setRunning(true);
    setError(null);
    setDone(null);
    setProgress(null);
    try {
      await flushSession();
      const channel = new Channel<IndexProgress>();
      channel.onmessage = (p) => setProgress(p);
      setDone(await api.indexMemory(sessionId, connection, model.trim() || null, channel));
      // The preview can recall from it now.
      requestPreview();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setRunning(false);
    }
  };

  const modelChange = status?.model && model.trim() && model.trim() !== status.model;
  return (
    <fieldset className="memory-box" data-testid="memory-index">
      <legend>{t("sessionMemory.index")}</legend>
      <p data-testid="memory-status">
        {status?.model
          ? t("sessionMemory.status", {
              indexed: status.indexed,
              messages: status.messages,
              model: status.model,
              connection: status.connection ?? "—",
            })
          : t("sessionMemory.notIndexed", { messages: status?.messages ?? 0 })}
        {status && status.pending > 0 && ` · ${t("sessionMemory.pending", { count: status.pending })}`}
      </p>
      <div className="field-row">
        <ConnectionChoice
          connection={connection}
          model={model}
          onConnection={setConnection}
          onModel={setModel}
          testId="index"
        />
        <button type="button" data-testid="index-now" disabled={running || !connection} onClick={() => void index()}>
          {running ? t("sessionMemory.indexing") : t("sessionMemory.indexNow")}
        </button>
      </div>
      {modelChange && (
        <p className="muted" data-testid="model-change">
          {t("sessionMemory.modelChange", { model: status!.model! })}
        </p>
      )}
      {running && (
        <p className="muted" data-testid="index-progress">
          {progress ? t("sessionMemory.progress", { done: progress.done, total: progress.total }) : t("sessionMemory.indexing")}
          {progress && <progress max={progress.total} value={progress.done} />}
        </p>
      )}
      {done && (
        <p className="muted" data-testid="index-done">
          {t(done.stale > 0 ? "sessionMemory.reindexed" : "sessionMemory.indexed", {
            embedded: done.embedded,
            model: done.model,
          })}
        </p>
      )}
      {error && (
        <p className="error" role="alert" data-testid="index-error">
          {error}
        </p>
      )}
      <p className="muted">{t("sessionMemory.recallHelp")}</p>
    </fieldset>
  );
}
