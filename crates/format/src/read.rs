//! The strict reader: JSON value → canonical types, with path-named errors.
//!
//! Written by hand rather than derived so that every error names the JSON
//! path and what was expected, and so that the older seed shapes (flat
//! `tool_call` with `args`, `reasoning` blocks) are read into canonical form.
//! The path is a chain of stack frames, rendered only when an error occurs.

use serde_json::{Map, Value};

use crate::{
    Approval, ApprovalRequest, Block, Decision, DecisionKind, FinishReason, FormatError, Media,
    Message, Response, Role, RunError, RunStatus, Text, Thinking, ToolCall, ToolResult, ToolSpec,
    ToolStatus, Turn, Usage,
};

/// A JSON path, as a chain of frames on the stack.
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    pub(crate) fn root() -> Path<'static> {
        Path::Root
    }

    fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    fn index(&'a self, i: usize) -> Path<'a> {
        Path::Index(self, i)
    }

    fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Key(parent, key) => {
                parent.write(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Path::Index(parent, i) => {
                parent.write(out);
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }

    fn err(&self, message: impl Into<String>) -> FormatError {
        FormatError::new(&self.render(), message)
    }
}

type R<T> = Result<T, FormatError>;

/// Parses JSON text, turning a syntax error into a [`FormatError`].
pub(crate) fn parse_json(text: &str) -> R<Value> {
    serde_json::from_str(text).map_err(|e| {
        FormatError::new(
            "",
            format!(
                "invalid JSON at line {} column {}: {}",
                e.line(),
                e.column(),
                strip_position(&e.to_string())
            ),
        )
    })
}

fn strip_position(msg: &str) -> &str {
    msg.find(" at line ").map_or(msg, |i| &msg[..i])
}

/// A short description of a JSON value for error messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.chars().count() > 40 => {
            let short: String = s.chars().take(40).collect();
            format!("string \"{short}…\"")
        }
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// An object being read: checks for unknown keys up front.
struct Obj<'v, 'p> {
    map: &'v Map<String, Value>,
    path: &'p Path<'p>,
}

impl<'v, 'p> Obj<'v, 'p> {
    fn new(v: &'v Value, path: &'p Path<'p>, what: &str) -> R<Self> {
        match v {
            Value::Object(map) => Ok(Obj { map, path }),
            other => Err(path.err(format!(
                "expected {what} (an object), got {}",
                describe(other)
            ))),
        }
    }

    /// Refuses keys outside `allowed`, naming the first one found.
    fn only(&self, allowed: &[&str], what: &str) -> R<()> {
        for key in self.map.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(self.path.key(key).err(format!(
                    "unknown field in {what} (expected one of: {})",
                    allowed.join(", ")
                )));
            }
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Option<&'v Value> {
        self.map.get(key)
    }

    /// An optional field: missing and `null` both mean absent.
    fn opt(&self, key: &str) -> Option<&'v Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    fn req(&self, key: &'p str) -> R<&'v Value> {
        self.get(key)
            .ok_or_else(|| self.path.key(key).err("required field missing"))
    }

    fn req_str(&self, key: &'p str) -> R<String> {
        let v = self.req(key)?;
        as_string(v, &self.path.key(key))
    }

    fn req_id(&self, key: &'p str) -> R<String> {
        let s = self.req_str(key)?;
        if s.is_empty() {
            return Err(self.path.key(key).err("must not be empty"));
        }
        Ok(s)
    }

    fn opt_str(&self, key: &'p str) -> R<Option<String>> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => as_string(v, &self.path.key(key)).map(Some),
        }
    }

    fn opt_u64(&self, key: &'p str) -> R<Option<u64>> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                self.path.key(key).err(format!(
                    "expected a non-negative integer, got {}",
                    describe(v)
                ))
            }),
        }
    }
}

fn as_string(v: &Value, path: &Path) -> R<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        other => Err(path.err(format!("expected a string, got {}", describe(other)))),
    }
}

fn as_array<'v>(v: &'v Value, path: &Path, what: &str) -> R<&'v Vec<Value>> {
    match v {
        Value::Array(a) => Ok(a),
        other => Err(path.err(format!(
            "expected {what} (an array), got {}",
            describe(other)
        ))),
    }
}

const BLOCK_TYPES: &str =
    "text, thinking, image, audio, file, json, tool_call, tool_result, approval_request";

/// Where a block sits, which decides what it may be.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Message(Role),
    ToolResultContent,
    /// A block read on its own.
    Any,
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o']) {
        "an"
    } else {
        "a"
    }
}

fn block(v: &Value, path: &Path, place: Place) -> R<Block> {
    let obj = Obj::new(v, path, "a content block")?;
    let ty_val = obj.req("type")?;
    let ty = match ty_val {
        Value::String(s) => s.as_str(),
        other => {
            return Err(path
                .key("type")
                .err(format!("expected a string, got {}", describe(other))));
        }
    };
    let block = match ty {
        "text" => {
            obj.only(
                &["type", "text", "signature", "item_id", "provider"],
                "a text block",
            )?;
            let t = Text {
                text: obj.req_str("text")?,
                signature: obj.opt_str("signature")?,
                item_id: obj.opt_str("item_id")?,
                provider: obj.opt_str("provider")?,
            };
            if (t.signature.is_some() || t.item_id.is_some()) && t.provider.is_none() {
                return Err(path
                    .key("provider")
                    .err("required when a text block carries signature or item_id"));
            }
            Block::Text(t)
        }
        "thinking" | "reasoning" => thinking(&obj, ty)?,
        "image" | "audio" | "file" => {
            obj.only(&["type", ty], &format!("{} {ty} block", article(ty)))?;
            let media = media(obj.req(ty)?, &path.key(ty), ty)?;
            match ty {
                "image" => Block::Image { image: media },
                "audio" => Block::Audio { audio: media },
                _ => Block::File { file: media },
            }
        }
        "json" => {
            obj.only(&["type", "json"], "a json block")?;
            Block::Json {
                json: obj.req("json")?.clone(),
            }
        }
        "tool_call" => Block::ToolCall {
            tool_call: tool_call_block(&obj)?,
        },
        "tool_result" => Block::ToolResult {
            tool_result: tool_result_block(&obj)?,
        },
        "approval_request" => {
            obj.only(&["type", "approval_request"], "an approval_request block")?;
            let p = path.key("approval_request");
            let inner = Obj::new(obj.req("approval_request")?, &p, "an approval request")?;
            inner.only(
                &["tool_call_id", "name", "arguments", "digest"],
                "an approval request",
            )?;
            Block::ApprovalRequest {
                approval_request: ApprovalRequest {
                    tool_call_id: inner.req_id("tool_call_id")?,
                    name: inner.req_id("name")?,
                    arguments: inner.req("arguments")?.clone(),
                    digest: inner.req_id("digest")?,
                },
            }
        }
        other => {
            return Err(path.key("type").err(format!(
                "unknown block type {other:?} (expected one of: {BLOCK_TYPES})"
            )));
        }
    };
    check_place(&block, path, place)?;
    Ok(block)
}

/// Which blocks each role (and a tool result's content) may hold.
fn check_place(block: &Block, path: &Path, place: Place) -> R<()> {
    let ty = block.type_name();
    let ok = match place {
        Place::Any => true,
        Place::ToolResultContent => matches!(
            block,
            Block::Text(_)
                | Block::Json { .. }
                | Block::Image { .. }
                | Block::Audio { .. }
                | Block::File { .. }
        ),
        Place::Message(Role::System) => matches!(block, Block::Text(_)),
        Place::Message(Role::User) => matches!(
            block,
            Block::Text(_)
                | Block::Json { .. }
                | Block::Image { .. }
                | Block::Audio { .. }
                | Block::File { .. }
        ),
        Place::Message(Role::Assistant) => !matches!(
            block,
            Block::ToolResult { .. } | Block::ApprovalRequest { .. }
        ),
        Place::Message(Role::Tool) => matches!(
            block,
            Block::ToolResult { .. } | Block::ApprovalRequest { .. }
        ),
    };
    if ok {
        return Ok(());
    }
    let allowed = match place {
        Place::Any => "",
        Place::ToolResultContent => {
            "a tool result's content holds only text, json, image, audio and file blocks"
        }
        Place::Message(Role::System) => "system messages hold only text blocks",
        Place::Message(Role::User) => {
            "user messages hold only text, json, image, audio and file blocks"
        }
        Place::Message(Role::Assistant) => {
            "tool_result and approval_request blocks belong in tool messages"
        }
        Place::Message(Role::Tool) => {
            "tool messages hold only tool_result and approval_request blocks"
        }
    };
    let role = match place {
        Place::ToolResultContent => "a tool result".to_string(),
        Place::Message(r) => format!("{} {} message", article(r.as_str()), r.as_str()),
        Place::Any => unreachable!("every block may stand alone"),
    };
    Err(path.err(format!(
        "{} {ty} block cannot be in {role} ({allowed})",
        article(ty)
    )))
}

fn thinking(obj: &Obj, ty: &str) -> R<Block> {
    // `reasoning` is the seed's older name; its text may be under
    // `reasoning` or `text`.
    let text_key = if ty == "thinking" {
        "thinking"
    } else if obj.has("text") {
        "text"
    } else {
        "reasoning"
    };
    let allowed: &[&str] = &[
        "type",
        text_key,
        "signature",
        "redacted",
        "encrypted_content",
        "item_id",
        "provider",
    ];
    obj.only(allowed, &format!("a {ty} block"))?;
    let t = Thinking {
        thinking: obj.req_str(text_key)?,
        signature: obj.opt_str("signature")?,
        redacted: obj.opt_str("redacted")?,
        encrypted_content: obj.opt_str("encrypted_content")?,
        item_id: obj.opt_str("item_id")?,
        provider: obj.opt_str("provider")?,
    };
    if t.has_opaque_data() && t.provider.is_none() {
        return Err(obj.path.key("provider").err(
            "required when a thinking block carries signature, redacted, encrypted_content or item_id",
        ));
    }
    Ok(Block::Thinking(t))
}

fn media(v: &Value, path: &Path, ty: &str) -> R<Media> {
    let obj = Obj::new(v, path, &format!("the {ty}"))?;
    obj.only(
        &[
            "url",
            "data",
            "file_id",
            "media_type",
            "filename",
            "detail",
            "provider",
        ],
        &format!("the {ty}"),
    )?;
    let m = Media {
        url: obj.opt_str("url")?,
        data: obj.opt_str("data")?,
        file_id: obj.opt_str("file_id")?,
        media_type: obj.opt_str("media_type")?,
        filename: obj.opt_str("filename")?,
        detail: obj.opt_str("detail")?,
        provider: obj.opt_str("provider")?,
    };
    let sources = [m.url.is_some(), m.data.is_some(), m.file_id.is_some()]
        .iter()
        .filter(|x| **x)
        .count();
    if sources != 1 {
        return Err(path.err(format!(
            "expected exactly one of url, data or file_id, got {sources}"
        )));
    }
    if m.data.is_some() && m.media_type.is_none() {
        return Err(path.key("media_type").err("required with data"));
    }
    if let Some(detail) = &m.detail
        && !["auto", "low", "high"].contains(&detail.as_str())
    {
        return Err(path
            .key("detail")
            .err(format!("expected auto, low or high, got {detail:?}")));
    }
    Ok(m)
}

fn tool_call_block(obj: &Obj) -> R<ToolCall> {
    if obj.has("tool_call") {
        obj.only(&["type", "tool_call"], "a tool_call block")?;
        let p = obj.path.key("tool_call");
        let inner = Obj::new(obj.req("tool_call")?, &p, "a tool call")?;
        inner.only(
            &[
                "id",
                "name",
                "arguments",
                "raw_arguments",
                "signature",
                "item_id",
                "provider",
            ],
            "a tool call",
        )?;
        tool_call_fields(&inner, "arguments")
    } else {
        // The seed's flat shape: {"type": "tool_call", "id", "name", "args"}.
        let args_key = if obj.has("arguments") {
            "arguments"
        } else {
            "args"
        };
        obj.only(
            &[
                "type",
                "id",
                "name",
                args_key,
                "raw_arguments",
                "signature",
                "item_id",
                "provider",
            ],
            "a tool_call block",
        )?;
        tool_call_fields(obj, args_key)
    }
}

fn tool_call_fields(obj: &Obj, args_key: &'static str) -> R<ToolCall> {
    let call = ToolCall {
        id: obj.req_id("id")?,
        name: obj.req_id("name")?,
        arguments: obj.req(args_key)?.clone(),
        raw_arguments: obj.opt_str("raw_arguments")?,
        signature: obj.opt_str("signature")?,
        item_id: obj.opt_str("item_id")?,
        provider: obj.opt_str("provider")?,
    };
    if (call.signature.is_some() || call.item_id.is_some()) && call.provider.is_none() {
        return Err(obj
            .path
            .key("provider")
            .err("required when a tool call carries signature or item_id"));
    }
    Ok(call)
}

const RESULT_FIELDS: [&str; 6] = [
    "tool_call_id",
    "name",
    "content",
    "status",
    "artifact",
    "approval",
];

fn tool_result_block(obj: &Obj) -> R<ToolResult> {
    if obj.has("tool_result") {
        obj.only(&["type", "tool_result"], "a tool_result block")?;
        let p = obj.path.key("tool_result");
        let inner = Obj::new(obj.req("tool_result")?, &p, "a tool result")?;
        inner.only(&RESULT_FIELDS, "a tool result")?;
        tool_result_fields(&inner)
    } else {
        // Flat shape, by analogy with the seed's flat tool call.
        let mut allowed = vec!["type"];
        allowed.extend_from_slice(&RESULT_FIELDS);
        obj.only(&allowed, "a tool_result block")?;
        tool_result_fields(obj)
    }
}

fn tool_result_fields(obj: &Obj) -> R<ToolResult> {
    let status = match obj.opt("status") {
        None => ToolStatus::Ok,
        Some(v) => {
            let p = obj.path.key("status");
            let s = as_string(v, &p)?;
            ToolStatus::parse(&s).ok_or_else(|| {
                p.err(format!(
                    "unknown status {s:?} (expected one of: ok, error, tool_failed, timeout, rejected, invalid_arguments, interrupted)"
                ))
            })?
        }
    };
    let approval = match obj.opt("approval") {
        None => None,
        Some(v) => Some(approval(v, &obj.path.key("approval"))?),
    };
    Ok(ToolResult {
        tool_call_id: obj.req_id("tool_call_id")?,
        name: obj.opt_str("name")?,
        content: content(
            obj.req("content")?,
            &obj.path.key("content"),
            Place::ToolResultContent,
        )?,
        status,
        artifact: obj.get("artifact").cloned(),
        approval,
    })
}

/// A content list; a bare string is read as one text block.
fn content(v: &Value, path: &Path, place: Place) -> R<Vec<Block>> {
    if let Value::String(s) = v {
        let block = Block::text(s.clone());
        check_place(&block, &path.index(0), place)?;
        return Ok(vec![block]);
    }
    let items = as_array(v, path, "a list of content blocks or a string")?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.push(block(item, &path.index(i), place)?);
    }
    Ok(out)
}

fn role(v: &Value, path: &Path) -> R<Role> {
    let s = as_string(v, path)?;
    match s.as_str() {
        "system" => Ok(Role::System),
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        "tool" => Ok(Role::Tool),
        _ => Err(path.err(format!(
            "unknown role {s:?} (expected one of: system, user, assistant, tool)"
        ))),
    }
}

pub(crate) fn usage(v: &Value, path: &Path) -> R<Usage> {
    let obj = Obj::new(v, path, "usage")?;
    obj.only(
        &[
            "input_tokens",
            "output_tokens",
            "cached_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
        ],
        "usage",
    )?;
    let need = |k: &'static str| -> R<u64> {
        obj.opt_u64(k)?
            .ok_or_else(|| path.key(k).err("required field missing"))
    };
    Ok(Usage {
        input_tokens: need("input_tokens")?,
        output_tokens: need("output_tokens")?,
        cached_tokens: obj.opt_u64("cached_tokens")?.unwrap_or(0),
        cache_write_tokens: obj.opt_u64("cache_write_tokens")?,
        reasoning_tokens: obj.opt_u64("reasoning_tokens")?,
    })
}

fn finish_reason(v: &Value, path: &Path) -> R<FinishReason> {
    let s = as_string(v, path)?;
    FinishReason::parse(&s).ok_or_else(|| {
        path.err(format!(
            "unknown finish reason {s:?} (expected one of: stop, tool_calls, length, content_filter, error, other)"
        ))
    })
}

pub(crate) fn message(v: &Value, path: &Path) -> R<Message> {
    let obj = Obj::new(v, path, "a message")?;
    obj.only(
        &[
            "id",
            "role",
            "content",
            "usage",
            "finish_reason",
            "finish_reason_raw",
            "provider",
            "model",
            "metadata",
        ],
        "a message",
    )?;
    let role = role(obj.req("role")?, &path.key("role"))?;
    let content = content(
        obj.req("content")?,
        &path.key("content"),
        Place::Message(role),
    )?;
    let metadata = match obj.opt("metadata") {
        None => None,
        Some(Value::Object(m)) => Some(m.clone()),
        Some(other) => {
            return Err(path
                .key("metadata")
                .err(format!("expected an object, got {}", describe(other))));
        }
    };
    Ok(Message {
        id: obj.opt_str("id")?,
        role,
        content,
        usage: obj
            .opt("usage")
            .map(|u| usage(u, &path.key("usage")))
            .transpose()?,
        finish_reason: obj
            .opt("finish_reason")
            .map(|f| finish_reason(f, &path.key("finish_reason")))
            .transpose()?,
        finish_reason_raw: obj.opt_str("finish_reason_raw")?,
        provider: obj.opt_str("provider")?,
        model: obj.opt_str("model")?,
        metadata,
    })
}

/// Reads a list of messages (without conversation-level checks).
pub(crate) fn messages(v: &Value, path: &Path) -> R<Vec<Message>> {
    let items = as_array(v, path, "a list of messages")?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.push(message(item, &path.index(i))?);
    }
    Ok(out)
}

pub(crate) fn tool_spec(v: &Value, path: &Path) -> R<ToolSpec> {
    let obj = Obj::new(v, path, "a tool spec")?;
    obj.only(
        &["name", "description", "input_schema", "strict"],
        "a tool spec",
    )?;
    let schema = obj.req("input_schema")?;
    if !schema.is_object() {
        return Err(path.key("input_schema").err(format!(
            "expected a JSON Schema object, got {}",
            describe(schema)
        )));
    }
    Ok(ToolSpec {
        name: obj.req_id("name")?,
        description: obj.opt_str("description")?,
        input_schema: schema.clone(),
        strict: match obj.opt("strict") {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                return Err(path
                    .key("strict")
                    .err(format!("expected true or false, got {}", describe(other))));
            }
        },
    })
}

pub(crate) fn turn(v: &Value, path: &Path) -> R<Turn> {
    let obj = Obj::new(v, path, "a turn")?;
    // Any other field (a whole earlier response) is accepted and not read.
    let messages = match obj.get("messages") {
        None | Some(Value::Null) => Vec::new(),
        Some(m) => messages(m, &path.key("messages"))?,
    };
    Ok(Turn { messages })
}

fn decision_kind(v: &Value, path: &Path) -> R<DecisionKind> {
    let s = as_string(v, path)?;
    match s.as_str() {
        "approved" => Ok(DecisionKind::Approved),
        "edited" => Ok(DecisionKind::Edited),
        "rejected" => Ok(DecisionKind::Rejected),
        "answered" => Ok(DecisionKind::Answered),
        _ => Err(path.err(format!(
            "unknown decision {s:?} (expected one of: approved, edited, rejected, answered)"
        ))),
    }
}

pub(crate) fn decision(v: &Value, path: &Path) -> R<Decision> {
    let obj = Obj::new(v, path, "a decision")?;
    obj.only(
        &[
            "tool_call_id",
            "digest",
            "decision",
            "arguments",
            "reason",
            "content",
        ],
        "a decision",
    )?;
    let kind = decision_kind(obj.req("decision")?, &path.key("decision"))?;
    let arguments = obj.opt("arguments").cloned();
    let reason = obj.opt_str("reason")?;
    let content = obj
        .opt("content")
        .map(|c| content(c, &path.key("content"), Place::ToolResultContent))
        .transpose()?;
    let (needs, forbids): (&[&str], &[&str]) = match kind {
        DecisionKind::Approved => (&[], &["arguments", "reason", "content"]),
        DecisionKind::Edited => (&["arguments"], &["reason", "content"]),
        DecisionKind::Rejected => (&[], &["arguments", "content"]),
        DecisionKind::Answered => (&["content"], &["arguments", "reason"]),
    };
    for k in needs {
        if !obj.has(k) {
            return Err(path
                .key(k)
                .err(format!("required when decision is {}", kind.as_str())));
        }
    }
    for k in forbids {
        if obj.has(k) {
            return Err(path
                .key(k)
                .err(format!("not allowed when decision is {}", kind.as_str())));
        }
    }
    Ok(Decision {
        tool_call_id: obj.req_id("tool_call_id")?,
        digest: obj.req_id("digest")?,
        decision: kind,
        arguments,
        reason,
        content,
    })
}

fn approval(v: &Value, path: &Path) -> R<Approval> {
    let obj = Obj::new(v, path, "an approval record")?;
    obj.only(&["decision", "arguments", "reason"], "an approval record")?;
    Ok(Approval {
        decision: decision_kind(obj.req("decision")?, &path.key("decision"))?,
        arguments: obj.get("arguments").cloned(),
        reason: obj.opt_str("reason")?,
    })
}

fn run_status(v: &Value, path: &Path) -> R<RunStatus> {
    let s = as_string(v, path)?;
    match s.as_str() {
        "completed" => Ok(RunStatus::Completed),
        "requires_approval" => Ok(RunStatus::RequiresApproval),
        "failed" => Ok(RunStatus::Failed),
        _ => Err(path.err(format!(
            "unknown status {s:?} (expected one of: completed, requires_approval, failed)"
        ))),
    }
}

pub(crate) fn response(v: &Value, path: &Path) -> R<Response> {
    let obj = Obj::new(v, path, "a response")?;
    obj.only(
        &[
            "id",
            "thread_id",
            "status",
            "messages",
            "output",
            "usage",
            "finish_reason",
            "pending",
            "error",
        ],
        "a response",
    )?;
    let pending = match obj.opt("pending") {
        None => Vec::new(),
        Some(p) => {
            let pp = path.key("pending");
            let items = as_array(p, &pp, "a list of approval requests")?;
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let ip = pp.index(i);
                let o = Obj::new(item, &ip, "an approval request")?;
                o.only(
                    &["tool_call_id", "name", "arguments", "digest"],
                    "an approval request",
                )?;
                out.push(ApprovalRequest {
                    tool_call_id: o.req_id("tool_call_id")?,
                    name: o.req_id("name")?,
                    arguments: o.req("arguments")?.clone(),
                    digest: o.req_id("digest")?,
                });
            }
            out
        }
    };
    let error = match obj.opt("error") {
        None => None,
        Some(e) => {
            let ep = path.key("error");
            let o = Obj::new(e, &ep, "a run error")?;
            o.only(&["code", "message", "cause"], "a run error")?;
            Some(RunError {
                code: o.req_id("code")?,
                message: o.req_str("message")?,
                cause: o.get("cause").cloned(),
            })
        }
    };
    Ok(Response {
        id: obj.opt_str("id")?,
        thread_id: obj.opt_str("thread_id")?,
        status: run_status(obj.req("status")?, &path.key("status"))?,
        messages: messages(obj.req("messages")?, &path.key("messages"))?,
        output: obj.get("output").cloned().unwrap_or(Value::Null),
        usage: match obj.opt("usage") {
            None => Usage::default(),
            Some(u) => usage(u, &path.key("usage"))?,
        },
        finish_reason: obj
            .opt("finish_reason")
            .map(|f| finish_reason(f, &path.key("finish_reason")))
            .transpose()?,
        pending,
        error,
    })
}

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

fn conversation(value: &Value) -> R<Conversation> {
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

fn link(
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

impl ToolSpec {
    /// Reads a tool spec from JSON.
    pub fn from_value(value: &Value) -> Result<ToolSpec, FormatError> {
        tool_spec(value, &Path::Root)
    }
}

impl Usage {
    /// Reads usage from JSON.
    pub fn from_value(value: &Value) -> Result<Usage, FormatError> {
        usage(value, &Path::Root)
    }
}

/// Reads a list of messages from JSON, path-prefixed by `prefix`, with the
/// conversation-level link checks.
pub fn messages_from_value(value: &Value, prefix: &str) -> Result<Vec<Message>, FormatError> {
    let msgs = messages(value, &Path::Root).map_err(|e| e.under(prefix))?;
    check_links(&msgs, prefix)?;
    Ok(msgs)
}

impl Block {
    /// Reads one content block from JSON (no role checks: it stands alone).
    pub fn from_value(value: &Value) -> Result<Block, FormatError> {
        block(value, &Path::Root, Place::Any)
    }
}

impl Conversation {
    /// Reads a conversation from JSON text (see [`parse_conversation`]).
    pub fn from_json_str(text: &str) -> Result<Conversation, FormatError> {
        parse_conversation(text)
    }
}
