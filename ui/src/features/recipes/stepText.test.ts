import { describe, expect, it } from "vitest";
import { commentMetaOf, leadOf, summaryOf } from "./stepText";

describe("the first meaningful text of a message", () => {
  it("skips the blank lines a big prompt starts with, and counts them", () => {
    expect(leadOf("\n\n   \nYou are {{char}}.\nStay in character.")).toEqual({
      text: "You are {{char}}.\nStay in character.",
      skippedLines: 3,
      comments: 0,
    });
  });

  it("skips the author's comment macros, one a line or several, and counts them", () => {
    const content = "{{// @category Core }}\n{{// @tooltip Sets the tone }}\n\nWrite vividly. {{// not sent }}";
    expect(leadOf(content)).toEqual({ text: "Write vividly.", skippedLines: 3, comments: 3 });
  });

  it("takes out a comment that spans lines", () => {
    expect(leadOf("{{// first line\nsecond line }}\nBody").text).toBe("Body");
  });

  it("gives empty text for a message of comments and blank lines only", () => {
    expect(leadOf("{{// only a note }}\n\n")).toEqual({ text: "", skippedLines: 0, comments: 1 });
  });

  it("reads only the start of a long text when asked to", () => {
    const lead = leadOf(`\n\nStart ${"x".repeat(100_000)}`, 100);
    expect(lead.skippedLines).toBe(2);
    expect(lead.text.length).toBeLessThan(100);
    expect(lead.text.startsWith("Start x")).toBe(true);
  });

  it("keeps other macros, which are sent", () => {
    expect(leadOf("{{char}} walks in.").text).toBe("{{char}} walks in.");
  });

  it("puts the summary on one line, cut at the length asked", () => {
    const s = summaryOf("\n\nOne\ntwo   three " + "x".repeat(100), 20);
    expect(s.text).toBe("One two three xxxxxx…");
    expect(s.skippedLines).toBe(2);
  });
});

describe("the metadata of comment macros", () => {
  it("reads @tooltip as the description and @category as the category", () => {
    expect(commentMetaOf("{{// @category Core }}\n{{// @tooltip Sets the narrator's tone. }}\nBody")).toEqual({
      category: "Core",
      description: "Sets the narrator's tone.",
    });
  });

  it("reads several tags of one comment, and their other names", () => {
    expect(commentMetaOf("{{// @group Style @desc Short replies }}")).toEqual({
      category: "Style",
      description: "Short replies",
    });
  });

  it("keeps the first of each, and ignores tags it does not know and empty values", () => {
    expect(commentMetaOf("{{// @author me @category }}{{// @category A }}{{// @category B }}")).toEqual({
      category: "A",
    });
  });

  it("reads nothing from a text without comments, or from a mail address in one", () => {
    expect(commentMetaOf("@category Core")).toEqual({});
    expect(commentMetaOf("{{// write to a@b.org }}")).toEqual({});
  });
});
