import type { MessageTemplate, Source } from "../../bindings";
import { useApp } from "../../app/store";
import { useT } from "../../app/useT";
import { sourceDetail } from "./source";

/** The template's name, with its id when another template has the same name. */
function nameOf(templates: MessageTemplate[], id: string): string | undefined {
  const name = templates.find((m) => m.id === id)?.name;
  if (!name) return undefined;
  return templates.some((m) => m.id !== id && m.name === name) ? `${name} (${id})` : name;
}

/** What produced a message: its kind as a coloured badge, then its template, entry or index. A
 * template is named as the recipe names it (an imported preset's ids are often UUIDs), its id
 * on hover. */
export function SourceBadge({ source }: { source: Source }) {
  const t = useT();
  const templateId = source.kind === "template" ? source.templateId : undefined;
  const name = useApp((s) => (templateId ? nameOf(s.preset?.messageTemplates ?? [], templateId) : undefined));
  const named = name && name !== templateId ? { ...source, templateId: name } : source;
  return (
    <>
      <span className={`badge badge-${source.kind}`}>{t(`source.${source.kind}`)}</span>
      <span className="badge-detail" title={name && name !== templateId ? (templateId ?? undefined) : undefined}>
        {sourceDetail(named)}
      </span>
    </>
  );
}
