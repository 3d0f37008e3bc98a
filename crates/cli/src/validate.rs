//! `parlance validate`: checks any canonical document Parlance reads or
//! writes (a conversation, a message, a response, a request document, a
//! decision, a content block, a tool spec, a turn), named by `--kind` or
//! recognised from its fields, and names the JSON path of any error.

use std::process::ExitCode;

use parlance_format::{Block, Message, Role};
use parlance_model::documents::{self, Document};
use serde_json::{Value, json};

/// What a document is (`--kind`; the model crate's [`documents::DocKind`]).
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

impl From<DocKind> for documents::DocKind {
    fn from(k: DocKind) -> Self {
        match k {
            DocKind::Conversation => documents::DocKind::Conversation,
            DocKind::Message => documents::DocKind::Message,
            DocKind::Response => documents::DocKind::Response,
            DocKind::Request => documents::DocKind::Request,
            DocKind::Decision => documents::DocKind::Decision,
            DocKind::Block => documents::DocKind::Block,
            DocKind::ToolSpec => documents::DocKind::ToolSpec,
            DocKind::Turn => documents::DocKind::Turn,
        }
    }
}

/// How the summary names a kind (`tool spec`).
fn label(kind: documents::DocKind) -> String {
    kind.name().replace('_', " ")
}

/// Validates `text` (from `file`); prints the result; exit 1 when invalid.
pub fn validate(
    file: &str,
    text: &str,
    kind: Option<DocKind>,
    as_json: bool,
    canonical: bool,
) -> ExitCode {
    match documents::parse_document(kind.map(Into::into), text) {
        Ok(r) => {
            let kind = r.kind;
            let calls: usize = r.messages.iter().map(|m| m.tool_calls().count()).sum();
            let results: usize = r
                .messages
                .iter()
                .flat_map(|m| &m.content)
                .filter(|b| matches!(b, Block::ToolResult { .. }))
                .count();
            if as_json {
                let mut out = json!({
                    "valid": true, "kind": label(kind), "messages": r.messages.len(),
                    "tool_calls": calls, "tool_results": results, "tools": r.tools,
                });
                if canonical {
                    // The value itself: no text to read back.
                    out["canonical"] = canonical_value(&r);
                }
                println!("{}", serde_json::to_string_pretty(&out).expect("json"));
            } else {
                println!(
                    "{file}: valid {}: {} message(s) ({}), {calls} tool call(s), {results} tool result(s), {} tool(s)",
                    label(kind),
                    r.messages.len(),
                    role_summary(&r.messages),
                    r.tools
                );
                if canonical {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&canonical_value(&r)).expect("json")
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

fn canonical_value(doc: &Document) -> Value {
    serde_json::from_str(&doc.canonical).expect("canonical JSON reads back")
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
