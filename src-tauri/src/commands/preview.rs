//! The live preview: a build of the preset being edited over a stored session, and the request
//! body a provider would receive for it.

use std::sync::Arc;
use std::time::Instant;

use promptloom_engine::assets::InlineAssets;
use promptloom_engine::codes;
use promptloom_engine::model::{available_anchors, AgentPreset, Session};
use promptloom_engine::pipeline::{BuildResult, KeptRewrites};
use promptloom_engine::{build, BuildOptions, BuildRequest, GenerationType};
use promptloom_library::drafts::PresetEdit;
use serde::{Deserialize, Serialize};
use tauri::AppHandle;

use super::blocking;
use crate::error::AppError;
use crate::state::AppState;

/// What the live preview asks for: the preset as it is being edited (not yet saved, perhaps), a
/// stored session, the model and the build options of RULES 8.1.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct PreviewRequest {
    pub preset: Arc<AgentPreset>,
    pub session_id: Option<String>,
    pub model: String,
    pub input: Option<String>,
    pub context_window: Option<u32>,
    pub reserve: Option<u32>,
    /// The kind of generation the build is for (RULES 5.14): the preview shows the context of
    /// the kind about to be sent, and a send builds with the same options.
    pub generation_type: GenerationType,
    /// "Start reply with" (RULES 5.14); blank is none.
    pub prefill: Option<String>,
    /// Trace every macro (RULES 4.6, `Preview::macros`): asked only while the Macros view is
    /// open, so that the live preview pays nothing for it otherwise.
    #[serde(default)]
    pub trace_macros: bool,
}

/// The live preview's request after each edit: [`PreviewRequest`] with the preset as an edit of
/// the draft the previous one left (`promptloom_library::drafts`), so that a keystroke in one
/// step of a big preset sends that step.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DraftPreviewRequest {
    pub edit: PresetEdit,
    pub session_id: Option<String>,
    pub model: String,
    pub input: Option<String>,
    pub context_window: Option<u32>,
    pub reserve: Option<u32>,
    /// The kind of generation the build is for (RULES 5.14): the preview shows the context of
    /// the kind about to be sent, and a send builds with the same options.
    pub generation_type: GenerationType,
    /// "Start reply with" (RULES 5.14); blank is none.
    pub prefill: Option<String>,
    /// Trace every macro (RULES 4.6, `Preview::macros`): asked only while the Macros view is
    /// open, so that the live preview pays nothing for it otherwise.
    #[serde(default)]
    pub trace_macros: bool,
}

/// A build for the preview, with what the editor needs beside it.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    pub result: BuildResult<'static>,
    /// The anchors a step can target (RULES 2.2), for the anchor picker.
    pub anchors: Vec<String>,
    /// The tokenizer that counted, and whether it is the model's own.
    pub tokenizer: String,
    pub exact: bool,
    /// The request format of the model profile that applied (RULES 5.7): which provider's
    /// token-counting endpoint can count this build ("Count exactly").
    pub provider_format: promptloom_engine::profiles::ProviderFormat,
    /// How long the build took in the backend, in milliseconds.
    pub build_ms: f64,
    /// History messages taken out of `result` because they are exactly as stored: the UI holds
    /// the session and puts them back (`withStoredHistory`).
    pub elided: Vec<StoredRun>,
    /// The macro tracer's record (RULES 4.6), when the request asked for it.
    pub macros: Option<promptloom_engine::macros::MacroTrace>,
    /// The session's current summary, when the build reads it (RULES 5.15): the preview marks
    /// the message that writes it with the range it covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<super::memory::SummaryView>,
}

/// Builds the context `request` describes, as the preview shows it.
#[tauri::command]
#[specta::specta]
pub async fn preview(app: AppHandle, request: PreviewRequest) -> Result<Preview, AppError> {
    blocking(app, move |s| preview_of(s, &request, Instant::now())).await
}

/// [`preview`] of the draft `request.edit` leaves; the error's code is `stale_draft` when the
/// edit does not fit the draft kept, and the UI sends the whole preset.
#[tauri::command]
#[specta::specta]
pub async fn preview_draft(
    app: AppHandle,
    request: DraftPreviewRequest,
) -> Result<Preview, AppError> {
    blocking(app, move |s| {
        let started = Instant::now();
        let request = of_draft(s, request)?;
        preview_of(s, &request, started)
    })
    .await
}

/// The whole request a draft request stands for: its options as they are, over the draft its
/// edit leaves.
fn of_draft(s: &AppState, request: DraftPreviewRequest) -> Result<PreviewRequest, AppError> {
    let DraftPreviewRequest {
        edit,
        session_id,
        model,
        input,
        context_window,
        reserve,
        generation_type,
        prefill,
        trace_macros,
    } = request;
    Ok(PreviewRequest {
        preset: s.drafts.apply(edit)?,
        session_id,
        model,
        input,
        context_window,
        reserve,
        generation_type,
        prefill,
        trace_macros,
    })
}

fn preview_of(
    s: &AppState,
    request: &PreviewRequest,
    started: Instant,
) -> Result<Preview, AppError> {
    let session = session_of(s, request)?;
    let mut options = BuildOptions::at(chrono::Local::now().fixed_offset());
    options.trace_macros_in_detail = request.trace_macros;
    build_with(s, request, &session, options, |mut result, session| {
        let elided = take_stored_history(&mut result);
        Ok(Preview {
            elided,
            macros: result.macro_trace.take(),
            summary: super::memory::summary_in_use(s, session)?,
            anchors: available_anchors(&request.preset),
            tokenizer: result.tokenizer.vocabulary.name().to_string(),
            exact: result.tokens.exact,
            provider_format: result.provider_format(),
            build_ms: started.elapsed().as_secs_f64() * 1000.0,
            result: result.into_owned(),
        })
    })
}

/// The request body the model's provider would receive for `request` (RULES 5.7), as pretty
/// JSON; for a text-completion build (RULES 5.12), the OpenAI Completions body with its prompt
/// string. Asked for only when the user opens it: a long session's body is large.
#[tauri::command]
#[specta::specta]
pub async fn provider_request(app: AppHandle, request: PreviewRequest) -> Result<String, AppError> {
    blocking(app, move |s| {
        with_build(s, &request, |result, session| {
            let body = promptloom_engine::providers::own_body(&result, session, &InlineAssets)?;
            serde_json::to_string_pretty(&body).map_err(|e| {
                AppError::new(codes::INTERNAL, format!("cannot write the request: {e}"))
            })
        })
    })
    .await
}

/// A run of history messages that went into the build exactly as stored: the preview sends where
/// they go and their tokens, and the UI rebuilds them from the session it holds.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct StoredRun {
    /// The position of the run's first message in the whole message list.
    pub at: u32,
    /// The stored index of its first message; the others follow it one by one.
    pub history_index: u32,
    /// Each message's tokens, as in `BuiltMessage::tokens`.
    pub tokens: Vec<u32>,
    /// Whether those counts are exact, as `BuiltMessage::exact`.
    pub exact: bool,
}

/// Takes the history messages that are exactly as stored, and carry no attachments, out of
/// `result` and returns them as runs. Over a long session they are most of the preview; sent in
/// full, a 1,000-message preview was 397 KB, with the text left out still 124 KB.
fn take_stored_history(result: &mut BuildResult<'_>) -> Vec<StoredRun> {
    let mut runs: Vec<StoredRun> = Vec::new();
    let mut position = 0u32;
    result.messages.retain(|m| {
        let at = position;
        position += 1;
        // The UI rebuilds a stored message's role, name, text and tokens; one that carries
        // attachments goes whole, so that what the preview shows is what is sent.
        let Some(h) = m.stored_index().filter(|_| m.attachments().is_empty()) else {
            return true;
        };
        match runs.last_mut() {
            Some(run)
                if run.at + run.tokens.len() as u32 == at
                    && run.history_index + run.tokens.len() as u32 == h
                    && run.exact == m.exact =>
            {
                run.tokens.push(m.tokens)
            }
            _ => runs.push(StoredRun {
                at,
                history_index: h,
                tokens: vec![m.tokens],
                exact: m.exact,
            }),
        }
        false
    });
    runs
}

/// One build for the preview over the stored session (or none) with the user's model profiles,
/// handed to `f` with the session it refers to (the result carries the model profile that
/// applied).
pub(super) fn with_build<T>(
    s: &AppState,
    request: &PreviewRequest,
    f: impl FnOnce(BuildResult<'_>, &Session) -> Result<T, AppError>,
) -> Result<T, AppError> {
    let session = session_of(s, request)?;
    build_on(s, request, &session, f)
}

/// The stored session `request` names, or an empty one when it names none.
pub(super) fn session_of(s: &AppState, request: &PreviewRequest) -> Result<Arc<Session>, AppError> {
    match &request.session_id {
        Some(id) => s.session(id),
        None => Ok(Arc::new(Session::empty("(no session)"))),
    }
}

/// [`with_build`] over `session` instead of the stored one `request` names (a regenerated
/// reply is built on the session without it).
pub(super) fn build_on<T>(
    s: &AppState,
    request: &PreviewRequest,
    session: &Session,
    f: impl FnOnce(BuildResult<'_>, &Session) -> Result<T, AppError>,
) -> Result<T, AppError> {
    let options = BuildOptions::at(chrono::Local::now().fixed_offset());
    build_with(s, request, session, options, f)
}

/// [`build_on`] with `options` (the time macros' timestamp, whether macros are traced) beside
/// the request's own.
pub(super) fn build_with<T>(
    s: &AppState,
    request: &PreviewRequest,
    session: &Session,
    mut options: BuildOptions,
    f: impl FnOnce(BuildResult<'_>, &Session) -> Result<T, AppError>,
) -> Result<T, AppError> {
    let profiles = s.store()?.model_profiles()?;
    options.input = request.input.clone().filter(|i| !i.trim().is_empty());
    options.context_window = request.context_window;
    options.reserve = request.reserve;
    options.generation_type = request.generation_type;
    options.prefill = request.prefill.clone();
    super::memory::memory_options(s, request, session, &profiles, &mut options)?;
    // The history rules' rewrites of this session, borrowed by the build (RULES 5.2).
    let kept = KeptRewrites::of_session(&s.cache, session);
    let result = build(&BuildRequest {
        preset: &request.preset,
        session,
        kept_rewrites: Some(&kept),
        model: &request.model,
        options: &options,
        cache: &s.cache,
        profiles: &profiles,
        assets: &InlineAssets,
    })?;
    f(result, session)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_previews_the_kind_of_generation_and_prefill_it_names() {
        let dir =
            std::env::temp_dir().join(format!("promptloom-preview-kind-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = AppState::open(&dir.join("db.sqlite")).expect("opens");
        let preset = s.store().unwrap().get_preset("general-assistant").unwrap();
        let request: DraftPreviewRequest = serde_json::from_value(serde_json::json!({
            "edit": { "kind": "whole", "revision": 1, "preset": preset },
            "sessionId": "example-gull-street",
            "model": "gpt-4o",
            "input": "Not a message of an impersonation",
            "contextWindow": null,
            "reserve": null,
            "generationType": "impersonate",
            "prefill": "I say: "
        }))
        .expect("a draft request");
        let request = of_draft(&s, request).expect("the draft");
        assert_eq!(request.generation_type, GenerationType::Impersonate);
        let input = "Not a message of an impersonation";
        let sends_input = |r: &BuildResult<'_>| r.messages.iter().any(|m| m.content() == input);
        let (start, last, with_input) = with_build(&s, &request, |result, _| {
            let last = result.messages.last().expect("messages");
            let last = (last.role, last.content().to_string());
            Ok((result.reply_start.clone(), last, sends_input(&result)))
        })
        .expect("builds");
        assert_eq!(start.generation_type, GenerationType::Impersonate);
        assert_eq!(start.prefill.as_deref(), Some("I say: "));
        assert_eq!(
            last,
            (promptloom_engine::model::Role::Assistant, "I say: ".into()),
            "the prefill is sent last"
        );
        assert!(!with_input, "an impersonation takes no input");
        // The same draft as an ordinary reply: the input is sent, and no prefill.
        let normal = PreviewRequest {
            generation_type: GenerationType::Normal,
            prefill: None,
            ..request
        };
        let (plain, with_input) = with_build(&s, &normal, |result, _| {
            Ok((result.reply_start.is_plain(), sends_input(&result)))
        })
        .expect("builds");
        assert!(plain && with_input);
        // The macro trace comes only when asked for (RULES 4.6): the live preview pays nothing
        // for it while the Macros view is closed.
        let plain = preview_of(&s, &normal, Instant::now()).expect("previews");
        assert!(plain.macros.is_none());
        let traced = PreviewRequest {
            trace_macros: true,
            ..normal
        };
        let traced = preview_of(&s, &traced, Instant::now()).expect("previews");
        let trace = traced.macros.expect("the trace asked for");
        assert!(
            trace
                .expansions
                .iter()
                .any(|m| m.name == "char" || m.name == "user"),
            "{:?}",
            trace.expansions
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn stored_history_goes_as_runs_and_what_a_build_changed_goes_in_full() {
        let preset: AgentPreset = serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [
                { "id": "sys", "role": "system", "content": "You are here." },
                { "id": "hist", "role": "system", "type": "chat_history" },
                { "id": "note", "role": "system", "content": "A note." }
            ],
            "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
                { "messageId": "sys", "enabled": true },
                { "messageId": "hist", "enabled": true },
                { "messageId": "note", "enabled": true, "injectionStrategy": { "depth": 1 } }
            ]}],
            "regexRules": [{ "id": "bye", "pattern": "Bye", "replacement": "Farewell",
                "flags": "", "scope": "history", "enabled": true }]
        }))
        .expect("preset");
        let session: Session = serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "id": "s",
            "messages": [
                { "id": "m0", "role": "user", "content": "Hello" },
                { "role": "assistant", "name": "Ann", "content": "Hi" },
                { "role": "user", "content": "Bye" },
                { "role": "assistant", "content": "Ok" },
                { "role": "user", "content": "Look", "attachments": [{ "id": "a",
                    "kind": "image", "mime": "image/png", "name": "p.png", "dataBase64": "AA==" }] }
            ]
        }))
        .expect("session");
        let options = BuildOptions::at(chrono::Local::now().fixed_offset());
        let tokens = promptloom_engine::cache::BuildCache::new();
        let mut result = build(&BuildRequest {
            preset: &preset,
            session: &session,
            kept_rewrites: None,
            model: "gpt-4o",
            options: &options,
            cache: &tokens,
            profiles: &[],
            assets: &InlineAssets,
        })
        .expect("builds");
        let whole = result.messages.clone();
        let contents: Vec<&str> = whole.iter().map(|m| m.content()).collect();
        assert_eq!(
            contents,
            [
                "You are here.",
                "Hello",
                "Hi",
                "Farewell",
                "Ok",
                "A note.",
                "Look"
            ]
        );
        assert_eq!(
            whole[6].stored_index(),
            Some(4),
            "gpt-4o takes the image as stored"
        );
        let runs = take_stored_history(&mut result);
        assert_eq!(
            runs,
            vec![
                StoredRun {
                    at: 1,
                    history_index: 0,
                    tokens: vec![whole[1].tokens, whole[2].tokens],
                    exact: true,
                },
                StoredRun {
                    at: 4,
                    history_index: 3,
                    tokens: vec![whole[4].tokens],
                    exact: true,
                },
            ],
            "stored messages in runs, split where the build put something between them"
        );
        assert!(whole[1].tokens > 0);
        assert_eq!(
            result.messages,
            vec![
                whole[0].clone(),
                whole[3].clone(),
                whole[5].clone(),
                whole[6].clone()
            ],
            "the prompt, the message a rule rewrote, the injection and the message with an \
             attachment are sent in full"
        );
    }
}
