//! Mistral's tool call ids: exactly 9 characters `[a-zA-Z0-9]`; the API
//! refuses any other id on a call or a result. An id that fits is sent as
//! it is; any other (OpenAI's `call_…`, Anthropic's `toolu_…`) is mapped
//! to 9 characters derived from a SHA-256 of the whole id, so a call and
//! its result always map alike, in every request, with no table to keep.
//! The canonical message is never changed: it keeps the original id, and
//! the mapping is redone each time the conversation is sent.

use sha2::{Digest, Sha256};

/// The length Mistral requires.
pub const LEN: usize = 9;

const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Whether `id` is already a Mistral id.
pub fn is_mistral_id(id: &str) -> bool {
    id.len() == LEN && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The id Mistral is sent for the canonical call id `id`.
pub fn call_id(id: &str) -> String {
    if is_mistral_id(id) {
        return id.to_string();
    }
    // 9 base-62 digits of the hash's first 8 bytes (62^9 ≈ 1.35e16
    // values: a clash within one conversation is checked for anyway).
    let hash = Sha256::digest(id.as_bytes());
    let mut n = u64::from_be_bytes(hash[..8].try_into().expect("8 bytes"));
    let mut out = [0u8; LEN];
    for c in out.iter_mut() {
        *c = ALPHABET[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8(out.to_vec()).expect("ascii")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistral_ids_are_kept_and_others_mapped_to_nine_alphanumerics() {
        assert_eq!(call_id("gSIMJiOkT"), "gSIMJiOkT");
        for id in [
            "call_abc123",
            "toolu_01A",
            "",
            "gSIMJiOk",
            "gSIMJiOkT_",
            "é23456789",
        ] {
            let m = call_id(id);
            assert!(is_mistral_id(&m), "{id:?} → {m:?}");
            assert_eq!(m, call_id(id), "deterministic");
        }
        assert_ne!(call_id("call_1"), call_id("call_2"));
        // A fixed value, so the mapping never changes between versions
        // (a stored conversation must map the same way next year).
        assert_eq!(call_id("call_abc123"), "OANJQSxzk");
        assert!(!is_mistral_id("abcdefgh-"));
    }
}
