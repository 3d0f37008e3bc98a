//! Gemini `GenerateContentResponse` / request body → canonical.

use std::collections::HashMap;

use parlance_format::{
    Block, FinishReason, Media, Message, Role, Text, Thinking, ToolCall, ToolResult, ToolSpec,
    Usage,
};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::PROVIDER;
use crate::wire::{DecodedRequest, malformed, obj, opt_str, scoped_extra, str_field, u64_at};

/// `finishReason` → canonical; `STOP` with function calls is `tool_calls`.
pub fn finish_reason(raw: &str, has_calls: bool) -> FinishReason {
    match raw {
        "STOP" if has_calls => FinishReason::ToolCalls,
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => FinishReason::ContentFilter,
        "MALFORMED_FUNCTION_CALL"
        | "UNEXPECTED_TOOL_CALL"
        | "TOO_MANY_TOOL_CALLS"
        | "MISSING_THOUGHT_SIGNATURE"
        | "MALFORMED_RESPONSE" => FinishReason::Error,
        _ => FinishReason::Other,
    }
}

/// `usageMetadata` → canonical: the prompt count includes cached tokens;
/// the output is the candidates plus the thoughts.
pub fn usage(u: &Value) -> Usage {
    let thoughts = u64_at(u, &["thoughtsTokenCount"]);
    Usage {
        input_tokens: u64_at(u, &["promptTokenCount"]).unwrap_or(0)
            + u64_at(u, &["toolUsePromptTokenCount"]).unwrap_or(0),
        output_tokens: u64_at(u, &["candidatesTokenCount"]).unwrap_or(0) + thoughts.unwrap_or(0),
        cached_tokens: u64_at(u, &["cachedContentTokenCount"]).unwrap_or(0),
        cache_write_tokens: None,
        reasoning_tokens: thoughts,
    }
}

/// A canonical id for a call Gemini sent without one: stable for the same
/// response, call position, name and arguments.
pub(crate) fn synth_id(
    response_id: Option<&str>,
    index: usize,
    name: &str,
    args: &Value,
) -> String {
    let mut h = Sha256::new();
    h.update(response_id.unwrap_or("").as_bytes());
    h.update(index.to_le_bytes());
    h.update(name.as_bytes());
    h.update(args.to_string().as_bytes());
    format!("call_{}", hex::encode(&h.finalize()[..8]))
}

/// One response part → a canonical block (`None` for an empty text part
/// that carries nothing).
/// `call_index` (the call's position among the message's calls) only
/// feeds the id made up for a call Gemini sent without one.
pub(crate) fn part_block(
    p: &Value,
    what: &str,
    response_id: Option<&str>,
    call_index: usize,
) -> Result<Option<Block>, ModelError> {
    let sig = opt_str(p, "thoughtSignature");
    if let Some(fc) = p.get("functionCall") {
        let name = str_field(fc, "name", &format!("{what}.functionCall"))?;
        let args = fc
            .get("args")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        let gid = opt_str(fc, "id");
        let id = gid
            .clone()
            .unwrap_or_else(|| synth_id(response_id, call_index, name, &args));
        let own = gid.is_some() || sig.is_some();
        return Ok(Some(Block::ToolCall {
            tool_call: ToolCall {
                item_id: gid,
                signature: sig,
                provider: own.then(|| PROVIDER.to_string()),
                ..ToolCall::new(id, name, args)
            },
        }));
    }
    if let Some(text) = p.get("text").and_then(Value::as_str) {
        if p.get("thought").and_then(Value::as_bool) == Some(true) {
            return Ok(Some(Block::Thinking(Thinking {
                thinking: text.to_string(),
                signature: sig,
                provider: Some(PROVIDER.into()),
                ..Thinking::default()
            })));
        }
        if text.is_empty() && sig.is_none() {
            return Ok(None);
        }
        return Ok(Some(Block::Text(Text {
            text: text.to_string(),
            provider: sig.as_ref().map(|_| PROVIDER.to_string()),
            signature: sig,
            item_id: None,
        })));
    }
    if let Some(d) = p.get("inlineData") {
        let media = Media {
            data: opt_str(d, "data"),
            media_type: opt_str(d, "mimeType"),
            ..Media::default()
        };
        return Ok(Some(media_block(media)));
    }
    if let Some(f) = p.get("fileData") {
        let media = Media {
            url: opt_str(f, "fileUri"),
            media_type: opt_str(f, "mimeType"),
            ..Media::default()
        };
        return Ok(Some(media_block(media)));
    }
    let keys: Vec<&String> = p
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    Err(malformed(format!(
        "{what}: Parlance cannot keep parts with {keys:?} yet; nothing was dropped"
    )))
}

fn media_block(m: Media) -> Block {
    match m.media_type.as_deref() {
        Some(t) if t.starts_with("image/") => Block::Image { image: m },
        Some(t) if t.starts_with("audio/") => Block::Audio { audio: m },
        _ => Block::File { file: m },
    }
}

/// A response body → the assistant message.
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    if let Some(e) = body.get("error") {
        return Err(error_object(e, None));
    }
    let response_id = body.get("responseId").and_then(Value::as_str);
    let candidate = body
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    let mut blocks = Vec::new();
    let raw = match candidate {
        Some(c) => {
            let mut calls = 0;
            for (i, p) in c
                .pointer("/content/parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let b = part_block(
                    p,
                    &format!("candidates[0].content.parts[{i}]"),
                    response_id,
                    calls,
                )?;
                calls += usize::from(matches!(b, Some(Block::ToolCall { .. })));
                blocks.extend(b);
            }
            opt_str(c, "finishReason")
        }
        // Blocked prompt: no candidates, a block reason.
        None => body
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let has_calls = blocks.iter().any(|b| matches!(b, Block::ToolCall { .. }));
    let mut msg = Message::new(Role::Assistant, blocks);
    msg.id = response_id.map(str::to_string);
    msg.usage = body
        .get("usageMetadata")
        .filter(|u| u.is_object())
        .map(usage);
    msg.finish_reason = raw.as_deref().map(|r| {
        if candidate.is_none() {
            FinishReason::ContentFilter
        } else {
            finish_reason(r, has_calls)
        }
    });
    msg.finish_reason_raw = raw;
    msg.provider = Some(PROVIDER.into());
    msg.model = opt_str(body, "modelVersion");
    Ok(msg)
}

/// Converts a `parameters` schema (OpenAPI subset, `"type": "OBJECT"`)
/// into JSON Schema (lower-case types).
pub fn openapi_to_json_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = if k == "type" {
                        v.as_str()
                            .map_or(v.clone(), |t| Value::String(t.to_lowercase()))
                    } else {
                        openapi_to_json_schema(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(openapi_to_json_schema).collect()),
        other => other.clone(),
    }
}

/// Reads a field under its camelCase or snake_case name (proto JSON takes both).
fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake))
}

/// A request body → the conversation, tools and options it carries.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    let b = obj(body, "request")?;
    let mut messages = Vec::new();
    if let Some(si) = field(body, "systemInstruction", "system_instruction") {
        for p in si
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            messages.push(Message::system(
                p.get("text").and_then(Value::as_str).unwrap_or_default(),
            ));
        }
    }
    let mut calls: HashMap<String, Vec<String>> = HashMap::new(); // name → ids, in order
    for (i, c) in b
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let what = format!("contents[{i}]");
        let role = c.get("role").and_then(Value::as_str).unwrap_or("user");
        let parts = c
            .get("parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        match role {
            "model" => {
                let mut blocks = Vec::new();
                for (j, p) in parts.iter().enumerate() {
                    if let Some(b) = part_block(
                        &normalize_part(p),
                        &format!("{what}.parts[{j}]"),
                        None,
                        i * 1000 + j,
                    )? {
                        if let Block::ToolCall { tool_call } = &b {
                            calls
                                .entry(tool_call.name.clone())
                                .or_default()
                                .push(tool_call.id.clone());
                        }
                        blocks.push(b);
                    }
                }
                messages.push(Message::new(Role::Assistant, blocks));
            }
            _ => {
                let mut results = Vec::new();
                let mut rest = Vec::new();
                for (j, p) in parts.iter().enumerate() {
                    let p = normalize_part(p);
                    if let Some(fr) = p.get("functionResponse") {
                        let name =
                            str_field(fr, "name", &format!("{what}.parts[{j}].functionResponse"))?
                                .to_string();
                        // Match by id when given, else the next call of that name.
                        let id = match opt_str(fr, "id") {
                            Some(id) => id,
                            None => {
                                let ids = calls.entry(name.clone()).or_default();
                                if ids.is_empty() {
                                    format!("call_{name}")
                                } else {
                                    ids.remove(0)
                                }
                            }
                        };
                        let response = fr.get("response").cloned().unwrap_or(Value::Null);
                        results.push(Block::tool_result(ToolResult {
                            tool_call_id: id,
                            name: Some(name),
                            content: vec![Block::json(response)],
                            status: Default::default(),
                            artifact: None,
                            approval: None,
                        }));
                    } else if let Some(b) = part_block(&p, &format!("{what}.parts[{j}]"), None, j)?
                    {
                        rest.push(b);
                    } else {
                        rest.push(Block::text(""));
                    }
                }
                if !results.is_empty() {
                    messages.push(Message::new(Role::Tool, results));
                }
                if !rest.is_empty() {
                    messages.push(Message::new(Role::User, rest));
                }
            }
        }
    }
    let mut tools = Vec::new();
    let mut extra = Map::new();
    for t in b
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match field(t, "functionDeclarations", "function_declarations").and_then(Value::as_array) {
            Some(decls) => {
                for (i, d) in decls.iter().enumerate() {
                    let schema = match (
                        field(d, "parametersJsonSchema", "parameters_json_schema"),
                        d.get("parameters"),
                    ) {
                        (Some(s), _) => s.clone(),
                        (None, Some(p)) => openapi_to_json_schema(p),
                        _ => serde_json::json!({"type": "object"}),
                    };
                    tools.push(ToolSpec {
                        name: str_field(d, "name", &format!("tools.functionDeclarations[{i}]"))?
                            .to_string(),
                        description: opt_str(d, "description"),
                        input_schema: schema,
                        strict: None,
                    });
                }
            }
            None => {
                return Err(malformed(
                    "tools: built-in tools (googleSearch, codeExecution...) are not supported yet",
                ));
            }
        }
    }
    let mut o = ModelOptions::default();
    if let Some(fc) = field(body, "toolConfig", "tool_config")
        .and_then(|t| field(t, "functionCallingConfig", "function_calling_config"))
    {
        let allowed: Vec<&str> = field(fc, "allowedFunctionNames", "allowed_function_names")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        o.tool_choice = Some(match fc.get("mode").and_then(Value::as_str) {
            Some("NONE") => ToolChoice::None,
            Some("ANY") if allowed.len() == 1 => ToolChoice::Tool(allowed[0].to_string()),
            Some("ANY") => ToolChoice::Required,
            _ => ToolChoice::Auto,
        });
        if allowed.len() > 1 {
            let mut cfg = Map::new();
            cfg.insert("allowedFunctionNames".into(), serde_json::json!(allowed));
            extra.insert(
                "toolConfig".into(),
                serde_json::json!({"functionCallingConfig": cfg}),
            );
        }
    }
    let mut gen_extra = Map::new();
    if let Some(Value::Object(g)) = field(body, "generationConfig", "generation_config") {
        for (k, v) in g {
            match k.as_str() {
                "maxOutputTokens" | "max_output_tokens" => {
                    o.max_tokens = v.as_u64().map(|n| n as u32)
                }
                "temperature" => o.temperature = v.as_f64(),
                "topP" | "top_p" => o.top_p = v.as_f64(),
                "topK" | "top_k" => o.top_k = v.as_u64().map(|n| n as u32),
                "seed" => o.seed = v.as_u64(),
                "stopSequences" | "stop_sequences" => {
                    o.stop = v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                }
                "responseJsonSchema" | "response_json_schema" => {
                    o.output_schema = Some(OutputSchema {
                        name: "output".into(),
                        schema: v.clone(),
                    })
                }
                "responseMimeType" | "response_mime_type" if v == "application/json" => {}
                "thinkingConfig" | "thinking_config" => {
                    let mut r = Reasoning {
                        include_thoughts: field(v, "includeThoughts", "include_thoughts")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                        budget_tokens: field(v, "thinkingBudget", "thinking_budget")
                            .and_then(Value::as_u64)
                            .map(|n| n as u32),
                        effort: None,
                    };
                    if let Some(level) =
                        field(v, "thinkingLevel", "thinking_level").and_then(Value::as_str)
                    {
                        r.effort = Effort::parse(&level.to_lowercase());
                    }
                    o.reasoning = Some(r);
                }
                _ => {
                    gen_extra.insert(k.clone(), v.clone());
                }
            }
        }
    }
    if !gen_extra.is_empty() {
        extra.insert("generationConfig".into(), Value::Object(gen_extra));
    }
    for (k, v) in b {
        let known = [
            "contents",
            "systemInstruction",
            "system_instruction",
            "tools",
            "toolConfig",
            "tool_config",
            "generationConfig",
            "generation_config",
            "model",
        ];
        if !known.contains(&k.as_str()) {
            extra.insert(k.clone(), v.clone());
        }
    }
    o.extra = scoped_extra(extra, PROVIDER);
    Ok(DecodedRequest {
        model: opt_str(body, "model").map(|m| m.trim_start_matches("models/").to_string()),
        stream: false,
        request: ModelRequest {
            messages,
            tools,
            options: o,
        },
    })
}

/// snake_case part fields (as some SDKs send) → camelCase.
fn normalize_part(p: &Value) -> Value {
    let mut p = p.clone();
    if let Some(o) = p.as_object_mut() {
        for (snake, camel) in [
            ("thought_signature", "thoughtSignature"),
            ("function_call", "functionCall"),
            ("function_response", "functionResponse"),
            ("inline_data", "inlineData"),
            ("file_data", "fileData"),
        ] {
            if let Some(v) = o.remove(snake) {
                o.insert(camel.into(), v);
            }
        }
        for key in ["inlineData", "fileData"] {
            if let Some(Value::Object(inner)) = o.get_mut(key) {
                for (snake, camel) in [("mime_type", "mimeType"), ("file_uri", "fileUri")] {
                    if let Some(v) = inner.remove(snake) {
                        inner.insert(camel.into(), v);
                    }
                }
            }
        }
    }
    p
}

/// A `google.rpc.Status` error → typed error; `RetryInfo.retryDelay` is the wait.
pub(crate) fn error_object(e: &Value, status_hint: Option<u16>) -> ModelError {
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("error")
        .to_string();
    let status = e.get("status").and_then(Value::as_str).unwrap_or("");
    let code = status_hint
        .or_else(|| e.get("code").and_then(Value::as_u64).map(|c| c as u16))
        .unwrap_or(0);
    let retry_after = e
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|d| d.get("retryDelay").and_then(Value::as_str))
        .and_then(|s| s.strip_suffix('s'))
        .and_then(|s| s.parse::<f64>().ok())
        .map(std::time::Duration::from_secs_f64);
    match (status, code) {
        ("RESOURCE_EXHAUSTED", _) | (_, 429) => {
            // A daily quota is not worth waiting for; a per-minute one is.
            if message.contains("per day") || message.to_lowercase().contains("billing") {
                ModelError::QuotaExceeded { message }
            } else {
                ModelError::RateLimited {
                    message,
                    retry_after,
                }
            }
        }
        ("UNAUTHENTICATED", _) | (_, 401) => ModelError::Authentication { message },
        ("PERMISSION_DENIED", _) | (_, 403) => ModelError::Permission { message },
        ("UNAVAILABLE", _) | (_, 503) => ModelError::Overloaded {
            message,
            retry_after,
        },
        ("INTERNAL", _) | ("DEADLINE_EXCEEDED", _) => ModelError::Server {
            status: if code >= 500 { code } else { 500 },
            message,
        },
        (_, c) if c >= 500 => ModelError::Server { status: c, message },
        ("INVALID_ARGUMENT", _) if message.contains("exceeds the maximum number of tokens") => {
            ModelError::ContextTooLong { message }
        }
        _ => ModelError::InvalidRequest { message },
    }
}

/// An error answer → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<std::time::Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let e = match v.get("error") {
        Some(e) => error_object(e, Some(status)),
        None => error_object(
            &serde_json::json!({"message": String::from_utf8_lossy(body)}),
            Some(status),
        ),
    };
    // RetryInfo in the body wins; a retry-after header is the fallback.
    match e {
        ModelError::RateLimited {
            message,
            retry_after: None,
        } => ModelError::RateLimited {
            message,
            retry_after,
        },
        other => other,
    }
}
