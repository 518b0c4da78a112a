//! What changed between two builds (RULES 9.8): the preview's build against the previous turn,
//! the build before the last edit, another session, another model or another swipe of the
//! newest reply.

use std::sync::Arc;

use promptloom_engine::assets::InlineAssets;
use promptloom_engine::diff::{diff, previous_turn, BuildDiff, Side};
use promptloom_engine::model::Role;
use promptloom_engine::BuildOptions;
use promptloom_library::send;
use serde::{Deserialize, Serialize};
use tauri::AppHandle;

use super::blocking;
use super::preview::{build_with, session_of, PreviewRequest};
use crate::error::AppError;
use crate::state::AppState;

/// What the preview's build is compared with.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Against {
    /// The session without its newest exchange, built when that exchange began.
    PreviousTurn,
    /// Another request: the preview before the last edit, or another session or model.
    Request { request: Box<PreviewRequest> },
    /// The session with its newest reply showing another of its swipes (`position` among all
    /// its replies, 0 the oldest).
    Swipe { position: u32 },
}

#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ChangesRequest {
    /// The preview's request: the right side.
    pub request: PreviewRequest,
    /// The left side.
    pub against: Against,
}

/// One side of the comparison, as the view names it.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ChangesSide {
    pub model: String,
    pub recipe: Option<String>,
    pub messages: u32,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    pub diff: BuildDiff,
    pub left: ChangesSide,
    pub right: ChangesSide,
}

/// The preview's build (`request.request`) against `request.against`.
#[tauri::command]
#[specta::specta]
pub async fn changes(app: AppHandle, request: ChangesRequest) -> Result<Changes, AppError> {
    blocking(app, move |s| compare(s, &request)).await
}

fn compare(s: &AppState, request: &ChangesRequest) -> Result<Changes, AppError> {
    let right_request = &request.request;
    let session = session_of(s, right_request)?;
    let now = chrono::Local::now().fixed_offset();
    // The left side: its session, request and time.
    let (left_session, left_request, left_time) = match &request.against {
        Against::PreviousTurn => {
            let earlier = previous_turn(&session, &now)?;
            let mut left = right_request.clone();
            // The previous turn had no pending input of this turn's.
            left.input = None;
            (
                Arc::new(earlier.session),
                left,
                earlier.timestamp.unwrap_or(now),
            )
        }
        Against::Request { request: other } => {
            let other_session = session_of(s, other)?;
            (other_session, (**other).clone(), now)
        }
        Against::Swipe { position } => {
            let mut other = (*session).clone();
            let at = other
                .messages
                .iter()
                .rposition(|m| m.role == Role::Assistant)
                .unwrap_or(other.messages.len());
            send::choose_swipe(&mut other, at, *position as usize)?;
            (Arc::new(other), right_request.clone(), now)
        }
    };
    build_with(
        s,
        &left_request,
        &left_session,
        traced(left_time),
        |left, left_session| {
            build_with(
                s,
                right_request,
                &session,
                traced(now),
                |right, right_session| {
                    let d = diff(
                        Side {
                            result: &left,
                            session: left_session,
                            assets: &InlineAssets,
                        },
                        Side {
                            result: &right,
                            session: right_session,
                            assets: &InlineAssets,
                        },
                        &s.cache,
                    )?;
                    let side = |r: &promptloom_engine::BuildResult<'_>| ChangesSide {
                        model: r.model.clone(),
                        recipe: r.recipe.clone(),
                        messages: r.messages.len() as u32,
                    };
                    Ok(Changes {
                        left: side(&left),
                        right: side(&right),
                        diff: d,
                    })
                },
            )
        },
    )
}

/// Build options at `timestamp` that keep the macro traces the diff names causes from.
fn traced(timestamp: chrono::DateTime<chrono::FixedOffset>) -> BuildOptions {
    BuildOptions {
        trace_macros: true,
        ..BuildOptions::at(timestamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An app state on a database of its own, with the built-in presets and example session.
    fn state(name: &str) -> (AppState, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("promptloom-changes-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = AppState::open(&dir.join("db.sqlite")).expect("opens");
        (s, dir)
    }

    fn request(s: &AppState, session: Option<&str>, model: &str) -> PreviewRequest {
        PreviewRequest {
            preset: s
                .store()
                .unwrap()
                .get_preset("general-assistant")
                .unwrap()
                .into(),
            session_id: session.map(str::to_string),
            model: model.into(),
            input: None,
            context_window: None,
            reserve: None,
            generation_type: promptloom_engine::GenerationType::Normal,
            prefill: None,
            trace_macros: false,
        }
    }

    fn against(request: PreviewRequest, against: Against) -> ChangesRequest {
        ChangesRequest { request, against }
    }

    #[test]
    fn the_example_session_against_its_previous_turn() {
        let (s, dir) = state("turn");
        let r = request(&s, Some("example-gull-street"), "gpt-4o");
        let c = compare(&s, &against(r, Against::PreviousTurn)).expect("compares");
        assert!(c.right.messages > c.left.messages);
        // The preset's system prompt says "Today is {{date}}", and the newest exchange began on
        // 2026-11-20: the previous turn was built on another day.
        let first = c.diff.first_difference.expect("a difference");
        assert_eq!(first.cause, "macro:date");
        assert_eq!(first.message_index, Some(0));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn another_model_is_the_left_side() {
        let (s, dir) = state("model");
        let right = request(&s, Some("example-gull-street"), "gpt-4o");
        let left = request(&s, Some("example-gull-street"), "claude-sonnet-4-5");
        let c = compare(
            &s,
            &against(
                right,
                Against::Request {
                    request: Box::new(left),
                },
            ),
        )
        .expect("compares");
        assert_eq!(c.left.model, "claude-sonnet-4-5");
        assert_eq!(c.right.model, "gpt-4o");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let (s, dir) = state("bad");
        // No session: a new chat has no user message, so no earlier turn.
        let e = compare(
            &s,
            &against(request(&s, None, "gpt-4o"), Against::PreviousTurn),
        )
        .expect_err("no turn");
        assert!(e.message.contains("no user message"), "{}", e.message);
        // A swipe the newest reply does not have.
        let r = request(&s, Some("example-gull-street"), "gpt-4o");
        let e = compare(&s, &against(r, Against::Swipe { position: 9 })).expect_err("no swipe");
        assert!(e.message.contains("reply 9 of message"), "{}", e.message);
        // Another session that does not exist.
        let mut other = request(&s, Some("no-such-session"), "gpt-4o");
        other.model = "gpt-4o".into();
        let r = request(&s, Some("example-gull-street"), "gpt-4o");
        let e = compare(
            &s,
            &against(
                r,
                Against::Request {
                    request: Box::new(other),
                },
            ),
        )
        .expect_err("no session");
        assert!(e.message.contains("no-such-session"), "{}", e.message);
        let _ = std::fs::remove_dir_all(dir);
    }
}
