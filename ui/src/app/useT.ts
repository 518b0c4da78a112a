import { useCallback } from "react";
import { translate, type MessageKey } from "../i18n";
import { useApp } from "./store";

/** The translator for the chosen language. */
export function useT() {
  const language = useApp((s) => s.language);
  return useCallback(
    (key: MessageKey, vars?: Record<string, string | number>) => translate(language, key, vars),
    [language],
  );
}
