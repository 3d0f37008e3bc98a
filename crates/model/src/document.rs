//! The canonical request document: one model call written down — the
//! conversation, the tools offered, the options, and the model and stream
//! flag a provider request names. `parlance convert` writes it when it
//! reads a provider's request and reads it to build one; `parlance
//! validate` checks it; `schema/request.schema.json` publishes it.
//!
//! ```json
//! {"model": "gpt-5", "stream": true,
//!  "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
//!  "tools": [...], "options": {"max_tokens": 100}}
//! ```
//!
//! The reader is strict and names the JSON path of every error, as the
//! format's readers do; a bare array is just the messages.

use parlance_format::{Conversation, FormatError, ToolSpec};
use serde_json::{Map, Value, json};

use crate::{Effort, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice};

/// A request document: a model call as canonical JSON.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestDocument {
    /// The model the request names, if any.
    pub model: Option<String>,
    /// Whether the request asks for a stream.
    pub stream: bool,
    /// The conversation, tools and options.
    pub request: ModelRequest,
}

/// The fields of a request document, in canonical order.
pub const DOCUMENT_FIELDS: [&str; 5] = ["model", "stream", "messages", "tools", "options"];

const OPTION_FIELDS: [&str; 11] = [
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop",
    "seed",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
    "output_schema",
    "extra",
];

fn err(path: &str, message: impl Into<String>) -> FormatError {
    FormatError {
        path: path.to_string(),
        message: message.into(),
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.chars().count() > 40 => {
            format!("string \"{}…\"", s.chars().take(40).collect::<String>())
        }
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn object<'a>(v: &'a Value, path: &str, what: &str) -> Result<&'a Map<String, Value>, FormatError> {
    v.as_object().ok_or_else(|| {
        err(
            path,
            format!("expected {what} (an object), got {}", describe(v)),
        )
    })
}

fn only(
    m: &Map<String, Value>,
    path: &str,
    allowed: &[&str],
    what: &str,
) -> Result<(), FormatError> {
    for k in m.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(err(
                &join(path, k),
                format!(
                    "unknown field in {what} (expected one of: {})",
                    allowed.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A present, non-null field.
fn field<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    m.get(key).filter(|v| !v.is_null())
}

fn string(v: &Value, path: &str) -> Result<String, FormatError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| err(path, format!("expected a string, got {}", describe(v))))
}

fn boolean(v: &Value, path: &str) -> Result<bool, FormatError> {
    v.as_bool()
        .ok_or_else(|| err(path, format!("expected true or false, got {}", describe(v))))
}

fn u32_of(v: &Value, path: &str) -> Result<u32, FormatError> {
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            err(
                path,
                format!(
                    "expected an integer from 0 to {}, got {}",
                    u32::MAX,
                    describe(v)
                ),
            )
        })
}

fn number(v: &Value, path: &str) -> Result<f64, FormatError> {
    v.as_f64()
        .ok_or_else(|| err(path, format!("expected a number, got {}", describe(v))))
}

impl RequestDocument {
    /// Reads a request document: an object with `messages` (and `model`,
    /// `stream`, `tools`, `options`), or a bare array of messages. The
    /// conversation is checked as a whole (see
    /// [`parlance_format::parse_conversation`]).
    pub fn from_value(value: &Value) -> Result<RequestDocument, FormatError> {
        let m = match value {
            Value::Array(_) => {
                let messages = parlance_format::messages_from_value(value, "")?;
                return Ok(RequestDocument {
                    request: ModelRequest {
                        messages,
                        ..ModelRequest::default()
                    },
                    ..RequestDocument::default()
                });
            }
            Value::Object(m) => m,
            other => {
                return Err(err(
                    "",
                    format!(
                        "expected a request (an object with \"messages\", or an array of messages), got {}",
                        describe(other)
                    ),
                ));
            }
        };
        only(m, "", &DOCUMENT_FIELDS, "a request")?;
        let messages = m
            .get("messages")
            .ok_or_else(|| err("messages", "required field missing"))?;
        let mut doc = RequestDocument::default();
        doc.request.messages = parlance_format::messages_from_value(messages, "messages")?;
        if let Some(t) = field(m, "tools") {
            let items = t.as_array().ok_or_else(|| {
                err(
                    "tools",
                    format!(
                        "expected a list of tool specs (an array), got {}",
                        describe(t)
                    ),
                )
            })?;
            let mut specs: Vec<ToolSpec> = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let spec =
                    ToolSpec::from_value(item).map_err(|e| e.under(&format!("tools[{i}]")))?;
                if specs.iter().any(|t| t.name == spec.name) {
                    return Err(err(
                        &format!("tools[{i}].name"),
                        format!("duplicate tool name {:?}", spec.name),
                    ));
                }
                specs.push(spec);
            }
            doc.request.tools = specs.into();
        }
        if let Some(v) = field(m, "model") {
            doc.model = Some(string(v, "model")?);
        }
        if let Some(v) = field(m, "stream") {
            doc.stream = boolean(v, "stream")?;
        }
        if let Some(o) = field(m, "options") {
            doc.request.options = options(o, "options")?;
        }
        Ok(doc)
    }

    /// Reads a request document from JSON text.
    pub fn from_json_str(text: &str) -> Result<RequestDocument, FormatError> {
        // The conversation reader words syntax errors the same way everywhere.
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(_) => return Err(parlance_format::parse_conversation(text).unwrap_err()),
        };
        RequestDocument::from_value(&value)
    }

    /// The canonical JSON: `model`, `stream` (only when true), `messages`,
    /// `tools` and `options` (only when not empty), in that order.
    pub fn to_value(&self) -> Value {
        let mut doc = Map::new();
        if let Some(m) = &self.model {
            doc.insert("model".into(), json!(m));
        }
        if self.stream {
            doc.insert("stream".into(), json!(true));
        }
        doc.insert("messages".into(), json!(self.request.messages));
        if !self.request.tools.is_empty() {
            doc.insert("tools".into(), json!(&*self.request.tools));
        }
        if self.request.options != ModelOptions::default() {
            doc.insert("options".into(), json!(self.request.options));
        }
        Value::Object(doc)
    }

    /// The messages and tools as a conversation document.
    pub fn conversation(&self) -> Conversation {
        Conversation {
            messages: self.request.messages.clone(),
            tools: self.request.tools.to_vec(),
        }
    }
}

/// Reads `options` (see [`ModelOptions`]), every error path-named.
pub fn options(v: &Value, path: &str) -> Result<ModelOptions, FormatError> {
    let m = object(v, path, "options")?;
    only(m, path, &OPTION_FIELDS, "options")?;
    let p = |k: &str| join(path, k);
    let mut o = ModelOptions::default();
    for (k, v) in m.iter().filter(|(_, v)| !v.is_null()) {
        let at = p(k);
        match k.as_str() {
            "max_tokens" => o.max_tokens = Some(u32_of(v, &at)?),
            "temperature" => o.temperature = Some(number(v, &at)?),
            "top_p" => o.top_p = Some(number(v, &at)?),
            "top_k" => o.top_k = Some(u32_of(v, &at)?),
            "seed" => {
                o.seed = Some(v.as_u64().ok_or_else(|| {
                    err(
                        &at,
                        format!("expected a non-negative integer, got {}", describe(v)),
                    )
                })?)
            }
            "stop" => {
                let items = v.as_array().ok_or_else(|| {
                    err(
                        &at,
                        format!("expected a list of strings, got {}", describe(v)),
                    )
                })?;
                o.stop = items
                    .iter()
                    .enumerate()
                    .map(|(i, s)| string(s, &format!("{at}[{i}]")))
                    .collect::<Result<_, _>>()?;
            }
            "tool_choice" => o.tool_choice = Some(tool_choice(v, &at)?),
            "parallel_tool_calls" => o.parallel_tool_calls = Some(boolean(v, &at)?),
            "reasoning" => o.reasoning = Some(reasoning(v, &at)?),
            "output_schema" => {
                let s = object(v, &at, "an output schema")?;
                only(
                    s,
                    &at,
                    &["name", "schema", "description", "strict"],
                    "an output schema",
                )?;
                let name = s
                    .get("name")
                    .ok_or_else(|| err(&join(&at, "name"), "required field missing"))?;
                let schema = s
                    .get("schema")
                    .ok_or_else(|| err(&join(&at, "schema"), "required field missing"))?;
                o.output_schema = Some(OutputSchema {
                    name: string(name, &join(&at, "name"))?,
                    schema: bounded(schema, &join(&at, "schema"))?,
                    description: field(s, "description")
                        .map(|d| string(d, &join(&at, "description")))
                        .transpose()?,
                    strict: field(s, "strict")
                        .map(|d| boolean(d, &join(&at, "strict")))
                        .transpose()?,
                });
            }
            "extra" => {
                let e = object(v, &at, "provider options by provider or API")?;
                for (name, own) in e {
                    object(own, &join(&at, name), "options for one provider or API")?;
                }
                o.extra = bounded(v, &at)?.as_object().cloned().unwrap_or_default();
            }
            _ => unreachable!("checked by only()"),
        }
    }
    Ok(o)
}

fn bounded(v: &Value, path: &str) -> Result<Value, FormatError> {
    if parlance_format::within_depth(v, parlance_format::MAX_VALUE_DEPTH) {
        Ok(v.clone())
    } else {
        Err(err(
            path,
            format!(
                "nested deeper than {} levels of arrays and objects (the format's limit)",
                parlance_format::MAX_VALUE_DEPTH
            ),
        ))
    }
}

fn tool_choice(v: &Value, path: &str) -> Result<ToolChoice, FormatError> {
    match v {
        Value::String(s) => match s.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "none" => Ok(ToolChoice::None),
            "required" => Ok(ToolChoice::Required),
            other => Err(err(
                path,
                format!(
                    "unknown tool choice {other:?} (expected one of: auto, none, required, or {{\"tool\": NAME}})"
                ),
            )),
        },
        Value::Object(m) => {
            only(m, path, &["tool"], "a tool choice")?;
            let name = m
                .get("tool")
                .ok_or_else(|| err(&join(path, "tool"), "required field missing"))?;
            Ok(ToolChoice::Tool(string(name, &join(path, "tool"))?))
        }
        other => Err(err(
            path,
            format!(
                "expected a tool choice (a string or {{\"tool\": NAME}}), got {}",
                describe(other)
            ),
        )),
    }
}

fn reasoning(v: &Value, path: &str) -> Result<Reasoning, FormatError> {
    let m = object(v, path, "reasoning settings")?;
    only(
        m,
        path,
        &["effort", "budget_tokens", "include_thoughts", "summary"],
        "reasoning settings",
    )?;
    let mut r = Reasoning::default();
    for (k, v) in m.iter().filter(|(_, v)| !v.is_null()) {
        let at = join(path, k);
        match k.as_str() {
            "effort" => {
                let s = string(v, &at)?;
                r.effort = Some(Effort::parse(&s).ok_or_else(|| {
                    err(
                        &at,
                        format!("unknown effort {s:?} (expected one of: none, minimal, low, medium, high, xhigh, max)"),
                    )
                })?);
            }
            "budget_tokens" => r.budget_tokens = Some(u32_of(v, &at)?),
            "include_thoughts" => r.include_thoughts = boolean(v, &at)?,
            "summary" => {
                let s = string(v, &at)?;
                if !Reasoning::SUMMARIES.contains(&s.as_str()) {
                    return Err(err(
                        &at,
                        format!("unknown summary {s:?} (expected one of: auto, concise, detailed)"),
                    ));
                }
                r.summary = Some(s);
            }
            _ => unreachable!("checked by only()"),
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_and_writes_back_the_same() {
        let v = json!({"model": "m", "stream": true,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "tools": [{"name": "f", "input_schema": {"type": "object"}}],
            "options": {"max_tokens": 5, "stop": ["x"], "tool_choice": {"tool": "f"},
                "reasoning": {"effort": "high", "include_thoughts": true, "summary": "detailed"},
                "output_schema": {"name": "o", "schema": {"type": "object"}},
                "extra": {"openai-responses": {"include": ["reasoning.encrypted_content"]}}}});
        let d = RequestDocument::from_value(&v).unwrap();
        assert_eq!(d.to_value(), v);
        assert!(d.stream);
    }

    #[test]
    fn errors_name_the_path() {
        for (doc, want) in [
            (
                json!({"messages": [], "colour": 1}),
                "colour: unknown field in a request (expected one of: model, stream, messages, tools, options)",
            ),
            (json!({"model": "m"}), "messages: required field missing"),
            (
                json!({"messages": [], "options": {"max_tokens": -1}}),
                "options.max_tokens: expected an integer from 0 to 4294967295, got number -1",
            ),
            (
                json!({"messages": [], "options": {"reasoning": {"effort": "huge"}}}),
                "options.reasoning.effort: unknown effort \"huge\" (expected one of: none, minimal, low, medium, high, xhigh, max)",
            ),
            (
                json!({"messages": [], "options": {"extra": {"openai": 5}}}),
                "options.extra.openai: expected options for one provider or API (an object), got number 5",
            ),
            (
                json!({"messages": [], "tools": [{"name": "f", "input_schema": {}}, {"name": "f", "input_schema": {}}]}),
                "tools[1].name: duplicate tool name \"f\"",
            ),
            (
                json!({"messages": [{"role": "tool", "content": [{"type": "tool_result", "tool_result": {"tool_call_id": "x", "content": []}}]}]}),
                "messages[0].content[0].tool_result.tool_call_id: no earlier tool call has id \"x\"",
            ),
            (
                json!("x"),
                "(root): expected a request (an object with \"messages\", or an array of messages), got string \"x\"",
            ),
        ] {
            assert_eq!(
                RequestDocument::from_value(&doc).unwrap_err().to_string(),
                want
            );
        }
    }
}
