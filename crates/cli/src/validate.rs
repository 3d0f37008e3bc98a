//! `parlance validate`: checks any canonical document Parlance reads or
//! writes (a conversation, a message, a response, a request document, a
//! decision, a content block, a tool spec, a turn), named by `--kind` or
//! recognised from its fields, and names the JSON path of any error.

use std::process::ExitCode;

use parlance_format::{
    Block, Conversation, Decision, FormatError, Message, Response, Role, ToolSpec, Turn,
};
use parlance_model::RequestDocument;
use serde_json::{Value, json};

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DocKind {
    /// An array of messages, or `{"messages", "tools"}`.
    Conversation,
    /// One message.
    Message,
    /// A run's response envelope.
    Response,
    /// A request document (`parlance convert` writes them):
    /// `{"model", "stream", "messages", "tools", "options"}`.
    Request,
    /// A reviewer's decision on a call waiting for approval.
    Decision,
    /// One content block.
    Block,
    /// One tool spec.
    ToolSpec,
    /// An earlier turn passed back (`{"messages"}`, other fields ignored).
    Turn,
}

impl DocKind {
    fn name(self) -> &'static str {
        match self {
            DocKind::Conversation => "conversation",
            DocKind::Message => "message",
            DocKind::Response => "response",
            DocKind::Request => "request",
            DocKind::Decision => "decision",
            DocKind::Block => "block",
            DocKind::ToolSpec => "tool spec",
            DocKind::Turn => "turn",
        }
    }

    /// The kind a document's fields say it is.
    fn detect(v: &Value) -> DocKind {
        let Some(m) = v.as_object() else {
            return DocKind::Conversation;
        };
        let has = |k: &str| m.contains_key(k);
        if has("status") {
            DocKind::Response
        } else if has("role") {
            DocKind::Message
        } else if has("decision") {
            DocKind::Decision
        } else if has("type") {
            DocKind::Block
        } else if has("input_schema") {
            DocKind::ToolSpec
        } else if m.keys().all(|k| k == "messages" || k == "tools") {
            DocKind::Conversation
        } else {
            DocKind::Request
        }
    }
}

/// A document read, with what the summary and `--canonical` need.
struct Read {
    messages: Vec<Message>,
    tools: usize,
    canonical: Value,
}

fn read(kind: DocKind, v: &Value) -> Result<Read, FormatError> {
    let just = |canonical: Value| Read {
        messages: Vec::new(),
        tools: 0,
        canonical,
    };
    Ok(match kind {
        DocKind::Conversation => {
            let c = Conversation::from_value(v)?;
            let canonical = if v.is_array() {
                json!(c.messages)
            } else {
                json!(c)
            };
            Read {
                tools: c.tools.len(),
                messages: c.messages,
                canonical,
            }
        }
        DocKind::Message => {
            let m = Message::from_value(v)?;
            Read {
                canonical: json!(m),
                messages: vec![m],
                tools: 0,
            }
        }
        DocKind::Response => {
            let r = Response::from_value(v)?;
            Read {
                canonical: json!(r),
                messages: r.messages,
                tools: 0,
            }
        }
        DocKind::Request => {
            let d = RequestDocument::from_value(v)?;
            Read {
                canonical: d.to_value(),
                tools: d.request.tools.len(),
                messages: d.request.messages,
            }
        }
        DocKind::Turn => {
            let t = Turn::from_value(v)?;
            Read {
                canonical: json!(t),
                messages: t.messages,
                tools: 0,
            }
        }
        DocKind::Decision => just(json!(Decision::from_value(v)?)),
        DocKind::Block => just(json!(Block::from_value(v)?)),
        DocKind::ToolSpec => {
            let t = ToolSpec::from_value(v)?;
            Read {
                canonical: json!(t),
                messages: Vec::new(),
                tools: 1,
            }
        }
    })
}

/// Validates `text` (from `file`); prints the result; exit 1 when invalid.
pub fn validate(
    file: &str,
    text: &str,
    kind: Option<DocKind>,
    as_json: bool,
    canonical: bool,
) -> ExitCode {
    let result = match serde_json::from_str::<Value>(text) {
        // Let the format crate word the syntax error.
        Err(e) => Err(parlance_format::parse_conversation(text)
            .err()
            .unwrap_or_else(|| FormatError {
                path: String::new(),
                message: format!("invalid JSON: {e}"),
            })),
        Ok(v) => {
            let kind = kind.unwrap_or_else(|| DocKind::detect(&v));
            read(kind, &v).map(|r| (kind, r))
        }
    };
    match result {
        Ok((kind, r)) => {
            let calls: usize = r.messages.iter().map(|m| m.tool_calls().count()).sum();
            let results: usize = r
                .messages
                .iter()
                .flat_map(|m| &m.content)
                .filter(|b| matches!(b, Block::ToolResult { .. }))
                .count();
            if as_json {
                let mut out = json!({
                    "valid": true, "kind": kind.name(), "messages": r.messages.len(),
                    "tool_calls": calls, "tool_results": results, "tools": r.tools,
                });
                if canonical {
                    // The value itself: no text to read back.
                    out["canonical"] = r.canonical;
                }
                println!("{}", serde_json::to_string_pretty(&out).expect("json"));
            } else {
                println!(
                    "{file}: valid {}: {} message(s) ({}), {calls} tool call(s), {results} tool result(s), {} tool(s)",
                    kind.name(),
                    r.messages.len(),
                    role_summary(&r.messages),
                    r.tools
                );
                if canonical {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&r.canonical).expect("json")
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            if as_json {
                let out =
                    json!({"valid": false, "errors": [{"path": e.path, "message": e.message}]});
                println!("{}", serde_json::to_string_pretty(&out).expect("json"));
            } else {
                eprintln!("{file}: {e}");
            }
            ExitCode::from(1)
        }
    }
}

fn role_summary(messages: &[Message]) -> String {
    let mut parts = Vec::new();
    for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
        let n = messages.iter().filter(|m| m.role == role).count();
        if n > 0 {
            parts.push(format!("{n} {}", role.as_str()));
        }
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}
