import { useEffect, useEffectEvent, useRef, useState } from "react";
import type { Changes, ChangesRequest } from "../../bindings";
import { api, errorMessage } from "../../app/api";

/** How long after the preview's newest build the comparison is asked: it builds twice and
 * compares, so it waits for the typing to pause. */
export const CHANGES_DELAY_MS = 250;

export interface ChangesAnswer {
  changes: Changes | null;
  error: string | null;
  /** A newer comparison is on its way: what is shown is of an earlier build. */
  stale: boolean;
}

interface Answered {
  key: string;
  changes: Changes | null;
  error: string | null;
  /** The `trigger` it answers. */
  trigger: unknown;
}

/**
 * What `commands.changes` answers for `ask()`, asked again a moment after `trigger` changes (the
 * preview's build, say), one ask at a time: one that comes while another runs waits, and only
 * the newest of those is asked. `key` names what is compared (the mode and what was picked): an
 * answer for another key is never shown. `ask` answering null asks nothing.
 */
export function useChanges(ask: () => ChangesRequest | null, trigger: unknown, key: string): ChangesAnswer {
  const [answered, setAnswered] = useState<Answered | null>(null);
  const busy = useRef(false);
  const next = useRef<(() => void) | null>(null);
  const request = useEffectEvent(ask);

  useEffect(() => {
    let current = true;
    const run = () => {
      const asked = request();
      if (!asked) {
        setAnswered({ key, changes: null, error: null, trigger });
        return;
      }
      busy.current = true;
      api
        .changes(asked)
        .then(
          (changes) => current && setAnswered({ key, changes, error: null, trigger }),
          (e: unknown) => current && setAnswered({ key, changes: null, error: errorMessage(e), trigger }),
        )
        .finally(() => {
          busy.current = false;
          const then = next.current;
          next.current = null;
          then?.();
        });
    };
    const timer = setTimeout(() => {
      if (busy.current) next.current = run;
      else run();
    }, CHANGES_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
      if (next.current === run) next.current = null;
    };
  }, [trigger, key]);

  if (!answered || answered.key !== key) return { changes: null, error: null, stale: true };
  return { changes: answered.changes, error: answered.error, stale: answered.trigger !== trigger };
}
