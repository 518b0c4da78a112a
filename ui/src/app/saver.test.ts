import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { combineStatus, createSaver, retryDelay, type SaveStatus } from "./saver";

describe("the saver", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] }));
  afterEach(() => vi.useRealTimers());

  /** A saver whose writes fail with the errors of `failures`, in order, then succeed. */
  function saver(failures: unknown[]) {
    const statuses: SaveStatus[] = [];
    let writes = 0;
    const s = createSaver({
      quiet: 400,
      halts: (e) => e === "conflict",
      onStatus: (status) => statuses.push(status),
      write: async () => {
        writes += 1;
        const failure = failures.shift();
        if (failure !== undefined) throw failure;
      },
    });
    return { s, statuses, writes: () => writes, last: () => statuses.at(-1) };
  }

  it("waits 1 s, 2 s, 4 s … and at most 30 s between tries", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(retryDelay)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it("shows a failure before a save under way, and that before saved", () => {
    const failed: SaveStatus = { state: "failed", message: "locked", retryIn: 1 };
    expect(combineStatus({ state: "saved" }, failed)).toBe(failed);
    expect(combineStatus(failed, { state: "saving" })).toBe(failed);
    expect(combineStatus({ state: "saved" }, { state: "saving" })).toEqual({ state: "saving" });
    expect(combineStatus({ state: "saved" }, { state: "saved" })).toEqual({ state: "saved" });
  });

  it("writes after the quiet time, retries a failure with backoff, and a new edit starts it over", async () => {
    const { s, writes, last } = saver([new Error("locked"), new Error("locked"), new Error("locked")]);
    s.schedule();
    await vi.advanceTimersByTimeAsync(399);
    expect(writes()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes()).toBe(1);
    expect(last()).toEqual({ state: "failed", message: "locked", retryIn: 1 });
    expect(s.pending()).toBe(true);
    await vi.advanceTimersByTimeAsync(1000);
    expect(writes()).toBe(2);
    expect(last()).toEqual({ state: "failed", message: "locked", retryIn: 2 });
    // A new edit: the quiet time, then the first wait again.
    s.schedule();
    await vi.advanceTimersByTimeAsync(400);
    expect(writes()).toBe(3);
    expect(last()).toEqual({ state: "failed", message: "locked", retryIn: 1 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(writes()).toBe(4);
    expect(last()).toEqual({ state: "saved" });
    expect(s.pending()).toBe(false);
  });

  it("flush throws while the write fails, and writes once when a write is under way", async () => {
    const { s, writes } = saver([new Error("locked")]);
    s.schedule();
    await expect(s.flush()).rejects.toThrow("locked");
    s.schedule();
    await Promise.all([s.flush(), s.flush()]);
    expect(writes()).toBe(2);
    await expect(s.flush()).resolves.toBeUndefined();
    expect(writes()).toBe(2);
  });

  it("stops at an error the user must answer until it is resumed", async () => {
    const { s, writes, last } = saver(["conflict"]);
    s.schedule();
    await vi.advanceTimersByTimeAsync(400);
    expect(last()).toEqual({ state: "failed", message: "conflict", retryIn: null });
    await vi.advanceTimersByTimeAsync(60_000);
    s.schedule();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(writes()).toBe(1);
    await expect(s.flush()).rejects.toBe("conflict");
    s.resume();
    await s.flush();
    expect(writes()).toBe(2);
    expect(last()).toEqual({ state: "saved" });
  });

  it("forgets a discarded edit, and a write under way then does not count", async () => {
    let fail: (e: Error) => void = () => {};
    const statuses: SaveStatus[] = [];
    let writes = 0;
    const s = createSaver({
      quiet: 0,
      halts: () => false,
      onStatus: (status) => statuses.push(status),
      write: () => {
        writes += 1;
        return new Promise<void>((_, reject) => (fail = reject));
      },
    });
    s.schedule();
    const flushing = s.flush();
    s.discard();
    fail(new Error("locked"));
    await flushing;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(writes).toBe(1);
    expect(s.pending()).toBe(false);
    expect(statuses.at(-1)).toEqual({ state: "saved" });
  });
});
