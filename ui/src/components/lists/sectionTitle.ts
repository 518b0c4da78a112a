// Which names start a section in a long list (issue 39): the recipe's steps, the lorebook's
// entries. Authors of big presets name a divider as one: `=== Core ===`, `━━ Memory ━━`, `[ Tools ]`.

/** Characters that draw a rule: `===`, `---`, `━━`, `═══`, `~~~`, `***`, `###`, `▬▬`, and the
 * corners of a drawn box (`┏━━ Core ━━┓`). */
const RULE = "=\\-–—━─═~*#_+·•▬▰▱✦◆◇┏┓┗┛╔╗╚╝╭╮╰╯┣┫╠╣┃║│";
const RULED = new RegExp(`^[${RULE}]{2,}\\s*(.*?)\\s*[${RULE}]*$|^(.*?)\\s*[${RULE}]{3,}$`, "u");
const BRACKETED = /^(?:\[\s(.+?)\s\]|【\s*(.+?)\s*】|〔\s*(.+?)\s*〕)$/u;

/**
 * The section an item's name opens, or null when the name is not a header. A header is drawn as
 * one: `=== Core ===`, `━━ Section ━━`, `--- Extras`, `Tools ═══`, `[ Section ]` (spaces inside
 * the brackets: `[OOC]` is a name), `【 Section 】`. The title is the name without its rules;
 * a header that is only a rule has an empty title.
 */
export function sectionTitleOf(name: string): string | null {
  const s = name.trim();
  if (!s) return null;
  const bracket = BRACKETED.exec(s);
  if (bracket) return (bracket[1] ?? bracket[2] ?? bracket[3] ?? "").trim();
  // An emoji before the rule stays with the title (`🔧 ═══ Tools ═══`); its twin after the
  // closing rule goes (`🔹━━ Core ━━🔹`).
  const lead = /^(\p{Extended_Pictographic}\uFE0F?\s*)/u.exec(s)?.[1] ?? "";
  const tail = lead ? (/\s*\p{Extended_Pictographic}\uFE0F?$/u.exec(s.slice(lead.length))?.[0] ?? "") : "";
  const ruled = RULED.exec(s.slice(lead.length, s.length - tail.length));
  if (!ruled) return null;
  return [lead.trim(), (ruled[1] ?? ruled[2] ?? "").trim()].filter(Boolean).join(" ");
}
