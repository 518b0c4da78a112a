// What the engine and the importers say (warnings, logs, reasons, report items, the processors'
// names and settings) comes as a code with parameters next to its English (docs/ARCHITECTURE.md,
// "Engine texts in the UI's language"). `engineTexts.json` lists every code with its English (a
// Rust test writes it); `engineZh.ts` has the Chinese of each, and the type checker and a test
// hold it to that list.
import type { ProcessorDescriptor, Said } from "../bindings";
import engineTexts from "./engineTexts.json";
import { engineZh } from "./engineZh";
import type { Language } from ".";


const englishTexts: Record<string, string> = engineTexts;
const tables: Record<Language, Record<string, string> | null> = { en: null, "zh-CN": engineZh };

/** `{name}` placeholders, as the engine fills them: not inside doubled braces (`{{user}}`). */
export const PLACEHOLDER = /(?<!\{)\{(\w+)\}(?!\})/g;

/**
 * `said` in `language`. In English it is the engine's own text, `english`, as the command line
 * prints it. Otherwise the code's text in that language, its placeholders filled with the
 * parameters (user data, as they are) and the parts (said in the same language); `english` when
 * the code is not in the list (a plugin's processor).
 */
export function say(language: Language, said: Said, english: string): string {
  const table = tables[language];
  if (!table || !(said.code in table)) return english;
  return fill(table, said);
}

/** The English of `said` from the list of texts, for a text that travels without its English
 * (a processor's SillyTavern changes). */
export function englishOf(said: Said): string {
  return fill(englishTexts, said);
}

function fill(table: Record<string, string>, said: Said): string {
  const text = table[said.code] ?? englishTexts[said.code] ?? said.code;
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const value = said.params[name];
    if (value !== undefined) return value;
    const part = said.parts[name];
    return part ? fill(table, part) : whole;
  });
}

/**
 * Which text of a processor's descriptor: its name, its description, a setting's label or help,
 * or one choice of a select setting (whose English is the value itself).
 */
export type DescriptorText =
  | "name"
  | "description"
  | { label: string }
  | { help: string }
  | { option: string; value: string };

/**
 * A text of a processor's descriptor in `language`. Its code comes from the processor's id and
 * the setting's key (`ProcessorDescriptor::texts` in the engine); a plugin's stays in English.
 */
export function describe(language: Language, d: ProcessorDescriptor, which: DescriptorText): string {
  const [code, text] =
    which === "name"
      ? [`processor.${d.id}.name`, d.name]
      : which === "description"
        ? [`processor.${d.id}.description`, d.description]
        : "label" in which
          ? [`processor.${d.id}.${which.label}.label`, d.configFields.find((f) => f.key === which.label)?.label]
          : "help" in which
            ? [`processor.${d.id}.${which.help}.help`, d.configFields.find((f) => f.key === which.help)?.description]
            : [`processor.${d.id}.${which.option}.option.${which.value}`, which.value];
  return say(language, { code, params: {}, parts: {} }, text ?? "");
}
