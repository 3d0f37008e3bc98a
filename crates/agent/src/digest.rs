//! The digest a decision must repeat for a call waiting for approval.
//!
//! Without a key it is the canonical `approval_digest` (`sha256:` over the
//! call id, the tool name and the arguments): it proves the decision was
//! made for these arguments. With a key (a server's secret,
//! [`crate::AgentBuilder::approval_key`]) it is an HMAC of that digest and
//! the run's id: nobody without the key can make one for a call the model
//! never asked for, and a decision made for one run is refused by another.

use hmac::{Hmac, Mac};
use parlance_format::{ToolCall, approval_digest};
use sha2::Sha256;

/// The digest for `call` in run `run_id`.
pub(crate) fn call_digest(key: Option<&[u8]>, run_id: &str, call: &ToolCall) -> String {
    let plain = approval_digest(&call.id, &call.name, &call.arguments);
    let Some(key) = key else {
        return plain;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(run_id.as_bytes());
    mac.update(b"\0");
    mac.update(plain.as_bytes());
    format!("hmac-sha256:{}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keyed_digests_bind_the_key_the_run_and_the_call() {
        let call = ToolCall::new("c1", "refund", json!({"amount": 40}));
        let plain = call_digest(None, "run_a", &call);
        assert!(plain.starts_with("sha256:"));
        assert_eq!(
            plain,
            call_digest(None, "run_b", &call),
            "no key: per call only"
        );
        let a = call_digest(Some(b"k1"), "run_a", &call);
        assert!(a.starts_with("hmac-sha256:"));
        assert_eq!(a, call_digest(Some(b"k1"), "run_a", &call));
        assert_ne!(a, call_digest(Some(b"k2"), "run_a", &call));
        assert_ne!(a, call_digest(Some(b"k1"), "run_b", &call));
        let other = ToolCall::new("c1", "refund", json!({"amount": 41}));
        assert_ne!(a, call_digest(Some(b"k1"), "run_a", &other));
    }
}
