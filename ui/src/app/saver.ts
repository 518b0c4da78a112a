// Writes that must never lose an edit: one document's saves, one at a time, after a quiet time,
// retried with a growing wait until they go through. The saver only knows that something is to
// write; `write` reads the document as it is then, so a retry always writes the newest edit.
import { errorMessage } from "./api";

export type SaveStatus =
  | { state: "saved" }
  | { state: "saving" }
  /** `retryIn`: seconds until the next try, or null when it waits for the user (a conflict). */
  | { state: "failed"; message: string; retryIn: number | null };

/** The wait before the next try after `failures` failed ones: 1 s, 2 s, 4 s … 30 s at most. */
export function retryDelay(failures: number): number {
  return Math.min(1000 * 2 ** Math.max(0, failures - 1), 30_000);
}

/** What the save indicator shows for two documents: a failure first, then a save under way. */
export function combineStatus(a: SaveStatus, b: SaveStatus): SaveStatus {
  if (a.state === "failed") return a;
  if (b.state === "failed") return b;
  return a.state === "saving" ? a : b;
}

export interface Saver {
  /** Something new to write after the quiet time; a new edit starts the backoff over. */
  schedule(): void;
  /** Writes now what is pending (after a write under way); throws when it is still not stored. */
  flush(): Promise<void>;
  /** Forgets what is pending: its document was deleted or reloaded. */
  discard(): void;
  /** Waits for a write under way, without starting one. */
  settle(): Promise<void>;
  /** After an error that halts the saves (a conflict): saves may go on. */
  resume(): void;
  /** Whether an edit is not stored yet. */
  pending(): boolean;
}

export function createSaver(options: {
  write: () => Promise<void>;
  /** Milliseconds of quiet before a scheduled write. */
  quiet: number;
  /** An error the user must answer: no retry, and `flush` refuses until `resume`. */
  halts: (error: unknown) => boolean;
  onStatus: (status: SaveStatus) => void;
}): Saver {
  let dirty = false;
  let failures = 0;
  let halted: unknown = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<unknown> | null = null;
  // Bumped by `discard`: a write under way then no longer counts.
  let generation = 0;

  const wait = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => void flush().catch(() => {}), ms);
  };

  async function flush(): Promise<void> {
    clearTimeout(timer);
    while (writing) await writing;
    if (!dirty) return;
    if (halted !== null) throw halted;
    clearTimeout(timer);
    dirty = false;
    const mine = generation;
    options.onStatus({ state: "saving" });
    const attempt = options.write().then(
      () => null,
      (e: unknown) => e ?? new Error("not saved"),
    );
    writing = attempt;
    const error = await attempt;
    writing = null;
    if (mine !== generation) return;
    if (error === null) {
      failures = 0;
      // A newer edit waits for its own write.
      if (!dirty) options.onStatus({ state: "saved" });
      return;
    }
    dirty = true;
    if (options.halts(error)) {
      halted = error;
      clearTimeout(timer);
      options.onStatus({ state: "failed", message: errorMessage(error), retryIn: null });
    } else {
      failures += 1;
      const delay = retryDelay(failures);
      options.onStatus({ state: "failed", message: errorMessage(error), retryIn: delay / 1000 });
      wait(delay);
    }
    throw error;
  }

  return {
    schedule() {
      dirty = true;
      failures = 0;
      if (halted !== null) return;
      options.onStatus({ state: "saving" });
      wait(options.quiet);
    },
    flush,
    discard() {
      generation += 1;
      dirty = false;
      failures = 0;
      halted = null;
      clearTimeout(timer);
      options.onStatus({ state: "saved" });
    },
    async settle() {
      while (writing) await writing;
    },
    resume() {
      halted = null;
      failures = 0;
    },
    pending: () => dirty || writing !== null,
  };
}
