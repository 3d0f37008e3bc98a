//! From MCP to Parlance: a server's tool becomes a [`Tool`] (its input
//! schema validated by the engine before any call reaches the server), and
//! a `tools/call` answer becomes content blocks, a [`ToolError`] (the
//! server's `isError`) or an unexpected failure (the connection broke).

use std::sync::Arc;

use parlance_agent::{Tool, ToolContext, ToolError, ToolFailure};
use parlance_format::{Block, Media};
use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use crate::config::Settings;
use crate::link::Link;

/// The error type `tool_failed` results of MCP tools carry.
pub const FAILURE_TYPE: &str = "mcp";

/// The name the model sees: the server's, behind the prefix, with any
/// character providers refuse in a function name (`.`, `/`, spaces)
/// replaced by `_` (OpenAI and Anthropic accept `[A-Za-z0-9_-]{1,64}`).
pub(crate) fn visible_name(prefix: Option<&str>, name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    match prefix {
        Some(p) => format!("{p}_{clean}"),
        None => clean,
    }
}

/// A Parlance tool that calls `tool` on the server behind `link`.
pub(crate) fn tool(settings: &Settings, link: &Arc<Link>, tool: &rmcp::model::Tool) -> Tool {
    let remote: Arc<str> = Arc::from(tool.name.as_ref());
    let name = visible_name(settings.prefix.as_deref(), &remote);
    let description = tool
        .description
        .as_deref()
        .map(str::to_string)
        .or_else(|| tool.title.clone())
        .unwrap_or_default();
    let schema = Value::Object((*tool.input_schema).clone());
    let link = Arc::clone(link);
    let call_name = Arc::clone(&remote);
    let mut t = Tool::new(name, description, move |args: Value, ctx: ToolContext| {
        let link = Arc::clone(&link);
        let remote = Arc::clone(&call_name);
        async move { call(&link, &remote, args, &ctx).await }
    })
    .with_schema(schema);
    if let Some(d) = settings.timeout {
        t = t.timeout(d);
    }
    if settings.approval.covers(&remote) {
        t = t.needs_approval();
    }
    t
}

/// One `tools/call`. Dropping the future (the engine's timeout, a stopped
/// run) sends the server `notifications/cancelled` (rmcp does).
async fn call(
    link: &Link,
    remote: &str,
    args: Value,
    _ctx: &ToolContext,
) -> Result<Vec<Block>, ToolFailure> {
    let Value::Object(arguments) = args else {
        // MCP arguments are an object; the schema let something else through.
        return Err(ToolError::new("the arguments must be a JSON object").into());
    };
    let params = CallToolRequestParams::new(remote.to_string()).with_arguments(arguments);
    match link.peer.call_tool(params).await {
        Ok(result) => outcome(result),
        Err(e) => Err(failure(link, &e)),
    }
}

/// What a failed request becomes: always an unexpected failure, so that
/// the agent's `on_tool_exception` policy applies.
fn failure(link: &Link, e: &ServiceError) -> ToolFailure {
    let message = match e {
        ServiceError::McpError(data) => format!(
            "the MCP server {:?} answered with error {}: {}",
            link.name, data.code.0, data.message
        ),
        ServiceError::TransportClosed => {
            format!(
                "the MCP server {:?} closed the connection{}",
                link.name,
                link.stderr_tail()
            )
        }
        other => format!(
            "the MCP server {:?} could not be reached: {other}{}",
            link.name,
            link.stderr_tail()
        ),
    };
    if link.peer.is_transport_closed() {
        tracing::warn!(server = %link.name, "MCP server connection lost during a call");
    }
    ToolFailure::unexpected(FAILURE_TYPE, message)
}

/// A `tools/call` result: `isError` is the tool's own error message, for
/// the model; otherwise the content as blocks. Structured content, when
/// given, is the result (a `json` block), with the non-text blocks (the
/// text blocks repeat it as JSON text, as the specification asks servers
/// to do for older clients).
pub(crate) fn outcome(result: CallToolResult) -> Result<Vec<Block>, ToolFailure> {
    if result.is_error == Some(true) {
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| match c {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            })
            .collect();
        let message = if text.is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            text.join("\n")
        };
        return Err(ToolError::new(message).into());
    }
    let structured = result.structured_content;
    let mut blocks = Vec::with_capacity(result.content.len() + 1);
    if let Some(v) = structured.clone() {
        blocks.push(Block::json(v));
    }
    for c in result.content {
        if structured.is_some() && matches!(c, ContentBlock::Text(_)) {
            continue;
        }
        blocks.push(block(c));
    }
    Ok(blocks)
}

fn media(data: String, media_type: String) -> Media {
    Media {
        data: Some(data),
        media_type: Some(media_type),
        ..Media::default()
    }
}

fn block(c: ContentBlock) -> Block {
    match c {
        ContentBlock::Text(t) => Block::text(t.text),
        ContentBlock::Image(i) => Block::Image {
            image: media(i.data, i.mime_type),
        },
        ContentBlock::Audio(a) => Block::Audio {
            audio: media(a.data, a.mime_type),
        },
        ContentBlock::Resource(r) => match r.resource {
            ResourceContents::TextResourceContents { text, .. } => Block::text(text),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let media_type = mime_type.unwrap_or_else(|| "application/octet-stream".into());
                let filename = uri
                    .rsplit('/')
                    .next()
                    .filter(|s| !s.is_empty())
                    .map(str::to_string);
                if media_type.starts_with("image/") {
                    Block::Image {
                        image: media(blob, media_type),
                    }
                } else {
                    Block::File {
                        file: Media {
                            filename,
                            ..media(blob, media_type)
                        },
                    }
                }
            }
            // A resource kind newer than this client: kept as its JSON.
            #[allow(unreachable_patterns)]
            other => Block::json(serde_json::to_value(&other).unwrap_or(Value::Null)),
        },
        // A link is something the model may ask about, not content: said
        // in text, with what the server tells of it.
        ContentBlock::ResourceLink(r) => {
            let mut text = format!("resource {}: {}", r.name, r.uri);
            if let Some(d) = r.description {
                text.push_str(&format!(" ({d})"));
            }
            Block::text(text)
        }
        // A content kind newer than this client: kept as its JSON.
        #[allow(unreachable_patterns)]
        other => Block::json(serde_json::to_value(&other).unwrap_or(Value::Null)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn names_are_made_safe_for_every_provider() {
        assert_eq!(visible_name(None, "read_file"), "read_file");
        assert_eq!(visible_name(Some("fs"), "read.file/v2"), "fs_read_file_v2");
        assert_eq!(visible_name(None, "get-sum"), "get-sum");
    }

    #[test]
    fn content_becomes_blocks() {
        let r = result(json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBO", "mimeType": "image/png"},
            {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///r/a.pdf", "blob": "JVBE", "mimeType": "application/pdf"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b", "description": "the b file"}
        ]}));
        let blocks = outcome(result_clone(&r)).unwrap();
        let v = serde_json::to_value(&blocks).unwrap();
        assert_eq!(
            v,
            json!([
                {"type": "text", "text": "hello"},
                {"type": "image", "image": {"data": "iVBO", "media_type": "image/png"}},
                {"type": "audio", "audio": {"data": "UklG", "media_type": "audio/wav"}},
                {"type": "text", "text": "inside"},
                {"type": "file", "file": {"data": "JVBE", "media_type": "application/pdf", "filename": "a.pdf"}},
                {"type": "text", "text": "resource b: file:///b (the b file)"}
            ])
        );
    }

    fn result_clone(r: &CallToolResult) -> CallToolResult {
        r.clone()
    }

    #[test]
    fn structured_content_is_the_result_and_its_text_copy_is_dropped() {
        let r = result(json!({
            "content": [{"type": "text", "text": "{\"t\": 21}"}, {"type": "image", "data": "iVBO", "mimeType": "image/png"}],
            "structuredContent": {"t": 21}
        }));
        let v = serde_json::to_value(outcome(r).unwrap()).unwrap();
        assert_eq!(
            v,
            json!([{"type": "json", "json": {"t": 21}}, {"type": "image", "image": {"data": "iVBO", "media_type": "image/png"}}])
        );
    }

    #[test]
    fn is_error_is_a_tool_error_for_the_model() {
        let r =
            result(json!({"content": [{"type": "text", "text": "no such city"}], "isError": true}));
        assert_eq!(
            outcome(r).unwrap_err(),
            ToolFailure::Tool(ToolError::new("no such city"))
        );
        let r = result(json!({"content": [], "isError": true}));
        assert_eq!(
            outcome(r).unwrap_err(),
            ToolFailure::Tool(ToolError::new(
                "the tool reported an error without a message"
            ))
        );
    }
}
