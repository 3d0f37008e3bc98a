//! Every canonical document Parlance reads or writes, by kind: one reader
//! for `parlance validate` and for the Python and Node packages'
//! `format.validate` / `canonical` / `dumps` / `loads`, so that the three
//! recognise the same kinds from the same fields and give the same errors.
//!
//! ```
//! use parlance_model::documents::{DocKind, parse_document};
//!
//! let doc = parse_document(None, r#"{"role": "user", "content": "Hi"}"#).unwrap();
//! assert_eq!(doc.kind, DocKind::Message);
//! assert_eq!(doc.canonical, r#"{"role":"user","content":[{"type":"text","text":"Hi"}]}"#);
//! ```

use parlance_format::{
    Block, Conversation, Decision, FormatError, Message, Response, ToolSpec, Turn, to_json,
};
use serde_json::Value;

use crate::RequestDocument;

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// Every kind, in the order they are listed to users.
    pub const ALL: [DocKind; 8] = [
        DocKind::Conversation,
        DocKind::Message,
        DocKind::Response,
        DocKind::Request,
        DocKind::Decision,
        DocKind::Block,
        DocKind::ToolSpec,
        DocKind::Turn,
    ];

    /// The kind's name as the packages spell it (`tool_spec`).
    pub fn name(self) -> &'static str {
        match self {
            DocKind::Conversation => "conversation",
            DocKind::Message => "message",
            DocKind::Response => "response",
            DocKind::Request => "request",
            DocKind::Decision => "decision",
            DocKind::Block => "block",
            DocKind::ToolSpec => "tool_spec",
            DocKind::Turn => "turn",
        }
    }

    /// The kind for a name: `tool_spec`, `tool-spec` and `tool spec` alike.
    pub fn parse(name: &str) -> Result<DocKind, FormatError> {
        let wanted = name.replace(['-', ' '], "_");
        DocKind::ALL
            .into_iter()
            .find(|k| k.name() == wanted)
            .ok_or_else(|| FormatError {
                path: "kind".into(),
                message: format!(
                    "unknown kind {name:?} (expected one of: {})",
                    DocKind::ALL.map(DocKind::name).join(", ")
                ),
            })
    }

    /// The kind a document's fields say it is (what `parlance validate`
    /// assumes without `--kind`): `status` → response, `role` → message,
    /// `decision` → decision, `type` → block, `input_schema` → tool spec,
    /// only `messages`/`tools` (or an array) → conversation, otherwise a
    /// request document.
    pub fn detect(v: &Value) -> DocKind {
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

/// A document read.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Its kind (given, or detected).
    pub kind: DocKind,
    /// Its canonical JSON text (older shapes read into today's),
    /// byte-identical in every language.
    pub canonical: String,
    /// The messages it holds (a conversation's, a response's, a
    /// request's, a turn's; one for a message).
    pub messages: Vec<Message>,
    /// How many tools it offers (a conversation's or request's; 1 for a
    /// tool spec).
    pub tools: usize,
}

/// Reads `v` as a `kind` document, or as the kind its fields say.
pub fn read_document(kind: Option<DocKind>, v: &Value) -> Result<Document, FormatError> {
    let kind = kind.unwrap_or_else(|| DocKind::detect(v));
    let doc = |canonical: String, messages: Vec<Message>, tools: usize| Document {
        kind,
        canonical,
        messages,
        tools,
    };
    Ok(match kind {
        DocKind::Conversation => {
            let c = Conversation::from_value(v)?;
            let canonical = if v.is_array() {
                to_json(&c.messages)
            } else {
                to_json(&c)
            };
            doc(canonical, c.messages, c.tools.len())
        }
        DocKind::Message => {
            let m = Message::from_value(v)?;
            doc(to_json(&m), vec![m], 0)
        }
        DocKind::Response => {
            let r = Response::from_value(v)?;
            let canonical = to_json(&r);
            doc(canonical, r.messages, 0)
        }
        DocKind::Request => {
            let d = RequestDocument::from_value(v)?;
            let canonical = to_json(&d.to_value());
            let tools = d.request.tools.len();
            doc(canonical, d.request.messages, tools)
        }
        DocKind::Turn => {
            let t = Turn::from_value(v)?;
            let canonical = to_json(&t);
            doc(canonical, t.messages, 0)
        }
        DocKind::Decision => doc(to_json(&Decision::from_value(v)?), Vec::new(), 0),
        DocKind::Block => doc(to_json(&Block::from_value(v)?), Vec::new(), 0),
        DocKind::ToolSpec => doc(to_json(&ToolSpec::from_value(v)?), Vec::new(), 1),
    })
}

/// Reads JSON text as a `kind` document, or as the kind its fields say;
/// a syntax error names its line and column
/// (`(root): invalid JSON at line 1 column 17: …`).
pub fn parse_document(kind: Option<DocKind>, text: &str) -> Result<Document, FormatError> {
    read_document(kind, &parlance_format::parse_json(text)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_are_recognised_from_their_fields() {
        let cases = [
            (json!([]), DocKind::Conversation),
            (json!({"messages": []}), DocKind::Conversation),
            (
                json!({"status": "completed", "messages": []}),
                DocKind::Response,
            ),
            (json!({"role": "user", "content": []}), DocKind::Message),
            (
                json!({"decision": "approved", "tool_call_id": "c"}),
                DocKind::Decision,
            ),
            (json!({"type": "text", "text": "x"}), DocKind::Block),
            (json!({"name": "t", "input_schema": {}}), DocKind::ToolSpec),
            (json!({"model": "m", "messages": []}), DocKind::Request),
        ];
        for (v, kind) in cases {
            assert_eq!(DocKind::detect(&v), kind, "{v}");
        }
    }

    #[test]
    fn names_parse_in_every_spelling_and_an_unknown_one_is_named() {
        assert_eq!(DocKind::parse("tool-spec").unwrap(), DocKind::ToolSpec);
        assert_eq!(DocKind::parse("tool_spec").unwrap(), DocKind::ToolSpec);
        let e = DocKind::parse("nosuch").unwrap_err();
        assert_eq!(
            e.to_string(),
            "kind: unknown kind \"nosuch\" (expected one of: conversation, message, response, request, decision, block, tool_spec, turn)"
        );
    }

    #[test]
    fn json_syntax_errors_name_line_and_column() {
        let e = parse_document(None, "[{\"role\": \"user\",").unwrap_err();
        assert_eq!(
            e.to_string(),
            "(root): invalid JSON at line 1 column 17: EOF while parsing a value"
        );
    }
}
