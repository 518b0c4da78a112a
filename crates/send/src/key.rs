//! The API key, kept out of every printed text.

use std::fmt;

/// An API key. Its `Debug` and `Display` print `••••` and never the key, so a key cannot end up
/// in a log line, an error message or a panic by being formatted. The only way to the text is
/// [`ApiKey::expose`], which the request code calls when it writes the header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

/// What a key prints as.
pub const REDACTED: &str = "••••";

impl ApiKey {
    /// Wraps a key. Surrounding whitespace (a pasted newline) is trimmed.
    pub fn new(key: impl Into<String>) -> Self {
        let key: String = key.into();
        let trimmed = key.trim();
        if trimmed.len() == key.len() {
            ApiKey(key)
        } else {
            ApiKey(trimmed.to_string())
        }
    }

    /// Reads a key from the environment variable `name`; `None` when it is unset or empty.
    pub fn from_env(name: &str) -> Option<Self> {
        std::env::var(name)
            .ok()
            .map(ApiKey::new)
            .filter(|k| !k.is_empty())
    }

    /// The key itself, for the one place that puts it on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with the key, and every piece of it of [`SCRUBBED_PIECE`] characters or more
    /// (a provider may echo a key whole, or its start, or cut with `***` in the middle), written
    /// as [`REDACTED`]: for every text that came from a provider before it is shown, logged or
    /// kept.
    pub fn scrub<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        let key = self.0.as_bytes();
        let bytes = text.as_bytes();
        if key.is_empty() {
            return std::borrow::Cow::Borrowed(text);
        }
        let least = SCRUBBED_PIECE.min(key.len());
        let mut out = String::new();
        let (mut copied, mut at) = (0, 0);
        while at < bytes.len() {
            // The longest piece of the key that starts here.
            let longest = (0..key.len())
                .map(|from| {
                    key[from..]
                        .iter()
                        .zip(&bytes[at..])
                        .take_while(|(a, b)| a == b)
                        .count()
                })
                .max()
                .unwrap_or(0);
            let end = at + longest;
            if longest >= least && text.is_char_boundary(at) && text.is_char_boundary(end) {
                out.push_str(&text[copied..at]);
                out.push_str(REDACTED);
                copied = end;
                at = end;
            } else {
                at += 1;
            }
        }
        if copied == 0 {
            return std::borrow::Cow::Borrowed(text);
        }
        out.push_str(&text[copied..]);
        std::borrow::Cow::Owned(out)
    }
}

/// The shortest piece of a key [`ApiKey::scrub`] hides.
pub const SCRUBBED_PIECE: usize = 6;

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({REDACTED})")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_the_key() {
        let key = ApiKey::new(" sk-secret-123\n");
        assert_eq!(key.expose(), "sk-secret-123");
        assert!(!format!("{key:?}").contains("secret"));
        assert!(!format!("{key}").contains("secret"));
        assert!(!format!("{:?}", Some(&key)).contains("secret"));
    }

    #[test]
    fn scrubs_the_key_and_its_pieces_from_a_providers_text() {
        let key = ApiKey::new("sk-proj-AbCdEf0123456789xyz");
        assert_eq!(
            key.scrub("Incorrect API key provided: sk-proj-AbCdEf0123456789xyz."),
            "Incorrect API key provided: ••••."
        );
        // Its start, and its end cut out with stars, as providers show a key.
        assert_eq!(
            key.scrub("key sk-proj-AbC****789xyz refused"),
            "key ••••****•••• refused"
        );
        // Nothing of it: the text as it is, borrowed.
        let plain = "invalid x-api-key, 你好";
        assert!(matches!(key.scrub(plain), std::borrow::Cow::Borrowed(t) if t == plain));
        // A short key is hidden whole.
        assert_eq!(ApiKey::new("abc").scrub("got abc!"), "got ••••!");
    }
}
