//! The reader's rules applied to typed values: [`Message::check`] says
//! what the strict reader would say of a message once written, without
//! writing it. A decoder's answer is checked this way on every model call,
//! so it must cost next to nothing when the message is fine (no copy, no
//! JSON); the rules themselves are the reader's own functions, and
//! `tests/check.rs` holds the two equal over generated messages.

use serde_json::Value;

use super::blocks::{
    Place, cache_point_position, cache_point_rules, check_place, media_rules, text_rules,
    thinking_rules, tool_call_rules,
};
use super::json::{Path, R, describe, free, free_map};
use crate::{ApprovalRequest, Block, FormatError, Message, ToolCall, ToolResult};

impl Message {
    /// Checks the message against the canonical reader's rules, as if it
    /// were written and read back ([`Message::from_value`]), with the same
    /// error: a call id or tool name not empty, media with exactly one
    /// source, blocks that belong to the role, free-form values within
    /// [`crate::MAX_VALUE_DEPTH`], a cost not negative...
    ///
    /// ```
    /// use parlance_format::{Block, Message, Role};
    /// use serde_json::json;
    ///
    /// let call = |id: &str| Block::tool_call(id, "lookup", json!({}));
    /// let fine = Message::new(Role::Assistant, vec![call("call_1")]);
    /// assert!(fine.check().is_ok());
    /// let odd = Message::new(Role::Assistant, vec![call("")]);
    /// assert_eq!(odd.check().unwrap_err().to_string(), "content[0].tool_call.id: must not be empty");
    /// ```
    pub fn check(&self) -> Result<(), FormatError> {
        let root = Path::root();
        content(
            &self.content,
            &root.key("content"),
            Place::Message(self.role),
        )?;
        if let Some(m) = &self.finish_details {
            free_map(m, &root.key("finish_details"))?;
        }
        if let Some(m) = &self.metadata {
            free_map(m, &root.key("metadata"))?;
        }
        // A cost that is not a finite number is written as `null` (absent).
        match self.cost {
            Some(c) if c.is_finite() && c < 0.0 => Err(root.key("cost").err(format!(
                "expected a non-negative number of US dollars, got {}",
                describe(&Value::from(c))
            ))),
            _ => Ok(()),
        }
    }
}

fn content(blocks: &[Block], path: &Path, place: Place) -> R<()> {
    for (i, b) in blocks.iter().enumerate() {
        let at = path.index(i);
        block(b, &at, place)?;
        cache_point_position(b, i.checked_sub(1).map(|j| &blocks[j]), &at)?;
    }
    Ok(())
}

fn block(b: &Block, path: &Path, place: Place) -> R<()> {
    match b {
        Block::Text(t) => text_rules(t, path)?,
        Block::Thinking(t) => thinking_rules(t, path)?,
        Block::Image { image: m } => media_rules(m, &path.key("image"))?,
        Block::Audio { audio: m } => media_rules(m, &path.key("audio"))?,
        Block::File { file: m } => media_rules(m, &path.key("file"))?,
        Block::Json { json } => drop(free(json, &path.key("json"))?),
        Block::ToolCall { tool_call } => self::tool_call(tool_call, &path.key("tool_call"))?,
        Block::ToolResult { tool_result } => {
            self::tool_result(tool_result, &path.key("tool_result"))?
        }
        Block::ApprovalRequest { approval_request } => {
            self::approval_request(approval_request, &path.key("approval_request"))?
        }
        Block::CachePoint { cache_point } => {
            cache_point_rules(cache_point, &path.key("cache_point"))?
        }
    }
    check_place(b, path, place)
}

/// An id or a name: the reader's `must not be empty`.
fn id(s: &str, path: &Path) -> R<()> {
    if s.is_empty() {
        return Err(path.err("must not be empty"));
    }
    Ok(())
}

fn tool_call(call: &ToolCall, path: &Path) -> R<()> {
    id(&call.id, &path.key("id"))?;
    id(&call.name, &path.key("name"))?;
    free(&call.arguments, &path.key("arguments"))?;
    tool_call_rules(call, path)
}

fn tool_result(r: &ToolResult, path: &Path) -> R<()> {
    if let Some(a) = &r.approval
        && let Some(args) = &a.arguments
    {
        let at = path.key("approval");
        free(args, &at.key("arguments"))?;
    }
    id(&r.tool_call_id, &path.key("tool_call_id"))?;
    content(&r.content, &path.key("content"), Place::ToolResultContent)?;
    if let Some(artifact) = &r.artifact {
        free(artifact, &path.key("artifact"))?;
    }
    Ok(())
}

fn approval_request(a: &ApprovalRequest, path: &Path) -> R<()> {
    id(&a.tool_call_id, &path.key("tool_call_id"))?;
    id(&a.name, &path.key("name"))?;
    free(&a.arguments, &path.key("arguments"))?;
    id(&a.digest, &path.key("digest"))
}
