// The codes of what the engine and the importers say, as the Rust test writes them to
// `engineTexts.json`: the language tables are typed over this list.
import type engineTexts from "./engineTexts.json";

export type EngineCode = keyof typeof engineTexts;
