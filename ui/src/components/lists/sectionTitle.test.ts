import { describe, expect, it } from "vitest";
import { sectionTitleOf } from "./sectionTitle";

describe("a name drawn as a section header", () => {
  it.each([
    ["=== Core ===", "Core"],
    ["━━ Section ━━", "Section"],
    ["═══ 🎭 Style ═══", "🎭 Style"],
    ["--- Extras", "Extras"],
    ["Tools ═══", "Tools"],
    ["[ Section ]", "Section"],
    ["【 世界观 】", "世界观"],
    ["🔧 ═══ Tools ═══", "🔧 Tools"],
    ["==========", ""],
    ["┏━━ Core ━━┓", "Core"],
    ["🔹━━━━ Core ━━━━🔹", "🔹 Core"],
    ["╔═══ 🎭 Style ═══╗", "🎭 Style"],
  ])("%s opens the section %s", (name, title) => {
    expect(sectionTitleOf(name)).toBe(title);
  });

  it.each(["Main Prompt", "[OOC]", "🎭 Roleplay rules", "NSFW - on", "a == b", ""])("%s is a step", (name) => {
    expect(sectionTitleOf(name)).toBeNull();
  });
});
