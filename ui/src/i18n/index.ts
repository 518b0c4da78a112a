import { en, type MessageKey } from "./en";
import { zh } from "./zh";

export type Language = "en" | "zh-CN";
export const LANGUAGES: { id: Language; label: string }[] = [
  { id: "en", label: "English" },
  { id: "zh-CN", label: "简体中文" },
];

const tables: Record<Language, Record<MessageKey, string>> = { en, "zh-CN": zh };

/** The string `key` in `language`, with `{name}` placeholders filled from `vars`. */
export function translate(
  language: Language,
  key: MessageKey,
  vars?: Record<string, string | number>,
): string {
  const text = tables[language][key] ?? en[key];
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (m, name: string) =>
    name in vars ? String(vars[name]) : m,
  );
}

export type { MessageKey };
