use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Block, FinishReason, FormatError, Usage};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The person (or program) talking to the model.
    User,
    /// The model.
    Assistant,
    /// Tool results, answering the previous assistant message's calls.
    Tool,
}

impl Role {
    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Stable id (provider's or Parlance's), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Who wrote it.
    pub role: Role,
    /// The content blocks, in order.
    pub content: Vec<Block>,
    /// Tokens of the model call that produced it (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What the model call that produced it cost, in US dollars, from
    /// Parlance's price table (assistant messages). Absent when the model
    /// is not in the table: never a guess.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub cost: Option<f64>,
    /// Why the model stopped, normalised (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// The provider's own finish/stop reason, unchanged (`end_turn`, `STOP`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason_raw: Option<String>,
    /// The provider's own detail on why it stopped, unchanged (Anthropic
    /// `stop_details`: a refusal's category and explanation).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub finish_details: Option<Map<String, Value>>,
    /// The provider that produced it (`anthropic`, `openai`, `openai-responses`, `google`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model that produced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Free-form data of the application's; never sent to a model.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub metadata: Option<Map<String, Value>>,
}

/// The metadata key of a handoff's tool message: `{"from": agent,
/// "to": agent}` ([`Message::handoff`]).
pub const HANDOFF_KEY: &str = "handoff";

/// The metadata key that marks a store's repair ([`Message::is_repair`]).
pub const REPAIR_KEY: &str = "parlance_repair";

impl Message {
    /// A message with content and nothing else.
    pub fn new(role: Role, content: Vec<Block>) -> Self {
        Message {
            id: None,
            role,
            content,
            usage: None,
            cost: None,
            finish_reason: None,
            finish_reason_raw: None,
            finish_details: None,
            provider: None,
            model: None,
            metadata: None,
        }
    }

    /// A user message of one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message::new(Role::User, vec![Block::text(text)])
    }

    /// A system message of one text block.
    pub fn system(text: impl Into<String>) -> Self {
        Message::new(Role::System, vec![Block::text(text)])
    }

    /// An assistant message of one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::new(Role::Assistant, vec![Block::text(text)])
    }

    /// All text blocks joined (no separator), for display.
    pub fn text(&self) -> String {
        self.content.iter().filter_map(Block::as_text).collect()
    }

    /// The tool calls of this message, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &crate::ToolCall> {
        self.content.iter().filter_map(Block::as_tool_call)
    }

    /// Whether this is a store's repair: results made up for calls that
    /// never got one (their run died or stopped), marked
    /// [`REPAIR_KEY`] in its metadata.
    pub fn is_repair(&self) -> bool {
        self.metadata
            .as_ref()
            .and_then(|meta| meta.get(REPAIR_KEY))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The agent this message handed the conversation to, when it is the
    /// tool message of a handoff (`metadata.handoff.to`, see
    /// [`HANDOFF_KEY`]).
    pub fn handoff(&self) -> Option<&str> {
        self.metadata
            .as_ref()?
            .get(HANDOFF_KEY)?
            .get("to")?
            .as_str()
    }

    /// Marks this message a repair ([`Message::is_repair`]).
    pub fn mark_repair(&mut self) {
        self.metadata
            .get_or_insert_with(Default::default)
            .insert(REPAIR_KEY.into(), Value::Bool(true));
    }

    /// Takes the repair mark off (its calls have run now); `true` when it
    /// had one.
    pub fn unmark_repair(&mut self) -> bool {
        let Some(meta) = &mut self.metadata else {
            return false;
        };
        let had = meta.remove(REPAIR_KEY).is_some();
        if had && meta.is_empty() {
            self.metadata = None;
        }
        had
    }

    /// Reads a message from canonical (or older, accepted) JSON.
    pub fn from_value(value: &Value) -> Result<Message, FormatError> {
        crate::read::message(value, &crate::read::Path::root())
    }

    /// Parses a message from JSON text.
    pub fn from_json_str(text: &str) -> Result<Message, FormatError> {
        let value = crate::read::parse_json(text)?;
        Message::from_value(&value)
    }
}

impl<'de> serde::Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Message::from_value(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod repair_mark_tests {
    use super::*;

    #[test]
    fn a_repair_mark_comes_and_goes_and_leaves_other_metadata_alone() {
        let mut m = Message::assistant("x");
        assert!(!m.is_repair());
        assert!(!m.unmark_repair());
        m.mark_repair();
        assert!(m.is_repair());
        assert!(m.unmark_repair());
        assert_eq!(m.metadata, None, "nothing else was there");
        m.metadata = Some(serde_json::Map::from_iter([(
            "note".into(),
            Value::from(1),
        )]));
        m.mark_repair();
        assert!(m.unmark_repair());
        assert_eq!(m.metadata.unwrap().len(), 1, "the rest is kept");
        let mut empty = Message::assistant("y");
        empty.metadata = Some(Default::default());
        assert!(!empty.unmark_repair());
        assert_eq!(empty.metadata, Some(Default::default()));
    }
}
