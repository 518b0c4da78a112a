//! Embeddings: texts made into vectors by a connection's embeddings endpoint, for long-term
//! memory (RULES 5.15). Called by the library when the user indexes a session or a build searches
//! its memory; never by a send.
//!
//! The shapes follow each API's public reference:
//!
//! - OpenAI and every OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp's server):
//!   `POST {base}/embeddings` with `{"model", "input": [texts]}`; the reply is `{"data":
//!   [{"index", "embedding": [floats]}]}`. A `llamacpp` connection's base is the server's root,
//!   so its path is `{base}/v1/embeddings` (the server started with `--embedding`).
//! - Gemini, `models.batchEmbedContents` (`POST /v1beta/models/{model}:batchEmbedContents`):
//!   `{"requests": [{"model": "models/{model}", "content": {"parts": [{"text"}]}}]}`; the reply
//!   is `{"embeddings": [{"values": [floats]}]}`.
//! - Anthropic has no embeddings API: asking one is [`SendError::NoEmbeddings`].
//!
//! Errors are the sender's (status, network, timeouts), and a reply that does not hold one vector
//! of numbers per text, all of one length, is [`SendError::BadReply`].

use serde_json::{json, Value};

use crate::connection::Connection;
use crate::dialect::Dialect;
use crate::error::SendError;
use crate::http::exchange;
use crate::key::ApiKey;
use crate::options::SendOptions;
use crate::request::{gemini_model, gemini_path};

/// The largest embeddings reply read: a batch of 64 vectors of 3,072 numbers as JSON text is
/// about 4 MB.
pub const MAX_EMBED_REPLY: usize = 32 * 1024 * 1024;

/// The most texts one request carries.
pub const MAX_EMBED_BATCH: usize = 64;

/// The reply shape an embeddings request expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmbedFormat {
    /// `/v1/embeddings`: `data[].embedding`.
    Openai,
    /// Gemini's `batchEmbedContents`: `embeddings[].values`.
    Gemini,
}

/// An embeddings request, made and checked before anything is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedRequest {
    pub format: EmbedFormat,
    pub url: String,
    /// The model that makes the vectors: kept beside every vector it made.
    pub model: String,
    /// How many texts the body carries (one vector each comes back).
    pub count: usize,
    /// The body, byte for byte what is sent.
    pub body: Vec<u8>,
}

/// The request that embeds `texts` through `connection` with `model` (the connection's default
/// model when `None`). No model, no texts, more than [`MAX_EMBED_BATCH`] texts or a dialect
/// without embeddings are errors before anything is sent.
pub fn embed_request(
    connection: &Connection,
    model: Option<&str>,
    texts: &[&str],
) -> Result<EmbedRequest, SendError> {
    connection.validate()?;
    if texts.is_empty() || texts.len() > MAX_EMBED_BATCH {
        return Err(connection.invalid(format!(
            "an embeddings request carries 1 to {MAX_EMBED_BATCH} texts, not {}",
            texts.len()
        )));
    }
    let mut url = connection.parsed_base_url()?;
    let base = url.path().trim_end_matches('/').to_string();
    let (format, model, body) = match connection.dialect {
        Dialect::Anthropic => {
            return Err(SendError::NoEmbeddings {
                connection: connection.name.clone(),
                dialect: connection.dialect.to_string(),
            })
        }
        Dialect::Gemini => {
            let model = gemini_model(connection, model)?.to_string();
            url.set_path(&gemini_path(&base, &model, "batchEmbedContents"));
            let requests: Vec<Value> = texts
                .iter()
                .map(|t| json!({"model": format!("models/{model}"), "content": {"parts": [{"text": t}]}}))
                .collect();
            (EmbedFormat::Gemini, model, json!({ "requests": requests }))
        }
        Dialect::Openai | Dialect::OpenaiCompatible | Dialect::Llamacpp | Dialect::Koboldcpp => {
            let model = model
                .or(connection.default_model.as_deref())
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .ok_or_else(|| connection.invalid("no embeddings model was given"))?
                .to_string();
            let path = match connection.dialect {
                Dialect::Llamacpp | Dialect::Koboldcpp if !base.ends_with("/v1") => {
                    format!("{base}/v1/embeddings")
                }
                _ => format!("{base}/embeddings"),
            };
            url.set_path(&path);
            (
                EmbedFormat::Openai,
                model.clone(),
                json!({"model": model, "input": texts}),
            )
        }
    };
    let body = serde_json::to_vec(&body).map_err(|e| SendError::bad_reply(e.to_string()))?;
    Ok(EmbedRequest {
        format,
        url: url.to_string(),
        model,
        count: texts.len(),
        body,
    })
}

/// Sends `request` (made by [`embed_request`] for the same connection) and reads one vector per
/// text, in the order of the texts. The key is required where the dialect needs one.
pub async fn embed(
    connection: &Connection,
    key: Option<ApiKey>,
    request: &EmbedRequest,
    options: &SendOptions,
) -> Result<Vec<Vec<f32>>, SendError> {
    let reply = exchange(
        connection,
        key,
        connection.dialect.needs_key(),
        &request.url,
        "embeddings",
        &request.body,
        options,
        "the embeddings reply",
        MAX_EMBED_REPLY,
    )
    .await?;
    read_embeddings(request.format, &reply, request.count)
}

/// The vectors in an embeddings reply of `format`, which must hold `count` of them, each a
/// non-empty list of finite numbers, all of one length.
pub fn read_embeddings(
    format: EmbedFormat,
    reply: &[u8],
    count: usize,
) -> Result<Vec<Vec<f32>>, SendError> {
    let value: Value = serde_json::from_slice(reply).map_err(|_| {
        SendError::bad_reply(format!(
            "the embeddings reply is not JSON: {}",
            crate::decode::provider_error_text(reply)
        ))
    })?;
    let (list, field) = match format {
        EmbedFormat::Openai => (value.get("data"), "embedding"),
        EmbedFormat::Gemini => (value.get("embeddings"), "values"),
    };
    let Some(Value::Array(items)) = list else {
        return Err(SendError::bad_reply(
            "the embeddings reply has no list of vectors",
        ));
    };
    if items.len() != count {
        return Err(SendError::bad_reply(format!(
            "the embeddings reply has {} vectors for {count} texts",
            items.len()
        )));
    }
    // OpenAI's items carry their `index`; put them in that order when they all do.
    let mut ordered: Vec<(usize, &Value)> = items.iter().enumerate().collect();
    if format == EmbedFormat::Openai {
        let indices: Option<Vec<usize>> = items
            .iter()
            .map(|i| i.get("index").and_then(Value::as_u64).map(|n| n as usize))
            .collect();
        if let Some(indices) = indices {
            let mut seen = vec![false; count];
            for &i in &indices {
                if i >= count || std::mem::replace(&mut seen[i], true) {
                    return Err(SendError::bad_reply(
                        "the embeddings reply's indices do not match its texts",
                    ));
                }
            }
            ordered = indices.into_iter().zip(items.iter()).collect();
            ordered.sort_by_key(|(i, _)| *i);
        }
    }
    let mut vectors = Vec::with_capacity(count);
    for (i, item) in ordered {
        let Some(Value::Array(numbers)) = item.get(field) else {
            return Err(SendError::bad_reply(format!(
                "vector {i} of the embeddings reply has no \"{field}\" list"
            )));
        };
        let vector: Option<Vec<f32>> = numbers
            .iter()
            .map(|n| n.as_f64().map(|f| f as f32).filter(|f| f.is_finite()))
            .collect();
        let Some(vector) = vector.filter(|v| !v.is_empty()) else {
            return Err(SendError::bad_reply(format!(
                "vector {i} of the embeddings reply is not a list of numbers"
            )));
        };
        if let Some(first) = vectors.first().map(Vec::len) {
            if vector.len() != first {
                return Err(SendError::bad_reply(format!(
                    "the embeddings reply's vectors differ in length ({first} and {})",
                    vector.len()
                )));
            }
        }
        vectors.push(vector);
    }
    Ok(vectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_asks_its_endpoint() {
        let c = |d, base: &str| {
            let mut c = Connection::new("c", d, base);
            c.default_model = Some("m".into());
            c
        };
        let r = embed_request(&c(Dialect::Openai, "https://h/v1"), None, &["a", "b"]).unwrap();
        assert_eq!(r.url, "https://h/v1/embeddings");
        assert_eq!(
            String::from_utf8_lossy(&r.body),
            r#"{"input":["a","b"],"model":"m"}"#
        );
        let r =
            embed_request(&c(Dialect::Llamacpp, "http://127.0.0.1:8080"), None, &["a"]).unwrap();
        assert_eq!(r.url, "http://127.0.0.1:8080/v1/embeddings");
        let r = embed_request(&c(Dialect::Gemini, "https://g"), Some("e"), &["a"]).unwrap();
        assert_eq!(r.url, "https://g/v1beta/models/e:batchEmbedContents");
        assert_eq!(r.format, EmbedFormat::Gemini);
        assert!(String::from_utf8_lossy(&r.body).contains(r#""model":"models/e""#));
        let e = embed_request(&c(Dialect::Anthropic, "https://a"), None, &["a"]).unwrap_err();
        assert_eq!(e.code(), "invalid_connection");
        assert!(e.to_string().contains("no embeddings"), "{e}");
        let e = embed_request(&c(Dialect::Openai, "https://h/v1"), None, &[]).unwrap_err();
        assert!(e.to_string().contains("1 to 64 texts"), "{e}");
        let bare = Connection::new("c", Dialect::Openai, "https://h/v1");
        let e = embed_request(&bare, None, &["a"]).unwrap_err();
        assert!(e.to_string().contains("no embeddings model"), "{e}");
    }

    #[test]
    fn replies_are_read_in_index_order_and_bad_ones_are_refused() {
        let ok = br#"{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}]}"#;
        let v = read_embeddings(EmbedFormat::Openai, ok, 2).unwrap();
        assert_eq!(v, vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
        let g = br#"{"embeddings":[{"values":[0.5]}]}"#;
        assert_eq!(
            read_embeddings(EmbedFormat::Gemini, g, 1).unwrap(),
            vec![vec![0.5]]
        );
        for (bad, what) in [
            (&b"not json"[..], "not JSON"),
            (br#"{"data":[]}"#, "0 vectors for 1 texts"),
            (br#"{"data":[{"embedding":"x"}]}"#, "no \"embedding\" list"),
            (
                br#"{"data":[{"embedding":["x"]}]}"#,
                "not a list of numbers",
            ),
            (br#"{"data":[{"embedding":[]}]}"#, "not a list of numbers"),
            (br#"{"nothing":1}"#, "no list of vectors"),
        ] {
            let e = read_embeddings(EmbedFormat::Openai, bad, 1).unwrap_err();
            assert_eq!(e.code(), "bad_reply");
            assert!(e.to_string().contains(what), "{e} / {what}");
        }
        let uneven = br#"{"data":[{"embedding":[1,2]},{"embedding":[1]}]}"#;
        let e = read_embeddings(EmbedFormat::Openai, uneven, 2).unwrap_err();
        assert!(e.to_string().contains("differ in length"), "{e}");
        let twice = br#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#;
        assert!(read_embeddings(EmbedFormat::Openai, twice, 2).is_err());
    }
}
