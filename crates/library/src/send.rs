//! Sending a build through a connection, for both front doors: the request made once (what the
//! preview shows is these bytes, and they are what is sent), and the reply made into the
//! session's next message with what came back with it.

use promptloom_engine::assets::AssetSource;
use promptloom_engine::model::{ChatMessage, ReplyInfo, Role, Session, Swipe};
use promptloom_engine::processors::input_to_append;
use promptloom_engine::providers::{completion_body, request_body_with, BodyOptions};
use promptloom_engine::{BuildResult, GenerationType, ReplyStart, Said};
use promptloom_send::{display_headers, request_url, Call, Connection, Reply, SendError};

use crate::LibraryError;

/// A request ready to go: where, with which headers (as shown: the key redacted), and the body,
/// the exact bytes that are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// What the connection's dialect does not take of the build's generation settings, when it
    /// is not the format the build warned about already (the model profile's).
    pub warnings: Vec<Said>,
    /// What the request asks of the endpoint: streamed or not, and whether it is a text
    /// completion (the build has a prompt string, RULES 5.12).
    pub call: Call,
    /// The name of the body's format (`openai-chat`, `llamacpp`...).
    pub format: &'static str,
}

/// The request `connection` would send for `result`: the body in the connection's dialect, with
/// the model, the stream flag and the build's generation settings, then the connection's extra
/// body fields; written once as pretty JSON with a final newline, so that what a preview prints
/// is, byte for byte, what goes on the wire.
pub fn request(
    connection: &Connection,
    result: &BuildResult<'_>,
    session: &Session,
    assets: &dyn AssetSource,
    model: &str,
    stream: bool,
    has_key: bool,
) -> Result<Request, LibraryError> {
    connection.validate()?;
    let call = Call {
        stream,
        completion: result.prompt.is_some(),
    };
    // The URL first: it refuses a text completion through a dialect without one, and a chat
    // through a dialect of text completion only.
    let url = request_url(connection, Some(model), call)?;
    let options = BodyOptions::new(model, stream);
    let (mut body, warnings, format) = match (
        call.completion,
        connection.dialect.completion_format(),
        connection.dialect.provider_format(),
    ) {
        (true, Some(format), _) => (
            completion_body(format, result, &options)?,
            result.generation.completion_warnings(format),
            format.as_str(),
        ),
        (false, _, Some(format)) => {
            let warnings = if format == result.provider_format() {
                Vec::new()
            } else {
                result
                    .generation
                    .warnings(format, result.tokens.reserved_reply)
            };
            (
                request_body_with(format, result, session, assets, &options)?,
                warnings,
                format.as_str(),
            )
        }
        // request_url has refused these already.
        _ => {
            return Err(LibraryError::Send(SendError::InvalidConnection {
                name: connection.name.clone(),
                message: format!("{} cannot make this request", connection.dialect),
            }))
        }
    };
    connection.apply_extra_body(&mut body);
    let mut text =
        serde_json::to_string_pretty(&body).map_err(|e| LibraryError::Body(e.to_string()))?;
    text.push('\n');
    Ok(Request {
        url: url.to_string(),
        headers: display_headers(connection, has_key),
        body: text,
        warnings,
        call,
        format,
    })
}

/// What came back with `reply`, for the message that keeps it. `counted` is our count of the
/// prompt that was sent, kept beside the provider's own.
pub fn reply_info(connection: &Connection, model: &str, reply: &Reply, counted: u32) -> ReplyInfo {
    let ms = |d: std::time::Duration| u32::try_from(d.as_millis()).unwrap_or(u32::MAX);
    let tokens = |n: Option<u64>| n.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    ReplyInfo {
        connection: connection.name.clone(),
        model: model.to_string(),
        finish_reason: reply.finish_reason.clone(),
        prompt_tokens: tokens(reply.usage.prompt_tokens),
        completion_tokens: tokens(reply.usage.completion_tokens),
        counted_prompt_tokens: Some(counted),
        first_token_ms: reply.time_to_first_token.map(ms),
        total_ms: ms(reply.total_time),
        incomplete: reply.incomplete,
    }
}

/// `session` with the turn that was sent: the user's input as a build appends it (not blank, not
/// already the session's last message: `input_to_append`, RULES 5.3), then the reply as
/// an assistant message with what came back with it.
pub fn append_turn(session: &mut Session, input: Option<&str>, reply: &str, info: ReplyInfo) {
    if let Some(input) = input_to_append(session, input) {
        session.messages.push(ChatMessage::new(Role::User, input));
    }
    let mut message = ChatMessage::new(Role::Assistant, reply);
    message.reply = Some(Box::new(info));
    session.messages.push(message);
}

/// Whether a build of `kind` over `session` can be sent (RULES 5.14): a continuation needs a
/// reply to continue, the session's last message as the model's. Checked before anything goes
/// out, by both front doors.
pub fn check_sendable(session: &Session, kind: GenerationType) -> Result<(), LibraryError> {
    if kind == GenerationType::Continue {
        last_reply_at(session).map_err(|_| nothing_to_continue(session))?;
    }
    Ok(())
}

/// Whether a finished build of a continuation continues `session`'s last message (RULES
/// 5.14): a processor may have dropped the reply, joined it into another message, or left an
/// older one last; then what came back would be appended to a reply the model never saw as its
/// own, so nothing is sent. Other kinds always pass.
pub fn check_built(session: &Session, start: &ReplyStart) -> Result<(), LibraryError> {
    if start.generation_type != GenerationType::Continue {
        return Ok(());
    }
    let last = session.messages.len().checked_sub(1).map(|i| i as u32);
    match start.continued {
        Some(at) if Some(at) == last => Ok(()),
        _ => Err(LibraryError::NoSuchMessage {
            session: session.id.clone(),
            what: "reply to continue in the built context: the build does not end with the \
                   session's last reply as stored (a processor dropped, joined or moved it), so \
                   nothing is sent"
                .into(),
        }),
    }
}

/// Whether `now`, the session as it is when a continuation's reply has come, still ends with
/// the reply the request continued (`continued`, its text then; RULES 5.14). Otherwise the
/// continuation is not stored: the reply was edited or another turn came during the send.
pub fn check_still_last(now: &Session, continued: &str) -> Result<(), LibraryError> {
    match now.messages.last() {
        Some(m) if m.role == Role::Assistant && *m.content == *continued => Ok(()),
        _ => Err(LibraryError::NoSuchMessage {
            session: now.id.clone(),
            what: "reply to continue: the session's last reply changed during the send (edited, \
                   or another turn came), so the continuation is not stored there"
                .into(),
        }),
    }
}

fn nothing_to_continue(session: &Session) -> LibraryError {
    LibraryError::NoSuchMessage {
        session: session.id.clone(),
        what: "reply to continue: the last message is not the model's, so there is nothing to \
               continue"
            .into(),
    }
}

/// What a send did with its reply in the session (RULES 5.14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// The input (unless the session already ended with it) and the reply, as the next turn.
    Appended,
    /// The reply shown in place of the last one, which stays among its swipes (regenerate).
    Replaced,
    /// Appended to the last reply, in the swipe it shows.
    Continued,
    /// The user's impersonated message or a quiet answer: shown, never stored.
    NotStored,
}

/// Puts a reply into `session` as its kind says (RULES 5.14), the same for the command's
/// `send --save` and the app: an ordinary reply is the next turn (`regenerate`: in place of the
/// last reply), a continuation goes at the end of the last reply, an impersonation or a quiet
/// answer goes nowhere. `text` is the reply as [`ReplyStart::reply_text`] makes it, its prefill
/// (or a continuation's joiner) first.
///
/// [`ReplyStart::reply_text`]: promptloom_engine::ReplyStart::reply_text
pub fn keep_reply(
    session: &mut Session,
    kind: GenerationType,
    regenerate: bool,
    input: Option<&str>,
    text: &str,
    info: ReplyInfo,
) -> Result<Kept, LibraryError> {
    match kind {
        GenerationType::Impersonate | GenerationType::Quiet => Ok(Kept::NotStored),
        GenerationType::Continue => {
            continue_last_reply(session, text, info)?;
            Ok(Kept::Continued)
        }
        GenerationType::Normal if regenerate => {
            replace_last_reply(session, text, info)?;
            Ok(Kept::Replaced)
        }
        GenerationType::Normal => {
            append_turn(session, input, text, info);
            Ok(Kept::Appended)
        }
    }
}

/// Continue (RULES 5.14): the last reply, an assistant message, gets `more` (the joiner and the
/// text that came back) at its end, in its content and so in the swipe it shows; what came back
/// with the continuation becomes its reply information.
pub fn continue_last_reply(
    session: &mut Session,
    more: &str,
    info: ReplyInfo,
) -> Result<(), LibraryError> {
    let at = last_reply_at(session).map_err(|_| nothing_to_continue(session))?;
    let message = &mut session.messages[at];
    let mut text = String::with_capacity(message.content.len() + more.len());
    text.push_str(&message.content);
    text.push_str(more);
    message.content = text.into();
    message.reply = Some(Box::new(info));
    Ok(())
}

/// The session a regenerated reply is built on: `session` without its last message, which must
/// be a reply (an assistant message). Its input is already in the session, so the build takes no
/// new input.
pub fn before_last_reply(session: &Session) -> Result<Session, LibraryError> {
    last_reply_at(session)?;
    let mut earlier = session.clone();
    earlier.messages.pop();
    Ok(earlier)
}

/// Regenerate: the last reply shows `reply` now, the newest of its replies; what it showed
/// before keeps its place among them, so the user can flip back to it.
pub fn replace_last_reply(
    session: &mut Session,
    reply: &str,
    info: ReplyInfo,
) -> Result<(), LibraryError> {
    let at = last_reply_at(session)?;
    let message = &mut session.messages[at];
    let mut all = replies(message);
    all.push(Swipe {
        content: reply.to_string(),
        reply: Some(info),
    });
    show(message, all, None);
    Ok(())
}

/// Flip: message `at` shows the reply at `position` among all its replies in order (0 the
/// oldest).
pub fn choose_swipe(session: &mut Session, at: usize, position: usize) -> Result<(), LibraryError> {
    let id = session.id.clone();
    let message = session
        .messages
        .get_mut(at)
        .ok_or_else(|| LibraryError::NoSuchMessage {
            session: id.clone(),
            what: format!("message {at}"),
        })?;
    let all = replies(message);
    if message.swipes.is_empty() || position >= all.len() {
        return Err(LibraryError::NoSuchMessage {
            session: id,
            what: format!("reply {position} of message {at}"),
        });
    }
    show(message, all, Some(position));
    Ok(())
}

/// Every reply of `message` in order: its swipes, with the shown one at its place.
fn replies(message: &ChatMessage) -> Vec<Swipe> {
    let mut all = message.swipes.clone();
    let at = message
        .swipe_at
        .map_or(all.len(), |p| (p as usize).min(all.len()));
    all.insert(
        at,
        Swipe {
            content: message.content.to_string(),
            reply: message.reply.as_deref().cloned(),
        },
    );
    all
}

/// `message` showing reply `position` of `all` (the last when none).
fn show(message: &mut ChatMessage, mut all: Vec<Swipe>, position: Option<usize>) {
    let last = all.len() - 1;
    let at = position.unwrap_or(last);
    let shown = all.remove(at);
    message.content = shown.content.into();
    message.reply = shown.reply.map(Box::new);
    message.swipes = all;
    message.swipe_at = (at != last).then_some(at as u32);
}

fn last_reply_at(session: &Session) -> Result<usize, LibraryError> {
    match session.messages.last() {
        Some(m) if m.role == Role::Assistant => Ok(session.messages.len() - 1),
        _ => Err(LibraryError::NoSuchMessage {
            session: session.id.clone(),
            what: "reply to regenerate (the last message is not the model's)".into(),
        }),
    }
}
