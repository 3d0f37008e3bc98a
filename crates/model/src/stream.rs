use parlance_format::{Block, Message, ToolCall};
use serde_json::Value;

/// A canonical streaming event. Providers translate their own stream
/// events into these; every stream ends with `Done`.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A block begins at `index`: its shell (a text or thinking block with
    /// empty text and its opaque fields, a tool call with its id and name).
    BlockStart {
        /// Position in the message's content.
        index: usize,
        /// The block so far.
        block: Block,
    },
    /// More text for the text block at `index`.
    TextDelta {
        /// Position in the message's content.
        index: usize,
        /// The new text.
        text: String,
    },
    /// More reasoning for the thinking block at `index`.
    ThinkingDelta {
        /// Position in the message's content.
        index: usize,
        /// The new reasoning text.
        text: String,
    },
    /// A fragment of the JSON arguments of the tool call at `index`.
    ToolArgumentsDelta {
        /// Position in the message's content.
        index: usize,
        /// The fragment, as the provider sent it.
        json: String,
    },
    /// The finished message (usage and finish reason included): the same
    /// message `generate` returns.
    Done(Message),
}

/// Builds content blocks from [`StreamEvent`]s: text and reasoning
/// appended, tool arguments concatenated and parsed at the end (empty means
/// `{}`; text that is not JSON is kept in `raw_arguments`).
#[derive(Debug, Default)]
pub struct Assembler {
    blocks: Vec<Block>,
    arguments: Vec<Option<String>>,
}

impl Assembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Assembler::default()
    }

    /// Applies one event (`Done` is ignored).
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::BlockStart { index, block } => {
                let i = *index;
                while self.blocks.len() <= i {
                    self.blocks.push(Block::text(""));
                    self.arguments.push(None);
                }
                self.blocks[i] = block.clone();
                self.arguments[i] = matches!(block, Block::ToolCall { .. }).then(String::new);
            }
            StreamEvent::TextDelta { index, text } => match self.blocks.get_mut(*index) {
                Some(Block::Text(t)) => t.text.push_str(text),
                _ => {
                    self.push(&StreamEvent::BlockStart {
                        index: *index,
                        block: Block::text(text.clone()),
                    });
                }
            },
            StreamEvent::ThinkingDelta { index, text } => match self.blocks.get_mut(*index) {
                Some(Block::Thinking(t)) => t.thinking.push_str(text),
                _ => {
                    self.push(&StreamEvent::BlockStart {
                        index: *index,
                        block: Block::thinking(text.clone()),
                    });
                }
            },
            StreamEvent::ToolArgumentsDelta { index, json } => {
                if let Some(Some(buf)) = self.arguments.get_mut(*index) {
                    buf.push_str(json);
                }
            }
            StreamEvent::Done(_) => {}
        }
    }

    /// The blocks assembled so far, tool arguments parsed.
    pub fn finish(mut self) -> Vec<Block> {
        for (block, args) in self.blocks.iter_mut().zip(self.arguments) {
            if let (Block::ToolCall { tool_call }, Some(text)) = (block, args) {
                set_arguments(tool_call, &text);
            }
        }
        self.blocks
    }
}

/// Sets a call's arguments from the provider's JSON text: empty text is
/// `{}`; text that is not JSON (or nests deeper than the format's limit,
/// [`parlance_format::MAX_VALUE_DEPTH`], so that the message can be stored
/// and read back) is kept in `raw_arguments`, arguments `null`.
pub fn set_arguments(call: &mut ToolCall, text: &str) {
    if text.trim().is_empty() {
        call.arguments = Value::Object(Default::default());
        return;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v) if parlance_format::within_depth(&v, parlance_format::MAX_VALUE_DEPTH) => {
            call.arguments = v
        }
        _ => {
            call.arguments = Value::Null;
            call.raw_arguments = Some(text.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_deeper_than_the_format_allows_are_kept_as_text() {
        let depth = parlance_format::MAX_VALUE_DEPTH;
        let deep = "[".repeat(depth + 1) + &"]".repeat(depth + 1);
        let mut call = ToolCall::new("c", "f", Value::Null);
        set_arguments(&mut call, &deep);
        assert_eq!(call.arguments, Value::Null);
        assert_eq!(call.raw_arguments.as_deref(), Some(deep.as_str()));
        let ok = "[".repeat(depth) + &"]".repeat(depth);
        let mut call = ToolCall::new("c", "f", Value::Null);
        set_arguments(&mut call, &ok);
        assert!(call.arguments.is_array() && call.raw_arguments.is_none());
        // Stored and read back.
        let m = Message::new(
            parlance_format::Role::Assistant,
            vec![Block::ToolCall { tool_call: call }],
        );
        Message::from_json_str(&parlance_format::to_json(&m)).unwrap();
    }
}
