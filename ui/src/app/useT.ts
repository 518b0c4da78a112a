import { useCallback } from "react";
import type { ProcessorDescriptor, Said } from "../bindings";
import { translate, type MessageKey } from "../i18n";
import { describe, say, type DescriptorText } from "../i18n/said";
import { useApp } from "./store";

/** The translator for the chosen language. */
export function useT() {
  const language = useApp((s) => s.language);
  return useCallback(
    (key: MessageKey, vars?: Record<string, string | number>) => translate(language, key, vars),
    [language],
  );
}

/** What the engine said (a code with parameters, and its English), in the chosen language. */
export function useSay() {
  const language = useApp((s) => s.language);
  return useCallback((said: Said, english: string) => say(language, said, english), [language]);
}

/** A text of a processor's descriptor (its name, description, a setting's label or help), in the
 * chosen language. */
export function useDescribe() {
  const language = useApp((s) => s.language);
  return useCallback(
    (d: ProcessorDescriptor, which: DescriptorText) => describe(language, d, which),
    [language],
  );
}
