// How the preview names what produced a message: its kind, its template, entry, stored message
// or processor, and where it was placed.
import type { BuiltMessage } from "../../bindings";

type Source = BuiltMessage["source"];

function placementLabel(source: Source): string {
  const p = source.placement;
  if (p.mode === "depth") return `depth ${p.depth}`;
  if (p.mode === "anchor") return `⚓ ${p.position} ${p.target}`;
  return "";
}

/** The source's id and placement: `main · depth 2`, `#14`. */
export function sourceDetail(source: Source): string {
  if (source.kind === "memory" && source.memory) return memoryDetail(source.memory);
  const id =
    source.kind === "processor"
      ? source.processor
      : source.kind === "history" || source.kind === "input"
        ? source.historyIndex !== undefined && source.historyIndex !== null
          ? `#${source.historyIndex}`
          : ""
        : (source.templateId ?? source.entryId ?? source.ephemeral ?? "");
  return [id, placementLabel(source)].filter(Boolean).join(" · ");
}

/** The kind with the detail: `template main · depth 2`. */
export function sourceLabel(source: Source): string {
  return [source.kind, sourceDetail(source)].filter(Boolean).join(" ");
}

/** A recalled message's stored message and score: `#12 · score 0.812` (RULES 5.15). */
export function memoryDetail(memory: NonNullable<Source["memory"]>): string {
  const at = memory.index !== undefined && memory.index !== null ? `#${memory.index}` : (memory.messageId ?? "");
  const score = `score ${(memory.score / 1000).toFixed(3)}`;
  return [at, score].filter(Boolean).join(" · ");
}

/** Whether a template message writes the session's summary: its text uses `{{summary}}`, as the
 * token limiter's summary section reads it (RULES 5.6). */
export function writesSummary(
  source: Source,
  templates: { id: string; content?: string | null }[],
): boolean {
  if (source.kind !== "template" || !source.templateId) return false;
  const text = templates.find((t) => t.id === source.templateId)?.content ?? "";
  return text.toLowerCase().includes("{{summary}}");
}
