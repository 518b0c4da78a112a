import { memo, useId, useMemo } from "react";
import type { InjectionStrategy } from "../bindings";
import { useApp } from "../app/store";
import { useT } from "../app/useT";
import { clampDepth, modeOf, type InjectionMode, type StrategyValues } from "./strategy";

const FIRST_ANCHORS = ["chat_history", "user_profile"];

/**
 * Where a message goes (RULES 2, InjectionStrategy): in list order, at a depth in the chat history
 * (0-99), or before or after an anchor of `available_anchors`. Used by recipe steps and lorebook
 * entries and template defaults alike. Rendered again only when its props or the anchors change:
 * each answer of the live preview brings the same anchors in a new list, and React writes a form
 * field's name and type again at each render (docs/PERFORMANCE.md, issue 39).
 */
export const StrategyEditor = memo(StrategyEditorView);

function StrategyEditorView({
  strategy,
  onChange,
  listLabel,
  testPrefix = "",
}: {
  strategy: InjectionStrategy | null | undefined;
  /** What "list order" means here (a lorebook entry has no list position). */
  listLabel?: string;
  onChange: (mode: InjectionMode, values: StrategyValues) => void;
  /** Prefixes the test ids when two strategy editors can be on screen together. */
  testPrefix?: string;
}) {
  const t = useT();
  const anchorsKey = useApp((s) => JSON.stringify(s.preview?.anchors ?? FIRST_ANCHORS));
  const anchors = useMemo(() => JSON.parse(anchorsKey) as string[], [anchorsKey]);
  // Radio groups need a name unique in the page.
  const name = useId();
  const mode = modeOf(strategy);
  const set = (next: InjectionMode, values: StrategyValues = {}) =>
    onChange(next, {
      depth: strategy?.depth ?? 0,
      anchorTarget: strategy?.anchorTarget ?? anchors[0],
      anchorPosition: strategy?.anchorPosition ?? "after",
      ...values,
    });

  return (
        <fieldset className="injection" data-testid={`${testPrefix}injection`}>
          <legend>{t("editor.injection")}</legend>
          <label>
            <input
              type="radio"
              name={`${name}-mode`}
              data-testid={`${testPrefix}mode-list`}
              checked={mode === "list"}
              onChange={() => set("list")}
            />
            {listLabel ?? t("editor.mode.list")}
          </label>
          <label>
            <input
              type="radio"
              name={`${name}-mode`}
              data-testid={`${testPrefix}mode-depth`}
              checked={mode === "depth"}
              onChange={() => set("depth")}
            />
            {t("editor.mode.depth")}
          </label>
          {mode === "depth" && (
            <label className="indent">
              {t("editor.depth")}
              <input
                type="number"
                min={0}
                max={99}
                data-testid={`${testPrefix}depth-input`}
                value={strategy?.depth ?? 0}
                onChange={(e) => set("depth", { depth: clampDepth(Number(e.target.value)) })}
              />
            </label>
          )}
          <label>
            <input
              type="radio"
              name={`${name}-mode`}
              data-testid={`${testPrefix}mode-anchor`}
              checked={mode === "anchor"}
              onChange={() => set("anchor")}
            />
            {t("editor.mode.anchor")}
          </label>
          {mode === "anchor" && (
            <div className="indent field-row">
              <label>
                {t("editor.anchor")}
                <select
                  value={strategy?.anchorTarget ?? anchors[0]}
                  data-testid={`${testPrefix}anchor-select`}
                  onChange={(e) => set("anchor", { anchorTarget: e.target.value })}
                >
                  {anchors.map((a) => (
                    <option key={a} value={a}>
                      {a}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                <input
                  type="radio"
                  name={`${name}-position`}
                  checked={strategy?.anchorPosition === "before"}
                  onChange={() => set("anchor", { anchorPosition: "before" })}
                />
                {t("editor.before")}
              </label>
              <label>
                <input
                  type="radio"
                  name={`${name}-position`}
                  checked={strategy?.anchorPosition !== "before"}
                  onChange={() => set("anchor", { anchorPosition: "after" })}
                />
                {t("editor.after")}
              </label>
            </div>
          )}
        </fieldset>
  );
}
