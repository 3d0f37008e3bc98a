//! Canonical request → Responses API request body.
//!
//! Parlance sends the full history every time (no `previous_response_id`):
//! reasoning items go back verbatim (id, summary, encrypted content)
//! immediately before the item that followed them, because the canonical
//! blocks keep their original order.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role, Thinking};
use parlance_model::{ModelError, ModelRequest, ToolChoice};
use serde_json::{Map, Value, json};

use super::{NAME, PROVIDER};
use crate::openai_common::{
    arguments_text, has_cache_point, mark_breakpoint, parts_with_breakpoints,
};
use crate::wire::{Encoded, at, data_url, is_own, json_text, merge_extra, unsupported, wire_id};

fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// `call_id` is limited to 64 characters.
pub(crate) fn call_id(id: &str) -> String {
    wire_id(id, 64, id_char).into_owned()
}

/// Builds the request body for `model`.
pub fn encode_request(
    req: &ModelRequest,
    model: &str,
    stream: bool,
) -> Result<Encoded, ModelError> {
    let mut warnings = Vec::new();
    let mut input = Vec::new();
    let mut instructions: Option<String> = None;
    let mut leading = true;
    for (mi, m) in req.messages.iter().enumerate() {
        match m.role {
            // System messages before the first other message are the
            // instructions (a string: one with a cache point goes in
            // the input, where a part can carry it); later ones stay in
            // place.
            Role::System if leading && !has_cache_point(&m.content) => {
                let text = m.text();
                instructions = Some(match instructions {
                    Some(prev) => format!("{prev}\n\n{text}"),
                    None => text,
                });
            }
            Role::System => {
                leading = false;
                let content = if has_cache_point(&m.content) {
                    Value::Array(input_parts(mi, &m.content, &mut warnings)?)
                } else {
                    json!(m.text())
                };
                input.push(json!({"role": "system", "content": content}));
            }
            Role::User => {
                leading = false;
                input.push(json!({"role": "user", "content": user_content(mi, &m.content, &mut warnings)?}));
            }
            Role::Assistant => {
                leading = false;
                assistant(mi, m, &mut input, &mut warnings)?;
            }
            Role::Tool => {
                leading = false;
                for (bi, b) in m.content.iter().enumerate() {
                    let r = match b {
                        Block::ToolResult { tool_result } => tool_result,
                        Block::CachePoint { cache_point } => {
                            breakpoint_after_output(
                                &mut input,
                                cache_point,
                                &at(mi, bi),
                                &mut warnings,
                            );
                            continue;
                        }
                        _ => {
                            return Err(unsupported(format!(
                                "{}: a call still waiting for approval cannot be sent to a model",
                                at(mi, bi)
                            )));
                        }
                    };
                    let w = at(mi, bi);
                    let output = match r.content.as_slice() {
                        [] => json!(""),
                        [Block::Text(t)] => json!(t.text),
                        [Block::Json { json }] => json!(json_text(json)),
                        blocks => Value::Array(parts_with_breakpoints(
                            blocks,
                            |ci, c| {
                                input_part(&format!("{w}.tool_result.content[{ci}]"), c).map(Some)
                            },
                            |ci| format!("{w}.tool_result.content[{ci}]"),
                            &mut warnings,
                        )?),
                    };
                    input.push(json!({"type": "function_call_output", "call_id": call_id(&r.tool_call_id), "output": output}));
                }
            }
        }
    }
    let o = &req.options;
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    if let Some(i) = instructions {
        body.insert("instructions".into(), json!(i));
    }
    body.insert("input".into(), Value::Array(input));
    if !req.tools.is_empty() {
        let mut tools = Vec::with_capacity(req.tools.len());
        for (i, t) in req.tools.iter().enumerate() {
            let mut tool = Map::new();
            tool.insert("type".into(), json!("function"));
            tool.insert("name".into(), json!(t.name));
            if let Some(d) = &t.description {
                tool.insert("description".into(), json!(d));
            }
            tool.insert("parameters".into(), t.input_schema.clone());
            // The API requires `strict`; false unless asked.
            tool.insert("strict".into(), json!(t.strict.unwrap_or(false)));
            if t.cache_point.is_some() {
                warnings.push(format!(
                    "tools[{i}]: cache point dropped: the Responses API has no breakpoints on tool definitions"
                ));
            }
            tools.push(Value::Object(tool));
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    // Both may come without tools (the API allows it).
    if let Some(choice) = &o.tool_choice {
        let choice = match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(p) = o.parallel_tool_calls {
        body.insert("parallel_tool_calls".into(), json!(p));
    }
    if let Some(r) = &o.reasoning {
        let mut reasoning = Map::new();
        if let Some(e) = r.effort {
            reasoning.insert("effort".into(), json!(e.as_str()));
        }
        // The summary asked for as it is; readable thoughts alone are `auto`.
        match (&r.summary, r.include_thoughts) {
            (Some(s), _) => {
                reasoning.insert("summary".into(), json!(s));
            }
            (None, true) => {
                reasoning.insert("summary".into(), json!("auto"));
            }
            (None, false) => {}
        }
        if r.budget_tokens.is_some() {
            warnings.push(
                "reasoning.budget_tokens dropped: the Responses API takes an effort, not a budget"
                    .into(),
            );
        }
        body.insert("reasoning".into(), Value::Object(reasoning));
    }
    if let Some(n) = o.max_tokens {
        body.insert("max_output_tokens".into(), json!(n));
    }
    if let Some(t) = o.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = o.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if o.top_k.is_some() {
        warnings.push("top_k dropped: the Responses API has no top-k sampling".into());
    }
    if o.seed.is_some() {
        warnings.push("seed dropped: the Responses API takes no seed".into());
    }
    if !o.stop.is_empty() {
        warnings.push("stop sequences dropped: the Responses API has none".into());
    }
    if let Some(s) = &o.output_schema {
        let mut f = Map::new();
        f.insert("type".into(), json!("json_schema"));
        f.insert("name".into(), json!(s.name));
        if let Some(d) = &s.description {
            f.insert("description".into(), json!(d));
        }
        f.insert("schema".into(), s.schema.clone());
        if let Some(strict) = s.strict {
            f.insert("strict".into(), json!(strict));
        }
        body.insert("text".into(), json!({"format": f}));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    merge_extra(&mut body, &o.extra, PROVIDER, NAME);
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

/// A cache point after a tool result: the output's last part carries it
/// (a string output becomes one text part).
fn breakpoint_after_output(
    input: &mut [Value],
    point: &parlance_format::CachePoint,
    where_: &str,
    warnings: &mut Vec<String>,
) {
    let Some(last) = input
        .last_mut()
        .filter(|i| i["type"] == "function_call_output")
    else {
        warnings.push(format!(
            "{where_}: cache point dropped: OpenAI has no breakpoint for what comes before it"
        ));
        return;
    };
    let output = &mut last["output"];
    if let Value::String(s) = output {
        *output = json!([{"type": "input_text", "text": s}]);
    }
    match output.as_array_mut().and_then(|a| a.last_mut()) {
        Some(p) => mark_breakpoint(p, point, where_, warnings),
        None => warnings.push(format!(
            "{where_}: cache point dropped: the tool result before it is empty"
        )),
    }
}

fn media_part(where_: &str, ty: &str, m: &Media) -> Result<Value, ModelError> {
    let own_file = m.file_id.is_some() && is_own(&m.provider, PROVIDER);
    match ty {
        "image" => {
            let mut part = json!({"type": "input_image", "detail": m.detail.clone().unwrap_or_else(|| "auto".into())});
            if let Some(u) = &m.url {
                part["image_url"] = json!(u);
            } else if m.data.is_some() {
                part["image_url"] = json!(data_url(where_, m)?);
            } else if own_file {
                part["file_id"] = json!(m.file_id);
            } else {
                return Err(unsupported(format!(
                    "{where_}: a file id from another provider cannot be sent to OpenAI"
                )));
            }
            Ok(part)
        }
        "file" => {
            let mut part = json!({"type": "input_file"});
            if let Some(u) = &m.url {
                part["file_url"] = json!(u);
            } else if m.data.is_some() {
                part["file_data"] = json!(data_url(where_, m)?);
            } else if own_file {
                part["file_id"] = json!(m.file_id);
            } else {
                return Err(unsupported(format!(
                    "{where_}: a file id from another provider cannot be sent to OpenAI"
                )));
            }
            if let Some(f) = &m.filename {
                part["filename"] = json!(f);
            }
            Ok(part)
        }
        _ => Err(unsupported(format!(
            "{where_}: the Responses API takes no audio input"
        ))),
    }
}

fn input_part(where_: &str, b: &Block) -> Result<Value, ModelError> {
    match b {
        Block::Text(t) => Ok(json!({"type": "input_text", "text": t.text})),
        Block::Json { json } => Ok(json!({"type": "input_text", "text": json_text(json)})),
        Block::Image { image } => media_part(where_, "image", image),
        Block::File { file } => media_part(where_, "file", file),
        Block::Audio { audio } => media_part(where_, "audio", audio),
        other => Err(unsupported(format!(
            "{where_}: {} blocks cannot be sent here",
            other.type_name()
        ))),
    }
}

fn user_content(
    mi: usize,
    content: &[Block],
    warnings: &mut Vec<String>,
) -> Result<Value, ModelError> {
    if let [Block::Text(t)] = content {
        return Ok(json!(t.text));
    }
    Ok(Value::Array(input_parts(mi, content, warnings)?))
}

/// Input parts, cache points as breakpoints on the part before them.
fn input_parts(
    mi: usize,
    content: &[Block],
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    parts_with_breakpoints(
        content,
        |bi, b| input_part(&at(mi, bi), b).map(Some),
        |bi| at(mi, bi),
        warnings,
    )
}

/// One reasoning item from its consecutive thinking blocks (an item sent
/// without an id goes back without one).
fn reasoning_item(id: Option<&str>, parts: &[&Thinking]) -> Value {
    let summary: Vec<Value> = parts
        .iter()
        .filter(|t| !t.thinking.is_empty())
        .map(|t| json!({"type": "summary_text", "text": t.thinking}))
        .collect();
    let mut item = json!({"type": "reasoning", "summary": summary});
    if let Some(id) = id {
        item["id"] = json!(id);
    }
    if let Some(enc) = parts.iter().find_map(|t| t.encrypted_content.as_ref()) {
        item["encrypted_content"] = json!(enc);
    }
    item
}

fn assistant(
    mi: usize,
    m: &Message,
    out: &mut Vec<Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ModelError> {
    let mut i = 0;
    // Text parts of one message item, by its id (None: no id).
    let mut texts: Vec<(Option<String>, String)> = Vec::new();
    let flush = |texts: &mut Vec<(Option<String>, String)>, out: &mut Vec<Value>| {
        let mut by_id: Vec<(Option<String>, Vec<String>)> = Vec::new();
        for (id, t) in texts.drain(..) {
            match by_id.last_mut() {
                Some((last, parts)) if *last == id && id.is_some() => parts.push(t),
                _ => by_id.push((id, vec![t])),
            }
        }
        for (id, parts) in by_id {
            match id {
                Some(id) => {
                    let content: Vec<Value> = parts
                        .iter()
                        .map(|t| json!({"type": "output_text", "text": t, "annotations": []}))
                        .collect();
                    out.push(json!({"type": "message", "id": id, "role": "assistant", "status": "completed", "content": content}));
                }
                None => out.push(json!({"role": "assistant", "content": parts.concat()})),
            }
        }
    };
    let mut seen_items: HashMap<String, ()> = HashMap::new();
    while i < m.content.len() {
        let w = at(mi, i);
        match &m.content[i] {
            Block::Thinking(t) if is_own(&t.provider, PROVIDER) && t.item_id.is_some() => {
                flush(&mut texts, out);
                let id = t.item_id.clone().expect("checked");
                let mut parts = vec![t];
                while let Some(Block::Thinking(next)) = m.content.get(i + 1) {
                    if next.item_id.as_deref() != Some(id.as_str()) {
                        break;
                    }
                    parts.push(next);
                    i += 1;
                }
                if seen_items.insert(id.clone(), ()).is_none() {
                    out.push(reasoning_item(Some(&id), &parts));
                }
            }
            // An item replayed without an id (ids are optional on input):
            // its summary parts follow the block holding its encrypted
            // content, which starts the next item.
            Block::Thinking(t) if is_own(&t.provider, PROVIDER) => {
                flush(&mut texts, out);
                let mut parts = vec![t];
                while let Some(Block::Thinking(next)) = m.content.get(i + 1) {
                    if !is_own(&next.provider, PROVIDER)
                        || next.item_id.is_some()
                        || next.encrypted_content.is_some()
                    {
                        break;
                    }
                    parts.push(next);
                    i += 1;
                }
                out.push(reasoning_item(None, &parts));
            }
            Block::CachePoint { .. } => warnings.push(format!(
                "{w}: cache point dropped: the Responses API has no breakpoints in assistant output"
            )),
            Block::Thinking(t) => {
                if !t.thinking.is_empty() || t.has_opaque_data() {
                    warnings.push(format!(
                        "{w}: thinking from {} dropped (the Responses API takes back only its own reasoning items)",
                        t.provider.as_deref().unwrap_or("an unknown provider")
                    ));
                }
            }
            Block::Text(t) if t.text.is_empty() => {}
            Block::Text(t) => {
                let id = t
                    .item_id
                    .as_ref()
                    .filter(|_| is_own(&t.provider, PROVIDER))
                    .cloned();
                texts.push((id, t.text.clone()));
            }
            Block::Json { json } => texts.push((None, json_text(json))),
            Block::ToolCall { tool_call: c } => {
                flush(&mut texts, out);
                let mut item = json!({"type": "function_call", "call_id": call_id(&c.id), "name": c.name, "arguments": arguments_text(c)});
                if let (Some(id), true) = (&c.item_id, is_own(&c.provider, PROVIDER)) {
                    item["id"] = json!(id);
                    item["status"] = json!("completed");
                } else if c.signature.is_some() || c.item_id.is_some() {
                    warnings.push(format!(
                        "{w}: {} tool call data dropped",
                        c.provider.as_deref().unwrap_or("foreign")
                    ));
                }
                out.push(item);
            }
            other => {
                return Err(unsupported(format!(
                    "{w}: the Responses API cannot take {} blocks from the assistant",
                    other.type_name()
                )));
            }
        }
        i += 1;
    }
    flush(&mut texts, out);
    Ok(())
}
