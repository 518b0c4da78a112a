//! "Count exactly": the provider's own count of a request's input tokens (Anthropic's
//! count_tokens, Gemini's countTokens), for the models whose tokenizer is not public. Never
//! automatic: a front door asks when the user does.
//!
//! Counts are kept per content, in the app settings under [`SETTING`]: the same request (the
//! connection's base URL, dialect, model, its extra headers that carry no credential, and the
//! count request's body, hashed together) asked again is answered from there without a request.
//! The last [`KEPT`] counts are kept, the oldest going first. A key never goes into the hash or
//! the store; a header whose name suggests a credential is left out of the hash too.

use promptloom_send::{count_request, is_secret_header, Connection, CountRequest};
use promptloom_store::Store;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_128;

use crate::LibraryError;

/// The setting the counts are kept in.
pub const SETTING: &str = "exact-counts";

/// Counts kept.
pub const KEPT: usize = 200;

/// A count request and the content it is kept under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counting {
    pub request: CountRequest,
    key: String,
}

/// One count kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Kept {
    /// The hash of the content, 32 hex digits.
    key: String,
    tokens: u32,
}

/// The count request `connection` would make for `body` (the request body a send through it
/// sends, `library::send::request`'s), for `model`.
pub fn counting(
    connection: &Connection,
    model: &str,
    body: &str,
) -> Result<Counting, LibraryError> {
    let request = count_request(connection, Some(model), body.as_bytes())?;
    let key = content_key(connection, &request);
    Ok(Counting { request, key })
}

/// The hash the count is kept under: each part with its length before it, so that no two
/// different sets of parts run together into the same bytes.
fn content_key(connection: &Connection, request: &CountRequest) -> String {
    let mut bytes = Vec::with_capacity(request.body.len() + 256);
    let mut part = |p: &[u8]| {
        bytes.extend_from_slice(&(p.len() as u64).to_le_bytes());
        bytes.extend_from_slice(p);
    };
    part(connection.base_url.trim().trim_end_matches('/').as_bytes());
    part(connection.dialect.as_str().as_bytes());
    part(request.model.as_bytes());
    part(request.url.as_bytes());
    for (name, value) in &connection.extra_headers {
        let name = name.to_ascii_lowercase();
        if !is_secret_header(&name) {
            part(name.as_bytes());
            part(value.as_bytes());
        }
    }
    part(&request.body);
    format!("{:032x}", xxh3_128(&bytes))
}

fn read(store: &Store) -> Result<Vec<Kept>, LibraryError> {
    Ok(store
        .setting(SETTING)?
        .and_then(|text| serde_json::from_str::<Vec<Kept>>(&text).ok())
        .unwrap_or_default())
}

/// The count kept for this content, if any.
pub fn cached(store: &Store, counting: &Counting) -> Result<Option<u32>, LibraryError> {
    Ok(read(store)?
        .iter()
        .rev()
        .find(|k| k.key == counting.key)
        .map(|k| k.tokens))
}

/// Keeps the provider's count for this content (as the newest), keeping the last [`KEPT`].
pub fn keep(store: &Store, counting: &Counting, tokens: u32) -> Result<(), LibraryError> {
    let mut kept = read(store)?;
    kept.retain(|k| k.key != counting.key);
    kept.push(Kept {
        key: counting.key.clone(),
        tokens,
    });
    let over = kept.len().saturating_sub(KEPT);
    kept.drain(..over);
    let text = serde_json::to_string(&kept).map_err(|e| LibraryError::Body(e.to_string()))?;
    store.set_setting(SETTING, &text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptloom_send::Dialect;

    const BODY: &str =
        r#"{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"Hi"}]}"#;

    fn claude() -> Connection {
        Connection::new("claude", Dialect::Anthropic, "https://api.anthropic.com")
    }

    #[test]
    fn the_same_content_is_the_same_key_and_any_change_is_another() {
        let c = claude();
        let key = |c: &Connection, model: &str, body: &str| {
            counting(c, model, body).map(|k| k.key).unwrap_or_default()
        };
        let first = key(&c, "claude-x", BODY);
        assert_eq!(first.len(), 32);
        assert_eq!(first, key(&c, "claude-x", BODY));
        // What the count endpoint does not take does not change the count.
        assert_eq!(
            first,
            key(
                &c,
                "claude-x",
                &BODY.replace("\"max_tokens\":10", "\"max_tokens\":99")
            )
        );
        assert_ne!(first, key(&c, "claude-x", &BODY.replace("Hi", "Hi!")));
        let mut elsewhere = c.clone();
        elsewhere.base_url = "https://gw.example".into();
        assert_ne!(first, key(&elsewhere, "claude-x", BODY));
        let mut beta = c.clone();
        beta.extra_headers
            .insert("anthropic-beta".into(), "b1".into());
        assert_ne!(first, key(&beta, "claude-x", BODY));
        // A credential in a header is no part of the content.
        let mut token = c.clone();
        token
            .extra_headers
            .insert("X-Gateway-Token".into(), "secret".into());
        assert_eq!(first, key(&token, "claude-x", BODY));
        // Another name for the same connection is the same content.
        let mut renamed = c.clone();
        renamed.name = "work".into();
        assert_eq!(first, key(&renamed, "claude-x", BODY));
    }

    #[test]
    fn counts_are_kept_per_content_and_the_oldest_go_first() {
        let store = Store::open_in_memory().expect("store");
        let c = claude();
        let first = counting(&c, "claude-x", BODY).expect("counting");
        assert_eq!(cached(&store, &first).ok(), Some(None));
        keep(&store, &first, 17).expect("kept");
        assert_eq!(cached(&store, &first).ok(), Some(Some(17)));
        for n in 0..KEPT as u32 {
            let other = counting(&c, "claude-x", &BODY.replace("Hi", &format!("Hi {n}")))
                .expect("counting");
            keep(&store, &other, n).expect("kept");
        }
        assert_eq!(read(&store).map(|k| k.len()).ok(), Some(KEPT));
        assert_eq!(cached(&store, &first).ok(), Some(None), "the oldest went");
        let text = store.setting(SETTING).ok().flatten().unwrap_or_default();
        assert!(!text.contains("Hi"), "content is kept as a hash only");
    }
}
