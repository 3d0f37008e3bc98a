//! The strict reader: JSON value → canonical types, with path-named errors.
//!
//! Written by hand rather than derived so that every error names the JSON
//! path and what was expected, and so that the older seed shapes (flat
//! `tool_call` with `args`, `reasoning` blocks) are read into canonical form.
//!
//! - [`json`]: the path, objects that refuse unknown keys
//! - [`blocks`]: content blocks, and which blocks each role may hold
//! - [`messages`]: messages, usage, finish reasons, tool specs
//! - [`responses`]: turns, decisions, responses
//! - [`conversation`]: conversation documents and the links between calls
//!   and results

mod blocks;
mod check;
mod conversation;
mod json;
mod messages;
mod responses;

pub use conversation::{
    Conversation, check_links, messages_from_value, parse_conversation, turn_from_value,
    turns_from_value,
};
pub(crate) use json::Path;
pub use json::parse_json;
pub(crate) use messages::message;
pub(crate) use responses::{decision, response, turn};
