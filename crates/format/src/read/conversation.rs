//! Conversation documents, and the checks that only a whole conversation
//! allows: tool call ids are unique, every result answers an earlier call,
//! no call is answered twice.

use serde_json::Value;

use super::json::{Obj, Path, R, as_array, describe, parse_json};
use super::messages::{messages, tool_spec};
use crate::{Block, FormatError, Message, ToolSpec, Turn};

/// A conversation file: the messages and, optionally, the tools offered.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Conversation {
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// The tools offered to the model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
}

/// Reads a conversation document: a JSON array of messages, or an object
/// `{"messages": [...], "tools": [...]}`; and checks it as a whole: tool
/// call ids are unique, every tool result answers an earlier call, no call
/// is answered twice.
pub fn parse_conversation(text: &str) -> Result<Conversation, FormatError> {
    let value = parse_json(text)?;
    conversation(&value)
}

impl Conversation {
    /// Reads a conversation from a JSON value (see [`parse_conversation`]).
    pub fn from_value(value: &Value) -> Result<Conversation, FormatError> {
        conversation(value)
    }
}

impl Conversation {
    /// Reads a conversation from JSON text (see [`parse_conversation`]).
    pub fn from_json_str(text: &str) -> Result<Conversation, FormatError> {
        parse_conversation(text)
    }
}

pub(super) fn conversation(value: &Value) -> R<Conversation> {
    let root = Path::Root;
    let (messages, tools) = match value {
        Value::Array(_) => (messages(value, &root)?, Vec::new()),
        Value::Object(_) => {
            let obj = Obj::new(value, &root, "a conversation")?;
            obj.only(&["messages", "tools"], "a conversation")?;
            let msgs = messages(obj.req("messages")?, &root.key("messages"))?;
            let tools = match obj.opt("tools") {
                None => Vec::new(),
                Some(t) => {
                    let tp = root.key("tools");
                    let items = as_array(t, &tp, "a list of tool specs")?;
                    let mut out = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        out.push(tool_spec(item, &tp.index(i))?);
                    }
                    out
                }
            };
            (msgs, tools)
        }
        other => {
            return Err(root.err(format!(
                "expected a conversation (an array of messages or an object with \"messages\"), got {}",
                describe(other)
            )));
        }
    };
    let prefix = if value.is_array() { "" } else { "messages" };
    check_links(&messages, prefix)?;
    let mut seen = std::collections::HashSet::new();
    for (i, t) in tools.iter().enumerate() {
        if !seen.insert(t.name.as_str()) {
            return Err(FormatError::new(
                &format!("tools[{i}].name"),
                format!("duplicate tool name {:?}", t.name),
            ));
        }
    }
    Ok(Conversation { messages, tools })
}

/// Conversation-level checks over tool call ids and result links.
pub fn check_links(messages: &[Message], prefix: &str) -> Result<(), FormatError> {
    use std::collections::HashMap;
    // id → (path of the call, answered?)
    let mut calls: HashMap<&str, (String, bool)> = HashMap::new();
    for (mi, m) in messages.iter().enumerate() {
        for (bi, b) in m.content.iter().enumerate() {
            let here = || format!("{prefix}[{mi}].content[{bi}]");
            match b {
                Block::ToolCall { tool_call } => {
                    if let Some((first, _)) = calls.get(tool_call.id.as_str()) {
                        return Err(FormatError::new(
                            &format!("{}.tool_call.id", here()),
                            format!(
                                "duplicate tool call id {:?} (first at {first})",
                                tool_call.id
                            ),
                        ));
                    }
                    calls.insert(&tool_call.id, (here(), false));
                }
                Block::ToolResult { tool_result: r } => link(
                    &mut calls,
                    &r.tool_call_id,
                    &format!("{}.tool_result.tool_call_id", here()),
                )?,
                Block::ApprovalRequest {
                    approval_request: r,
                } => link(
                    &mut calls,
                    &r.tool_call_id,
                    &format!("{}.approval_request.tool_call_id", here()),
                )?,
                _ => {}
            }
        }
    }
    Ok(())
}

pub(super) fn link(
    calls: &mut std::collections::HashMap<&str, (String, bool)>,
    id: &str,
    path: &str,
) -> Result<(), FormatError> {
    match calls.get_mut(id) {
        None => Err(FormatError::new(
            path,
            format!("no earlier tool call has id {id:?}"),
        )),
        Some((_, true)) => Err(FormatError::new(
            path,
            format!("tool call {id:?} is already answered"),
        )),
        Some((_, answered)) => {
            *answered = true;
            Ok(())
        }
    }
}

/// Reads a list of messages from JSON, path-prefixed by `prefix`, with the
/// conversation-level link checks.
pub fn messages_from_value(value: &Value, prefix: &str) -> Result<Vec<Message>, FormatError> {
    let msgs = messages(value, &Path::Root).map_err(|e| e.under(prefix))?;
    check_links(&msgs, prefix)?;
    Ok(msgs)
}

/// Reads earlier turns passed back to a run (`turns[]`), path-prefixed by
/// `prefix`: each a turn or a whole earlier response (an object whose
/// `messages` are the model's context; other fields are not read, and a
/// turn without `messages` is one the model does not see), or a list of
/// messages. The one reader of turns for every language and the HTTP API.
pub fn turns_from_value(value: &Value, prefix: &str) -> Result<Vec<Turn>, FormatError> {
    let Value::Array(items) = value else {
        return Err(FormatError {
            path: prefix.to_string(),
            message: format!(
                "expected a list of turns (responses, turns or lists of messages), got {}",
                describe(value)
            ),
        });
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| turn_from_value(item, &format!("{prefix}[{i}]")))
        .collect()
}

/// Reads one earlier turn (see [`turns_from_value`]) at `path`.
pub fn turn_from_value(value: &Value, path: &str) -> Result<Turn, FormatError> {
    match value {
        Value::Array(_) => Ok(Turn {
            messages: messages_from_value(value, path)?,
        }),
        _ => Turn::from_value(value).map_err(|e| e.under(path)),
    }
}

impl FormatError {
    /// Puts `prefix` in front of the path (`messages[2]` + `content[0]`).
    pub fn under(mut self, prefix: &str) -> FormatError {
        if prefix.is_empty() {
            return self;
        }
        self.path = if self.path.is_empty() {
            prefix.to_string()
        } else if self.path.starts_with('[') {
            format!("{prefix}{}", self.path)
        } else {
            format!("{prefix}.{}", self.path)
        };
        self
    }
}
