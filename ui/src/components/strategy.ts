// Where a message goes (RULES 2, InjectionStrategy), as the strategy editor shows it: a mode (list
// order, a depth in the chat history, an anchor) and its values. Recipe steps, template defaults and
// lorebook entries share it.
import type { InjectionStrategy } from "../bindings";

export type InjectionMode = "list" | "depth" | "anchor";
export type StrategyValues = {
  depth?: number;
  anchorTarget?: string;
  anchorPosition?: "before" | "after";
};

export function modeOf(strategy: InjectionStrategy | null | undefined): InjectionMode {
  if (strategy?.anchorTarget) return "anchor";
  if (strategy?.depth !== undefined && strategy?.depth !== null) return "depth";
  return "list";
}

/** The strategy `mode` and `values` describe, keeping an `order`; none for list order. */
export function strategyFor(
  mode: InjectionMode,
  values: StrategyValues,
  order?: number | null,
): InjectionStrategy | undefined {
  const keep = order !== undefined && order !== null ? { order } : {};
  if (mode === "depth") return { depth: clampDepth(values.depth ?? 0), ...keep };
  if (mode === "anchor") {
    return {
      anchorTarget: values.anchorTarget ?? "chat_history",
      anchorPosition: values.anchorPosition ?? "after",
      ...keep,
    };
  }
  return undefined;
}

export function clampDepth(depth: number): number {
  if (!Number.isFinite(depth)) return 0;
  return Math.min(99, Math.max(0, Math.round(depth)));
}
