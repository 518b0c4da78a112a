//! The lorebook tester in the app (RULES 6.6, 9.4): every entry of the preset's lorebook, fired
//! or not and why, for a pasted text, the open session, or the session and the message about to
//! be sent. The build is the preview's, with the option `explainLorebook`.

use std::sync::Arc;

use promptloom_engine::model::Session;
use promptloom_engine::BuildOptions;
use promptloom_library::lorebook_test::{answer_of, check_text, LorebookTest};
use serde::Deserialize;
use tauri::AppHandle;

use super::blocking;
use super::preview::{build_with, session_of, PreviewRequest};
use crate::error::AppError;
use crate::state::AppState;

/// What the tester reads: with `text`, that text alone as the message about to be sent over an
/// empty chat; without it, the session `request` names and its `input`, if any.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct LorebookTestRequest {
    pub request: PreviewRequest,
    pub text: Option<String>,
}

/// Tests the lorebook of `request.request.preset` (RULES 6.6); a text over the tester's cap is
/// refused with `too_large` and nothing is built.
#[tauri::command]
#[specta::specta]
pub async fn lorebook_test(
    app: AppHandle,
    request: LorebookTestRequest,
) -> Result<LorebookTest, AppError> {
    blocking(app, move |s| test_of(s, request)).await
}

fn test_of(s: &AppState, asked: LorebookTestRequest) -> Result<LorebookTest, AppError> {
    let LorebookTestRequest { mut request, text } = asked;
    let session = match text {
        Some(text) => {
            check_text("the text to test", &text)?;
            request.input = Some(text);
            Arc::new(Session::empty("lorebook-test"))
        }
        None => {
            if let Some(input) = &request.input {
                check_text("the message about to be sent", input)?;
            }
            session_of(s, &request)?
        }
    };
    let mut options = BuildOptions::at(chrono::Local::now().fixed_offset());
    options.explain_lorebook = true;
    build_with(s, &request, &session, options, |result, _| {
        Ok(answer_of(&result))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptloom_engine::lorebook::tester::VerdictCode;
    use promptloom_engine::model::AgentPreset;

    fn request(text: Option<&str>) -> LorebookTestRequest {
        let preset: AgentPreset = serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [
                { "id": "sys", "role": "system", "content": "You are here." },
                { "id": "hist", "role": "system", "type": "chat_history" }
            ],
            "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
                { "messageId": "sys", "enabled": true },
                { "messageId": "hist", "enabled": true }
            ]}],
            "lorebook": { "entries": [
                { "id": "dragon", "keys": ["dragon"], "content": "Dragons breathe fire." },
                { "id": "unicorn", "keys": ["unicorn"], "content": "Unicorns are rare." }
            ] }
        }))
        .expect("a preset");
        LorebookTestRequest {
            request: PreviewRequest {
                preset: Arc::new(preset),
                session_id: None,
                model: "gpt-4o".into(),
                input: None,
                context_window: None,
                reserve: None,
                generation_type: promptloom_engine::GenerationType::Normal,
                prefill: None,
                trace_macros: false,
            },
            text: text.map(str::to_string),
        }
    }

    #[test]
    fn a_pasted_text_is_tested_entry_by_entry_and_one_over_the_cap_is_refused() {
        let dir = std::env::temp_dir().join(format!("promptloom-lore-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = AppState::open(&dir.join("db.sqlite")).expect("opens");
        let answer = test_of(&s, request(Some("a dragon by the castle"))).expect("tests");
        let verdict = |id: &str| answer.entries.iter().find(|v| v.entry_id == id).expect(id);
        assert!(verdict("dragon").fired);
        assert_eq!(verdict("dragon").reason, VerdictCode::Key);
        assert!(!verdict("unicorn").fired);
        assert_eq!(verdict("unicorn").reason, VerdictCode::NoMatch);
        let over = "x".repeat(promptloom_engine::limits::LOREBOOK_TEST_TEXT_BYTES + 1);
        let err = test_of(&s, request(Some(&over))).expect_err("over the cap");
        assert_eq!(err.code, promptloom_engine::codes::TOO_LARGE);
        assert!(err.message.contains("the text to test"), "{}", err.message);
        let _ = std::fs::remove_dir_all(dir);
    }
}
