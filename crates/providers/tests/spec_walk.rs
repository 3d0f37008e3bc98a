//! The rule behind issue 15, proved from the providers' own specifications
//! rather than hand-picked fixtures: for every request field an official
//! specification defines (each property, in each branch of each union, each
//! enum value, both booleans), a request that sets it is read into
//! canonical form and
//!
//! - written back for the same API: the field comes back exactly, or a
//!   warning names its path (a refusal naming the path also loses nothing
//!   silently);
//! - written for every other API: the body uses no field the target's
//!   specification does not define.
//!
//! Generic over the wire-format registry: every format in `WIRE_FORMATS`
//! must have its specification in `SPECS` (the Bedrock and Mistral
//! adapters add theirs). The fields that are not carried, and why (the
//! warning's words), are the list in `docs/not-carried.md` (linked from
//! `docs/providers.md`), checked here (`PARLANCE_UPDATE_DOCS=1` rewrites
//! it).

mod common;

use std::collections::BTreeMap;

use common::spec_walk::{Spec, Target, value_at};
use common::{ANTHROPIC, Api, BEDROCK, GEMINI, MISTRAL, OLLAMA, OPENAI_CHAT, RESPONSES, normalize};
use parlance_providers::{WIRE_FORMATS, WireFormat};
use serde_json::{Value, json};

/// One API's official request schema and how to give a walked field the
/// context it needs.
struct SpecOf {
    /// The wire format's name in the registry.
    format: &'static str,
    api: &'static Api,
    /// The request schema's component.
    component: &'static str,
    /// Where the conversation is in a body.
    messages_key: &'static str,
    /// Puts before the walked message what it refers to (the call a tool
    /// result answers); returns how many messages went before it.
    context: fn(&mut Value) -> usize,
    /// Spellings the API documents as the same, made one before comparing
    /// (beyond the fixture tests' `canonicalize` and `normalize`).
    equivalent: fn(&mut Value),
}

const SPECS: &[SpecOf] = &[
    SpecOf {
        format: "openai-chat",
        api: &OPENAI_CHAT,
        component: "CreateChatCompletionRequest",
        messages_key: "messages",
        context: chat_context,
        equivalent: chat_equivalent,
    },
    SpecOf {
        format: "openai-responses",
        api: &RESPONSES,
        component: "CreateResponse",
        messages_key: "input",
        context: responses_context,
        equivalent: responses_equivalent,
    },
    SpecOf {
        format: "anthropic",
        api: &ANTHROPIC,
        component: "CreateMessageParams",
        messages_key: "messages",
        context: anthropic_context,
        equivalent: anthropic_equivalent,
    },
    SpecOf {
        format: "gemini",
        api: &GEMINI,
        component: "GenerateContentRequest",
        messages_key: "contents",
        context: gemini_context,
        equivalent: gemini_equivalent,
    },
    SpecOf {
        format: "mistral",
        api: &MISTRAL,
        component: "ChatCompletionRequest",
        messages_key: "messages",
        context: mistral_context,
        equivalent: mistral_equivalent,
    },
    SpecOf {
        format: "ollama",
        api: &OLLAMA,
        component: "ChatRequest",
        messages_key: "messages",
        context: ollama_context,
        equivalent: ollama_equivalent,
    },
    SpecOf {
        format: "bedrock-converse",
        api: &BEDROCK,
        component: "ConverseRequest",
        messages_key: "messages",
        context: bedrock_context,
        equivalent: bedrock_equivalent,
    },
];

/// Bedrock: a tool result answers a `toolUse` of an assistant turn before
/// it; a field walked elsewhere gets an empty conversation (`messages` is
/// optional in the service model, for prompts Bedrock manages, but a
/// request Parlance reads is a conversation).
fn bedrock_context(body: &mut Value) -> usize {
    if body.get("messages").is_none() {
        body["messages"] = json!([]);
    }
    let Some(list) = body["messages"].as_array_mut() else {
        return 0;
    };
    let at = |m: &Value, block: &str, key: &str| -> Vec<String> {
        m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b[block][key].as_str().map(str::to_string))
            .collect()
    };
    answer_calls(
        list,
        |m| at(m, "toolResult", "toolUseId"),
        |m| at(m, "toolUse", "toolUseId"),
        |id| json!({"role": "assistant", "content": [{"toolUse": {"toolUseId": id, "name": "f", "input": {}}}]}),
    )
}

/// Bedrock: a tool result's `success` status is the default.
fn bedrock_equivalent(v: &mut Value) {
    for m in v["messages"].as_array_mut().into_iter().flatten() {
        for b in m["content"].as_array_mut().into_iter().flatten() {
            if let Some(r) = b.get_mut("toolResult").and_then(Value::as_object_mut)
                && r.get("status") == Some(&json!("success"))
            {
                r.remove("status");
            }
        }
    }
}

/// Inserts `call` before every item of `list` that answers an id no
/// earlier item defines; returns how many went before the first item.
fn answer_calls(
    list: &mut Vec<Value>,
    answers: impl Fn(&Value) -> Vec<String>,
    defines: impl Fn(&Value) -> Vec<String>,
    call: impl Fn(&str) -> Value,
) -> usize {
    let mut defined: Vec<String> = Vec::new();
    let mut before_first = 0;
    let mut i = 0;
    let mut first = true;
    while i < list.len() {
        let needed: Vec<String> = answers(&list[i])
            .into_iter()
            .filter(|id| !defined.contains(id))
            .collect();
        for id in needed {
            list.insert(i, call(&id));
            defined.push(id);
            i += 1;
            if first {
                before_first += 1;
            }
        }
        defined.extend(defines(&list[i]));
        first = false;
        i += 1;
    }
    before_first
}

fn strings_at(items: &Value, ty: &str, key: &str) -> Vec<String> {
    items
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == ty)
        .filter_map(|b| b[key].as_str().map(str::to_string))
        .collect()
}

fn anthropic_context(body: &mut Value) -> usize {
    let Some(list) = body["messages"].as_array_mut() else {
        return 0;
    };
    answer_calls(
        list,
        |m| strings_at(&m["content"], "tool_result", "tool_use_id"),
        |m| strings_at(&m["content"], "tool_use", "id"),
        |id| json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "f", "input": {}}]}),
    )
}

fn chat_context(body: &mut Value) -> usize {
    let Some(list) = body["messages"].as_array_mut() else {
        return 0;
    };
    answer_calls(
        list,
        |m| {
            (m["role"] == "tool")
                .then(|| m["tool_call_id"].as_str().map(str::to_string))
                .flatten()
                .into_iter()
                .collect()
        },
        |m| {
            m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["id"].as_str().map(str::to_string))
                .collect()
        },
        |id| json!({"role": "assistant", "tool_calls": [{"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
    )
}

fn responses_context(body: &mut Value) -> usize {
    // The specification requires nothing, but a request needs something to
    // answer (the decoder refuses a body without it, item 5): a field
    // walked elsewhere gets an empty conversation.
    let answerable = ["input", "previous_response_id", "prompt", "conversation"];
    if let Some(b) = body.as_object_mut()
        && !answerable
            .iter()
            .any(|k| b.get(*k).is_some_and(|v| !v.is_null()))
    {
        b.insert("input".into(), json!([]));
    }
    let Some(list) = body["input"].as_array_mut() else {
        return 0;
    };
    answer_calls(
        list,
        |i| {
            (i["type"] == "function_call_output")
                .then(|| i["call_id"].as_str().map(str::to_string))
                .flatten()
                .into_iter()
                .collect()
        },
        |i| {
            (i["type"] == "function_call")
                .then(|| i["call_id"].as_str().map(str::to_string))
                .flatten()
                .into_iter()
                .collect()
        },
        |id| json!({"type": "function_call", "call_id": id, "name": "f", "arguments": "{}"}),
    )
}

fn gemini_context(body: &mut Value) -> usize {
    // Required (the discovery document says so only in words): a field
    // walked elsewhere gets an empty conversation.
    if let Some(b) = body.as_object_mut()
        && b.get("contents").is_none_or(Value::is_null)
    {
        b.insert("contents".into(), json!([]));
    }
    if let Some(si) = body.get_mut("systemInstruction") {
        complete_parts(si);
    }
    let Some(list) = body["contents"].as_array_mut() else {
        return 0;
    };
    for c in list.iter_mut() {
        complete_parts(c);
        let calls = c["parts"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p.get("functionCall").is_some()));
        if calls && c.get("role").is_none() {
            c["role"] = json!("model");
        }
    }
    // Gemini pairs a response with a call by name (and id when given).
    let key = |fr: &Value| {
        format!(
            "{}\u{0}{}",
            fr["name"].as_str().unwrap_or(""),
            fr["id"].as_str().unwrap_or("")
        )
    };
    answer_calls(
        list,
        |c| {
            c["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("functionResponse").map(key))
                .collect()
        },
        |c| {
            c["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("functionCall").map(key))
                .collect()
        },
        |k| {
            let (name, id) = k.split_once('\u{0}').unwrap();
            let mut fc = json!({"name": if name.is_empty() { "f" } else { name }, "args": {}});
            if !id.is_empty() {
                fc["id"] = json!(id);
            }
            json!({"role": "model", "parts": [{"functionCall": fc}]})
        },
    )
}

/// A Gemini content (or system instruction) says something: a part of no
/// kind (one the walk built for `thought` or `videoMetadata` alone) gets
/// text, and a content without parts gets one.
fn complete_parts(c: &mut Value) {
    const KINDS: [&str; 9] = [
        "text",
        "inlineData",
        "fileData",
        "functionCall",
        "functionResponse",
        "executableCode",
        "codeExecutionResult",
        "toolCall",
        "toolResponse",
    ];
    let Some(content) = c.as_object_mut() else {
        return;
    };
    let parts = content.entry("parts").or_insert_with(|| json!([]));
    let Some(parts) = parts.as_array_mut() else {
        return;
    };
    if parts.is_empty() {
        parts.push(json!({"text": "x"}));
    }
    for p in parts.iter_mut() {
        if let Some(p) = p.as_object_mut()
            && !KINDS.iter().any(|k| p.contains_key(*k))
        {
            p.insert("text".into(), json!("x"));
        }
    }
}

/// Chat Completions: `stop` as a string is a list of one; a function
/// without `parameters` takes an empty object.
fn chat_equivalent(v: &mut Value) {
    // An assistant message of no content and no calls says nothing either way.
    for m in v["messages"].as_array_mut().into_iter().flatten() {
        if m["role"] == "assistant" && m.get("tool_calls").is_none() && m.get("content").is_none() {
            m["content"] = json!("");
        }
    }
    if let Some(s @ Value::String(_)) = v.get("stop").cloned() {
        v["stop"] = json!([s]);
    }
    for t in v["tools"].as_array_mut().into_iter().flatten() {
        if let Some(f) = t.get_mut("function").and_then(Value::as_object_mut) {
            f.entry("parameters").or_insert(json!({"type": "object"}));
        }
    }
}

/// Responses: `input` as a string is one user message; an item without a
/// `type` is a message; `status` on input items is an echo ("populated
/// when items are returned via API"); text content is a string or a list
/// of text parts alike; leading system messages are the `instructions`; an
/// image's `detail` defaults to `auto`.
fn responses_equivalent(v: &mut Value) {
    if let Some(s @ Value::String(_)) = v.get("input").cloned() {
        v["input"] = json!([{"role": "user", "content": s}]);
    }
    let Some(items) = v.get_mut("input").and_then(Value::as_array_mut) else {
        return;
    };
    for item in items.iter_mut() {
        let Some(o) = item.as_object_mut() else {
            continue;
        };
        o.remove("status");
        o.entry("type").or_insert(json!("message"));
        if let Some(Value::String(s)) = o.get("content").cloned() {
            o.insert("content".into(), json!([{"type": "input_text", "text": s}]));
        }
        for key in ["content", "output"] {
            for p in o
                .get_mut(key)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if p["type"] == "output_text" || p["type"] == "text" {
                    p["type"] = json!("input_text");
                    // Empty echoes of an earlier answer carry nothing.
                    if p["logprobs"] == json!([]) {
                        p.as_object_mut().unwrap().remove("logprobs");
                    }
                }
                if p["type"] == "input_image" && p.get("detail").is_none() {
                    p["detail"] = json!("auto");
                }
            }
        }
    }
    let mut leading = Vec::new();
    while items.first().is_some_and(|i| {
        i["type"] == "message"
            && (i["role"] == "system" || i["role"] == "developer")
            && i["content"].as_array().is_some_and(|c| {
                c.iter().all(|p| {
                    p["type"] == "input_text" && p.as_object().is_some_and(|o| o.len() == 2)
                })
            })
    }) {
        let i = items.remove(0);
        let text: String = i["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap_or(""))
            .collect();
        leading.push(text);
    }
    if !leading.is_empty() {
        let joined = match v.get("instructions").and_then(Value::as_str) {
            Some(i) => format!("{i}\n\n{}", leading.join("\n\n")),
            None => leading.join("\n\n"),
        };
        v["instructions"] = json!(joined);
    }
}

/// Anthropic: a string is one text block (`system`, as `content`); a
/// tool result without content has empty content.
fn anthropic_equivalent(v: &mut Value) {
    if let Some(Value::String(s)) = v.get("system").cloned() {
        v["system"] = json!([{"type": "text", "text": s}]);
    }
    for m in v["messages"].as_array_mut().into_iter().flatten() {
        for b in m["content"].as_array_mut().into_iter().flatten() {
            if b["type"] == "tool_result" && b.get("content").is_none() {
                b["content"] = json!("");
            }
        }
    }
}

/// Gemini: a content without a role is the user's; `thought: false` is no
/// thought; a call without `args` has none; a function declared without
/// parameters takes an empty object.
fn gemini_equivalent(v: &mut Value) {
    for c in v["contents"].as_array_mut().into_iter().flatten() {
        if c.get("role").is_none_or(Value::is_null) {
            c["role"] = json!("user");
        }
    }
    let mut contents: Vec<&mut Value> = Vec::new();
    if let Some(o) = v.as_object_mut() {
        for (k, x) in o.iter_mut() {
            match (k.as_str(), x) {
                ("contents", Value::Array(a)) => contents.extend(a.iter_mut()),
                ("systemInstruction", si @ Value::Object(_)) => contents.push(si),
                _ => {}
            }
        }
    }
    for c in contents {
        for p in c["parts"].as_array_mut().into_iter().flatten() {
            let Some(p) = p.as_object_mut() else { continue };
            if p.get("thought") == Some(&json!(false)) {
                p.remove("thought");
            }
            if let Some(fc) = p.get_mut("functionCall").and_then(Value::as_object_mut) {
                fc.entry("args").or_insert_with(|| json!({}));
            }
        }
    }
    for t in v["tools"].as_array_mut().into_iter().flatten() {
        for d in t["functionDeclarations"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            if let Some(d) = d.as_object_mut()
                && !d.contains_key("parameters")
                && !d.contains_key("parametersJsonSchema")
            {
                d.insert("parametersJsonSchema".into(), json!({"type": "object"}));
            }
        }
    }
}

/// Mistral's messages are told apart by `role`, which its schema leaves
/// optional (a discriminator with a default), so the walk may build a
/// message without one: it gets the role its fields belong to.
fn mistral_context(body: &mut Value) -> usize {
    for m in body["messages"].as_array_mut().into_iter().flatten() {
        let Some(o) = m.as_object_mut() else { continue };
        // Chunks: `type` has a default too; it is the chunk's one field.
        for c in o
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(c) = c.as_object_mut() else { continue };
            let kinds = [
                ("thinking", "thinking"),
                ("document_url", "document_url"),
                ("image_url", "image_url"),
                ("input_audio", "input_audio"),
                ("file_id", "file"),
                ("reference_ids", "reference"),
                ("text", "text"),
            ];
            if !c.contains_key("type")
                && let Some((_, ty)) = kinds.iter().find(|(k, _)| c.contains_key(*k))
            {
                c.insert("type".into(), json!(ty));
            }
        }
        if o.get("role").is_some_and(Value::is_string) {
            continue;
        }
        let thinking = o
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(|c| c.iter().any(|p| p["type"] == "thinking"));
        let role = if o.contains_key("tool_call_id") || o.contains_key("name") {
            "tool"
        } else if o.contains_key("tool_calls")
            || o.contains_key("prefix")
            || thinking
            // Only an assistant message may have no content.
            || !o.contains_key("content")
        {
            "assistant"
        } else {
            "user"
        };
        o.insert("role".into(), json!(role));
    }
    chat_context(body)
}

/// Mistral: Chat Completions' equivalences; call ids are sent as
/// Mistral's 9-character ids (an id that is one already is kept: the
/// mapping is documented in docs/providers.md); `tool_choice: "any"` is
/// `"required"`; the tool's `name` on a result is its call's; a tool's
/// `type` defaults to `function`; a last assistant message is a prefix;
/// chunk defaults (`closed: true`, `thinking` parts of type `text`, an
/// image URL string is `{"url"}`).
fn mistral_equivalent(v: &mut Value) {
    use parlance_providers::mistral::ids::call_id;
    chat_equivalent(v);
    if v["tool_choice"] == "any" {
        v["tool_choice"] = json!("required");
    }
    // `type` defaults to "function" (the only kind).
    for t in v["tools"].as_array_mut().into_iter().flatten() {
        if let Some(o) = t.as_object_mut() {
            o.entry("type").or_insert(json!("function"));
        }
    }
    // A last assistant message is a prefix (docs/providers.md).
    if let Some(last) = v["messages"].as_array_mut().and_then(|l| l.last_mut())
        && last["role"] == "assistant"
        && last.get("tool_calls").is_none()
    {
        last["prefix"] = json!(true);
    }
    for m in v["messages"].as_array_mut().into_iter().flatten() {
        // A chunk's defaults: `closed: true`, text parts of `thinking`;
        // an image URL as a string is `{"url"}`.
        for c in m["content"].as_array_mut().into_iter().flatten() {
            let Some(c) = c.as_object_mut() else { continue };
            if c.get("closed") == Some(&json!(true)) {
                c.remove("closed");
            }
            if let Some(Value::String(u)) = c.get("image_url").cloned() {
                c.insert("image_url".into(), json!({"url": u}));
            }
            for t in c
                .get_mut("thinking")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some(t) = t.as_object_mut() {
                    t.entry("type").or_insert(json!("text"));
                }
            }
        }
        if let Some(Value::String(id)) = m.get_mut("tool_call_id") {
            *id = call_id(id);
        }
        if m["role"] == "tool"
            && let Some(o) = m.as_object_mut()
        {
            o.remove("name");
        }
        for c in m["tool_calls"].as_array_mut().into_iter().flatten() {
            if let Some(Value::String(id)) = c.get_mut("id") {
                *id = call_id(id);
            }
        }
    }
}

/// Ollama: a tool result answers a call by `tool_call_id`, else by
/// `tool_name` (and the walk may build one with neither: it gets a name).
fn ollama_context(body: &mut Value) -> usize {
    let Some(list) = body["messages"].as_array_mut() else {
        return 0;
    };
    for m in list.iter_mut() {
        // The walk sets `role` to its first value (system): a field of
        // another role's message gets that role.
        if m.get("thinking").is_some() || m.get("tool_calls").is_some() {
            m["role"] = json!("assistant");
        }
        if m.get("tool_name").is_some() || m.get("tool_call_id").is_some() {
            m["role"] = json!("tool");
        }
        if m.get("images").is_some() && m["role"] == "system" {
            m["role"] = json!("user");
        }
        if m["role"] == "tool" && m.get("tool_call_id").is_none() && m.get("tool_name").is_none() {
            m["tool_name"] = json!("f");
        }
    }
    let key = |id: Option<&str>, name: Option<&str>| match (id, name) {
        (Some(id), _) => vec![format!("id:{id}")],
        (None, Some(n)) => vec![format!("name:{n}")],
        _ => vec![],
    };
    answer_calls(
        list,
        |m| {
            if m["role"] != "tool" {
                return vec![];
            }
            key(m["tool_call_id"].as_str(), m["tool_name"].as_str())
        },
        |m| {
            m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|c| {
                    let mut k = key(c["id"].as_str(), None);
                    k.extend(key(
                        None,
                        c.pointer("/function/name").and_then(Value::as_str),
                    ));
                    k
                })
                .collect()
        },
        |k| {
            let call = match k.split_once(':') {
                Some(("id", id)) => json!({"id": id, "function": {"name": "f", "arguments": {}}}),
                Some((_, name)) => json!({"function": {"name": name, "arguments": {}}}),
                None => unreachable!(),
            };
            json!({"role": "assistant", "content": "", "tool_calls": [call]})
        },
    )
}

/// Ollama: no `stream` is `true`; empty `options` are none; `options.stop` as a string is a list of
/// one; a call without arguments has none (`{}`); a function without
/// parameters takes an empty object.
fn ollama_equivalent(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        o.entry("stream").or_insert(json!(true));
        if o.get("options") == Some(&json!({})) {
            o.remove("options");
        }
    }
    if let Some(s @ Value::String(_)) = v.pointer("/options/stop").cloned() {
        v["options"]["stop"] = json!([s]);
    }
    for m in v["messages"].as_array_mut().into_iter().flatten() {
        for c in m["tool_calls"].as_array_mut().into_iter().flatten() {
            if let Some(f) = c.get_mut("function").and_then(Value::as_object_mut) {
                f.entry("arguments").or_insert(json!({}));
            }
        }
    }
    for t in v["tools"].as_array_mut().into_iter().flatten() {
        if let Some(f) = t.get_mut("function").and_then(Value::as_object_mut) {
            f.entry("parameters").or_insert(json!({"type": "object"}));
        }
    }
}

fn spec_of(format: &str) -> &'static SpecOf {
    SPECS
        .iter()
        .find(|s| s.format == format)
        .unwrap_or_else(|| panic!("no specification for the wire format {format:?} in SPECS"))
}

fn spec(s: &SpecOf) -> Spec {
    let mut doc = common::spec_document(s.api.spec);
    if s.api.spec.ends_with(".discovery.json") {
        discovery_required(&mut doc, s.api.spec);
    }
    Spec::new(&doc)
}

/// A discovery document says which fields are required only in words
/// ("Required. The name of..."): the walk gives them to its minimal items
/// (a function call with a name, a blob with its data), so a field is
/// walked inside an item the API would take. Only for building: what
/// Parlance writes is still checked against the document as it is.
fn discovery_required(doc: &mut Value, spec: &str) {
    let path = common::testdata().join("specs").join(spec);
    let raw = common::json_file(&path);
    let schemas = doc["components"]["schemas"].as_object_mut().unwrap();
    for (name, s) in raw["schemas"].as_object().unwrap() {
        let mut required: Vec<&str> = s["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, p)| {
                p["description"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("Required"))
            })
            .map(|(k, _)| k.as_str())
            .collect();
        // Inline data is a type and the bytes, said nowhere in words.
        if name == "Blob" {
            required = vec!["mimeType", "data"];
        }
        if !required.is_empty()
            && let Some(target) = schemas.get_mut(name)
        {
            target["required"] = json!(required);
        }
    }
}

#[test]
fn every_wire_format_has_its_specification() {
    for f in WIRE_FORMATS {
        let s = spec_of(f.name);
        assert_eq!(s.api.dir, f.name, "the fixtures folder of {}", f.name);
    }
}

/// What happened to one walked field in a same-API round trip.
#[derive(Debug)]
enum Outcome {
    Kept,
    /// Named in a warning: the warning.
    Named(String),
    /// Refused, the error naming the path.
    Refused(String),
    Lost(String),
}

fn same_api(f: &WireFormat, s: &SpecOf, target: &Target, body: &Value) -> Outcome {
    let path = target.path();
    let decoded = match (f.decode_request)(body) {
        Ok(d) => d,
        Err(e) => {
            let e = e.to_string();
            // A refusal may name the field, or the item of a list that holds
            // it (the item is refused as a whole).
            let items = path
                .match_indices(']')
                .map(|(i, _)| &path[..=i])
                .any(|item| names(&e, item));
            return if names(&e, &path) || items {
                Outcome::Refused(e)
            } else {
                Outcome::Lost(format!("refused without naming it: {e}"))
            };
        }
    };
    let model = decoded.model.clone().unwrap_or_else(|| "m".into());
    let encoded = match (f.encode_request)(&decoded.request, &model, decoded.stream) {
        Ok(e) => e,
        Err(e) => return Outcome::Lost(format!("read, but not written back: {e}")),
    };
    let mut want = body.clone();
    let mut got = encoded.body.clone();
    (s.api.canonicalize)(&mut want);
    (s.api.canonicalize)(&mut got);
    (s.equivalent)(&mut want);
    (s.equivalent)(&mut got);
    let (want, got) = (normalize(&want), normalize(&got));
    let want_v = value_at(&want, &target.steps);
    let got_v = value_at(&got, &target.steps);
    if want_v == got_v {
        return Outcome::Kept;
    }
    if want_v.is_none() && want == got {
        // An equivalent spelling moved it (see `equivalent`).
        return Outcome::Kept;
    }
    let warnings: Vec<&String> = decoded.warnings.iter().chain(&encoded.warnings).collect();
    if let Some(w) = warnings.iter().find(|w| names(w, &path)) {
        return Outcome::Named(w.to_string());
    }
    Outcome::Lost(format!(
        "sent {}, came back {} (warnings: {warnings:?})",
        want_v.map_or("nothing".into(), |v| v.to_string()),
        got_v.map_or("nothing".into(), |v| v.to_string()),
    ))
}

/// Whether a message names `path` or a path above it (a warning about a
/// whole block names every field in it).
fn names(message: &str, path: &str) -> bool {
    // A refusal of something inside the field names it too.
    if message.contains(&format!("{path}.")) || message.contains(&format!("{path}[")) {
        return true;
    }
    let mut p = path;
    loop {
        if message.contains(&format!("{p}:")) || message.contains(&format!("{p} ")) {
            return true;
        }
        match p.rfind(['.', '[']) {
            Some(i) if i > 0 => p = &p[..i],
            _ => return false,
        }
    }
}

struct Walked {
    targets: usize,
    kept: usize,
    lost: Vec<String>,
    /// Fields not carried: generic path → why (the warning's words, or the
    /// refusal's for a field never carried).
    not_carried: BTreeMap<String, String>,
    foreign_fields: Vec<String>,
}

fn generic(path: &str) -> String {
    let mut out = String::new();
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push_str("[]");
            }
            ']' => in_index = false,
            _ if in_index => {}
            c => out.push(c),
        }
    }
    out
}

fn walk_format(f: &WireFormat) -> Walked {
    let s = spec_of(f.name);
    let sp = spec(s);
    let root = sp.component(s.component);
    let targets = sp.targets(&root);
    let others: Vec<(&WireFormat, Spec, Value)> = WIRE_FORMATS
        .iter()
        .filter(|g| g.name != f.name)
        .map(|g| {
            let gs = spec_of(g.name);
            let gsp = spec(gs);
            let groot = gsp.component(gs.component);
            (*g, gsp, groot)
        })
        .collect();
    let mut w = Walked {
        targets: targets.len(),
        kept: 0,
        lost: Vec::new(),
        not_carried: BTreeMap::new(),
        foreign_fields: Vec::new(),
    };
    // Generic paths carried in some request, and refusals by path: a field
    // refused only because the walk built the item around it minimally (a
    // file part without its data) is carried where the item is whole.
    let mut kept = std::collections::BTreeSet::new();
    let mut refused: BTreeMap<String, String> = BTreeMap::new();
    for mut t in targets {
        let mut body = sp.build(&root, &t);
        let before = (s.context)(&mut body);
        t.shift(s.messages_key, before);
        let path = t.path();
        match same_api(f, s, &t, &body) {
            Outcome::Kept => {
                w.kept += 1;
                kept.insert(generic(&path));
            }
            Outcome::Named(why) => {
                let at = why.find(": ").map_or(why.as_str(), |i| &why[i + 2..]);
                w.not_carried
                    .entry(generic(&path))
                    .or_insert_with(|| at.to_string());
            }
            Outcome::Refused(why) => {
                let why = why.trim_start_matches("malformed request: ");
                refused
                    .entry(generic(&path))
                    .or_insert_with(|| format!("refused: {why}"));
            }
            Outcome::Lost(how) => w.lost.push(format!("{path} = {}: {how}", t.value)),
        }
        let Ok(decoded) = (f.decode_request)(&body) else {
            continue;
        };
        for (g, gsp, groot) in &others {
            let Ok(enc) = (g.encode_request)(&decoded.request, "m", decoded.stream) else {
                continue;
            };
            for extra in gsp.undefined_fields(groot, &enc.body, "") {
                w.foreign_fields.push(format!(
                    "{} {path} = {} → {}: {extra} is not in {}'s specification",
                    f.name, t.value, g.name, g.name
                ));
            }
        }
    }
    for (path, why) in refused {
        if !kept.contains(&path) {
            w.not_carried.entry(path).or_insert(why);
        }
    }
    w
}

/// The generated list of fields not carried, as it is in the docs.
const NOT_CARRIED_DOC: &str = "docs/not-carried.md";

/// `docs/not-carried.md`: per API, each field (generic path) a same-API
/// round trip does not carry, and why, in the words of the warning or
/// refusal a user gets.
fn not_carried_doc(walked: &[(&str, BTreeMap<String, String>)]) -> String {
    let mut out = String::from(
        "# Request fields not carried\n\n\
<!-- Generated by crates/providers/tests/spec_walk.rs from the official\n\
specifications in testdata/specs: PARLANCE_UPDATE_DOCS=1 cargo test -p\n\
parlance-providers --test spec_walk rewrites it. Do not edit by hand. -->\n\n\
Every request field each official specification defines was set in a\n\
request, read by Parlance and written back for the same API (see\n\
[providers.md](providers.md#what-the-tests-hold-the-adapters-to)). These\n\
are the fields that do not come back, each with the warning (or the\n\
refusal) that names it, so none is lost silently. `[]` is any item of a\n\
list; a field under a refused or dropped item is listed with it. A field\n\
refused only where the walk left the item around it incomplete, and\n\
carried elsewhere, is not listed.\n",
    );
    for (name, fields) in walked {
        out.push_str(&format!(
            "\n## {name} ({} fields)\n\n| field | why it is not carried |\n|---|---|\n",
            fields.len()
        ));
        for (path, why) in fields {
            let why = why.replace('|', "\\|").replace('\n', " ");
            out.push_str(&format!("| `{path}` | {why} |\n"));
        }
    }
    out
}

#[test]
fn every_field_of_every_spec_is_kept_or_named_and_never_sent_where_undefined() {
    let mut report = Vec::new();
    let mut failures = 0;
    let mut walked = Vec::new();
    for f in WIRE_FORMATS {
        let w = walk_format(f);
        // Ollama's published schema is small (44 fields: its messages
        // lack thinking, tool_name and ids, tested in ollama.rs).
        let least = if f.name == "ollama" { 40 } else { 50 };
        assert!(
            w.targets > least,
            "{}: the walk found only {} fields",
            f.name,
            w.targets
        );
        report.push(format!(
            "{}: {} fields walked, {} kept, {} not carried (named), {} lost, {} sent where undefined",
            f.name,
            w.targets,
            w.kept,
            w.not_carried.len(),
            w.lost.len(),
            w.foreign_fields.len()
        ));
        failures += w.lost.len() + w.foreign_fields.len();
        for l in w.lost.iter().take(400) {
            report.push(format!("  LOST {}: {l}", f.name));
        }
        for l in w.foreign_fields.iter().take(400) {
            report.push(format!("  UNDEFINED {l}"));
        }
        walked.push((f.name, w.not_carried));
    }
    assert!(failures == 0, "{}", report.join("\n"));
    eprintln!("{}", report.join("\n"));
    let doc = not_carried_doc(&walked);
    let path = format!("{}/../../{NOT_CARRIED_DOC}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("PARLANCE_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &doc).unwrap();
    } else {
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == doc,
            "{NOT_CARRIED_DOC} differs from what the walk finds; run `PARLANCE_UPDATE_DOCS=1 cargo test -p parlance-providers --test spec_walk` and commit"
        );
    }
}
