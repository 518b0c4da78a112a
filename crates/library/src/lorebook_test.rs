//! The lorebook tester as both front doors run it (RULES 6.6, 8.7): the text it reads is capped
//! like any input, and its answer is every entry's verdict, the lorebook's budget and the build's
//! warnings that concern the lorebook. The build itself is the caller's (the command line reads
//! files, the app the store), made with the build option `explainLorebook`.

use promptloom_engine::limits::LOREBOOK_TEST_TEXT_BYTES;
use promptloom_engine::lorebook::tester::EntryVerdict;
use promptloom_engine::pipeline::{BuildResult, LogEntry};
use serde::Serialize;

use crate::LibraryError;

/// The tester's answer for one build.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LorebookTest {
    /// Every entry of the book, in its order, fired or not and why.
    pub entries: Vec<EntryVerdict>,
    /// The lorebook's share of the context, in tokens.
    pub budget: u32,
    /// The build's warnings that concern the lorebook (caps reached, keys refused).
    pub warnings: Vec<LogEntry>,
}

/// Refuses a text to test over the tester's cap (docs/ARCHITECTURE.md, "Limits"); `what` names
/// it in the error (`--text`, "the pasted text").
pub fn check_text(what: &str, text: &str) -> Result<(), LibraryError> {
    if text.len() > LOREBOOK_TEST_TEXT_BYTES {
        return Err(LibraryError::TooLarge {
            what: what.to_string(),
            problem: format!(
                "it is {} bytes; at most {} MB is tested",
                text.len(),
                LOREBOOK_TEST_TEXT_BYTES >> 20
            ),
        });
    }
    Ok(())
}

/// The tester's answer read from `result`, a build made with `explainLorebook` (without it, or
/// without a lorebook, no entries).
pub fn answer_of(result: &BuildResult<'_>) -> LorebookTest {
    LorebookTest {
        entries: result.lorebook_test.clone().unwrap_or_default(),
        budget: result.lorebook.as_ref().map_or(0, |l| l.budget),
        warnings: result
            .warnings
            .iter()
            .filter(|w| w.processor == "lorebook" || w.processor == "import")
            .cloned()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_over_the_cap_is_refused_naming_it() {
        assert!(check_text("the pasted text", "a dragon").is_ok());
        let over = "x".repeat(LOREBOOK_TEST_TEXT_BYTES + 1);
        let err = check_text("the pasted text", &over).expect_err("over the cap");
        assert_eq!(err.code(), promptloom_engine::codes::TOO_LARGE);
        let said = err.to_string();
        assert!(
            said.starts_with("the pasted text: it is 52428801 bytes"),
            "{said}"
        );
        assert!(said.contains("at most 50 MB"), "{said}");
    }
}
