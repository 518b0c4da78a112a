// The built-in instruct templates (RULES 5.12), asked of the backend once, and which of them a
// preset's own template is.
import { useEffect, useState } from "react";
import type { InstructTemplate } from "../../bindings";
import { api } from "../../app/api";

let builtIns: Promise<InstructTemplate[]> | null = null;

/** The built-in templates, in the engine's order; empty until they arrive (or when they cannot). */
export function useBuiltInTemplates(): InstructTemplate[] {
  const [list, setList] = useState<InstructTemplate[]>([]);
  useEffect(() => {
    let current = true;
    builtIns ??= api.instructTemplates().catch((e: unknown) => {
      builtIns = null;
      throw e;
    });
    builtIns.then(
      (l) => current && setList(l),
      () => {},
    );
    return () => {
      current = false;
    };
  }, []);
  return list;
}

/** For tests: the list is asked for again. */
export function forgetBuiltInTemplates() {
  builtIns = null;
}

/** A value with its object keys sorted and absent values left out, for comparing documents. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined && v !== null)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

export function sameTemplate(a: InstructTemplate, b: InstructTemplate): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** The built-in that `template` is exactly, if it is one. */
export function builtInOf(template: InstructTemplate, list: readonly InstructTemplate[]): InstructTemplate | null {
  return list.find((b) => sameTemplate(b, template)) ?? null;
}

/** The name of template `id`, which a build of `preset` used: the preset's own, or a built-in. */
export function templateNameOf(id: string, preset: { instruct?: InstructTemplate | null } | null, list: readonly InstructTemplate[]): string {
  if (preset?.instruct?.id === id) return preset.instruct.name;
  return list.find((b) => b.id === id)?.name ?? id;
}
