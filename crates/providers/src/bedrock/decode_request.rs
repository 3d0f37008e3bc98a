//! A Converse request body → canonical (for `parlance convert`): the
//! conversation, tools and options it carries. Content blocks are unions
//! and must hold exactly one member; a wrong shape is refused with its JSON
//! path. Top-level fields with no canonical name are kept for this API
//! (`extra`), block fields Parlance has no place for are named in warnings.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role, ToolResult, ToolSpec, ToolStatus};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};

use super::NAME;
use super::decode_response::{block, union_member};
use super::to_wire::{DOCUMENT_FORMATS, IMAGE_FORMATS};
use crate::wire::{
    DecodedRequest, cache_point, checked_request, count, malformed, obj, opt_str, scoped_extra,
    str_field, unread,
};

/// A request body → the conversation, tools and options it carries.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    checked_request(body, decode)
}

fn array<'a>(v: &'a Value, what: &str) -> Result<&'a Vec<Value>, ModelError> {
    v.as_array()
        .ok_or_else(|| malformed(format!("{what}: expected an array")))
}

fn cache(x: &Value, what: &str, warnings: &mut Vec<String>) -> Result<Block, ModelError> {
    unread(x, &["type", "ttl"], what, &[], warnings);
    if str_field(x, "type", what)? != "default" {
        return Err(malformed(format!(
            "{what}.type: unknown cache point type (default is the one)"
        )));
    }
    Ok(cache_point(opt_str(x, "ttl")))
}

fn media(
    x: &Value,
    what: &str,
    table: &[(&str, &str)],
    warnings: &mut Vec<String>,
) -> Result<Media, ModelError> {
    let format = str_field(x, "format", what)?;
    let media_type = table
        .iter()
        .find(|(f, _)| *f == format)
        .map(|(_, t)| t.to_string())
        .ok_or_else(|| malformed(format!("{what}.format: unknown format {format:?}")))?;
    let sw = format!("{what}.source");
    let (k, s) = union_member(x.get("source").unwrap_or(&Value::Null), &sw)?;
    let mut m = Media {
        media_type: Some(media_type),
        ..Media::default()
    };
    match k {
        "bytes" => {
            m.data = Some(
                s.as_str()
                    .ok_or_else(|| malformed(format!("{sw}.bytes: expected base64 text")))?
                    .to_string(),
            )
        }
        "s3Location" => {
            unread(
                s,
                &["uri"],
                &format!("{sw}.s3Location"),
                &[(
                    "bucketOwner",
                    "dropped: canonical media carry no bucket owner",
                )],
                warnings,
            );
            let uri = str_field(s, "uri", &format!("{sw}.s3Location"))?;
            if !uri.starts_with("s3://") {
                return Err(malformed(format!(
                    "{sw}.s3Location.uri: expected an s3:// URI, got {uri:?}"
                )));
            }
            m.url = Some(uri.to_string());
        }
        other => {
            return Err(malformed(format!(
                "{sw}.{other}: unsupported source (bytes and s3Location are)"
            )));
        }
    }
    Ok(m)
}

/// Appends `b`; a cache point marks the block before it, so one with no
/// block before it (first, or after another cache point) is dropped with a
/// warning naming it.
fn push(list: &mut Vec<Block>, b: Block, what: &str, warnings: &mut Vec<String>) {
    let marks_nothing = matches!(b, Block::CachePoint { .. })
        && !matches!(list.last(), Some(last) if !matches!(last, Block::CachePoint { .. }));
    if marks_nothing {
        warnings.push(format!(
            "{what}: a cache point with no block before it dropped (it marks nothing)"
        ));
    } else {
        list.push(b);
    }
}

/// One user-side content block (a user turn, a system prompt or a tool
/// result's content) → canonical.
fn input_block(b: &Value, what: &str, warnings: &mut Vec<String>) -> Result<Block, ModelError> {
    let (k, x) = union_member(b, what)?;
    let w = format!("{what}.{k}");
    Ok(match k {
        "text" => Block::text(
            x.as_str()
                .ok_or_else(|| malformed(format!("{w}: expected a string")))?,
        ),
        "json" => Block::Json { json: x.clone() },
        "cachePoint" => cache(x, &w, warnings)?,
        "image" => {
            unread(x, &["format", "source"], &w, &[], warnings);
            Block::Image {
                image: media(x, &w, &IMAGE_FORMATS, warnings)?,
            }
        }
        "document" => {
            unread(
                x,
                &["format", "name", "source"],
                &w,
                &[
                    ("context", "dropped: canonical files carry no context"),
                    (
                        "citations",
                        "dropped: canonical files carry no citation settings",
                    ),
                ],
                warnings,
            );
            let mut m = media(x, &w, &DOCUMENT_FORMATS, warnings)?;
            m.filename = Some(str_field(x, "name", &w)?.to_string());
            Block::File { file: m }
        }
        other => {
            return Err(malformed(format!(
                "{what}.{other}: Parlance cannot carry {other:?} blocks yet"
            )));
        }
    })
}

fn decode(body: &Value) -> Result<DecodedRequest, ModelError> {
    let b = obj(body, "request")?;
    let mut warnings = Vec::new();
    let mut messages = Vec::new();
    if let Some(s) = b.get("system").filter(|s| !s.is_null()) {
        let mut blocks = Vec::new();
        for (i, x) in array(s, "system")?.iter().enumerate() {
            let w = format!("system[{i}]");
            let (k, _) = union_member(x, &w)?;
            if !matches!(k, "text" | "cachePoint") {
                return Err(malformed(format!(
                    "{w}.{k}: Parlance carries text and cache points in a system prompt"
                )));
            }
            let b = input_block(x, &w, &mut warnings)?;
            push(&mut blocks, b, &w, &mut warnings);
        }
        if !blocks.is_empty() {
            messages.push(Message::new(Role::System, blocks));
        }
    }
    let mut names: HashMap<String, String> = HashMap::new();
    // Optional in the service model (for prompts managed by Bedrock),
    // required here: a request Parlance reads is a conversation.
    let msgs = array(b.get("messages").unwrap_or(&Value::Null), "messages")?;
    for (i, m) in msgs.iter().enumerate() {
        let what = format!("messages[{i}]");
        unread(m, &["role", "content"], &what, &[], &mut warnings);
        let role = str_field(m, "role", &what)?;
        let cw = format!("{what}.content");
        let content = array(m.get("content").unwrap_or(&Value::Null), &cw)?;
        if content.is_empty() {
            warnings.push(format!(
                "{what}: an empty {role} message dropped (it carries nothing)"
            ));
        }
        match role {
            "assistant" => {
                let mut blocks = Vec::new();
                for (j, p) in content.iter().enumerate() {
                    let w = format!("{cw}[{j}]");
                    if let Ok(("cachePoint", x)) = union_member(p, &w) {
                        let cp = cache(x, &format!("{w}.cachePoint"), &mut warnings)?;
                        push(&mut blocks, cp, &w, &mut warnings);
                        continue;
                    }
                    let bl = block(p, &w)?;
                    if let Ok(("toolUse", x)) = union_member(p, &w) {
                        unread(
                            x,
                            &["toolUseId", "name", "input", "type"],
                            &format!("{w}.toolUse"),
                            &[],
                            &mut warnings,
                        );
                    }
                    if let Some(bl) = bl {
                        if let Block::ToolCall { tool_call } = &bl {
                            names.insert(tool_call.id.clone(), tool_call.name.clone());
                        }
                        blocks.push(bl);
                    }
                }
                messages.push(Message::new(Role::Assistant, blocks));
            }
            "user" => {
                // Tool results become a tool message; the rest a user
                // message after it. A cache point goes with the block
                // before it.
                let mut results = Vec::new();
                let mut rest = Vec::new();
                let mut last_was_result = false;
                for (j, p) in content.iter().enumerate() {
                    let w = format!("{cw}[{j}]");
                    let (k, x) = union_member(p, &w)?;
                    if k == "cachePoint" {
                        let cp = cache(x, &format!("{w}.cachePoint"), &mut warnings)?;
                        let list = if last_was_result {
                            &mut results
                        } else {
                            &mut rest
                        };
                        push(list, cp, &w, &mut warnings);
                        continue;
                    }
                    if k != "toolResult" {
                        rest.push(input_block(p, &w, &mut warnings)?);
                        last_was_result = false;
                        continue;
                    }
                    let rw = format!("{w}.toolResult");
                    unread(
                        x,
                        &["toolUseId", "content", "status"],
                        &rw,
                        &[("type", "dropped: server tool results are not supported yet")],
                        &mut warnings,
                    );
                    let id = str_field(x, "toolUseId", &rw)?.to_string();
                    let mut inner = Vec::new();
                    for (k, c) in array(
                        x.get("content").unwrap_or(&Value::Null),
                        &format!("{rw}.content"),
                    )?
                    .iter()
                    .enumerate()
                    {
                        inner.push(input_block(
                            c,
                            &format!("{rw}.content[{k}]"),
                            &mut warnings,
                        )?);
                    }
                    let status = match x.get("status").and_then(Value::as_str) {
                        None => ToolStatus::Ok,
                        Some("success") => {
                            warnings.push(format!(
                                "{rw}.status: success is the default; written back without it"
                            ));
                            ToolStatus::Ok
                        }
                        Some("error") => ToolStatus::Error,
                        Some(other) => {
                            return Err(malformed(format!(
                                "{rw}.status: unknown status {other:?} (success or error)"
                            )));
                        }
                    };
                    results.push(Block::tool_result(ToolResult {
                        name: names.get(&id).cloned(),
                        tool_call_id: id,
                        content: inner,
                        status,
                        artifact: None,
                        approval: None,
                    }));
                    last_was_result = true;
                }
                if !results.is_empty() {
                    messages.push(Message::new(Role::Tool, results));
                }
                if !rest.is_empty() {
                    messages.push(Message::new(Role::User, rest));
                }
            }
            other => {
                return Err(malformed(format!(
                    "{what}.role: unknown role {other:?} (user or assistant)"
                )));
            }
        }
    }
    let mut tools = Vec::new();
    let mut o = ModelOptions::default();
    if let Some(tc) = b.get("toolConfig").filter(|t| !t.is_null()) {
        unread(
            tc,
            &["tools", "toolChoice"],
            "toolConfig",
            &[],
            &mut warnings,
        );
        for (i, t) in array(tc.get("tools").unwrap_or(&Value::Null), "toolConfig.tools")?
            .iter()
            .enumerate()
        {
            let what = format!("toolConfig.tools[{i}]");
            if t.as_object()
                .is_some_and(|o| o.values().all(Value::is_null))
            {
                warnings.push(format!("{what}: an empty tool entry dropped"));
                continue;
            }
            let (k, x) = union_member(t, &what)?;
            match k {
                "toolSpec" => {
                    let w = format!("{what}.toolSpec");
                    unread(
                        x,
                        &["name", "description", "inputSchema", "strict"],
                        &w,
                        &[],
                        &mut warnings,
                    );
                    let (sk, schema) = union_member(
                        x.get("inputSchema").unwrap_or(&Value::Null),
                        &format!("{w}.inputSchema"),
                    )?;
                    if sk != "json" {
                        return Err(malformed(format!("{w}.inputSchema.{sk}: expected json")));
                    }
                    tools.push(ToolSpec {
                        name: str_field(x, "name", &w)?.to_string(),
                        description: opt_str(x, "description"),
                        input_schema: schema.clone(),
                        strict: x.get("strict").and_then(Value::as_bool),
                        cache_point: None,
                    });
                }
                "cachePoint" => {
                    let cp = cache(x, &format!("{what}.cachePoint"), &mut warnings)?;
                    match (tools.last_mut(), cp) {
                        (
                            Some(ToolSpec {
                                cache_point: slot @ None,
                                ..
                            }),
                            Block::CachePoint { cache_point },
                        ) => *slot = Some(cache_point),
                        _ => warnings.push(format!(
                            "{what}: a cache point with no tool before it dropped"
                        )),
                    }
                }
                other => warnings.push(format!(
                    "{what}.{other}: dropped: system tools are not supported yet"
                )),
            }
        }
        let choice = tc.get("toolChoice").filter(|c| !c.is_null());
        if choice.is_some() && tools.is_empty() {
            warnings.push(
                "toolConfig.toolChoice: dropped: there is no tool to choose (Bedrock takes a choice only with tools)"
                    .into(),
            );
        } else if let Some(c) = choice {
            let (k, x) = union_member(c, "toolConfig.toolChoice")?;
            o.tool_choice = Some(match k {
                "auto" => ToolChoice::Auto,
                "any" => ToolChoice::Required,
                "tool" => ToolChoice::Tool(
                    str_field(x, "name", "toolConfig.toolChoice.tool")?.to_string(),
                ),
                other => {
                    return Err(malformed(format!(
                        "toolConfig.toolChoice.{other}: unknown tool choice"
                    )));
                }
            });
        }
    }
    let mut extra = Map::new();
    for (k, v) in b {
        if v.is_null() {
            continue;
        }
        match k.as_str() {
            "modelId" | "model" | "messages" | "system" | "toolConfig" => {}
            "inferenceConfig" => {
                let w = "inferenceConfig";
                unread(
                    v,
                    &["maxTokens", "temperature", "topP", "stopSequences"],
                    w,
                    &[],
                    &mut warnings,
                );
                o.max_tokens = v.get("maxTokens").and_then(Value::as_u64).map(count);
                o.temperature = v.get("temperature").and_then(Value::as_f64);
                o.top_p = v.get("topP").and_then(Value::as_f64);
                o.stop = v
                    .get("stopSequences")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect();
            }
            "additionalModelRequestFields" => {
                let mut rest = v.as_object().cloned().unwrap_or_default();
                let thinking = rest.get("thinking").cloned();
                if let Some(t) = thinking
                    && t.get("type").and_then(Value::as_str) == Some("enabled")
                    && let Some(budget) = t.get("budget_tokens").and_then(Value::as_u64)
                    && t.as_object().is_some_and(|o| o.len() == 2)
                {
                    rest.remove("thinking");
                    o.reasoning
                        .get_or_insert_with(Reasoning::default)
                        .budget_tokens = Some(count(budget));
                }
                // Model-native fields: kept for this API as they are.
                if !rest.is_empty() || v.as_object().is_some_and(Map::is_empty) {
                    extra.insert(k.clone(), Value::Object(rest));
                }
            }
            "outputConfig" => {
                let mut rest = v.as_object().cloned().unwrap_or_default();
                if let Some(e) = rest.remove("effort").filter(|e| !e.is_null()) {
                    let e = e.as_str().unwrap_or_default();
                    let effort = Effort::parse(e).ok_or_else(|| {
                        malformed(format!("outputConfig.effort: unknown effort {e:?}"))
                    })?;
                    o.reasoning.get_or_insert_with(Reasoning::default).effort = Some(effort);
                }
                if let Some(f) = rest.remove("textFormat").filter(|f| !f.is_null()) {
                    let def = f.pointer("/structure/jsonSchema");
                    let schema = def
                        .and_then(|d| d.get("schema"))
                        .and_then(Value::as_str)
                        .and_then(|s| serde_json::from_str::<Value>(s).ok());
                    match (f.get("type").and_then(Value::as_str), def, schema) {
                        (Some("json_schema"), Some(d), Some(schema)) => {
                            let mut s = OutputSchema::new(
                                d.get("name").and_then(Value::as_str).unwrap_or("output"),
                                schema,
                            );
                            s.description = opt_str(d, "description");
                            o.output_schema = Some(s);
                        }
                        _ => {
                            return Err(malformed(
                                "outputConfig.textFormat: expected {type: json_schema, structure: {jsonSchema: {schema: <JSON text>}}}",
                            ));
                        }
                    }
                }
                // What else it holds (or an empty object) stays as it is.
                if !rest.is_empty() || v.as_object().is_some_and(Map::is_empty) {
                    extra.insert(k.clone(), Value::Object(rest));
                }
            }
            _ => {
                // guardrailConfig, performanceConfig, promptVariables,
                // requestMetadata, serviceTier...: kept for this API.
                extra.insert(k.clone(), v.clone());
            }
        }
    }
    o.extra = scoped_extra(extra, NAME);
    Ok(DecodedRequest {
        // `modelId` as the SDKs name it; `model` as `parlance convert`
        // shows the URL's model next to a body.
        model: opt_str(body, "modelId").or_else(|| opt_str(body, "model")),
        stream: false,
        request: ModelRequest {
            messages,
            tools: tools.into(),
            options: o,
        },
        warnings,
    })
}
