// The preview's pieces that need no store: history the backend left out, put back from the
// session the UI holds, and the edit-to-paint timings the end-to-end test reads.
import type { BuiltMessage, Preview, Source } from "../bindings";
import type { Chat } from "./model";

/**
 * Puts back the history messages the backend left out because they went into the build exactly
 * as stored in this session: each run says where it goes and its tokens.
 */
export function withStoredHistory(preview: Preview, session: Chat | null): Preview {
  if (preview.elided.length === 0) return preview;
  const sent = preview.result.messages;
  const messages: BuiltMessage[] = [];
  let next = 0;
  for (const run of preview.elided) {
    while (messages.length < run.at && next < sent.length) messages.push(sent[next++]!);
    run.tokens.forEach((tokens, k) => {
      const historyIndex = run.historyIndex + k;
      const stored = session?.messages[historyIndex];
      const source: Source = { kind: "history", placement: { mode: "list" }, historyIndex };
      if (stored?.id) source.messageId = stored.id;
      const message: BuiltMessage = { role: stored?.role ?? "user", content: stored?.content ?? "", tokens, source };
      if (stored?.name) message.name = stored.name;
      messages.push(message);
    });
  }
  while (next < sent.length) messages.push(sent[next++]!);
  return { ...preview, result: { ...preview.result, messages } };
}

/** One edit-to-painted-preview time and its parts, in milliseconds (docs/PERFORMANCE.md). */
export interface PreviewTiming {
  total: number;
  /** Waiting for the build before it (one build runs at a time). */
  queued: number;
  /** The command's round trip, the build included. */
  roundTrip: number;
  build: number;
  /** From the result's arrival to the frame after it was painted. */
  render: number;
}

/** Read by the end-to-end test; the newest 1,000. */
const samples: PreviewTiming[] = [];
export function markPainted(stamp: number, sent: number, received: number, build: number) {
  // The frame callback runs before the paint; the task after it, once the frame is out.
  requestAnimationFrame(() =>
    setTimeout(() => {
      const now = performance.now();
      samples.push({
        total: now - stamp,
        queued: sent - stamp,
        roundTrip: received - sent,
        build,
        render: now - received,
      });
      if (samples.length > 1000) samples.shift();
    }, 0),
  );
}
(globalThis as { __promptloomPreviewTimes?: PreviewTiming[] }).__promptloomPreviewTimes = samples;
