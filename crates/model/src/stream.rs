use std::collections::BTreeMap;

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
/// `{}`; text that is not JSON is kept in `raw_arguments`). Blocks are kept
/// by index, in index order: an index never sizes anything (one event at
/// index `usize::MAX` is one block, not a list that long), and an index no
/// event started is no block.
#[derive(Debug, Default)]
pub struct Assembler {
    /// Index → the block, and a tool call's argument text so far.
    blocks: BTreeMap<usize, (Block, Option<String>)>,
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
                let arguments = matches!(block, Block::ToolCall { .. }).then(String::new);
                self.blocks.insert(*index, (block.clone(), arguments));
            }
            StreamEvent::TextDelta { index, text } => match self.blocks.get_mut(index) {
                Some((Block::Text(t), _)) => t.text.push_str(text),
                _ => {
                    self.push(&StreamEvent::BlockStart {
                        index: *index,
                        block: Block::text(text.clone()),
                    });
                }
            },
            StreamEvent::ThinkingDelta { index, text } => match self.blocks.get_mut(index) {
                Some((Block::Thinking(t), _)) => t.thinking.push_str(text),
                _ => {
                    self.push(&StreamEvent::BlockStart {
                        index: *index,
                        block: Block::thinking(text.clone()),
                    });
                }
            },
            StreamEvent::ToolArgumentsDelta { index, json } => {
                if let Some((_, Some(buf))) = self.blocks.get_mut(index) {
                    buf.push_str(json);
                }
            }
            StreamEvent::Done(_) => {}
        }
    }

    /// The blocks assembled so far, in index order, tool arguments parsed.
    pub fn finish(self) -> Vec<Block> {
        self.blocks
            .into_values()
            .map(|(mut block, args)| {
                if let (Block::ToolCall { tool_call }, Some(text)) = (&mut block, args) {
                    set_arguments(tool_call, &text);
                }
                block
            })
            .collect()
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

    /// Issue 39: an event's index sizes nothing: a block at `usize::MAX`
    /// used to grow the list until the allocator gave up.
    #[test]
    fn an_index_far_ahead_is_one_block() {
        let mut a = Assembler::new();
        a.push(&StreamEvent::TextDelta {
            index: 3,
            text: "b".into(),
        });
        a.push(&StreamEvent::BlockStart {
            index: usize::MAX,
            block: Block::ToolCall {
                tool_call: ToolCall::new("c", "f", Value::Null),
            },
        });
        a.push(&StreamEvent::ToolArgumentsDelta {
            index: usize::MAX,
            json: "{\"x\": 1}".into(),
        });
        a.push(&StreamEvent::ThinkingDelta {
            index: 0,
            text: "a".into(),
        });
        a.push(&StreamEvent::ToolArgumentsDelta {
            index: usize::MAX - 1,
            json: "lost".into(),
        });
        let blocks = a.finish();
        assert_eq!(blocks.len(), 3, "{blocks:?}");
        assert_eq!(blocks[0], Block::thinking("a"));
        assert_eq!(blocks[1], Block::text("b"));
        let Block::ToolCall { tool_call } = &blocks[2] else {
            panic!("{blocks:?}")
        };
        assert_eq!(tool_call.arguments, serde_json::json!({"x": 1}));
    }

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
