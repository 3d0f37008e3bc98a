//! Canonical request → Converse request body.
//!
//! The model id is not in the body (it is the URL's `{modelId}`). Content
//! blocks are unions (`{"text": ...}`, `{"toolUse": {...}}`); a cache point
//! is a block of its own (`{"cachePoint": {"type": "default"}}`) where the
//! canonical one is. Reasoning is sent back only when Bedrock produced it,
//! byte-exact and in place.

use parlance_format::{Block, CachePoint, Media, Message, Role, Thinking};
use parlance_model::{Effort, ModelError, ModelRequest, ToolChoice};
use serde_json::{Map, Value, json};

use super::{NAME, PROVIDER};
use crate::wire::{Encoded, at, is_own, json_text, media_type, merge_extra, unsupported, wire_id};

fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')
}

/// `toolUseId` must match `[a-zA-Z0-9_.:-]+`, 1 to 64 characters.
pub(crate) fn tool_id(id: &str) -> String {
    wire_id(id, 64, id_char).into_owned()
}

/// Image formats by media type (`ImageFormat`).
pub(crate) const IMAGE_FORMATS: [(&str, &str); 4] = [
    ("png", "image/png"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
];

/// Document formats by media type (`DocumentFormat`).
pub(crate) const DOCUMENT_FORMATS: [(&str, &str); 9] = [
    ("pdf", "application/pdf"),
    ("csv", "text/csv"),
    ("doc", "application/msword"),
    (
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    ("xls", "application/vnd.ms-excel"),
    (
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    ("html", "text/html"),
    ("txt", "text/plain"),
    ("md", "text/markdown"),
];

/// A document's `name` may hold only letters, digits, single whitespace,
/// hyphens, parentheses and square brackets (the service model's
/// documentation); anything else becomes a hyphen.
pub(crate) fn document_name(filename: Option<&str>) -> String {
    let raw = filename.unwrap_or("document");
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = if c.is_alphanumeric() || matches!(c, '-' | '(' | ')' | '[' | ']') {
            c
        } else if c.is_whitespace() {
            ' '
        } else {
            '-'
        };
        if c == ' ' && out.ends_with(' ') {
            continue;
        }
        out.push(c);
    }
    let out: String = out.trim().chars().take(200).collect();
    if out.is_empty() {
        "document".into()
    } else {
        out
    }
}

fn format_of(
    where_: &str,
    m: &Media,
    table: &[(&'static str, &str)],
    what: &str,
) -> Result<&'static str, ModelError> {
    let ty = media_type(where_, m)?;
    table
        .iter()
        .find(|(_, t)| *t == ty)
        .map(|(f, _)| *f)
        .ok_or_else(|| {
            unsupported(format!(
                "{where_}: Bedrock takes no {what} of type {ty} (it takes {})",
                table.iter().map(|(_, t)| *t).collect::<Vec<_>>().join(", ")
            ))
        })
}

fn source(where_: &str, m: &Media) -> Result<Value, ModelError> {
    if let Some(data) = &m.data {
        Ok(json!({"bytes": data}))
    } else if let Some(url) = m.url.as_deref().filter(|u| u.starts_with("s3://")) {
        Ok(json!({"s3Location": {"uri": url}}))
    } else {
        Err(unsupported(format!(
            "{where_}: Bedrock takes media as inline data or an s3:// location, not a web URL or another provider's file id"
        )))
    }
}

fn media_block(where_: &str, b: &Block) -> Result<Value, ModelError> {
    Ok(match b {
        Block::Image { image } => json!({"image": {
            "format": format_of(where_, image, &IMAGE_FORMATS, "image")?,
            "source": source(where_, image)?,
        }}),
        Block::File { file } => json!({"document": {
            "format": format_of(where_, file, &DOCUMENT_FORMATS, "document")?,
            "name": document_name(file.filename.as_deref()),
            "source": source(where_, file)?,
        }}),
        other => {
            return Err(unsupported(format!(
                "{where_}: Bedrock Converse cannot take {} blocks here",
                other.type_name()
            )));
        }
    })
}

/// `{"cachePoint": ...}`; a TTL Bedrock does not know (it knows 5m and 1h)
/// is dropped with a warning.
fn cache_point(c: &CachePoint, where_: &str, warnings: &mut Vec<String>) -> Value {
    let mut cp = json!({"type": "default"});
    match c.ttl.as_deref() {
        None => {}
        Some(ttl @ ("5m" | "1h")) => cp["ttl"] = json!(ttl),
        Some(other) => warnings.push(format!(
            "{where_}: cache point ttl {other:?} dropped (Bedrock takes 5m or 1h)"
        )),
    }
    json!({"cachePoint": cp})
}

fn user_block(
    where_: &str,
    b: &Block,
    warnings: &mut Vec<String>,
) -> Result<Option<Value>, ModelError> {
    Ok(Some(match b {
        // Bedrock refuses blank text blocks.
        Block::Text(t) if t.text.is_empty() => return Ok(None),
        Block::Text(t) => json!({"text": t.text}),
        Block::Json { json } => json!({"text": json_text(json)}),
        Block::CachePoint { cache_point: c } => cache_point(c, where_, warnings),
        Block::Image { .. } | Block::File { .. } => media_block(where_, b)?,
        other => {
            return Err(unsupported(format!(
                "{where_}: Bedrock Converse cannot take {} blocks here",
                other.type_name()
            )));
        }
    }))
}

fn tool_results(
    mi: usize,
    m: &Message,
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    let mut out = Vec::new();
    for (bi, b) in m.content.iter().enumerate() {
        let w = at(mi, bi);
        let r = match b {
            Block::ToolResult { tool_result } => tool_result,
            Block::CachePoint { cache_point: c } => {
                out.push(cache_point(c, &w, warnings));
                continue;
            }
            _ => {
                return Err(unsupported(format!(
                    "{w}: a call still waiting for approval cannot be sent to a model"
                )));
            }
        };
        let mut content = Vec::new();
        for (ci, c) in r.content.iter().enumerate() {
            let cw = format!("{w}.tool_result.content[{ci}]");
            match c {
                Block::Text(t) => content.push(json!({"text": t.text})),
                Block::Json { json } => content.push(json!({"json": json})),
                Block::Image { .. } | Block::File { .. } => content.push(media_block(&cw, c)?),
                Block::CachePoint { .. } => warnings.push(format!(
                    "{cw}: cache point dropped (Bedrock takes none inside a tool result)"
                )),
                other => {
                    return Err(unsupported(format!(
                        "{cw}: Bedrock cannot take {} blocks in a tool result",
                        other.type_name()
                    )));
                }
            }
        }
        let mut block = json!({"toolUseId": tool_id(&r.tool_call_id), "content": content});
        if r.is_error() {
            block["status"] = json!("error");
        }
        out.push(json!({"toolResult": block}));
    }
    Ok(out)
}

fn reasoning_block(t: &Thinking) -> Value {
    if let Some(data) = &t.redacted {
        return json!({"reasoningContent": {"redactedContent": data}});
    }
    let mut text = json!({"text": t.thinking});
    if let Some(sig) = &t.signature {
        text["signature"] = json!(sig);
    }
    json!({"reasoningContent": {"reasoningText": text}})
}

fn assistant_blocks(
    mi: usize,
    m: &Message,
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    let mut out = Vec::with_capacity(m.content.len());
    for (bi, b) in m.content.iter().enumerate() {
        let w = at(mi, bi);
        match b {
            Block::Thinking(t)
                if is_own(&t.provider, PROVIDER)
                    && (t.signature.is_some() || t.redacted.is_some()) =>
            {
                out.push(reasoning_block(t))
            }
            Block::Thinking(t) if is_own(&t.provider, PROVIDER) => {
                // Unsigned reasoning (DeepSeek-R1, Qwen, gpt-oss): as the
                // `<think>` text their chat templates read, in its place
                // (what their clients send; Bedrock refuses an unsigned
                // reasoningContent in a request for most of them).
                if !t.thinking.is_empty() {
                    out.push(json!({"text": crate::think_tags::wrap(&t.thinking)}));
                }
            }
            Block::Thinking(t) => {
                // The one rule for foreign reasoning: dropped, never sent
                // where a signature would be checked.
                if !t.thinking.is_empty() || t.has_opaque_data() {
                    warnings.push(format!(
                        "{w}: thinking from {} dropped (Bedrock accepts only its own reasoning)",
                        t.provider.as_deref().unwrap_or("an unknown provider")
                    ));
                }
            }
            Block::Text(t) if t.text.is_empty() => {}
            Block::Text(t) => out.push(json!({"text": t.text})),
            Block::Json { json } => out.push(json!({"text": json_text(json)})),
            Block::CachePoint { cache_point: c } => out.push(cache_point(c, &w, warnings)),
            Block::ToolCall { tool_call: c } => {
                let input = match &c.arguments {
                    Value::Object(_) => c.arguments.clone(),
                    // Arguments that were not JSON (their result told the
                    // model so) go as an empty object.
                    _ => json!({}),
                };
                if c.signature.is_some() && !is_own(&c.provider, PROVIDER) {
                    warnings.push(format!(
                        "{w}: {} tool call signature dropped",
                        c.provider.as_deref().unwrap_or("foreign")
                    ));
                }
                out.push(json!({"toolUse": {"toolUseId": tool_id(&c.id), "name": c.name, "input": input}}));
            }
            other => {
                return Err(unsupported(format!(
                    "{w}: Bedrock cannot take {} blocks from the assistant",
                    other.type_name()
                )));
            }
        }
    }
    Ok(out)
}

/// Whether the last assistant turn with tool calls starts with Bedrock's
/// own signed reasoning (Anthropic models refuse a thinking request
/// otherwise).
fn last_tool_turn_starts_with_own_reasoning(messages: &[Message]) -> bool {
    let Some(last) = messages.iter().rev().find(|m| m.role == Role::Assistant) else {
        return true;
    };
    if !last
        .content
        .iter()
        .any(|b| matches!(b, Block::ToolCall { .. }))
    {
        return true;
    }
    matches!(last.content.first(), Some(Block::Thinking(t)) if is_own(&t.provider, PROVIDER) && (t.signature.is_some() || t.redacted.is_some()))
}

/// Builds the request body (`model` goes in the URL, not here; `stream`
/// picks the URL too).
pub fn encode_request(
    req: &ModelRequest,
    _model: &str,
    _stream: bool,
) -> Result<Encoded, ModelError> {
    let mut warnings = Vec::new();
    let mut system: Vec<Value> = Vec::new();
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for (mi, m) in req.messages.iter().enumerate() {
        let (role, blocks) = match m.role {
            Role::System => {
                for (bi, b) in m.content.iter().enumerate() {
                    let w = at(mi, bi);
                    match b {
                        Block::Text(t) if t.text.is_empty() => {}
                        Block::Text(t) => system.push(json!({"text": t.text})),
                        Block::Json { json } => system.push(json!({"text": json_text(json)})),
                        Block::CachePoint { cache_point: c } => {
                            system.push(cache_point(c, &w, &mut warnings))
                        }
                        other => {
                            return Err(unsupported(format!(
                                "{w}: a Bedrock system prompt takes only text, not {} blocks",
                                other.type_name()
                            )));
                        }
                    }
                }
                continue;
            }
            Role::User => {
                let mut out = Vec::new();
                for (bi, b) in m.content.iter().enumerate() {
                    out.extend(user_block(&at(mi, bi), b, &mut warnings)?);
                }
                ("user", out)
            }
            Role::Tool => ("user", tool_results(mi, m, &mut warnings)?),
            Role::Assistant => ("assistant", assistant_blocks(mi, m, &mut warnings)?),
        };
        if blocks.is_empty() {
            continue;
        }
        // Consecutive same-role messages become one (tool results and the
        // user's text after them).
        match messages.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let o = &req.options;
    let mut body = Map::new();
    body.insert(
        "messages".into(),
        Value::Array(
            messages
                .into_iter()
                .map(|(role, content)| json!({"role": role, "content": content}))
                .collect(),
        ),
    );
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    let mut inference = Map::new();
    if let Some(n) = o.max_tokens {
        inference.insert("maxTokens".into(), json!(n));
    }
    if let Some(t) = o.temperature {
        inference.insert("temperature".into(), json!(t));
    }
    if let Some(p) = o.top_p {
        inference.insert("topP".into(), json!(p));
    }
    if !o.stop.is_empty() {
        inference.insert("stopSequences".into(), json!(o.stop));
    }
    if !inference.is_empty() {
        body.insert("inferenceConfig".into(), Value::Object(inference));
    }
    if o.top_k.is_some() {
        warnings.push(
            "top_k dropped: Converse has no top_k (set it in extra.bedrock.additionalModelRequestFields for models that take one)"
                .into(),
        );
    }
    if o.seed.is_some() {
        warnings.push("seed dropped: Bedrock Converse takes no seed".into());
    }
    if !req.tools.is_empty() {
        let mut tools = Vec::new();
        for (ti, t) in req.tools.iter().enumerate() {
            let mut spec = Map::new();
            spec.insert("name".into(), json!(t.name));
            if let Some(d) = t.description.as_deref().filter(|d| !d.is_empty()) {
                spec.insert("description".into(), json!(d));
            }
            spec.insert("inputSchema".into(), json!({"json": t.input_schema}));
            if let Some(strict) = t.strict {
                spec.insert("strict".into(), json!(strict));
            }
            tools.push(json!({"toolSpec": spec}));
            if let Some(c) = &t.cache_point {
                tools.push(cache_point(c, &format!("tools[{ti}]"), &mut warnings));
            }
        }
        let mut config = Map::new();
        config.insert("tools".into(), Value::Array(tools));
        match &o.tool_choice {
            None => {}
            Some(ToolChoice::Auto) => {
                config.insert("toolChoice".into(), json!({"auto": {}}));
            }
            Some(ToolChoice::Required) => {
                config.insert("toolChoice".into(), json!({"any": {}}));
            }
            Some(ToolChoice::Tool(name)) => {
                config.insert("toolChoice".into(), json!({"tool": {"name": name}}));
            }
            Some(ToolChoice::None) => warnings.push(
                "tool_choice none dropped: Converse has no way to forbid tool calls (the tools stay: a conversation with tool calls needs them)"
                    .into(),
            ),
        }
        body.insert("toolConfig".into(), Value::Object(config));
    } else if o.tool_choice.is_some() {
        warnings.push("tool_choice dropped: Bedrock takes it only with tools".into());
    }
    if o.parallel_tool_calls.is_some() {
        warnings.push("parallel_tool_calls dropped: Converse has no such setting".into());
    }
    let mut output_config = Map::new();
    if let Some(r) = &o.reasoning {
        if let Some(budget) = r.budget_tokens {
            if last_tool_turn_starts_with_own_reasoning(&req.messages) {
                body.insert(
                    "additionalModelRequestFields".into(),
                    json!({"thinking": {"type": "enabled", "budget_tokens": budget}}),
                );
            } else {
                warnings.push(
                    "thinking turned off for this request: the last assistant tool-use turn has no Bedrock reasoning block to start with"
                        .into(),
                );
            }
        }
        if let Some(e) = r.effort.filter(|e| *e != Effort::None) {
            // The service model's levels: low, medium, high, xhigh, max.
            let effort = match e {
                Effort::Minimal | Effort::Low => "low",
                other => other.as_str(),
            };
            output_config.insert("effort".into(), json!(effort));
        }
    }
    if let Some(s) = &o.output_schema {
        let mut def = Map::new();
        def.insert("schema".into(), json!(s.schema.to_string()));
        def.insert("name".into(), json!(s.name));
        if let Some(d) = &s.description {
            def.insert("description".into(), json!(d));
        }
        if s.strict.is_some() {
            warnings.push("output_schema.strict dropped: Bedrock takes the schema alone".into());
        }
        output_config.insert(
            "textFormat".into(),
            json!({"type": "json_schema", "structure": {"jsonSchema": def}}),
        );
    }
    if !output_config.is_empty() {
        body.insert("outputConfig".into(), Value::Object(output_config));
    }
    merge_extra(&mut body, &o.extra, PROVIDER, NAME);
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}
