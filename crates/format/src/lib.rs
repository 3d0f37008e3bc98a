//! Parlance's canonical conversation format.
//!
//! One JSON shape for a conversation, shared by every provider adapter, the
//! tool engine, the thread store, the HTTP API and the language bindings.
//! Every content block is written as `{"type": T, T: payload, ...}`:
//!
//! ```
//! use parlance_format::{Block, Message, Role};
//!
//! let msg = Message::new(Role::User, vec![Block::text("Hi!")]);
//! let json = parlance_format::to_json(&msg);
//! assert_eq!(json, r#"{"role":"user","content":[{"type":"text","text":"Hi!"}]}"#);
//!
//! let back = Message::from_json_str(&json).unwrap();
//! assert_eq!(back, msg);
//! ```
//!
//! Readers are strict: anything unknown or malformed is a [`FormatError`]
//! naming the JSON path (`messages[3].content[1].type: unknown block type "foo"`),
//! never a silent drop. They also accept the older shapes of the seed
//! documents (a flat `tool_call` with `args`, `reasoning` for `thinking`).
//! See `docs/format.md` for the full description.

#![warn(missing_docs)]

mod block;
mod depth;
mod error;
mod id;
mod message;
mod read;
mod response;
pub mod schema;
mod spend;
mod tool;
mod usage;

pub use block::{
    ApprovalRequest, Block, CachePoint, Media, Text, Thinking, ToolCall, ToolResult, ToolStatus,
    approval_digest,
};
pub use depth::{MAX_VALUE_DEPTH, check_depth, to_readable_json, within_depth};
pub use error::FormatError;
pub use id::new_id;
pub use message::{HANDOFF_KEY, Message, REPAIR_KEY, Role};
pub use read::{
    Conversation, check_links, messages_from_value, parse_conversation, parse_json,
    turn_from_value, turns_from_value,
};
pub use response::{
    Approval, Decision, DecisionKind, Response, RunError, RunStatus, Turn, total_cost,
};
pub use spend::{NANOS_PER_USD, Spend, ThreadSpend, usd_to_nanos};
pub use tool::ToolSpec;
pub use usage::{FinishReason, Usage};

/// The version of the canonical format this crate reads and writes.
///
/// It is part of every published schema's `$id`. See `docs/format.md`
/// ("Versions and compatibility") for what a version change may break.
pub const FORMAT_VERSION: &str = "1.1";

/// Serialises any canonical value as compact JSON, in canonical key order.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    // Serialising these types cannot fail: every map key is a string.
    serde_json::to_string(value).expect("canonical types always serialise")
}

/// Serialises any canonical value as indented JSON, in canonical key order.
pub fn to_json_pretty<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("canonical types always serialise")
}
