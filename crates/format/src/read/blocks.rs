//! Content blocks: each type with its fields (and the older seed shapes:
//! flat `tool_call` with `args`, `reasoning` blocks), and which blocks each
//! role may hold.

use serde_json::Value;

use super::json::{Obj, Path, R, as_array, as_string, describe};
use crate::{
    Approval, ApprovalRequest, Block, CachePoint, DecisionKind, FormatError, Media, Role, Text,
    Thinking, ToolCall, ToolResult, ToolStatus,
};

pub(super) const BLOCK_TYPES: &str = "text, thinking, image, audio, file, json, tool_call, tool_result, approval_request, cache_point";

/// Where a block sits, which decides what it may be.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Place {
    Message(Role),
    ToolResultContent,
    /// A block read on its own.
    Any,
}

pub(super) fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o']) {
        "an"
    } else {
        "a"
    }
}

pub(super) fn block(v: &Value, path: &Path, place: Place) -> R<Block> {
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
            text_rules(&t, path)?;
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
                json: obj.req_free("json")?,
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
                &["tool_call_id", "name", "arguments", "digest", "run_id"],
                "an approval request",
            )?;
            Block::ApprovalRequest {
                approval_request: ApprovalRequest {
                    tool_call_id: inner.req_id("tool_call_id")?,
                    name: inner.req_id("name")?,
                    arguments: inner.req_free("arguments")?,
                    digest: inner.req_id("digest")?,
                    run_id: inner.opt_str("run_id")?,
                },
            }
        }
        "cache_point" => {
            obj.only(&["type", "cache_point"], "a cache_point block")?;
            Block::CachePoint {
                cache_point: cache_point(obj.req("cache_point")?, &path.key("cache_point"))?,
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

/// A cache point's payload: `{"ttl"?: "5m" | "1h"}`.
pub(super) fn cache_point(v: &Value, path: &Path) -> R<CachePoint> {
    let obj = Obj::new(v, path, "a cache point")?;
    obj.only(&["ttl"], "a cache point")?;
    let point = CachePoint {
        ttl: obj.opt_str("ttl")?,
    };
    cache_point_rules(&point, path)?;
    Ok(point)
}

// The rules below are the reader's checks past each field's JSON type;
// the reader and `Message::check` (typed values) share them.

pub(super) fn cache_point_rules(point: &CachePoint, path: &Path) -> R<()> {
    match &point.ttl {
        Some(t) if !CachePoint::TTLS.contains(&t.as_str()) => {
            Err(path.key("ttl").err(format!("expected 5m or 1h, got {t:?}")))
        }
        _ => Ok(()),
    }
}

pub(super) fn text_rules(t: &Text, path: &Path) -> R<()> {
    if (t.signature.is_some() || t.item_id.is_some()) && t.provider.is_none() {
        return Err(path
            .key("provider")
            .err("required when a text block carries signature or item_id"));
    }
    Ok(())
}

pub(super) fn thinking_rules(t: &Thinking, path: &Path) -> R<()> {
    if t.has_opaque_data() && t.provider.is_none() {
        return Err(path.key("provider").err(
            "required when a thinking block carries signature, redacted, encrypted_content or item_id",
        ));
    }
    Ok(())
}

pub(super) fn media_rules(m: &Media, path: &Path) -> R<()> {
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
    Ok(())
}

pub(super) fn tool_call_rules(call: &ToolCall, path: &Path) -> R<()> {
    if (call.signature.is_some() || call.item_id.is_some()) && call.provider.is_none() {
        return Err(path
            .key("provider")
            .err("required when a tool call carries signature or item_id"));
    }
    Ok(())
}

/// A breakpoint ends a prefix: it follows a block that is not one.
pub(super) fn cache_point_position(block: &Block, before: Option<&Block>, path: &Path) -> R<()> {
    if matches!(block, Block::CachePoint { .. })
        && matches!(before, None | Some(Block::CachePoint { .. }))
    {
        return Err(path.err("a cache_point must follow the block that ends the cached prefix"));
    }
    Ok(())
}

/// Which blocks each role (and a tool result's content) may hold.
pub(super) fn check_place(block: &Block, path: &Path, place: Place) -> R<()> {
    let ty = block.type_name();
    // A breakpoint may end any prefix (`content` checks what it follows).
    let ok = matches!(block, Block::CachePoint { .. })
        || match place {
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
            "a tool result's content holds only text, json, image, audio, file and cache_point blocks"
        }
        Place::Message(Role::System) => "system messages hold only text and cache_point blocks",
        Place::Message(Role::User) => {
            "user messages hold only text, json, image, audio, file and cache_point blocks"
        }
        Place::Message(Role::Assistant) => {
            "tool_result and approval_request blocks belong in tool messages"
        }
        Place::Message(Role::Tool) => {
            "tool messages hold only tool_result, approval_request and cache_point blocks"
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

pub(super) fn thinking(obj: &Obj, ty: &str) -> R<Block> {
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
    thinking_rules(&t, obj.path)?;
    Ok(Block::Thinking(t))
}

pub(super) fn media(v: &Value, path: &Path, ty: &str) -> R<Media> {
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
    media_rules(&m, path)?;
    Ok(m)
}

pub(super) fn tool_call_block(obj: &Obj) -> R<ToolCall> {
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

pub(super) fn tool_call_fields(obj: &Obj, args_key: &'static str) -> R<ToolCall> {
    let call = ToolCall {
        id: obj.req_id("id")?,
        name: obj.req_id("name")?,
        arguments: obj.req_free(args_key)?,
        raw_arguments: obj.opt_str("raw_arguments")?,
        signature: obj.opt_str("signature")?,
        item_id: obj.opt_str("item_id")?,
        provider: obj.opt_str("provider")?,
    };
    tool_call_rules(&call, obj.path)?;
    Ok(call)
}

pub(super) const RESULT_FIELDS: [&str; 6] = [
    "tool_call_id",
    "name",
    "content",
    "status",
    "artifact",
    "approval",
];

pub(super) fn tool_result_block(obj: &Obj) -> R<ToolResult> {
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

pub(super) fn tool_result_fields(obj: &Obj) -> R<ToolResult> {
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
        artifact: obj.get_free("artifact")?,
        approval,
    })
}

/// A content list; a bare string is read as one text block.
pub(super) fn content(v: &Value, path: &Path, place: Place) -> R<Vec<Block>> {
    if let Value::String(s) = v {
        let block = Block::text(s.clone());
        check_place(&block, &path.index(0), place)?;
        return Ok(vec![block]);
    }
    let items = as_array(v, path, "a list of content blocks or a string")?;
    let mut out: Vec<Block> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let b = block(item, &path.index(i), place)?;
        cache_point_position(&b, out.last(), &path.index(i))?;
        out.push(b);
    }
    Ok(out)
}

impl Block {
    /// Reads one content block from JSON (no role checks: it stands alone).
    pub fn from_value(value: &Value) -> Result<Block, FormatError> {
        block(value, &Path::Root, Place::Any)
    }
}

pub(super) fn decision_kind(v: &Value, path: &Path) -> R<DecisionKind> {
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

pub(super) fn approval(v: &Value, path: &Path) -> R<Approval> {
    let obj = Obj::new(v, path, "an approval record")?;
    obj.only(&["decision", "arguments", "reason"], "an approval record")?;
    Ok(Approval {
        decision: decision_kind(obj.req("decision")?, &path.key("decision"))?,
        arguments: obj.get_free("arguments")?,
        reason: obj.opt_str("reason")?,
    })
}
