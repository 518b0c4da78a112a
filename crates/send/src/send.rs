//! The sender: one request, its retries, and the reply read as it arrives.

use std::time::{Duration, Instant};

use reqwest::header::CONTENT_TYPE;
use reqwest::Response;
use tokio_util::sync::CancellationToken;

use crate::connection::Connection;
use crate::decode::{decode_full, Decoder, StreamEvent, Usage};
use crate::error::{SendError, TimeoutPhase};
use crate::http::{client, post, shown, total_timeout, usable_key};
use crate::key::ApiKey;
use crate::options::SendOptions;
use crate::request::{request_headers, request_url, Call};
use crate::sse::{SseParser, MAX_STREAM_BYTES};

/// What came back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    /// The reply text, all deltas joined.
    pub text: String,
    /// Why the model stopped, in the provider's words, when it said.
    pub finish_reason: Option<String>,
    pub usage: Usage,
    /// The send was cancelled before the reply was complete; `text` is what had arrived.
    pub incomplete: bool,
    /// The HTTP status of the reply read (0 when cancelled before one came).
    pub status: u16,
    /// How many requests were made (1 without retries).
    pub attempts: u32,
    /// From the call to the first text, when any came.
    pub time_to_first_token: Option<Duration>,
    /// From the call to its end.
    pub total_time: Duration,
}

/// Sends `body` to the connection's endpoint exactly as given and reads the reply.
///
/// - `key`: required for `openai`, `anthropic` and `gemini`; without one the call fails with
///   [`SendError::MissingKey`] before anything is sent. An empty key counts as none.
/// - `model`: used by Gemini only (it goes in the URL), falling back to the connection's
///   `default_model`; the other dialects read it from the body.
/// - `call`: its `stream` picks Gemini's and KoboldCpp's streaming URLs; for the other dialects
///   the body's own `stream` field decides. Either way the reply is read by its content type:
///   `text/event-stream` as a stream, anything else as one JSON reply. Its `completion` says the
///   body is a text completion (RULES 5.12), which goes to the dialect's completion endpoint.
/// - `cancel`: cancelling ends the send at once; what had arrived is returned with
///   `incomplete` set (an empty reply when nothing had).
/// - `on_event`: called with every [`StreamEvent`] as it is decoded (a reply that was not
///   streamed gives its events at the end). When a stream fails half way the text that had
///   arrived went here before the error.
///
/// Redirects are not followed (a 3xx is an error), so the key only ever goes to the URL the
/// connection names. Loopback addresses are never sent through a proxy.
/// A provider's text in an error never holds the key sent, nor a piece of it
/// ([`SendError::scrubbed`]).
// Each argument is one thing a caller decides; a struct for them would only rename them.
#[allow(clippy::too_many_arguments)]
pub async fn send<F>(
    connection: &Connection,
    key: Option<ApiKey>,
    model: Option<&str>,
    body: Vec<u8>,
    call: Call,
    options: &SendOptions,
    cancel: &CancellationToken,
    on_event: F,
) -> Result<Reply, SendError>
where
    F: FnMut(&StreamEvent),
{
    let sent = key.clone();
    let whole = send_unscrubbed(
        connection, key, model, body, call, options, cancel, on_event,
    );
    match tokio::time::timeout(options.total_timeout, whole).await {
        Ok(result) => result.map_err(|e| e.scrubbed(sent.as_ref())),
        Err(_) => Err(total_timeout(connection, options)),
    }
}

#[allow(clippy::too_many_arguments)]
async fn send_unscrubbed<F>(
    connection: &Connection,
    key: Option<ApiKey>,
    model: Option<&str>,
    body: Vec<u8>,
    call: Call,
    options: &SendOptions,
    cancel: &CancellationToken,
    mut on_event: F,
) -> Result<Reply, SendError>
where
    F: FnMut(&StreamEvent),
{
    let started = Instant::now();
    connection.validate()?;
    let key = usable_key(connection, key, connection.dialect.needs_key())?;
    let url = request_url(connection, model, call)?;
    let headers = request_headers(connection, key.as_ref())?;
    let client = client(&url, options)?;
    let shown_url = shown(&url);
    let mut reply = Reply::default();

    let posted = post(&client, &url, &shown_url, &headers, &body, options, cancel).await?;
    reply.attempts = posted.attempts;
    reply.status = posted.status;
    let Some(response) = posted.response else {
        return Ok(cancelled(reply, started));
    };

    let is_stream = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("text/event-stream"));
    let mut reader = Reader {
        reply,
        started,
        on_event: &mut on_event,
    };
    let finished = if is_stream {
        reader
            .stream(response, connection, options, cancel, &shown_url)
            .await?
    } else {
        reader
            .whole(response, connection, options, cancel, &shown_url)
            .await?
    };
    let mut reply = reader.reply;
    reply.total_time = started.elapsed();
    if !finished {
        reply.incomplete = true;
    }
    Ok(reply)
}

/// The reply read so far and where its events go.
struct Reader<'f, F> {
    reply: Reply,
    started: Instant,
    on_event: &'f mut F,
}

impl<F: FnMut(&StreamEvent)> Reader<'_, F> {
    /// Applies one event to the reply and hands it on; a provider error ends the send.
    fn apply(&mut self, event: StreamEvent) -> Result<(), SendError> {
        match &event {
            StreamEvent::Delta(text) => {
                if self.reply.time_to_first_token.is_none() {
                    self.reply.time_to_first_token = Some(self.started.elapsed());
                }
                self.reply.text.push_str(text);
            }
            StreamEvent::Usage {
                prompt_tokens,
                completion_tokens,
            } => self.reply.usage.merge(Usage {
                prompt_tokens: *prompt_tokens,
                completion_tokens: *completion_tokens,
            }),
            StreamEvent::Finish(reason) => self.reply.finish_reason = Some(reason.clone()),
            StreamEvent::Error(_) | StreamEvent::Done => {}
        }
        (self.on_event)(&event);
        if let StreamEvent::Error(message) = event {
            return Err(SendError::Provider { message });
        }
        Ok(())
    }

    /// Reads a server-sent event stream. `Ok(false)` when cancelled.
    async fn stream(
        &mut self,
        mut response: Response,
        connection: &Connection,
        options: &SendOptions,
        cancel: &CancellationToken,
        url: &str,
    ) -> Result<bool, SendError> {
        let mut parser = SseParser::new();
        let mut decoder = Decoder::new(connection.dialect);
        let mut events_seen = 0usize;
        loop {
            let Some(chunk) = next_chunk(&mut response, options, cancel, url, self).await? else {
                return Ok(false);
            };
            let Some(chunk) = chunk else {
                // The server ended the reply.
                return if self.reply.finish_reason.is_some() {
                    Ok(true)
                } else if events_seen == 0 {
                    Err(SendError::bad_reply(if parser.bytes_seen() == 0 {
                        "the event stream was empty".to_string()
                    } else {
                        format!(
                            "{} bytes without one complete server-sent event",
                            parser.bytes_seen()
                        )
                    }))
                } else {
                    Err(SendError::CutShort {
                        received_chars: self.reply.text.chars().count(),
                    })
                };
            };
            let events = parser.feed(&chunk).map_err(|e| {
                let (what, limit) = e.describe();
                SendError::TooLarge { what, limit }
            })?;
            for event in events {
                events_seen += 1;
                for decoded in decoder.event(&event)? {
                    let done = decoded == StreamEvent::Done;
                    self.apply(decoded)?;
                    if done {
                        return Ok(true);
                    }
                }
            }
        }
    }

    /// Reads a reply that is one JSON document. `Ok(false)` when cancelled.
    async fn whole(
        &mut self,
        mut response: Response,
        connection: &Connection,
        options: &SendOptions,
        cancel: &CancellationToken,
        url: &str,
    ) -> Result<bool, SendError> {
        let mut body = Vec::new();
        loop {
            let Some(chunk) = next_chunk(&mut response, options, cancel, url, self).await? else {
                return Ok(false);
            };
            let Some(chunk) = chunk else { break };
            if body.len() + chunk.len() > MAX_STREAM_BYTES {
                return Err(SendError::TooLarge {
                    what: "the whole reply",
                    limit: MAX_STREAM_BYTES,
                });
            }
            body.extend_from_slice(&chunk);
        }
        for event in decode_full(connection.dialect, &body)? {
            self.apply(event)?;
        }
        Ok(true)
    }
}

/// The next part of the body: `None` when cancelled, `Some(None)` at its end.
async fn next_chunk<F>(
    response: &mut Response,
    options: &SendOptions,
    cancel: &CancellationToken,
    url: &str,
    reader: &Reader<'_, F>,
) -> Result<Option<Option<Vec<u8>>>, SendError> {
    let next = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Ok(None),
        next = tokio::time::timeout(options.idle_timeout, response.chunk()) => next,
    };
    match next {
        Err(_) => Err(SendError::Timeout {
            url: url.to_string(),
            phase: TimeoutPhase::Idle,
            after: options.idle_timeout,
        }),
        Ok(Ok(chunk)) => Ok(Some(chunk.map(|c| c.to_vec()))),
        Ok(Err(e)) if e.is_timeout() => Err(SendError::Timeout {
            url: url.to_string(),
            phase: TimeoutPhase::Idle,
            after: options.idle_timeout,
        }),
        // The connection broke (reset, a malformed chunked body...).
        Ok(Err(_)) => Err(SendError::CutShort {
            received_chars: reader.reply.text.chars().count(),
        }),
    }
}

fn cancelled(mut reply: Reply, started: Instant) -> Reply {
    reply.incomplete = true;
    reply.total_time = started.elapsed();
    reply
}
