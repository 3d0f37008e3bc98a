//! A `GenerateContentRequest` body → canonical (for `parlance convert`): the
//! conversation, tools (an OpenAPI-subset `parameters` schema read back
//! into JSON Schema) and options it carries.

use std::collections::HashMap;

use parlance_format::{Block, Message, Role, ToolResult, ToolSpec};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};

use super::PROVIDER;
use super::decode_response::part_block;
use crate::wire::{
    DecodedRequest, checked_request, malformed, obj, opt_str, scoped_extra, str_field,
};

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
    checked_request(body, decode)
}

fn decode(body: &Value) -> Result<DecodedRequest, ModelError> {
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
                        cache_point: None,
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
