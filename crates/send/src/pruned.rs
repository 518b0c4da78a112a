//! A provider's JSON read with bounded memory: only the members the decoders look at are kept,
//! everything else is skipped as it is read (nothing of it is allocated), and what is kept is at
//! most [`MAX_KEPT_NODES`] values. A reply of millions of tiny objects, or nested a hundred deep,
//! under the byte caps costs its bytes and no more: a generic JSON tree of it cost over a hundred
//! times its size.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Values kept from one reply or event, at most.
pub const MAX_KEPT_NODES: usize = 100_000;

/// The members any dialect's decoder reads (docs/ARCHITECTURE.md, "Limits").
const KEPT: &[&str] = &[
    // errors
    "error",
    "message",
    "type",
    // OpenAI Chat and Completions
    "choices",
    "finish_reason",
    "content",
    "text",
    "delta",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    // Anthropic
    "stop_reason",
    "content_block",
    "input_tokens",
    "output_tokens",
    // Gemini
    "candidates",
    "parts",
    "thought",
    "finishReason",
    "promptFeedback",
    "blockReason",
    "usageMetadata",
    "promptTokenCount",
    "candidatesTokenCount",
    "totalTokens",
    // llama.cpp and KoboldCpp
    "stop",
    "stop_type",
    "stopped_eos",
    "stopped_limit",
    "stopped_word",
    "tokens_evaluated",
    "tokens_predicted",
    "results",
    "token",
];

/// Reads `bytes` as JSON, keeping only the members the decoders read.
pub fn from_slice(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let kept = Cell::new(0);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Pruned { kept: &kept }.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// [`from_slice`] for text.
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    from_slice(text.as_bytes())
}

#[derive(Clone, Copy)]
struct Pruned<'k> {
    kept: &'k Cell<usize>,
}

impl Pruned<'_> {
    fn keep<E: serde::de::Error>(self, value: Value) -> Result<Value, E> {
        let n = self.kept.get() + 1;
        if n > MAX_KEPT_NODES {
            return Err(E::custom(format!(
                "over {MAX_KEPT_NODES} values in one reply"
            )));
        }
        self.kept.set(n);
        Ok(value)
    }
}

impl<'de> DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Pruned<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.keep(Value::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.keep(Value::from(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.keep(Value::from(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.keep(Value::from(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.keep(Value::String(v.to_string()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.keep(Value::String(v))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.keep(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.keep(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        self.keep(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if KEPT.contains(&key.as_ref()) {
                let value = map.next_value_seed(self)?;
                members.insert(key.into_owned(), value);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        self.keep(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_the_decoders_read_and_skips_the_rest() {
        let v = from_str(
            r#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"extra":[1,2,3]}}"#,
        )
        .expect("reads");
        assert_eq!(
            v,
            serde_json::json!({"choices":[{"finish_reason":"stop","message":{"content":"hi"}}],"usage":{"prompt_tokens":3}})
        );
    }

    #[test]
    fn a_reply_of_too_many_kept_values_is_an_error_not_a_tree() {
        let many = format!("{{\"content\":[{}0]}}", "0,".repeat(MAX_KEPT_NODES + 5));
        let e = from_str(&many).unwrap_err().to_string();
        assert!(e.contains("values in one reply"), "{e}");
        // Unknown members of any size and depth cost nothing kept.
        let deep = format!("{{\"x\":{}1{}}}", "[".repeat(100), "]".repeat(100));
        assert_eq!(from_str(&deep).expect("reads"), serde_json::json!({}));
    }
}
