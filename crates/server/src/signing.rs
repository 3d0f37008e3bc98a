//! What the server signs with its secret (HMAC-SHA256).
//!
//! - Approval digests: every agent the server builds signs the digests of
//!   its pending calls with a key derived from the secret, bound to the
//!   run's id (`parlance-agent`'s `approval_key`). A decision can only be
//!   made for a call this server paused on, in that run.
//! - Stateless paused responses: the server hands out a `signature` over
//!   the whole paused response, the agent (its settings) and the caller.
//!   A decision on a stateless run must bring the paused response back
//!   unchanged with its signature; an edited response, another agent or
//!   another caller is refused.
//!
//! The secret comes from the configuration (`secret`, `PARLANCE_SECRET`)
//! or is generated once and kept in the store, so every server sharing a
//! store signs alike. It can rotate: the earlier secrets
//! (`previous_secrets`) still verify what they signed (approval digests of
//! runs that paused before, stateless paused responses, the inbox's
//! sessions), and everything new is signed with the current one.

use std::sync::Arc;

use hmac::{Hmac, Mac};
use parlance_agent::Agent;
use parlance_format::{Block, Response};
use sha2::{Digest, Sha256};

use crate::auth::Principal;

/// The server's keys, derived from its secret.
#[derive(Clone)]
pub struct Signer {
    approvals: Arc<[u8]>,
    paused: Vec<u8>,
    /// The keys of the previous secrets: they verify, never sign.
    previous: Vec<(Arc<[u8]>, Vec<u8>)>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer(..)")
    }
}

fn mac(key: &[u8]) -> Hmac<Sha256> {
    Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length")
}

fn derive(secret: &[u8], purpose: &str) -> Vec<u8> {
    let mut m = mac(secret);
    m.update(purpose.as_bytes());
    m.finalize().into_bytes().to_vec()
}

/// A fresh random secret (hex), for a store that has none yet.
pub fn new_secret() -> String {
    hex::encode(rand::random::<[u8; 32]>())
}

impl Signer {
    /// Keys derived from `secret`.
    pub fn new(secret: &str) -> Signer {
        Signer::rotated(secret, &[])
    }

    /// Keys derived from `secret`, signing; those of `previous` (earlier
    /// secrets) still verify.
    pub fn rotated(secret: &str, previous: &[String]) -> Signer {
        let keys = |s: &str| {
            (
                Arc::<[u8]>::from(derive(s.as_bytes(), "parlance approvals v1")),
                derive(s.as_bytes(), "parlance paused state v1"),
            )
        };
        let (approvals, paused) = keys(secret);
        Signer {
            approvals,
            paused,
            previous: previous
                .iter()
                .filter(|p| !p.is_empty() && p.as_str() != secret)
                .map(|p| keys(p))
                .collect(),
        }
    }

    /// The key agents sign approval digests with.
    pub fn approval_key(&self) -> Arc<[u8]> {
        Arc::clone(&self.approvals)
    }

    /// The previous secrets' approval keys, newest first: agents still
    /// accept the digests they made.
    pub fn previous_approval_keys(&self) -> Vec<Arc<[u8]>> {
        self.previous.iter().map(|(a, _)| Arc::clone(a)).collect()
    }

    /// The approval key, then the previous ones.
    pub fn approval_keys(&self) -> Vec<Arc<[u8]>> {
        std::iter::once(self.approval_key())
            .chain(self.previous_approval_keys())
            .collect()
    }

    fn paused_mac(&self, who: &Principal, agent: &Agent, paused: &Response) -> Hmac<Sha256> {
        self.paused_mac_with(&self.paused, who, agent, paused)
    }

    fn paused_mac_with(
        &self,
        key: &[u8],
        who: &Principal,
        agent: &Agent,
        paused: &Response,
    ) -> Hmac<Sha256> {
        let settings = Sha256::digest(agent.settings().to_string().as_bytes());
        let mut m = mac(key);
        for part in [
            who.name().as_bytes(),
            &settings[..],
            parlance_format::to_json(paused).as_bytes(),
        ] {
            m.update(&(part.len() as u64).to_be_bytes());
            m.update(part);
        }
        m
    }

    /// The signature handed out with a stateless paused response.
    pub fn sign(&self, who: &Principal, agent: &Agent, paused: &Response) -> String {
        format!(
            "hmac-sha256:{}",
            hex::encode(self.paused_mac(who, agent, paused).finalize().into_bytes())
        )
    }

    /// Whether `signature` was made by this server (with its secret or a
    /// previous one) for this paused response, agent and caller (compared
    /// in constant time).
    pub fn verify(
        &self,
        who: &Principal,
        agent: &Agent,
        paused: &Response,
        signature: &str,
    ) -> bool {
        let Some(bytes) = signature
            .strip_prefix("hmac-sha256:")
            .and_then(|h| hex::decode(h).ok())
        else {
            return false;
        };
        std::iter::once(&self.paused)
            .chain(self.previous.iter().map(|(_, p)| p))
            .any(|key| {
                self.paused_mac_with(key, who, agent, paused)
                    .verify_slice(&bytes)
                    .is_ok()
            })
    }
}

/// The response without artifacts (what a non-operator reads).
pub fn without_artifacts(r: &Response) -> Response {
    let mut r = r.clone();
    for b in r.messages.iter_mut().flat_map(|m| m.content.iter_mut()) {
        if let Block::ToolResult { tool_result } = b {
            tool_result.artifact = None;
        }
    }
    r
}
