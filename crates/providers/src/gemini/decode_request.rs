//! A `GenerateContentRequest` body → canonical (for `parlance convert`): the
//! conversation, tools (an OpenAPI-subset `parameters` schema read back
//! into JSON Schema) and options it carries.

use std::collections::HashMap;

use parlance_format::{Block, Message, Role, ToolResult, ToolSpec};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};

use super::NAME;
use super::decode_response::part_block;
use crate::wire::{
    DecodedRequest, checked_request, count, malformed, obj, opt_str, scoped_extra, str_field,
    unread,
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

/// Keys whose values are free-form (arguments, schemas, structs): their
/// own keys are never renamed.
const FREE: &[&str] = &[
    "args",
    "response",
    "parameters",
    "parametersJsonSchema",
    "responseJsonSchema",
    "_responseJsonSchema",
    "responseSchema",
    "partMetadata",
    "headers",
];

/// Proto JSON takes both spellings of a field name: snake_case ones are
/// read as camelCase (outside free-form values).
fn camel_case(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let name = if k.contains('_') && !k.starts_with('_') {
                        let mut out = String::with_capacity(k.len());
                        let mut up = false;
                        for c in k.chars() {
                            if c == '_' {
                                up = true;
                            } else if up {
                                out.extend(c.to_uppercase());
                                up = false;
                            } else {
                                out.push(c);
                            }
                        }
                        out
                    } else {
                        k.clone()
                    };
                    let x = if FREE.contains(&name.as_str()) {
                        x.clone()
                    } else {
                        camel_case(x)
                    };
                    (name, x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(camel_case).collect()),
        other => other.clone(),
    }
}

/// Why part fields are not carried.
const PART_REASONS: &[(&str, &str)] = &[
    (
        "videoMetadata",
        "dropped: canonical media carry no video clipping",
    ),
    (
        "mediaResolution",
        "dropped: canonical media carry no resolution",
    ),
    (
        "partMetadata",
        "dropped: canonical blocks carry no part metadata",
    ),
];

/// A part's fields Parlance reads.
fn part_fields(p: &Value) -> &'static [&'static str] {
    if p.get("functionCall").is_some() {
        &["functionCall", "thoughtSignature"]
    } else if p.get("functionResponse").is_some() {
        &["functionResponse"]
    } else if p.get("inlineData").is_some() {
        &["inlineData"]
    } else if p.get("fileData").is_some() {
        &["fileData"]
    } else {
        &["text", "thought", "thoughtSignature"]
    }
}

/// A part of a user turn or the system instruction: thoughts are the
/// model's (refused, naming the path), and a thought signature there has
/// no canonical home (named in a warning).
fn not_the_models(p: &Value, w: &str, warnings: &mut Vec<String>) -> Result<(), ModelError> {
    if p.get("thought").and_then(Value::as_bool) == Some(true) {
        return Err(malformed(format!(
            "{w}.thought: a thought belongs in a model turn"
        )));
    }
    if p.get("thoughtSignature").is_some_and(|v| !v.is_null()) {
        warnings.push(format!(
            "{w}.thoughtSignature: dropped: only the model's parts carry a signature"
        ));
    }
    Ok(())
}

/// Checks a part before it is read: one kind of data, fields named.
fn check_part(p: &Value, w: &str, warnings: &mut Vec<String>) -> Result<(), ModelError> {
    for server in [
        "executableCode",
        "codeExecutionResult",
        "toolCall",
        "toolResponse",
    ] {
        if p.get(server).is_some_and(|v| !v.is_null()) {
            return Err(malformed(format!(
                "{w}.{server}: built-in tool parts are not supported yet"
            )));
        }
    }
    let data = [
        "text",
        "inlineData",
        "fileData",
        "functionCall",
        "functionResponse",
    ]
    .iter()
    .filter(|k| p.get(**k).is_some_and(|v| !v.is_null()))
    .count();
    if data != 1 {
        return Err(malformed(format!(
            "{w}: expected one of text, inlineData, fileData, functionCall or functionResponse"
        )));
    }
    unread(p, part_fields(p), w, PART_REASONS, warnings);
    let inner: &[(&str, &[&str])] = &[
        ("inlineData", &["mimeType", "data"]),
        ("fileData", &["mimeType", "fileUri"]),
        ("functionCall", &["id", "name", "args"]),
        ("functionResponse", &["id", "name", "response"]),
    ];
    for (k, read) in inner {
        if let Some(v) = p.get(*k) {
            unread(v, read, &format!("{w}.{k}"), &[], warnings);
        }
    }
    Ok(())
}

/// A request body → the conversation, tools and options it carries.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    checked_request(body, |b| decode(&camel_case(b)))
}

fn decode(body: &Value) -> Result<DecodedRequest, ModelError> {
    let b = obj(body, "request")?;
    let mut warnings = Vec::new();
    let mut messages = Vec::new();
    if let Some(si) = b.get("systemInstruction").filter(|v| !v.is_null()) {
        // The role of a system instruction is ignored by the API.
        unread(
            si,
            &["parts", "role"],
            "systemInstruction",
            &[],
            &mut warnings,
        );
        let mut blocks = Vec::new();
        for (j, p) in si
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let w = format!("systemInstruction.parts[{j}]");
            check_part(p, &w, &mut warnings)?;
            not_the_models(p, &w, &mut warnings)?;
            blocks.push(Block::text(str_field(p, "text", &w)?));
        }
        if blocks.is_empty() {
            warnings.push("systemInstruction: dropped: it has no text".into());
        } else {
            messages.push(Message::new(Role::System, blocks));
        }
    }
    let mut calls: HashMap<String, Vec<String>> = HashMap::new(); // name → ids, in order
    // Required by the API: without it the document is not a Gemini
    // request (a Chat or Anthropic body read as Gemini ends here).
    let contents = b
        .get("contents")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("contents: expected an array (required in a Gemini request)"))?;
    for (i, c) in contents.iter().enumerate() {
        let what = format!("contents[{i}]");
        unread(c, &["role", "parts"], &what, &[], &mut warnings);
        let role = match c.get("role").filter(|r| !r.is_null()) {
            None => "user",
            Some(r) => r
                .as_str()
                .ok_or_else(|| malformed(format!("{what}.role: expected a string")))?,
        };
        let parts = c
            .get("parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if parts.is_empty() {
            warnings.push(format!(
                "{what}: dropped: a content with no parts says nothing"
            ));
            continue;
        }
        match role {
            "model" => {
                let mut blocks = Vec::new();
                for (j, p) in parts.iter().enumerate() {
                    let w = format!("{what}.parts[{j}]");
                    check_part(p, &w, &mut warnings)?;
                    if p.get("functionResponse").is_some() {
                        return Err(malformed(format!(
                            "{w}.functionResponse: a function response belongs in a user turn"
                        )));
                    }
                    if let Some(b) = part_block(p, &w, None, i * 1000 + j)? {
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
            "user" => {
                let mut results = Vec::new();
                let mut rest = Vec::new();
                for (j, p) in parts.iter().enumerate() {
                    let w = format!("{what}.parts[{j}]");
                    check_part(p, &w, &mut warnings)?;
                    not_the_models(p, &w, &mut warnings)?;
                    if p.get("functionCall").is_some() {
                        return Err(malformed(format!(
                            "{w}.functionCall: a function call belongs in a model turn"
                        )));
                    }
                    if let Some(fr) = p.get("functionResponse") {
                        let name =
                            str_field(fr, "name", &format!("{w}.functionResponse"))?.to_string();
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
                    } else if let Some(b) = part_block(p, &w, None, j)? {
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
            other => {
                return Err(malformed(format!(
                    "{what}.role: unknown role {other:?} (user or model)"
                )));
            }
        }
    }
    let mut tools = Vec::new();
    let mut extra = Map::new();
    for (ti, t) in b
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let tw = format!("tools[{ti}]");
        let Some(decls) = t.get("functionDeclarations").and_then(Value::as_array) else {
            warnings.push(format!(
                "{tw}: dropped: built-in tools (googleSearch, codeExecution...) are not supported yet"
            ));
            continue;
        };
        unread(t, &["functionDeclarations"], &tw, &[], &mut warnings);
        for (i, d) in decls.iter().enumerate() {
            let w = format!("{tw}.functionDeclarations[{i}]");
            unread(
                d,
                &["name", "description", "parameters", "parametersJsonSchema"],
                &w,
                &[],
                &mut warnings,
            );
            let schema = match (d.get("parametersJsonSchema"), d.get("parameters")) {
                (Some(s), _) => s.clone(),
                (None, Some(p)) => openapi_to_json_schema(p),
                _ => serde_json::json!({"type": "object"}),
            };
            tools.push(ToolSpec {
                name: str_field(d, "name", &w)?.to_string(),
                description: opt_str(d, "description"),
                input_schema: schema,
                strict: None,
                cache_point: None,
            });
        }
    }
    let mut o = ModelOptions::default();
    if let Some(tc) = b.get("toolConfig").filter(|v| !v.is_null()) {
        match tool_choice(tc).filter(|_| !tools.is_empty()) {
            Some(choice) => o.tool_choice = Some(choice),
            // Anything else (no tools, several allowed names, retrieval...)
            // is kept for this API as it is.
            None => {
                extra.insert("toolConfig".into(), tc.clone());
            }
        }
    }
    let mut gen_extra = Map::new();
    if let Some(g) = b.get("generationConfig").filter(|v| !v.is_null()) {
        let g = obj(g, "generationConfig")?;
        if g.is_empty() {
            extra.insert("generationConfig".into(), Value::Object(Map::new()));
        }
        for (k, v) in g {
            match k.as_str() {
                "maxOutputTokens" => o.max_tokens = v.as_u64().map(count),
                "temperature" => o.temperature = v.as_f64(),
                "topP" => o.top_p = v.as_f64(),
                "topK" => o.top_k = v.as_u64().map(count),
                "seed" => o.seed = v.as_u64(),
                "stopSequences" => {
                    o.stop = v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                }
                "responseJsonSchema"
                    if g.get("responseMimeType").and_then(Value::as_str)
                        == Some("application/json") =>
                {
                    o.output_schema = Some(OutputSchema::new("output", v.clone()))
                }
                "responseMimeType"
                    if v == "application/json" && g.contains_key("responseJsonSchema") => {}
                "thinkingConfig" => {
                    let (r, rest) = reasoning(v);
                    o.reasoning = Some(r);
                    if !rest.is_empty() {
                        gen_extra.insert(k.clone(), Value::Object(rest));
                    }
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
            "tools",
            "toolConfig",
            "generationConfig",
            "model",
        ];
        if !known.contains(&k.as_str()) && !v.is_null() {
            extra.insert(k.clone(), v.clone());
        }
    }
    o.extra = scoped_extra(extra, NAME);
    Ok(DecodedRequest {
        model: opt_str(body, "model").map(|m| m.trim_start_matches("models/").to_string()),
        stream: false,
        request: ModelRequest {
            messages,
            tools: tools.into(),
            options: o,
        },
        warnings,
    })
}

/// A `toolConfig` the canonical tool choice holds whole.
fn tool_choice(tc: &Value) -> Option<ToolChoice> {
    if tc.as_object()?.len() != 1 {
        return None;
    }
    let fc = tc.get("functionCallingConfig")?.as_object()?;
    let allowed: Vec<&str> = match fc.get("allowedFunctionNames") {
        None => Vec::new(),
        Some(a) => a
            .as_array()?
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()?,
    };
    if fc
        .keys()
        .any(|k| k != "mode" && k != "allowedFunctionNames")
    {
        return None;
    }
    match (fc.get("mode")?.as_str()?, allowed.as_slice()) {
        ("AUTO", []) => Some(ToolChoice::Auto),
        ("NONE", []) => Some(ToolChoice::None),
        ("ANY", []) => Some(ToolChoice::Required),
        ("ANY", [one]) => Some(ToolChoice::Tool(one.to_string())),
        _ => None,
    }
}

/// `thinkingConfig` → canonical reasoning, and what it cannot hold (kept
/// as it is, for this API).
fn reasoning(v: &Value) -> (Reasoning, Map<String, Value>) {
    let mut rest = v.as_object().cloned().unwrap_or_default();
    let mut r = Reasoning::default();
    if let Some(b) = rest.get("includeThoughts").and_then(Value::as_bool) {
        r.include_thoughts = b;
        // `false` is the default: written back only when true.
        if b {
            rest.remove("includeThoughts");
        }
    }
    if let Some(n) = rest.get("thinkingBudget").and_then(Value::as_u64) {
        r.budget_tokens = Some(count(n));
        rest.remove("thinkingBudget");
    }
    if let Some(e) = rest
        .get("thinkingLevel")
        .and_then(Value::as_str)
        .filter(|l| ["MINIMAL", "LOW", "MEDIUM", "HIGH"].contains(l))
        .and_then(|l| Effort::parse(&l.to_lowercase()))
    {
        r.effort = Some(e);
        rest.remove("thinkingLevel");
    }
    (r, rest)
}
