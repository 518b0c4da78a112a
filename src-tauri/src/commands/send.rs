//! Sending: the request a build makes through a connection (shown before it is sent, its key
//! redacted, its body the bytes that go), the reply streamed to the page as it arrives and then
//! kept as its kind says (RULES 5.14: the session's next message, more of the last reply, or the
//! user's next message, not stored); Stop, Regenerate and flipping between replies.

use std::sync::Arc;

use promptloom_engine::assets::InlineAssets;
use promptloom_engine::model::Session;
use promptloom_engine::{codes, GenerationType, Said};
use promptloom_library::calibration::{self, Sample};
use promptloom_library::connections;
use promptloom_library::count;
use promptloom_library::keychain::OsKeychain;
use promptloom_library::send;
use promptloom_library::summary;
use promptloom_send::{CancellationToken, SendOptions, StreamEvent};
use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager};

use super::blocking;
use super::memory::{start_auto_summary, AutoSummary};
use super::preview::{build_on, with_build, PreviewRequest};
use crate::error::AppError;
use crate::state::Sending;

/// A request as the preview shows it: where it goes, its headers with the key redacted, and the
/// body, byte for byte what is sent.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ShownRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// What the connection's dialect does not take of the generation settings.
    pub warnings: Vec<Said>,
}

/// The request `connection` would send for the preview's build.
#[tauri::command]
#[specta::specta]
pub async fn connection_request(
    app: AppHandle,
    request: PreviewRequest,
    connection: String,
) -> Result<ShownRequest, AppError> {
    blocking(app, move |s| {
        let connection = connections::get(&*s.store()?, &connection)?;
        let has_key = connections::has_key(&connection, &OsKeychain).unwrap_or(false);
        with_build(s, &request, |result, session| {
            let r = send::request(
                &connection,
                &result,
                session,
                &InlineAssets,
                &request.model,
                true,
                has_key,
            )?;
            Ok(ShownRequest {
                url: r.url,
                headers: r.headers,
                body: r.body,
                warnings: r.warnings,
            })
        })
    })
    .await
}

/// The provider's own count of the input tokens of the request Send would send.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ExactCount {
    /// The provider's count.
    pub tokens: u32,
    /// Our count of the same build (an estimate, or the count would not have been asked).
    pub counted: u32,
    /// The count was kept from an earlier ask of the same content; no request was made.
    pub cached: bool,
    /// The endpoint that counted: `Anthropic count_tokens` or `Gemini countTokens`.
    pub provider: String,
}

/// "Count exactly": asks `connection`'s token-counting endpoint what the request Send would send
/// for the preview's build costs, or answers from the counts kept per content. Only ever called
/// when the user asks.
#[tauri::command]
#[specta::specta]
pub async fn count_exactly(
    app: AppHandle,
    request: PreviewRequest,
    connection: String,
) -> Result<ExactCount, AppError> {
    let prepared = blocking(app.clone(), move |s| {
        let connection = connections::get(&*s.store()?, &connection)?;
        let key = connections::require_key(&connection, &OsKeychain)?;
        let (counting, counted) = with_build(s, &request, |result, session| {
            let r = send::request(
                &connection,
                &result,
                session,
                &InlineAssets,
                &request.model,
                true,
                key.is_some(),
            )?;
            Ok((
                count::counting(&connection, &request.model, &r.body)?,
                result.tokens.total,
            ))
        })?;
        let cached = count::cached(&*s.store()?, &counting)?;
        Ok((connection, key, counting, counted, cached))
    })
    .await?;
    let (connection, key, counting, counted, cached) = prepared;
    let provider = counting.request.endpoint.name().to_string();
    if let Some(tokens) = cached {
        return Ok(ExactCount {
            tokens,
            counted,
            cached: true,
            provider,
        });
    }
    let tokens = promptloom_send::count_tokens(
        &connection,
        key,
        &counting.request,
        &SendOptions::for_connection(&connection),
    )
    .await
    .map_err(|e| AppError::new(e.code(), e.to_string()))?;
    let tokens = u32::try_from(tokens).unwrap_or(u32::MAX);
    blocking(app, move |s| {
        count::keep(&*s.store()?, &counting, tokens)?;
        Ok(ExactCount {
            tokens,
            counted,
            cached: false,
            provider,
        })
    })
    .await
}

/// What to send: the preview's build (its preset, stored session, model, input, kind of
/// generation and prefill) through `connection`; with `regenerate`, a new ordinary reply in place
/// of the session's last one (the preview's kind is not read).
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SendRequest {
    pub preview: PreviewRequest,
    pub connection: String,
    pub regenerate: bool,
}

/// What the page hears while a reply arrives.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SendEvent {
    /// The exact request is on its way. `start` is what the reply shows before the text that
    /// arrives: its prefill, or a continuation's joiner (RULES 5.14).
    Started { url: String, start: String },
    /// More of the reply's text.
    Text { text: String },
}

/// What a send left: the session as it is now stored, and the reply's text as shown.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Sent {
    pub session: Session,
    /// The reply with its prefill; a continuation's joiner and what came back; for an
    /// impersonation the user's next message, which is not stored (the page puts it in the
    /// message box). Empty when a stop came before any text.
    pub text: String,
}

/// Sends, streams the reply through `events`, and keeps it as its kind says
/// (`send::keep_reply`). Nothing is stored when the send fails; a reply stopped by
/// `stop_sending` is kept as far as it came, marked incomplete, and not at all when nothing had
/// come.
#[tauri::command]
#[specta::specta]
pub async fn send_message(
    app: AppHandle,
    request: SendRequest,
    events: Channel<SendEvent>,
) -> Result<Sent, AppError> {
    let session_id =
        request.preview.session_id.clone().ok_or_else(|| {
            AppError::new(codes::NOT_FOUND, "open or create a session to send into")
        })?;
    // Everything is checked and made before anything goes out.
    let regenerate = request.regenerate;
    let mut preview = request.preview.clone();
    if regenerate {
        // The reply being replaced answered the session's last input: no new one.
        preview.input = None;
        preview.generation_type = GenerationType::Normal;
    }
    let kind = preview.generation_type;
    let name = request.connection.clone();
    let prepared = blocking(app.clone(), move |s| {
        let connection = connections::get(&*s.store()?, &name)?;
        let key = connections::require_key(&connection, &OsKeychain)?;
        let stored = s.session(&session_id)?;
        send::check_sendable(&stored, kind)?;
        let on = if regenerate {
            Arc::new(send::before_last_reply(&stored)?)
        } else {
            stored
        };
        build_on(s, &preview, &on, |result, session| {
            // What was built must continue the last reply as stored (RULES 5.14).
            send::check_built(session, &result.reply_start)?;
            let r = send::request(
                &connection,
                &result,
                session,
                &InlineAssets,
                &preview.model,
                true,
                key.is_some(),
            )?;
            // A continuation goes onto the reply it continues, as it is now (RULES 5.14).
            let continued = (kind == GenerationType::Continue)
                .then(|| session.messages.last().map(|m| Arc::clone(&m.content)))
                .flatten();
            Ok((
                connection.clone(),
                key.clone(),
                r,
                result.tokens.total,
                result.reply_start.clone(),
                continued,
                summary::limiter_dropped(&result),
            ))
        })
    })
    .await?;
    let (connection, key, shown, counted, reply_start, continued, dropped) = prepared;
    // What a summary after the reply is made with (RULES 5.15).
    let (used_connection, used_key) = (connection.clone(), key.clone());

    let cancel = CancellationToken::new();
    let sending = app.state::<Sending>();
    sending.start(cancel.clone());
    let _ = events.send(SendEvent::Started {
        url: shown.url.clone(),
        start: reply_start.reply_text(""),
    });
    let model = request.preview.model.clone();
    let reply = promptloom_send::send(
        &connection,
        key,
        Some(&model),
        shown.body.into_bytes(),
        shown.call,
        &SendOptions::for_connection(&connection),
        &cancel,
        |event| {
            if let StreamEvent::Delta(text) = event {
                let _ = events.send(SendEvent::Text { text: text.clone() });
            }
        },
    )
    .await;
    sending.finish();
    let reply = reply.map_err(|e| AppError::new(e.code(), e.to_string()))?;

    let session_id = request.preview.session_id.clone().unwrap_or_default();
    let input = request.preview.input.clone();
    let model_used = model.clone();
    let (sent, stored) = blocking(app.clone(), move |s| {
        // Read, append and write under the database's lock: the session as it is now, with any
        // edit saved during the send, and no other write in between.
        let store = s.store()?;
        if reply.incomplete && reply.text.is_empty() {
            // Stopped before any text came: there is no reply to keep.
            let session = store.get_session(&session_id)?;
            let text = String::new();
            return Ok((Sent { session, text }, false));
        }
        let text = reply_start.reply_text(&reply.text);
        let kept = (|| {
            let mut session = store.get_session(&session_id)?;
            if let Some(continued) = &continued {
                send::check_still_last(&session, continued)?;
            }
            let info = send::reply_info(&connection, &model, &reply, counted);
            let input = input.as_deref();
            let kept = send::keep_reply(&mut session, kind, regenerate, input, &text, info)?;
            let stored = kept != send::Kept::NotStored;
            if stored {
                s.forget_session(&session_id)?;
                store.save_session(&session)?;
            }
            Ok::<_, AppError>((session, stored))
        })();
        let (session, stored) = match kept {
            Ok(session) => session,
            // The reply is never dropped: it is kept in a file beside the database.
            // A continuation's file holds the reply it continues too.
            Err(e) => {
                let whole = format!("{}{text}", continued.as_deref().unwrap_or(""));
                return Err(kept_reply(&store, &session_id, &whole, e));
            }
        };
        if let (Some(provider), false) = (reply.usage.prompt_tokens, reply.incomplete) {
            let provider = u32::try_from(provider).unwrap_or(u32::MAX);
            calibration::add(&store, &model, Sample { provider, counted })?;
        }
        Ok((Sent { session, text }, stored))
    })
    .await?;
    if stored && summary::SummarySettings::of(&request.preview.preset).auto {
        // In the background: the send returns now (RULES 5.15, 9.9).
        let after = AutoSummary {
            session: sent.session.clone(),
            preset: request.preview.preset.clone(),
            connection: used_connection,
            key: used_key,
            model: model_used,
            limiter_dropped: dropped,
        };
        start_auto_summary(&app, after);
    }
    Ok(sent)
}

/// The error of a reply that could not be stored in its session (deleted during the send, a
/// database that refused the write), the reply kept in a file beside the database, named.
fn kept_reply(
    store: &promptloom_store::Store,
    session: &str,
    reply: &str,
    error: AppError,
) -> AppError {
    let kept = match store.path() {
        Some(db) => match promptloom_library::files::keep_reply(db, Some(session), reply) {
            Ok(file) => format!("the reply is kept in {}", file.display()),
            Err(e) => format!("the reply could not be kept in a file either: {e}"),
        },
        None => "the database has no folder to keep the reply in".to_string(),
    };
    AppError::new(
        codes::REPLY_NOT_STORED,
        format!(
            "{}; the reply was not added to session \"{session}\" ({kept})",
            error.message
        ),
    )
}

/// How far our prompt count has been from the provider's for a model, over its last replies.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CalibrationView {
    pub samples: u32,
    /// The provider's and our count of the last reply's prompt.
    pub last_provider: Option<u32>,
    pub last_counted: Option<u32>,
    /// The provider's count against ours, on average, in percent of ours.
    pub mean_difference_percent: Option<f64>,
}

#[tauri::command]
#[specta::specta]
pub async fn calibration(app: AppHandle, model: String) -> Result<CalibrationView, AppError> {
    blocking(app, move |s| {
        let c = calibration::get(&*s.store()?, &model)?;
        Ok(CalibrationView {
            samples: c.samples.len() as u32,
            last_provider: c.last().map(|l| l.provider),
            last_counted: c.last().map(|l| l.counted),
            mean_difference_percent: c.mean_difference_percent(),
        })
    })
    .await
}

/// Stops the reply that is arriving; what arrived is kept.
#[tauri::command]
#[specta::specta]
pub fn stop_sending(app: AppHandle) -> Result<(), AppError> {
    app.state::<Sending>().stop();
    Ok(())
}

/// Shows swipe `swipe` of message `at` in place of the reply it shows now.
#[tauri::command]
#[specta::specta]
pub async fn choose_swipe(
    app: AppHandle,
    session: String,
    at: u32,
    swipe: u32,
) -> Result<Session, AppError> {
    blocking(app, move |s| {
        let mut stored = (*s.session(&session)?).clone();
        send::choose_swipe(&mut stored, at as usize, swipe as usize)?;
        s.forget_session(&session)?;
        s.store()?.save_session(&stored)?;
        Ok(stored)
    })
    .await
}
