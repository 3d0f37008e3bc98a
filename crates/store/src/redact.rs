//! Scrubbing configured secrets (API keys, tokens, the server's secret)
//! from text before it is stored, logged or returned.
//!
//! Matching is exact, on the secret as written and as it appears inside a
//! JSON string. Secrets shorter than [`MIN_SECRET_LEN`] are not scrubbed:
//! they would match ordinary words (use real, long secrets).

use std::borrow::Cow;

/// Shorter values are not treated as secrets.
pub const MIN_SECRET_LEN: usize = 8;

/// What a secret is replaced by.
pub const REDACTED: &str = "[redacted]";

/// A set of secrets to scrub.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    // Each secret, and its JSON-escaped form when that differs; longest
    // first so that a secret containing another is replaced whole.
    needles: Vec<String>,
}

impl Redactor {
    /// Scrubs these secrets (empty and short ones are ignored).
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Redactor {
        let mut needles = Vec::new();
        for s in secrets {
            if s.chars().count() < MIN_SECRET_LEN {
                continue;
            }
            let escaped = serde_json::to_string(&s).expect("json");
            let escaped = escaped[1..escaped.len() - 1].to_string();
            if escaped != s {
                needles.push(escaped);
            }
            needles.push(s);
        }
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        needles.dedup();
        Redactor { needles }
    }

    /// Whether there is nothing to scrub.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `text` with every secret replaced by `[redacted]`.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for n in &self.needles {
            if out.contains(n.as_str()) {
                out = Cow::Owned(out.replace(n.as_str(), REDACTED));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_scrubbed_short_words_are_not() {
        let r = Redactor::new([
            "sk-live-123456".to_string(),
            "abc".to_string(),
            "quo\"te-secret".to_string(),
        ]);
        assert_eq!(
            r.redact("key sk-live-123456 and abc"),
            "key [redacted] and abc"
        );
        assert_eq!(
            r.redact(r#"{"k":"quo\"te-secret"}"#),
            r#"{"k":"[redacted]"}"#
        );
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
        assert!(Redactor::new([]).is_empty());
    }
}
