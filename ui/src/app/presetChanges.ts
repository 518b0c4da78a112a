// What an edit changed in the preset, for the live preview's draft (`preview_draft`): the
// templates, recipes and lorebook entries it replaced, found by reference since every edit makes
// new objects only for what it changes (store.ts). A keystroke in one step of a 262-prompt
// preset sends that step instead of 150 KB.
import type { AgentPreset, PresetChange } from "../bindings";

/** More changed items than this and the whole preset goes: it is as cheap, and simpler. */
const MOST_CHANGES = 16;

/**
 * The changes that make `after` of `before`, or null when they are not only items replaced in
 * place (anything else changed, a list grew or shrank, or too many items changed). Items that
 * moved are replaced at their new places.
 */
export function presetChanges(before: AgentPreset, after: AgentPreset): PresetChange[] | null {
  if (before === after) return [];
  const changes: PresetChange[] = [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)] as (keyof AgentPreset)[]);
  for (const key of keys) {
    const a = before[key];
    const b = after[key];
    if (a === b) continue;
    if (key === "messageTemplates") {
      if (!replaced(before.messageTemplates ?? [], after.messageTemplates ?? [], (index, template) => changes.push({ kind: "template", index, template }))) return null;
    } else if (key === "contextRecipes") {
      if (!replaced(before.contextRecipes ?? [], after.contextRecipes ?? [], (index, recipe) => changes.push({ kind: "recipe", index, recipe }))) return null;
    } else if (key === "lorebook") {
      const x = before.lorebook;
      const y = after.lorebook;
      if (!x || !y || !sameBesides(x, y, "entries")) return null;
      if (!replaced(x.entries ?? [], y.entries ?? [], (index, entry) => changes.push({ kind: "lorebookEntry", index, entry }))) return null;
    } else {
      return null;
    }
    if (changes.length > MOST_CHANGES) return null;
  }
  return changes;
}

/** Calls `changed` for each item of `b` that replaces the one of `a` at its place; false when
 * the lists differ in length. */
function replaced<T>(a: readonly T[], b: readonly T[], changed: (index: number, item: T) => void): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) changed(i, b[i]!);
  return true;
}

/** Whether `a` and `b` hold the same values (by reference) at every key but `except`. */
function sameBesides(a: object, b: object, except: string): boolean {
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const key of keys) if (key !== except && x[key] !== y[key]) return false;
  return true;
}
