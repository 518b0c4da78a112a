import { useState } from "react";
import type { EntryVerdict, KeyPlace, LorebookTest } from "../../bindings";
import { previewRequest, useApp } from "../../app/store";
import { api, errorMessage } from "../../app/api";
import { useSay, useT } from "../../app/useT";

/** The tester's cap on its text (docs/ARCHITECTURE.md, "Limits"; the engine's
 * `LOREBOOK_TEST_TEXT_BYTES`): a longer text is refused here, and by the backend too. */
export const TEST_TEXT_BYTES = 50 * 1024 * 1024;

type TestSource = "text" | "session" | "sessionInput";
const SOURCES: TestSource[] = ["text", "session", "sessionInput"];

/**
 * The Lorebook test view (RULES 6.6, 9.4): every entry of the preset's lorebook for a pasted
 * text, the session, or the session and the next message: fired or not, why in words and as a
 * code, the key that decided it and where, its tokens. A pinned entry stays at the top with its
 * whole explanation ("why not this one?").
 */
export function LorebookTestView() {
  const t = useT();
  const hasBook = useApp((s) => (s.preset?.lorebook?.entries?.length ?? 0) > 0);
  const hasSession = useApp((s) => s.session !== null);
  const [source, setSource] = useState<TestSource>("text");
  const [text, setText] = useState("");
  const [answer, setAnswer] = useState<LorebookTest | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const [pinned, setPinned] = useState<string | null>(null);

  if (!hasBook) return <p className="muted" data-testid="lore-test-no-book">{t("loreTest.noBook")}</p>;
  const needsSession = source !== "text" && !hasSession;

  const run = async () => {
    const request = previewRequest("normal");
    if (!request) return;
    setError(null);
    if (source === "text") {
      const size = new TextEncoder().encode(text).length;
      if (size > TEST_TEXT_BYTES) {
        setAnswer(null);
        return setError(t("loreTest.tooLarge", { size: (size / 1048576).toFixed(1), cap: TEST_TEXT_BYTES >> 20 }));
      }
    }
    setRunning(true);
    try {
      const asked = {
        request: source === "sessionInput" ? request : { ...request, input: null },
        text: source === "text" ? text : null,
      };
      setAnswer(await api.lorebookTest(asked));
    } catch (e) {
      setAnswer(null);
      setError(t("loreTest.failed", { message: errorMessage(e) }));
    } finally {
      setRunning(false);
    }
  };

  return (
    <section className="lore-test" data-testid="lore-test" aria-label={t("views.lorebook")}>
      <p className="muted">{t("loreTest.hint")}</p>
      <div className="mode-switch" role="radiogroup" aria-label={t("loreTest.source")} data-testid="lore-test-source">
        {SOURCES.map((s) => (
          <button
            key={s}
            type="button"
            role="radio"
            aria-checked={s === source}
            data-source={s}
            className={s === source ? "current" : undefined}
            onClick={() => setSource(s)}
          >
            {t(`loreTest.source.${s}`)}
          </button>
        ))}
      </div>
      {source === "text" && (
        <label className="lore-test-text">
          {t("loreTest.text")}
          <textarea value={text} rows={4} data-testid="lore-test-text" onChange={(e) => setText(e.target.value)} />
        </label>
      )}
      <div className="lore-test-run">
        <button type="button" className="primary" data-testid="lore-test-run" disabled={running || needsSession} onClick={() => void run()}>
          {running ? t("loreTest.running") : t("loreTest.run")}
        </button>
        {needsSession && <span className="muted">{t("loreTest.needSession")}</span>}
      </div>
      {error && (
        <p className="error" role="alert" data-testid="lore-test-error">
          {error}
        </p>
      )}
      {answer && <Verdicts answer={answer} pinned={pinned} onPin={setPinned} />}
    </section>
  );
}

function Verdicts({ answer, pinned, onPin }: { answer: LorebookTest; pinned: string | null; onPin: (id: string | null) => void }) {
  const t = useT();
  const say = useSay();
  const fired = answer.entries.filter((v) => v.fired).length;
  const pin = answer.entries.find((v) => v.entryId === pinned) ?? null;
  const rest = answer.entries.filter((v) => v !== pin);
  return (
    <>
      <p data-testid="lore-test-summary">
        {t("loreTest.summary", { fired, count: answer.entries.length, budget: answer.budget })}
      </p>
      {pin && (
        <section className="lore-pinned" data-testid="lore-test-pinned" aria-label={t("loreTest.pinned")}>
          <h4>{t("loreTest.pinned")}</h4>
          <Verdict verdict={pin} full pinned onPin={() => onPin(null)} />
        </section>
      )}
      <ul className="lore-verdicts" data-testid="lore-test-entries">
        {rest.map((v) => (
          <Verdict key={v.entryId} verdict={v} pinned={false} onPin={() => onPin(v.entryId)} />
        ))}
      </ul>
      {answer.warnings.length > 0 && (
        <details open className="warnings">
          <summary>{t("loreTest.warnings")}</summary>
          <ul>
            {answer.warnings.map((w, i) => (
              <li key={i}>{say(w.said, w.message)}</li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}

function Verdict({ verdict: v, full = false, pinned, onPin }: { verdict: EntryVerdict; full?: boolean; pinned: boolean; onPin: () => void }) {
  const t = useT();
  const say = useSay();
  const Tag = full ? "div" : "li";
  return (
    <Tag className={`lore-verdict ${v.fired ? "fired" : "not-fired"}`} data-testid="lore-verdict" data-entry={v.entryId} data-reason={v.reason}>
      <div className="lore-verdict-head">
        <strong>{v.name || v.entryId}</strong>
        {v.name && <code className="muted">{v.entryId}</code>}
        <span className={v.fired ? "verdict-badge fired" : "verdict-badge"} data-testid="lore-verdict-fired">
          {t(v.fired ? "loreTest.fired" : "loreTest.notFired")}
        </span>
        <code className="verdict-code" title={t("loreTest.code")} data-testid="lore-verdict-code">
          {v.reason}
        </code>
        <span className="muted">{t("loreTest.tokens", { tokens: v.tokens })}</span>
        <button type="button" className="link" data-testid="lore-verdict-pin" aria-pressed={pinned} onClick={onPin}>
          {t(pinned ? "loreTest.unpin" : "loreTest.pin")}
        </button>
      </div>
      <div className="lore-verdict-why" data-testid="lore-verdict-why">
        {say(v.said, v.why)}
      </div>
      {(full || v.key) && <Where verdict={v} full={full} />}
    </Tag>
  );
}

/** The key that decided it and where it was found (the full explanation names every part). */
function Where({ verdict: v, full }: { verdict: EntryVerdict; full: boolean }) {
  const t = useT();
  const parts: string[] = [];
  if (v.key) parts.push(t("loreTest.key", { key: v.key }));
  if (v.place) parts.push(placeWords(t, v.place));
  if (v.place && full) parts.push(t("loreTest.at", { offset: v.place.offset }));
  if (v.step != null) parts.push(t("loreTest.step", { step: v.step }));
  if (parts.length === 0) return null;
  return (
    <div className="muted lore-verdict-where" data-testid="lore-verdict-where">
      {parts.join(" · ")}
    </div>
  );
}

function placeWords(t: ReturnType<typeof useT>, place: KeyPlace): string {
  if (place.kind === "history" && place.historyIndex != null) return t("loreTest.place.history", { index: place.historyIndex });
  if (place.kind === "entry" && place.entry) return t("loreTest.place.entry", { entry: place.entry });
  return t("loreTest.place.input");
}
