//! A session's summary (RULES 5.15): made through a connection with the preset's summary prompt
//! (the `memory` processor's `summaryPrompt` setting, a default shipped), kept with the range of
//! stored messages it covers, and updated when an update is due: after `summaryEvery` messages it
//! does not cover, or when the last build's limiter dropped history. The app runs an update in
//! the background; nothing here blocks a preview or a send.
//!
//! An update covers what the current summary covered and the messages after it, up to the
//! newest `summaryKeepRecent`, which stay verbatim. The messages sent in one request are capped
//! ([`SUMMARY_INPUT_BYTES`]): a longer stretch is summarized in steps, each request covering
//! what fits, and the update stays due until it is covered.

use chrono::DateTime;
use promptloom_engine::assets::InlineAssets;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{parse_preset, AgentPreset, ChatMessage, Role, Session};
use promptloom_engine::profiles::profile_for_model;
use promptloom_engine::{build, BuildOptions, BuildRequest, Pipeline};
use promptloom_send::{ApiKey, CancellationToken, Connection, SendOptions};
use promptloom_store::summaries::{NewSummary, SummaryRecord};
use promptloom_store::Store;

use crate::LibraryError;

/// The messages one summary request carries, at most, in bytes of their text.
pub const SUMMARY_INPUT_BYTES: usize = 48 * 1024;
/// A summary is kept to this many bytes; a longer reply is cut at a character boundary.
pub const SUMMARY_BYTES: usize = 16 * 1024;

/// What a preset says about its summary.
#[derive(Debug, Clone, PartialEq)]
pub struct SummarySettings {
    pub prompt: String,
    /// An update is due after this many messages the summary does not cover (at least 1).
    pub every: usize,
    /// The newest messages are never summarized.
    pub keep_recent: usize,
    /// Updates are made in the background after a stored reply (`summaryAuto`, off by default).
    pub auto: bool,
}

impl SummarySettings {
    /// `preset`'s settings, from its `memory` processor settings over the defaults.
    pub fn of(preset: &AgentPreset) -> SummarySettings {
        let profile = profile_for_model("*", &[]);
        let configs = Pipeline::builtin().resolve(preset, &profile);
        let config = configs.iter().find(|c| c.id == "memory");
        let number = |key: &str, default: f64| {
            config
                .and_then(|c| c.number(key))
                .unwrap_or(default)
                .clamp(0.0, 1e6) as usize
        };
        let prompt = config
            .map(|c| c.str("summaryPrompt").trim().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| promptloom_engine::processors::DEFAULT_SUMMARY_PROMPT.to_string());
        SummarySettings {
            prompt,
            every: number("summaryEvery", 20.0).max(1),
            keep_recent: number("summaryKeepRecent", 4.0),
            auto: config.is_some_and(|c| c.bool("summaryAuto")),
        }
    }
}

/// The stored position after the last one the current summary covers: where an update starts.
/// A summary that is no longer the session's (the session's text was changed elsewhere) covers
/// nothing known.
fn covered_until(session: &Session, current: Option<&SummaryRecord>) -> u32 {
    match current {
        Some(c) if session.summary.as_deref() == Some(c.text.as_str()) => c.last_position + 1,
        _ => 0,
    }
}

/// The current summary's last covered position, when the session's summary is it: for a
/// build's `summarized_through`.
pub fn summarized_through(session: &Session, current: Option<&SummaryRecord>) -> Option<u32> {
    current
        .filter(|c| session.summary.as_deref() == Some(c.text.as_str()))
        .map(|c| c.last_position)
}

/// Whether `result`'s token limiter dropped history: with [`is_due`], an update is then due as
/// soon as one message is not covered.
pub fn limiter_dropped(result: &promptloom_engine::BuildResult<'_>) -> bool {
    result
        .dropped
        .iter()
        .any(|d| d.processor == "token-limiter" && d.source.kind.is_history())
}

/// Whether an update of the summary is due: `every` new messages it does not cover (the newest
/// `keep_recent` aside), or any when the last build's limiter dropped history.
pub fn is_due(
    session: &Session,
    current: Option<&SummaryRecord>,
    settings: &SummarySettings,
    limiter_dropped: bool,
) -> bool {
    let start = covered_until(session, current) as usize;
    let end = session.messages.len().saturating_sub(settings.keep_recent);
    let new = end.saturating_sub(start);
    new >= settings.every || (limiter_dropped && new > 0)
}

/// One summary request: the stored messages it covers and the text the model is given.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryPlan {
    pub first: u32,
    pub last: u32,
    /// What the model reads: the summary so far and the new messages.
    pub text: String,
}

/// The next summary request for `session`; none when there is nothing to summarize.
pub fn plan(
    session: &Session,
    current: Option<&SummaryRecord>,
    settings: &SummarySettings,
) -> Option<SummaryPlan> {
    let start = covered_until(session, current) as usize;
    let end = session.messages.len().saturating_sub(settings.keep_recent);
    if start >= end {
        return None;
    }
    let mut text = String::new();
    if let Some(previous) = session.summary.as_deref().filter(|s| !s.trim().is_empty()) {
        text.push_str("Summary so far:\n");
        text.push_str(previous.trim());
        text.push_str("\n\n");
    }
    text.push_str("New messages:\n");
    let mut last = start;
    for (i, m) in session.messages[start..end].iter().enumerate() {
        let who = m.name.as_deref().unwrap_or(m.role.as_str());
        let line = format!("{who}: {}\n", m.content.trim());
        if i > 0 && text.len() + line.len() > SUMMARY_INPUT_BYTES {
            break;
        }
        let line = cut(&line, SUMMARY_INPUT_BYTES);
        text.push_str(line);
        last = start + i;
    }
    Some(SummaryPlan {
        first: 0,
        last: last as u32,
        text,
    })
}

fn cut(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The request a summary is made with: a preset of the summary prompt and the history, over a
/// session of one user message (the plan's text), built by the engine like any other build.
fn summary_build(prompt: &str, plan: &SummaryPlan) -> Result<(AgentPreset, Session), LibraryError> {
    let preset = serde_json::json!({
        "formatVersion": 1, "id": "summary", "name": "Summary",
        "messageTemplates": [
            {"id": "prompt", "role": "system", "content": prompt},
            {"id": "history", "role": "system", "type": "chat_history"}],
        "contextRecipes": [{"id": "summary", "modelFilter": ["*"], "steps": [
            {"messageId": "prompt", "enabled": true},
            {"messageId": "history", "enabled": true}]}]
    });
    let preset = parse_preset(&preset.to_string())?;
    let mut session = Session::empty("summary");
    session
        .messages
        .push(ChatMessage::new(Role::User, &plan.text));
    Ok((preset, session))
}

/// Makes the next summary of stored session `session_id` through `connection` with `model` and
/// keeps it as the current one when `save`; returns it (unsaved: id 0). Nothing to summarize is
/// an error that says so.
pub async fn summarize(
    store: &Store,
    session_id: &str,
    preset: &AgentPreset,
    connection: &Connection,
    key: Option<ApiKey>,
    model: &str,
    save: bool,
) -> Result<SummaryRecord, LibraryError> {
    let session = store.get_session(session_id)?;
    let current = store.current_summary(session_id)?;
    let settings = SummarySettings::of(preset);
    let plan = plan(&session, current.as_ref(), &settings).ok_or_else(|| {
        LibraryError::Summary(format!(
            "session \"{session_id}\" has nothing new to summarize (the newest {} messages are \
             left out)",
            settings.keep_recent
        ))
    })?;
    let (summary_preset, summary_session) = summary_build(&settings.prompt, &plan)?;
    let options = BuildOptions::at(DateTime::from(chrono::Local::now()));
    let cache = BuildCache::new();
    let result = build(&BuildRequest {
        assets: &InlineAssets,
        preset: &summary_preset,
        session: &summary_session,
        kept_rewrites: None,
        model,
        options: &options,
        cache: &cache,
        profiles: &[],
    })?;
    let request = crate::send::request(
        connection,
        &result,
        &summary_session,
        &InlineAssets,
        model,
        false,
        key.is_some(),
    )?;
    let reply = promptloom_send::send(
        connection,
        key,
        Some(model),
        request.body.into_bytes(),
        request.call,
        &SendOptions::for_connection(connection),
        &CancellationToken::new(),
        |_| {},
    )
    .await?;
    let text = cut(reply.text.trim(), SUMMARY_BYTES).trim_end();
    if text.is_empty() {
        return Err(LibraryError::Summary(format!(
            "connection \"{}\" answered with an empty summary; nothing was kept",
            connection.name
        )));
    }
    let id = |p: u32| {
        session
            .messages
            .get(p as usize)
            .and_then(|m| m.id.as_deref())
    };
    let new = NewSummary {
        text,
        first_position: plan.first,
        last_position: plan.last,
        first_message_id: id(plan.first),
        last_message_id: id(plan.last),
        connection: Some(&connection.name),
        model: Some(model),
        edited: false,
    };
    if save {
        return Ok(store.add_summary(session_id, &new)?);
    }
    Ok(SummaryRecord {
        id: 0,
        session_id: session_id.to_string(),
        text: text.to_string(),
        first_position: plan.first,
        last_position: plan.last,
        first_message_id: new.first_message_id.map(str::to_string),
        last_message_id: new.last_message_id.map(str::to_string),
        connection: Some(connection.name.clone()),
        model: Some(model.to_string()),
        edited: false,
        current: false,
        created_at: 0,
    })
}

/// The current summary of `session_id` changed by hand: kept as a new summary over the same
/// range, marked edited, and made current (the one it replaces stays, to restore).
pub fn edit(store: &Store, session_id: &str, text: &str) -> Result<SummaryRecord, LibraryError> {
    let text = text.trim();
    if text.len() > SUMMARY_BYTES {
        return Err(LibraryError::Summary(format!(
            "the summary is {} bytes; at most {SUMMARY_BYTES} are kept",
            text.len()
        )));
    }
    let current = store.current_summary(session_id)?;
    let session = store.get_session(session_id)?;
    let (first, last, first_id, last_id) = match &current {
        Some(c) => (
            c.first_position,
            c.last_position,
            c.first_message_id.clone(),
            c.last_message_id.clone(),
        ),
        None if session.messages.is_empty() => {
            return Err(LibraryError::Summary(format!(
                "session \"{session_id}\" has no messages to summarize"
            )))
        }
        None => (0, session.messages.len() as u32 - 1, None, None),
    };
    Ok(store.add_summary(
        session_id,
        &NewSummary {
            text,
            first_position: first,
            last_position: last,
            first_message_id: first_id.as_deref(),
            last_message_id: last_id.as_deref(),
            connection: current.as_ref().and_then(|c| c.connection.as_deref()),
            model: current.as_ref().and_then(|c| c.model.as_deref()),
            edited: true,
        },
    )?)
}
