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
}

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
}
