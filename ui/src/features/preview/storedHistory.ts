// History the backend left out of a preview, put back from the session the request was made with
// (the `preview` command sends runs for messages that went into the build exactly as stored and
// carry no attachments; the engine marks them, `BuiltMessage::stored_index`).
import type { BuiltMessage, Preview, Source } from "../../bindings";
import type { Chat } from "../../app/model";

/**
 * Puts back the history messages the backend left out because they went into the build exactly
 * as stored in `session`, the session the preview was requested for: each run says where it goes
 * and its tokens.
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
      const message: BuiltMessage = {
        role: stored?.role ?? "user",
        content: stored?.content ?? "",
        tokens,
        exact: run.exact,
        source,
      };
      if (stored?.name) message.name = stored.name;
      messages.push(message);
    });
  }
  while (next < sent.length) messages.push(sent[next++]!);
  return { ...preview, result: { ...preview.result, messages } };
}
