//! Canonical request → Gemini `generateContent` request body.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role};
use parlance_model::{Effort, ModelError, ModelRequest, ToolChoice};
use serde_json::{Map, Value, json};

use super::{NAME, PROVIDER};
use crate::wire::{
    Encoded, at, is_own, json_text, media_type, merge_extra, output_schema_extras, unsupported,
};

/// The documented stand-in signature for a function call Gemini did not
/// make (another provider's, or synthetic history): Gemini 3 requires a
/// signature on the first call of each step of the current turn.
pub const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// Builds the request body (the model goes in the URL).
pub fn encode_request(
    req: &ModelRequest,
    _model: &str,
    _stream: bool,
) -> Result<Encoded, ModelError> {
    let mut warnings = Vec::new();
    let mut system_parts = Vec::new();
    let mut contents: Vec<(String, Vec<Value>)> = Vec::new();
    // Tool call id → (name, Gemini's own id) for the function responses.
    let mut calls: HashMap<&str, (&str, Option<&str>)> = HashMap::new();
    for (mi, m) in req.messages.iter().enumerate() {
        let (role, parts) = match m.role {
            Role::System => {
                for (bi, b) in m.content.iter().enumerate() {
                    match b {
                        Block::Text(t) => system_parts.push(json!({"text": t.text})),
                        other => no_cache_point(&at(mi, bi), other, &mut warnings),
                    }
                }
                continue;
            }
            Role::User => ("user", user_parts(mi, &m.content, &mut warnings)?),
            Role::Assistant => ("model", model_parts(mi, m, &mut calls, &mut warnings)?),
            Role::Tool => ("user", response_parts(mi, m, &calls, &mut warnings)?),
        };
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some((r, existing)) if r == role && m.role != Role::Assistant => existing.extend(parts),
            _ => contents.push((role.to_string(), parts)),
        }
    }
    let contents: Vec<Value> = contents
        .into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect();

    let o = &req.options;
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if !system_parts.is_empty() {
        body.insert("systemInstruction".into(), json!({"parts": system_parts}));
    }
    if !req.tools.is_empty() {
        for (i, t) in req.tools.iter().enumerate() {
            if t.cache_point.is_some() {
                warnings.push(format!(
                    "tools[{i}]: cache point dropped: Gemini has no cache breakpoints (it caches through cachedContent)"
                ));
            }
            if t.strict == Some(true) {
                warnings.push(format!(
                    "tools[{i}].strict dropped: Gemini has no strict tool schemas"
                ));
            }
        }
        let decls: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                let mut d = Map::new();
                d.insert("name".into(), json!(t.name));
                if let Some(desc) = &t.description {
                    d.insert("description".into(), json!(desc));
                }
                // `parameters` is an OpenAPI subset that refuses many JSON
                // Schema keywords; `parametersJsonSchema` takes them all.
                d.insert("parametersJsonSchema".into(), t.input_schema.clone());
                Value::Object(d)
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
        if let Some(choice) = &o.tool_choice {
            let config = match choice {
                ToolChoice::Auto => json!({"mode": "AUTO"}),
                ToolChoice::None => json!({"mode": "NONE"}),
                ToolChoice::Required => json!({"mode": "ANY"}),
                ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
            };
            body.insert(
                "toolConfig".into(),
                json!({"functionCallingConfig": config}),
            );
        }
        if o.parallel_tool_calls.is_some() {
            warnings
                .push("parallel_tool_calls dropped: Gemini decides how many calls to make".into());
        }
    } else if o.tool_choice.is_some() || o.parallel_tool_calls.is_some() {
        warnings.push("tool_choice dropped: Gemini takes it only with tools".into());
    }
    let mut generation = Map::new();
    if let Some(n) = o.max_tokens {
        generation.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(t) = o.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    if let Some(p) = o.top_p {
        generation.insert("topP".into(), json!(p));
    }
    if let Some(k) = o.top_k {
        generation.insert("topK".into(), json!(k));
    }
    if !o.stop.is_empty() {
        generation.insert("stopSequences".into(), json!(o.stop));
    }
    if let Some(s) = o.seed {
        generation.insert("seed".into(), json!(s));
    }
    if let Some(s) = &o.output_schema {
        output_schema_extras(s, "Gemini", &mut warnings);
        generation.insert("responseMimeType".into(), json!("application/json"));
        generation.insert("responseJsonSchema".into(), s.schema.clone());
    }
    if let Some(r) = &o.reasoning {
        let mut t = Map::new();
        if r.wants_thoughts() {
            t.insert("includeThoughts".into(), json!(true));
        }
        if let Some(b) = r.budget_tokens {
            t.insert("thinkingBudget".into(), json!(b));
        }
        match r.effort {
            Some(Effort::None) => {
                t.insert("thinkingBudget".into(), json!(0));
            }
            Some(e) => {
                let level = match e {
                    Effort::Minimal => "MINIMAL",
                    Effort::Low => "LOW",
                    Effort::Medium => "MEDIUM",
                    _ => "HIGH",
                };
                t.insert("thinkingLevel".into(), json!(level));
            }
            None => {}
        }
        generation.insert("thinkingConfig".into(), Value::Object(t));
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    merge_extra(&mut body, &o.extra, PROVIDER, NAME);
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

fn media_part(where_: &str, m: &Media) -> Result<Value, ModelError> {
    if let Some(d) = &m.data {
        return Ok(json!({"inlineData": {"mimeType": media_type(where_, m)?, "data": d}}));
    }
    let uri = m
        .url
        .as_ref()
        .or(m.file_id.as_ref().filter(|_| is_own(&m.provider, PROVIDER)))
        .ok_or_else(|| {
            unsupported(format!(
                "{where_}: a file id from another provider cannot be sent to Gemini"
            ))
        })?;
    // The type is optional with a URI (Gemini infers it when it can).
    Ok(match &m.media_type {
        Some(mt) => json!({"fileData": {"mimeType": mt, "fileUri": uri}}),
        None => json!({"fileData": {"fileUri": uri}}),
    })
}

/// Gemini has no cache breakpoints (explicit caching is a cachedContent
/// resource): a cache point is dropped, named.
fn no_cache_point(where_: &str, b: &Block, warnings: &mut Vec<String>) {
    if matches!(b, Block::CachePoint { .. }) {
        warnings.push(format!(
            "{where_}: cache point dropped: Gemini has no cache breakpoints (it caches through cachedContent)"
        ));
    }
}

fn part(where_: &str, b: &Block) -> Result<Value, ModelError> {
    match b {
        Block::Text(t) => Ok(json!({"text": t.text})),
        Block::Json { json } => Ok(json!({"text": json_text(json)})),
        Block::Image { image: m } | Block::Audio { audio: m } | Block::File { file: m } => {
            media_part(where_, m)
        }
        other => Err(unsupported(format!(
            "{where_}: {} blocks cannot be sent here",
            other.type_name()
        ))),
    }
}

fn user_parts(
    mi: usize,
    content: &[Block],
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    let mut out = Vec::with_capacity(content.len());
    for (bi, b) in content.iter().enumerate() {
        if matches!(b, Block::CachePoint { .. }) {
            no_cache_point(&at(mi, bi), b, warnings);
            continue;
        }
        out.push(part(&at(mi, bi), b)?);
    }
    Ok(out)
}

fn model_parts<'a>(
    mi: usize,
    m: &'a Message,
    calls: &mut HashMap<&'a str, (&'a str, Option<&'a str>)>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    let mut parts = Vec::new();
    let mut step_has_signature = false;
    let mut first_call_in_step: Option<usize> = None;
    for (bi, b) in m.content.iter().enumerate() {
        let w = at(mi, bi);
        match b {
            Block::Thinking(t) if is_own(&t.provider, PROVIDER) => {
                let mut p = json!({"text": t.thinking, "thought": true});
                if let Some(s) = &t.signature {
                    p["thoughtSignature"] = json!(s);
                    step_has_signature = true;
                }
                parts.push(p);
            }
            Block::Thinking(t) => {
                if !t.thinking.is_empty() || t.has_opaque_data() {
                    warnings.push(format!(
                        "{w}: thinking from {} dropped (Gemini takes back only its own thought signatures)",
                        t.provider.as_deref().unwrap_or("an unknown provider")
                    ));
                }
            }
            Block::Text(t) => {
                let mut p = json!({"text": t.text});
                if let (Some(s), true) = (&t.signature, is_own(&t.provider, PROVIDER)) {
                    p["thoughtSignature"] = json!(s);
                } else if t.text.is_empty() {
                    continue;
                }
                parts.push(p);
            }
            Block::Json { json } => parts.push(json!({"text": json_text(json)})),
            Block::ToolCall { tool_call: c } => {
                let own = is_own(&c.provider, PROVIDER);
                let gemini_id = c.item_id.as_deref().filter(|_| own);
                calls.insert(&c.id, (&c.name, gemini_id));
                let args = match &c.arguments {
                    Value::Object(_) => c.arguments.clone(),
                    _ => json!({}),
                };
                let mut fc = json!({"name": c.name, "args": args});
                if let Some(id) = gemini_id {
                    fc["id"] = json!(id);
                }
                let mut p = json!({"functionCall": fc});
                if let (Some(s), true) = (&c.signature, own) {
                    p["thoughtSignature"] = json!(s);
                    step_has_signature = true;
                } else if c.signature.is_some() {
                    warnings.push(format!(
                        "{w}: {} tool call signature dropped",
                        c.provider.as_deref().unwrap_or("foreign")
                    ));
                }
                first_call_in_step.get_or_insert(parts.len());
                parts.push(p);
            }
            Block::CachePoint { .. } => no_cache_point(&w, b, warnings),
            other => {
                return Err(unsupported(format!(
                    "{w}: Gemini cannot take {} blocks from the model",
                    other.type_name()
                )));
            }
        }
    }
    // A step of calls Gemini did not sign gets the documented stand-in on
    // its first call (the only one that needs a signature).
    if let Some(i) = first_call_in_step
        && !step_has_signature
    {
        parts[i]["thoughtSignature"] = json!(SKIP_SIGNATURE);
    }
    Ok(parts)
}

fn response_parts(
    mi: usize,
    m: &Message,
    calls: &HashMap<&str, (&str, Option<&str>)>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    let mut parts = Vec::new();
    for (bi, b) in m.content.iter().enumerate() {
        let r = match b {
            Block::ToolResult { tool_result } => tool_result,
            Block::CachePoint { .. } => {
                no_cache_point(&at(mi, bi), b, warnings);
                continue;
            }
            _ => {
                return Err(unsupported(format!(
                    "{}: a call still waiting for approval cannot be sent to a model",
                    at(mi, bi)
                )));
            }
        };
        for (ci, c) in r.content.iter().enumerate() {
            match c {
                Block::Text(_) | Block::Json { .. } => {}
                Block::CachePoint { .. } => no_cache_point(
                    &format!("{}.tool_result.content[{ci}]", at(mi, bi)),
                    c,
                    warnings,
                ),
                other => warnings.push(format!(
                    "{}.tool_result.content[{ci}]: {} dropped: a Gemini function response carries text and JSON",
                    at(mi, bi),
                    other.type_name()
                )),
            }
        }
        let (name, gemini_id) = match calls.get(r.tool_call_id.as_str()) {
            Some((n, id)) => (n.to_string(), *id),
            None => match &r.name {
                Some(n) => (n.clone(), None),
                None => {
                    return Err(unsupported(format!(
                        "{}: Gemini needs the tool's name with each result",
                        at(mi, bi)
                    )));
                }
            },
        };
        // `response` must be an object: a JSON object result as it is,
        // anything else under "output" (or "error" for a failure).
        let key = if r.is_error() { "error" } else { "output" };
        let response = match r.content.as_slice() {
            [
                Block::Json {
                    json: v @ Value::Object(_),
                },
            ] if !r.is_error() => v.clone(),
            [Block::Json { json }] => json!({ key: json }),
            blocks => json!({ key: blocks.iter().map(|b| match b {
                Block::Text(t) => t.text.clone(),
                Block::Json { json } => json_text(json),
                _ => String::new(),
            }).collect::<Vec<_>>().join("\n") }),
        };
        let mut fr = json!({"name": name, "response": response});
        if let Some(id) = gemini_id {
            fr["id"] = json!(id);
        }
        parts.push(json!({"functionResponse": fr}));
    }
    Ok(parts)
}
