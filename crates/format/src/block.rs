use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// One content block of a message, written `{"type": T, T: payload, ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Plain text.
    Text(Text),
    /// Model reasoning, with whatever opaque data its provider needs back.
    Thinking(Thinking),
    /// An image, by URL, inline base64 data or provider file id.
    Image {
        /// Where the image is.
        image: Media,
    },
    /// Audio, by URL, inline base64 data or provider file id.
    Audio {
        /// Where the audio is.
        audio: Media,
    },
    /// A document or other file, by URL, inline base64 data or provider file id.
    File {
        /// Where the file is.
        file: Media,
    },
    /// A JSON value (structured output, a tool's structured result).
    Json {
        /// Any JSON value.
        json: Value,
    },
    /// A model's request to run a tool (assistant messages only).
    ToolCall {
        /// The call.
        tool_call: ToolCall,
    },
    /// The outcome of a tool call (tool messages only).
    ToolResult {
        /// The result.
        tool_result: ToolResult,
    },
    /// A tool call waiting for a human decision (tool messages only; never
    /// sent to a model: it is replaced by the call's result once decided).
    ApprovalRequest {
        /// The pending call.
        approval_request: ApprovalRequest,
    },
    /// A prompt-cache breakpoint: the provider may cache everything up to
    /// and including the block before it (Anthropic `cache_control`, OpenAI
    /// `prompt_cache_breakpoint`, Bedrock `cachePoint`). A hint: where the
    /// provider has no breakpoints it is dropped with a warning.
    CachePoint {
        /// How long the cached prefix should live.
        cache_point: CachePoint,
    },
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text(Text {
            text: text.into(),
            signature: None,
            item_id: None,
            provider: None,
        })
    }

    /// A plain thinking block (no opaque data).
    pub fn thinking(thinking: impl Into<String>) -> Block {
        Block::Thinking(Thinking {
            thinking: thinking.into(),
            ..Thinking::default()
        })
    }

    /// A JSON block.
    pub fn json(value: Value) -> Block {
        Block::Json { json: value }
    }

    /// A tool call block.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Block {
        Block::ToolCall {
            tool_call: ToolCall::new(id, name, arguments),
        }
    }

    /// A tool result block.
    pub fn tool_result(result: ToolResult) -> Block {
        Block::ToolResult {
            tool_result: result,
        }
    }

    /// The canonical type name (`"text"`, `"tool_call"`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Block::Text(_) => "text",
            Block::Thinking(_) => "thinking",
            Block::Image { .. } => "image",
            Block::Audio { .. } => "audio",
            Block::File { .. } => "file",
            Block::Json { .. } => "json",
            Block::ToolCall { .. } => "tool_call",
            Block::ToolResult { .. } => "tool_result",
            Block::ApprovalRequest { .. } => "approval_request",
            Block::CachePoint { .. } => "cache_point",
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Block::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The call of a tool_call block.
    pub fn as_tool_call(&self) -> Option<&ToolCall> {
        match self {
            Block::ToolCall { tool_call } => Some(tool_call),
            _ => None,
        }
    }

    /// The result of a tool_result block.
    pub fn as_tool_result(&self) -> Option<&ToolResult> {
        match self {
            Block::ToolResult { tool_result } => Some(tool_result),
            _ => None,
        }
    }
}

/// A text block. `signature` and `item_id` carry opaque data some
/// providers attach to text (Gemini's `thoughtSignature`, OpenAI Responses'
/// message item id), with the `provider` that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Text {
    /// The text.
    pub text: String,
    /// Opaque signature the provider needs back unchanged (Gemini `thoughtSignature`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The provider's id for the output item holding this text (OpenAI
    /// Responses `msg_...`); consecutive blocks with the same id are parts
    /// of one item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// Which provider produced `signature` / `item_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// Reasoning. Besides the readable text it holds, byte for byte, whatever
/// the producing provider needs back: Anthropic's `signature` and redacted
/// `data`, OpenAI Responses' `encrypted_content` and reasoning item id,
/// Gemini's `thoughtSignature`. Opaque fields are only ever sent back to
/// the `provider` that produced them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Thinking {
    /// The readable reasoning (or reasoning summary); empty when the provider returned none.
    pub thinking: String,
    /// Opaque signature (Anthropic `signature`, Gemini `thoughtSignature`, Bedrock `signature`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Opaque redacted reasoning (Anthropic `redacted_thinking.data`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
    /// Opaque encrypted reasoning (OpenAI Responses `encrypted_content`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<String>,
    /// The provider's id for the reasoning item (OpenAI Responses `rs_...`).
    /// Consecutive blocks with the same id are parts of one item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// Which provider produced the opaque fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

impl Thinking {
    /// Whether the block carries opaque provider data (beyond readable text).
    pub fn has_opaque_data(&self) -> bool {
        self.signature.is_some()
            || self.redacted.is_some()
            || self.encrypted_content.is_some()
            || self.item_id.is_some()
    }
}

/// Where an image, audio clip or file is: exactly one of `url`, `data`
/// (base64) or `file_id`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Media {
    /// An `https:` (or `gs:`, provider-dependent) URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Inline content, standard base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// A file id from a provider's files API (see `provider`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    /// IANA media type (`image/png`, `audio/wav`, `application/pdf`); required with `data`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// A file name to show the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Image detail hint (`auto`, `low`, `high`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Which provider `file_id` belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// A model's request to run a tool.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// Unique within the conversation; the result's `tool_call_id` repeats it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model gave them (normally an object). `null`
    /// when the provider's argument text was not valid JSON (see `raw_arguments`).
    pub arguments: Value,
    /// The provider's argument text, kept only when it was not valid JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
    /// Opaque signature the provider needs back (Gemini `thoughtSignature`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The provider's own item id when it differs from `id` (OpenAI Responses `fc_...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// Which provider produced `signature` / `item_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

impl ToolCall {
    /// A call with arguments and no provider data.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            raw_arguments: None,
            signature: None,
            item_id: None,
            provider: None,
        }
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// The tool returned a value (or a reviewer answered in its place).
    #[default]
    Ok,
    /// The tool reported a `ToolError`, or no tool has that name.
    Error,
    /// The tool failed unexpectedly (an exception, an error it did not plan for, a panic).
    ToolFailed,
    /// The tool did not finish in time and was cancelled.
    Timeout,
    /// A reviewer rejected the call; it did not run.
    Rejected,
    /// The arguments did not satisfy the tool's schema; it did not run.
    InvalidArguments,
    /// The run stopped (crash, shutdown) before the call finished.
    Interrupted,
}

impl ToolStatus {
    /// All values, in documentation order.
    pub const ALL: [ToolStatus; 7] = [
        ToolStatus::Ok,
        ToolStatus::Error,
        ToolStatus::ToolFailed,
        ToolStatus::Timeout,
        ToolStatus::Rejected,
        ToolStatus::InvalidArguments,
        ToolStatus::Interrupted,
    ];

    /// Whether this is `ok`.
    pub fn is_ok(&self) -> bool {
        *self == ToolStatus::Ok
    }

    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Ok => "ok",
            ToolStatus::Error => "error",
            ToolStatus::ToolFailed => "tool_failed",
            ToolStatus::Timeout => "timeout",
            ToolStatus::Rejected => "rejected",
            ToolStatus::InvalidArguments => "invalid_arguments",
            ToolStatus::Interrupted => "interrupted",
        }
    }

    /// Parses the canonical spelling.
    pub fn parse(s: &str) -> Option<ToolStatus> {
        ToolStatus::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// The outcome of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolResult {
    /// The `id` of the call this answers.
    pub tool_call_id: String,
    /// The tool's name (some providers need it beside the id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the model reads: text, JSON, images...
    pub content: Vec<Block>,
    /// How the call ended; omitted when `ok`.
    #[serde(default, skip_serializing_if = "ToolStatus::is_ok")]
    pub status: ToolStatus,
    /// Detail kept with the thread but never sent to any model (for
    /// example the hidden exception of a `return_generic` failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Value>,
    /// The human decision this call went through, when it needed approval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<crate::Approval>,
}

impl ToolResult {
    /// A result with the given status and one text block.
    pub fn text(
        tool_call_id: impl Into<String>,
        status: ToolStatus,
        text: impl Into<String>,
    ) -> Self {
        ToolResult {
            tool_call_id: tool_call_id.into(),
            name: None,
            content: vec![Block::text(text)],
            status,
            artifact: None,
            approval: None,
        }
    }

    /// Whether the model should read this as a failure (anything but `ok`).
    pub fn is_error(&self) -> bool {
        !self.status.is_ok()
    }
}

/// A prompt-cache breakpoint (see [`Block::CachePoint`]; a tool spec
/// carries one as `cache_point` to end the cached prefix after itself).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CachePoint {
    /// How long the cached prefix should live: `5m` or `1h` (the lifetimes
    /// providers offer per breakpoint). Absent: the provider's default. A
    /// provider that cannot give it says so in a warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["5m", "1h", null]))]
    pub ttl: Option<String>,
}

impl CachePoint {
    /// The lifetimes a cache point may ask for.
    pub const TTLS: [&'static str; 2] = ["5m", "1h"];
}

/// A tool call waiting for a reviewer's decision.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRequest {
    /// The `id` of the waiting call.
    pub tool_call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments the model asked for (already validated).
    pub arguments: Value,
    /// `sha256:` digest of the tool name and arguments; a decision must repeat it.
    pub digest: String,
    /// The run this call waits in, when it is another run than the one
    /// listing it: a sub-agent's run (an agent used as a tool). A
    /// decision on it is taken there — through the parent's run, or the
    /// sub-agent's own. On the parent's call to the sub-agent, the run it
    /// waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

impl ApprovalRequest {
    /// A request for `call`, with its digest.
    pub fn for_call(call: &ToolCall) -> ApprovalRequest {
        ApprovalRequest {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            digest: approval_digest(&call.id, &call.name, &call.arguments),
            run_id: None,
        }
    }
}

/// The digest a decision must repeat: `sha256:` + hex of the call id, the
/// tool name and the arguments with object keys sorted (so that any
/// language's JSON writer gives the same digest).
pub fn approval_digest(call_id: &str, name: &str, arguments: &Value) -> String {
    use sha2::{Digest, Sha256};
    let mut text = String::new();
    text.push_str(call_id);
    text.push('\0');
    text.push_str(name);
    text.push('\0');
    sorted_json(arguments, &mut text);
    format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

fn sorted_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                sorted_json(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                sorted_json(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_approval_digest_ignores_key_order_but_not_values_ids_or_names() {
        let a = approval_digest(
            "c1",
            "refund",
            &json!({"amount": 20, "order": {"id": "A-1", "lines": [1, 2]}}),
        );
        let same = approval_digest(
            "c1",
            "refund",
            &json!({"order": {"lines": [1, 2], "id": "A-1"}, "amount": 20}),
        );
        assert_eq!(a, same, "any language's JSON writer gives the same digest");
        assert!(a.starts_with("sha256:") && a.len() == 7 + 64);
        assert_ne!(
            a,
            approval_digest(
                "c1",
                "refund",
                &json!({"amount": 21, "order": {"id": "A-1", "lines": [1, 2]}})
            )
        );
        assert_ne!(
            a,
            approval_digest(
                "c1",
                "refund",
                &json!({"amount": 20, "order": {"id": "A-1", "lines": [2, 1]}})
            )
        );
        assert_ne!(
            a,
            approval_digest(
                "c2",
                "refund",
                &json!({"amount": 20, "order": {"id": "A-1", "lines": [1, 2]}})
            )
        );
        assert_ne!(
            a,
            approval_digest(
                "c1",
                "charge",
                &json!({"amount": 20, "order": {"id": "A-1", "lines": [1, 2]}})
            )
        );
    }
}
