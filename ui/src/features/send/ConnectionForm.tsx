import { useState } from "react";
import type { ConnectionDoc, ConnectionTimeouts } from "../../bindings";
import { useT } from "../../app/useT";

export const DIALECTS = ["openai", "anthropic", "gemini", "openai-compatible", "llamacpp", "koboldcpp"] as const;

/** The connection as the form edits it: the optional parts as text. */
interface Draft {
  name: string;
  dialect: string;
  baseUrl: string;
  defaultModel: string;
  keyEnv: string;
  extraHeaders: string;
  extraBody: string;
  timeouts: Record<TimeoutKey, string>;
}

/** A connection's timeouts, each with the default it keeps when left empty (in seconds). */
const TIMEOUTS = [
  ["connectSecs", 10],
  ["firstByteSecs", 60],
  ["idleSecs", 60],
  ["totalSecs", 600],
] as const;
type TimeoutKey = (typeof TIMEOUTS)[number][0];
const MAX_TIMEOUT = 86400;

function draftOf(doc: ConnectionDoc): Draft {
  const json = (o: object | undefined) => (o && Object.keys(o).length > 0 ? JSON.stringify(o, null, 2) : "");
  return {
    name: doc.name,
    dialect: doc.dialect,
    baseUrl: doc.baseUrl,
    defaultModel: doc.defaultModel ?? "",
    keyEnv: doc.keyEnv ?? "",
    extraHeaders: json(doc.extraHeaders),
    extraBody: json(doc.extraBody),
    timeouts: Object.fromEntries(
      TIMEOUTS.map(([key]) => [key, doc.timeouts?.[key] != null ? String(doc.timeouts[key]) : ""]),
    ) as Record<TimeoutKey, string>,
  };
}

/** The timeouts from the form: empty is the default; anything but 1 to a day in whole seconds throws `problem`. */
function timeoutsOf(draft: Draft["timeouts"], problem: string): ConnectionTimeouts {
  const out: ConnectionTimeouts = { connectSecs: null, firstByteSecs: null, idleSecs: null, totalSecs: null };
  for (const [key] of TIMEOUTS) {
    const text = draft[key].trim();
    if (!text) continue;
    const secs = Number(text);
    if (!Number.isInteger(secs) || secs < 1 || secs > MAX_TIMEOUT) throw new Error(problem);
    out[key] = secs;
  }
  return out;
}

/** A JSON object from `text` (empty is none); throws with `what` named when it is not one. */
function object(text: string, what: string): Record<string, never> {
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(what);
  return value as Record<string, never>;
}

/**
 * Adds or edits one connection. A kept connection's name is fixed: its key is in the keychain
 * under that name.
 */
export function ConnectionForm({
  start,
  editing,
  onSave,
  onCancel,
}: {
  start: ConnectionDoc;
  editing: boolean;
  onSave: (doc: ConnectionDoc) => void;
  onCancel: () => void;
}) {
  const t = useT();
  const [draft, setDraft] = useState<Draft>(() => draftOf(start));
  const [problem, setProblem] = useState<string | null>(null);
  const field = (key: Exclude<keyof Draft, "timeouts">) => ({
    value: draft[key],
    onChange: (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [key]: e.target.value })),
  });

  const save = () => {
    try {
      const extraHeaders = object(draft.extraHeaders, t("connections.headersNotObject"));
      const extraBody = object(draft.extraBody, t("connections.bodyNotObject"));
      const timeouts = timeoutsOf(draft.timeouts, t("connections.badTimeout", { max: MAX_TIMEOUT }));
      setProblem(null);
      onSave({
        name: draft.name.trim(),
        dialect: draft.dialect,
        baseUrl: draft.baseUrl.trim(),
        defaultModel: draft.defaultModel.trim() || null,
        keyEnv: draft.keyEnv.trim() || null,
        extraHeaders,
        extraBody,
        timeouts,
      });
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
    }
  };

  return (
    <form
      className="connection-form"
      data-testid="connection-form"
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <div className="field-row">
        <label className="grow">
          {t("connections.name")}
          <input {...field("name")} data-testid="connection-name" disabled={editing} autoFocus={!editing} />
        </label>
        <label>
          {t("connections.dialect")}
          <select {...field("dialect")} data-testid="connection-dialect">
            {DIALECTS.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label>
        {t("connections.baseUrl")}
        <input {...field("baseUrl")} data-testid="connection-url" placeholder="https://api.example.com/v1" />
      </label>
      <div className="field-row">
        <label className="grow">
          {t("connections.defaultModel")}
          <input {...field("defaultModel")} data-testid="connection-model" />
        </label>
        <label className="grow">
          {t("connections.keyEnv")}
          <input {...field("keyEnv")} data-testid="connection-key-env" placeholder="OPENAI_API_KEY" />
        </label>
      </div>
      <label>
        {t("connections.extraHeaders")}
        <textarea {...field("extraHeaders")} rows={2} data-testid="connection-headers" placeholder='{"X-Title": "Promptloom"}' />
      </label>
      <label>
        {t("connections.extraBody")}
        <textarea {...field("extraBody")} rows={2} data-testid="connection-body" placeholder='{"max_tokens": 512}' />
      </label>
      <details className="connection-timeouts" open={TIMEOUTS.some(([key]) => draft.timeouts[key] !== "")}>
        <summary>{t("connections.timeouts")}</summary>
        <div className="field-row">
          {TIMEOUTS.map(([key, fallback]) => (
            <label key={key}>
              {t(`connections.${key}`)}
              <input
                inputMode="numeric"
                value={draft.timeouts[key]}
                placeholder={String(fallback)}
                data-testid={`connection-${key}`}
                onChange={(e) =>
                  setDraft((d) => ({ ...d, timeouts: { ...d.timeouts, [key]: e.target.value } }))
                }
              />
            </label>
          ))}
        </div>
      </details>
      {problem && (
        <p className="error" role="alert" data-testid="connection-form-error">
          {problem}
        </p>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={onCancel}>
          {t("presets.cancel")}
        </button>
        <button type="submit" className="primary" data-testid="connection-save">
          {t("connections.save")}
        </button>
      </div>
    </form>
  );
}
