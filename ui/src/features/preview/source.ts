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
