//! Promptloom's "Send": puts a request body the engine built on the wire to an LLM provider and
//! streams the reply back.
//!
//! The body is never built or changed here: [`send`] sends the bytes it is given, byte for byte.
//! What this crate adds is the rest of the request (the URL and headers per [`Dialect`], from a
//! [`Connection`] and an [`ApiKey`]), the reading of the reply (an incremental server-sent
//! events parser, [`sse`], and per-dialect decoding, [`decode`]), timeouts, retries and errors
//! that say what happened in one line ([`SendError`], each with a stable `code()`).
//!
//! [`count_tokens`] asks a provider's token-counting endpoint (Anthropic's count_tokens, Gemini's
//! countTokens) what a request body costs, when a front door asks; a send never does.
//!
//! [`embed`] makes texts into vectors through a connection's embeddings endpoint, for long-term
//! memory (RULES 5.15).
//!
//! Keys never reach a printed text: [`ApiKey`] prints as `••••`, and [`display_headers`] shows
//! the headers a request would carry with the key redacted.

mod connection;
mod count;
pub mod decode;
mod dialect;
mod embed;
mod error;
mod http;
mod key;
mod options;
mod pruned;
mod request;
mod send;
pub mod sse;
pub mod text;

pub use connection::{well_known, Connection, Timeouts, WellKnown};
pub use count::{count_request, count_tokens, read_count, CountEndpoint, CountRequest};
pub use decode::{decode_full, provider_error_text, Decoder, StreamEvent, Usage};
pub use dialect::Dialect;
pub use embed::{
    embed, embed_request, read_embeddings, EmbedFormat, EmbedRequest, MAX_EMBED_BATCH,
    MAX_EMBED_REPLY,
};
pub use error::{SendError, TimeoutPhase};
pub use key::{ApiKey, REDACTED};
pub use options::SendOptions;
pub use request::{display_headers, is_secret_header, request_url, Call, ANTHROPIC_VERSION};
pub use send::{send, Reply};
pub use sse::{SseEvent, SseParser, MAX_EVENT_BYTES, MAX_STREAM_BYTES};
pub use text::escape_control;
pub use tokio_util::sync::CancellationToken;
