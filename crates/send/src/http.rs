//! The HTTP details under the sender: the client, retry waits, error bodies and texts.

use std::time::Duration;

use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{Client, Response, StatusCode, Url};
use tokio_util::sync::CancellationToken;

use crate::connection::Connection;
use crate::decode::provider_error_text;
use crate::error::{SendError, TimeoutPhase};
use crate::key::ApiKey;
use crate::options::SendOptions;
use crate::request::request_headers;

/// How much of an error reply's body is read to find the provider's message.
const ERROR_BODY_READ: usize = 64 * 1024;

/// The HTTP client for one send: rustls, no redirects, no proxy for loopback addresses.
pub(crate) fn client(url: &Url, options: &SendOptions) -> Result<Client, SendError> {
    let mut builder = Client::builder()
        .connect_timeout(options.connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("promptloom/", env!("CARGO_PKG_VERSION")));
    if is_loopback(url) {
        builder = builder.no_proxy();
    }
    builder.build().map_err(|e| SendError::Network {
        url: shown(url),
        message: format!("the HTTP client could not be set up: {}", chain(&e)),
    })
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The URL as shown in messages: without a user name or password, escaped.
pub(crate) fn shown(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    crate::text::escape_control(url.as_str())
}

/// What came of posting a request: the first reply with a success status (after retries), or
/// nothing when `cancel` fired first; with the attempts made and the last status seen (0 for
/// none).
pub(crate) struct Posted {
    pub response: Option<Response>,
    pub attempts: u32,
    pub status: u16,
}

/// Posts `body` to `url` and waits for a success status: a 429 or 5xx is retried as
/// [`SendOptions`] says (never after any of a reply was read), any other error status is
/// [`SendError::Status`] with the provider's own words, a transport failure or a reply that does
/// not start within `first_byte_timeout` is an error too. `shown_url` is the URL as messages show it.
pub(crate) async fn post(
    client: &Client,
    url: &Url,
    shown_url: &str,
    headers: &HeaderMap,
    body: &[u8],
    options: &SendOptions,
    cancel: &CancellationToken,
) -> Result<Posted, SendError> {
    let mut posted = Posted {
        response: None,
        attempts: 0,
        status: 0,
    };
    loop {
        posted.attempts += 1;
        let attempt = posted.attempts;
        let request = client
            .post(url.clone())
            .headers(headers.clone())
            .body(body.to_vec())
            .send();
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Ok(posted),
            answer = tokio::time::timeout(options.first_byte_timeout, request) => answer,
        };
        let response = match answer {
            Err(_) => {
                return Err(SendError::Timeout {
                    url: shown_url.to_string(),
                    phase: TimeoutPhase::FirstByte,
                    after: options.first_byte_timeout,
                })
            }
            Ok(Err(e)) => return Err(transport_error(&e, shown_url, options)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        posted.status = status.as_u16();
        if status.is_success() {
            posted.response = Some(response);
            return Ok(posted);
        }
        let wait = retry_wait(&response, attempt, options);
        if let Some(wait) = wait.filter(|_| attempt <= options.max_retries) {
            drop(response);
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Ok(posted),
                _ = tokio::time::sleep(wait) => continue,
            }
        }
        let error_body = read_error_body(response, options.idle_timeout).await;
        return Err(SendError::Status {
            status: status.as_u16(),
            reason: status.canonical_reason(),
            url: shown_url.to_string(),
            message: provider_error_text(&error_body),
            attempts: attempt,
        });
    }
}

/// How long to wait before retrying this status, or `None` for no retry.
pub(crate) fn retry_wait(
    response: &Response,
    attempt: u32,
    options: &SendOptions,
) -> Option<Duration> {
    let status = response.status();
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let asked = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    match asked {
        Some(wait) if wait > options.max_retry_wait => None,
        Some(wait) => Some(wait),
        None => Some(
            Duration::from_secs(1u64 << attempt.saturating_sub(1).min(5))
                .min(options.max_retry_wait),
        ),
    }
}

/// Up to [`ERROR_BODY_READ`] bytes of an error reply; what arrived when reading stops.
pub(crate) async fn read_error_body(mut response: Response, idle: Duration) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_READ {
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(ERROR_BODY_READ);
    body
}

pub(crate) fn transport_error(e: &reqwest::Error, url: &str, options: &SendOptions) -> SendError {
    if e.is_connect() && e.is_timeout() {
        return SendError::Timeout {
            url: url.to_string(),
            phase: TimeoutPhase::Connect,
            after: options.connect_timeout,
        };
    }
    SendError::Network {
        url: url.to_string(),
        message: chain(e),
    }
}

/// Posts `body` to `url` with `connection`'s headers and reads the whole reply, each chunk within
/// the idle timeout and at most `limit` bytes in all (`what` names the reply in the error): the
/// short JSON answers of a count or an embeddings request, which nothing cancels.
async fn post_for_reply(
    connection: &Connection,
    key: Option<&ApiKey>,
    url: &Url,
    body: &[u8],
    options: &SendOptions,
    what: &'static str,
    limit: usize,
) -> Result<Vec<u8>, SendError> {
    let headers = request_headers(connection, key)?;
    let client = client(url, options)?;
    let shown_url = shown(url);
    let never = CancellationToken::new();
    let posted = post(&client, url, &shown_url, &headers, body, options, &never).await?;
    let Some(mut response) = posted.response else {
        // Only a cancel ends a post without a response, and nothing here cancels.
        return Err(SendError::CutShort { received_chars: 0 });
    };
    let mut reply = Vec::new();
    let idle = || SendError::Timeout {
        url: shown_url.clone(),
        phase: TimeoutPhase::Idle,
        after: options.idle_timeout,
    };
    loop {
        let chunk = match tokio::time::timeout(options.idle_timeout, response.chunk()).await {
            Err(_) => return Err(idle()),
            Ok(Err(e)) if e.is_timeout() => return Err(idle()),
            // The connection broke (reset, a malformed chunked body...).
            Ok(Err(_)) => {
                return Err(SendError::CutShort {
                    received_chars: String::from_utf8_lossy(&reply).chars().count(),
                })
            }
            Ok(Ok(chunk)) => chunk,
        };
        let Some(bytes) = chunk else { break };
        if reply.len() + bytes.len() > limit {
            return Err(SendError::TooLarge { what, limit });
        }
        reply.extend_from_slice(&bytes);
    }
    Ok(reply)
}

/// The send (or count) took longer than `total_timeout` in all.
pub(crate) fn total_timeout(connection: &Connection, options: &SendOptions) -> SendError {
    SendError::Timeout {
        url: crate::text::escape_control(&connection.base_url),
        phase: crate::error::TimeoutPhase::Total,
        after: options.total_timeout,
    }
}

/// `key` unless it is empty; where the key is `required`, its absence is the error that names
/// the connection and where its key is looked for.
pub(crate) fn usable_key(
    connection: &Connection,
    key: Option<ApiKey>,
    required: bool,
) -> Result<Option<ApiKey>, SendError> {
    let key = key.filter(|k| !k.is_empty());
    if required && key.is_none() {
        return Err(SendError::MissingKey {
            connection: connection.name.clone(),
            dialect: connection.dialect.to_string(),
            key_env: connection.key_env.clone(),
        });
    }
    Ok(key)
}

/// A short JSON exchange outside a send (a count, an embeddings request), all of it under the
/// total timeout: the connection checked, the key required where `key_required`, `url` parsed
/// (`name` names it in the error), then [`post_for_reply`]; any key is scrubbed from the error.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn exchange(
    connection: &Connection,
    key: Option<ApiKey>,
    key_required: bool,
    url: &str,
    name: &'static str,
    body: &[u8],
    options: &SendOptions,
    what: &'static str,
    limit: usize,
) -> Result<Vec<u8>, SendError> {
    let sent = key.clone();
    let whole = async {
        connection.validate()?;
        let key = usable_key(connection, key, key_required)?;
        let url = Url::parse(url).map_err(|e| {
            connection.invalid(format!(
                "the {name} URL does not parse: {e} ({})",
                crate::text::escape_control(url)
            ))
        })?;
        post_for_reply(connection, key.as_ref(), &url, body, options, what, limit).await
    };
    match tokio::time::timeout(options.total_timeout, whole).await {
        Ok(result) => result.map_err(|e| e.scrubbed(sent.as_ref())),
        Err(_) => Err(total_timeout(connection, options)),
    }
}

/// An error and its causes, joined, escaped; without the URL reqwest adds to its own text.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        let text = err.to_string();
        let text = match text.split_once(" for url (") {
            Some((head, _)) => head.to_string(),
            None => text,
        };
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = err.source();
    }
    crate::text::escape_control(&parts.join(": "))
}
