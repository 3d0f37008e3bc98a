//! Test support: the recorded fixtures and the official specs (carried in
//! the repository's `testdata/`), a validator for the official OpenAPI
//! request schemas, and
//! a uniform view of each provider's pure translation functions.
#![allow(dead_code)]

pub mod http;
pub mod spec_walk;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use parlance_format::{Block, Message};
use parlance_model::{ModelError, ModelRequest, StreamEvent};
use parlance_providers::transport::StreamDecoder;
use parlance_providers::{
    DecodedRequest, Encoded, anthropic, bedrock, gemini, mistral, ollama, openai_chat,
    openai_responses,
};
use serde_json::{Value, json};

/// The repository's `testdata/`: `providers/<api>/` holds the recorded
/// payloads, `specs/<provider>/` the official API descriptions.
pub fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// A recorded payload: `fixture("anthropic", "x.yaml")`.
pub fn fixture(dir: &str, name: &str) -> PathBuf {
    testdata().join("providers").join(dir).join(name)
}

pub fn fixture_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(testdata().join("providers").join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

pub fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn json_file(path: &std::path::Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn yaml_file(path: &std::path::Path) -> Value {
    // YAML integers beyond 64 bits (OpenAI's `seed` bounds, written as
    // ±9223372036854776000) are read as floats, as a JSON reader would.
    let text = read(path)
        .replace(": -9223372036854776000\n", ": -9.223372036854776e18\n")
        .replace(": 9223372036854776000\n", ": 9.223372036854776e18\n");
    let y: serde_yaml::Value =
        serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::to_value(y).unwrap()
}

/// A recorded body: text, or base64 (`!!binary`: AWS event-stream
/// frames, or JSON).
pub fn body_bytes(v: &Value) -> Vec<u8> {
    use base64::Engine;
    match v {
        Value::String(t) => {
            let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
            let looks_b64 = !t.trim_start().starts_with(['{', '[', ':'])
                && !t.contains("data:")
                && !compact.is_empty()
                && compact.len().is_multiple_of(4);
            match looks_b64.then(|| base64::engine::general_purpose::STANDARD.decode(&compact)) {
                Some(Ok(bytes)) => bytes,
                _ => t.as_bytes().to_vec(),
            }
        }
        Value::Null => Vec::new(),
        other => other.to_string().into_bytes(),
    }
}

/// The thinking blocks of a message.
pub fn thinking(m: &Message) -> Vec<&parlance_format::Thinking> {
    m.content
        .iter()
        .filter_map(|b| match b {
            Block::Thinking(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// One provider API's pure functions.
pub struct Api {
    pub dir: &'static str,
    /// The path part of the API's URL, to pick its calls out of cassettes.
    pub endpoint: &'static str,
    pub spec: &'static str,
    pub request_component: &'static str,
    pub decode_request: fn(&Value) -> Result<DecodedRequest, ModelError>,
    pub encode_request: fn(&ModelRequest, &str, bool) -> Result<Encoded, ModelError>,
    pub decode_response: fn(&Value) -> Result<Message, ModelError>,
    pub new_stream: fn() -> Box<dyn StreamDecoder>,
    pub classify: fn(u16, &[u8], Option<std::time::Duration>) -> ModelError,
    /// Where the conversation is in a request body.
    pub messages_key: &'static str,
    /// Equivalent spellings this API accepts, made one before comparing.
    pub canonicalize: fn(&mut Value),
}

pub const OPENAI_CHAT: Api = Api {
    dir: "openai-chat",
    endpoint: "/chat/completions",
    spec: "openai/openapi.trimmed.json",
    request_component: "CreateChatCompletionRequest",
    decode_request: openai_chat::decode_request,
    encode_request: openai_chat::encode_request,
    decode_response: openai_chat::decode_response,
    new_stream: || Box::new(openai_chat::stream::ChatStream::new()),
    classify: openai_chat::classify,
    messages_key: "messages",
    canonicalize: |_| {},
};

pub const ANTHROPIC: Api = Api {
    dir: "anthropic",
    endpoint: "/v1/messages",
    spec: "anthropic/openapi.trimmed.json",
    request_component: "CreateMessageParams",
    decode_request: anthropic::decode_request,
    encode_request: anthropic::encode_request,
    decode_response: anthropic::decode_response,
    new_stream: || Box::new(anthropic::stream::AnthropicStream::new()),
    classify: anthropic::classify,
    messages_key: "messages",
    canonicalize: |_| {},
};

pub const RESPONSES: Api = Api {
    dir: "openai-responses",
    endpoint: "/responses",
    spec: "openai/openapi.trimmed.json",
    request_component: "CreateResponse",
    decode_request: openai_responses::decode_request,
    encode_request: openai_responses::encode_request,
    decode_response: openai_responses::decode_response,
    new_stream: || Box::new(openai_responses::stream::ResponsesStream::new()),
    classify: openai_responses::classify,
    messages_key: "input",
    canonicalize: canonicalize_responses,
};

pub const GEMINI: Api = Api {
    dir: "gemini",
    endpoint: "generativelanguage.googleapis.com",
    spec: "google/generativelanguage-v1beta.discovery.json",
    request_component: "GenerateContentRequest",
    decode_request: gemini::decode_request,
    encode_request: gemini::encode_request,
    decode_response: gemini::decode_response,
    new_stream: || Box::new(gemini::stream::GeminiStream::new()),
    classify: gemini::classify,
    messages_key: "contents",
    canonicalize: canonicalize_gemini,
};

pub const MISTRAL: Api = Api {
    dir: "mistral",
    endpoint: "/v1/chat/completions",
    spec: "mistral/openapi.trimmed.json",
    request_component: "ChatCompletionRequest",
    decode_request: mistral::decode_request,
    encode_request: mistral::encode_request,
    decode_response: mistral::decode_response,
    new_stream: || Box::new(mistral::stream::MistralStream::new()),
    classify: mistral::classify,
    messages_key: "messages",
    canonicalize: |_| {},
};

pub const OLLAMA: Api = Api {
    dir: "ollama",
    endpoint: "/api/chat",
    spec: "ollama/openapi.trimmed.json",
    request_component: "ChatRequest",
    decode_request: ollama::decode_request,
    encode_request: ollama::encode_request,
    decode_response: ollama::decode_response,
    new_stream: || Box::new(ollama::stream::OllamaStream::new()),
    classify: ollama::classify,
    messages_key: "messages",
    canonicalize: |_| {},
};

pub const BEDROCK: Api = Api {
    dir: "bedrock-converse",
    endpoint: "bedrock-runtime",
    spec: "bedrock/bedrock-runtime-2023-09-30.service-2.json",
    request_component: "ConverseRequest",
    decode_request: bedrock::decode_request,
    encode_request: bedrock::encode_request,
    decode_response: bedrock::decode_response,
    new_stream: || Box::new(bedrock::stream::BedrockStream::new()),
    classify: bedrock::classify,
    messages_key: "messages",
    canonicalize: canonicalize_bedrock,
};

/// Bedrock: the model id is the URL's (SDKs echo it as `modelId` in what
/// they record); an empty `system` or `inferenceConfig` is none; a
/// `toolUse.type` of `tool_use` is an SDK's echo of the default (the
/// service model's enum knows only `server_tool_use`).
fn canonicalize_bedrock(v: &mut Value) {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(tu)) = m.get_mut("toolUse")
                    && tu.get("type") == Some(&json!("tool_use"))
                {
                    tu.remove("type");
                }
                // A result is a success unless it says otherwise.
                if let Some(Value::Object(tr)) = m.get_mut("toolResult")
                    && tr.get("status") == Some(&json!("success"))
                {
                    tr.remove("status");
                }
                m.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    if let Some(o) = v.as_object_mut() {
        o.remove("modelId");
        for k in ["system", "inferenceConfig"] {
            if o.get(k).is_some_and(|x| x == &json!([]) || x == &json!({})) {
                o.remove(k);
            }
        }
    }
    walk(v);
}

/// Responses: an empty assistant message carries nothing; a function
/// call's item id and status are optional echoes.
fn canonicalize_responses(v: &mut Value) {
    if let Some(items) = v.get_mut("input").and_then(Value::as_array_mut) {
        items.retain(|i| {
            !(i["role"] == "assistant" && (i["content"] == json!("") || i["content"] == json!([])))
        });
        // Item ids of calls are optional echoes (some SDKs drop them).
        for i in items.iter_mut().filter(|i| i["type"] == "function_call") {
            let o = i.as_object_mut().unwrap();
            o.remove("id");
            o.remove("status");
        }
    }
}

/// Gemini (proto JSON): snake_case field names are camelCase ones; a
/// `parameters` schema (OpenAPI subset, upper-case types) is the same as
/// `parametersJsonSchema` in lower case; `functionCall`/`functionResponse`
/// ids are optional echoes; `systemInstruction.role` is ignored; the model
/// is in the URL; url-safe base64 signatures are the same bytes.
fn canonicalize_gemini(v: &mut Value) {
    const NAMES: [(&str, &str); 19] = [
        ("parameters_json_schema", "parametersJsonSchema"),
        ("function_declarations", "functionDeclarations"),
        ("function_call", "functionCall"),
        ("function_response", "functionResponse"),
        ("thought_signature", "thoughtSignature"),
        ("system_instruction", "systemInstruction"),
        ("generation_config", "generationConfig"),
        ("tool_config", "toolConfig"),
        ("function_calling_config", "functionCallingConfig"),
        ("allowed_function_names", "allowedFunctionNames"),
        ("inline_data", "inlineData"),
        ("file_data", "fileData"),
        ("mime_type", "mimeType"),
        ("file_uri", "fileUri"),
        ("response_modalities", "responseModalities"),
        ("thinking_config", "thinkingConfig"),
        ("include_thoughts", "includeThoughts"),
        ("thinking_budget", "thinkingBudget"),
        ("max_output_tokens", "maxOutputTokens"),
    ];
    fn walk(v: &mut Value, in_schema: bool) {
        match v {
            Value::Object(m) => {
                if !in_schema {
                    for (snake, camel) in NAMES {
                        if let Some(x) = m.remove(snake) {
                            m.insert(camel.into(), x);
                        }
                    }
                    if let Some(p) = m.remove("parameters") {
                        m.insert(
                            "parametersJsonSchema".into(),
                            gemini::decode_request::openapi_to_json_schema(&p),
                        );
                    }
                    if let Some(Value::String(s)) = m.get_mut("thoughtSignature") {
                        *s = s.replace('-', "+").replace('_', "/");
                    }
                    for key in ["functionCall", "functionResponse"] {
                        if let Some(Value::Object(fc)) = m.get_mut(key) {
                            fc.remove("id");
                        }
                    }
                    if let Some(Value::Object(si)) = m.get_mut("systemInstruction") {
                        si.remove("role");
                    }
                }
                for (k, x) in m.iter_mut() {
                    let schema =
                        in_schema || k == "parametersJsonSchema" || k == "args" || k == "response";
                    walk(x, schema);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, in_schema)),
            _ => {}
        }
    }
    if let Some(o) = v.as_object_mut() {
        o.remove("model");
    }
    walk(v, false);
}

impl Api {
    /// Decodes a stream given as `(event, data)` pairs; returns the events
    /// and the final message.
    pub fn decode_stream(
        &self,
        events: &[(String, String)],
    ) -> Result<(Vec<StreamEvent>, Message), ModelError> {
        let mut d = (self.new_stream)();
        let mut out = Vec::new();
        for (name, data) in events {
            if data.is_empty() {
                continue;
            }
            out.extend(d.event(name, data)?);
        }
        out.extend(d.end()?);
        match out.last() {
            Some(StreamEvent::Done(m)) => {
                let m = m.clone();
                Ok((out, m))
            }
            _ => panic!("a stream must end with Done"),
        }
    }

    /// Errors of the official request schema for `body` (empty: valid).
    pub fn spec_errors(&self, body: &Value) -> Vec<String> {
        spec_errors(self.spec, self.request_component, body)
    }

    /// Fails, naming each error and showing the body, unless `body` is a
    /// valid request by the API's official description.
    #[track_caller]
    pub fn assert_valid(&self, body: &Value) {
        let errors = self.spec_errors(body);
        assert!(errors.is_empty(), "{}: {errors:#?}\n{body:#}", self.dir);
    }
}

/// An official specification from `testdata/specs/`, as OpenAPI-style
/// JSON Schema (a discovery document converted).
pub fn spec_document(spec: &str) -> Value {
    spec_doc(spec)
}

fn spec_doc(spec: &str) -> Value {
    static DOCS: OnceLock<Mutex<HashMap<String, &'static Value>>> = OnceLock::new();
    let docs = DOCS.get_or_init(Default::default);
    let mut docs = docs.lock().unwrap_or_else(|e| e.into_inner());
    let doc = docs.entry(spec.to_string()).or_insert_with(|| {
        let path = testdata().join("specs").join(spec);
        let mut v = if spec.ends_with(".discovery.json") {
            discovery_to_openapi(&json_file(&path))
        } else if spec.ends_with(".service-2.json") {
            service2_to_openapi(&json_file(&path))
        } else {
            json_file(&path)
        };
        discriminated_one_of_as_any_of(&mut v);
        if spec.starts_with("ollama/") {
            ollama_documented_fields(&mut v);
        }
        Box::leak(Box::new(v))
    });
    (*doc).clone()
}

/// Ollama's OpenAPI document lags its API reference (`api.md`) and wire
/// types (`api/types.go`) at the same commit: messages also have
/// `thinking`, `tool_name` and `tool_call_id`, calls an `id` and
/// `function.index`, functions a `description` (see
/// testdata/specs/README.md). Those fields are added, as documented.
fn ollama_documented_fields(doc: &mut Value) {
    let s = &mut doc["components"]["schemas"];
    for (k, t) in [
        ("thinking", "string"),
        ("tool_name", "string"),
        ("tool_call_id", "string"),
    ] {
        s["ChatMessage"]["properties"][k] = json!({"type": t});
    }
    s["ToolCall"]["properties"]["id"] = json!({"type": "string"});
    s["ToolCall"]["properties"]["function"]["properties"]["index"] = json!({"type": "integer"});
    s["ToolDefinition"]["properties"]["function"]["properties"]["description"] =
        json!({"type": "string"});
}

/// Validates `body` against `#/components/schemas/{component}` of an
/// OpenAPI 3.1 document (its schemas are JSON Schema 2020-12).
pub fn spec_errors(spec: &str, component: &str, body: &Value) -> Vec<String> {
    static VALIDATORS: OnceLock<Mutex<HashMap<String, &'static jsonschema::Validator>>> =
        OnceLock::new();
    let validators = VALIDATORS.get_or_init(Default::default);
    let key = format!("{spec}#{component}");
    let validator = {
        let mut map = validators.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry(key).or_insert_with(|| {
            let doc = spec_doc(spec);
            let root = json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$ref": format!("#/components/schemas/{component}"),
                "components": doc["components"],
            });
            let v = jsonschema::options()
                .build(&root)
                .unwrap_or_else(|e| panic!("{spec}: {e}"));
            Box::leak(Box::new(v))
        })
    };
    validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Removes what is equal in meaning but written differently, so request
/// bodies compare field for field: null fields, empty annotations,
/// `is_error: false`, `stream: false`, Anthropic's echoed `caller`, string
/// content (= one text block), and integer-vs-float spellings.
pub fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, val) in m {
                let skip = val.is_null()
                    || (k == "annotations" && val == &json!([]))
                    || (k == "is_error" && val == &json!(false))
                    || (k == "stream" && val == &json!(false))
                    || k == "caller";
                if skip {
                    continue;
                }
                let val = if k == "content" {
                    match val {
                        Value::String(s) if s.is_empty() => json!([]),
                        Value::String(s) => json!([{"type": "text", "text": s}]),
                        other => other.clone(),
                    }
                } else {
                    val.clone()
                };
                out.insert(k.clone(), normalize(&val));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Number(n) => json!(n.as_f64()),
        other => other.clone(),
    }
}

/// Lines of `a.chunks.txt` (one JSON payload per line) as SSE pairs.
pub fn chunk_lines(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| (String::new(), l.to_string()))
        .collect()
}

/// A Google discovery document's schemas as OpenAPI-style JSON Schema:
/// `$ref: "Name"` → `#/components/schemas/Name`; objects with declared
/// properties refuse unknown ones (as the API does: "Unknown name"); int64
/// fields may be JSON strings; `any` is anything.
pub fn discovery_to_openapi(doc: &Value) -> Value {
    fn convert(s: &Value) -> Value {
        let Some(m) = s.as_object() else {
            return s.clone();
        };
        let mut out = serde_json::Map::new();
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            out.insert("$ref".into(), json!(format!("#/components/schemas/{r}")));
            return Value::Object(out);
        }
        match m.get("type").and_then(Value::as_str) {
            Some("any") | None => {}
            Some("integer")
                if matches!(
                    m.get("format").and_then(Value::as_str),
                    Some("int64" | "uint64")
                ) =>
            {
                out.insert("type".into(), json!(["integer", "string"]));
            }
            Some(t) => {
                out.insert("type".into(), json!(t));
            }
        }
        if let Some(e) = m.get("enum") {
            out.insert("enum".into(), e.clone());
        }
        if let Some(items) = m.get("items") {
            out.insert("items".into(), convert(items));
        }
        if let Some(Value::Object(props)) = m.get("properties") {
            let p: serde_json::Map<String, Value> =
                props.iter().map(|(k, v)| (k.clone(), convert(v))).collect();
            out.insert("properties".into(), Value::Object(p));
            out.insert("additionalProperties".into(), json!(false));
        }
        if let Some(ap) = m.get("additionalProperties") {
            out.insert("additionalProperties".into(), convert(ap));
        }
        Value::Object(out)
    }
    let mut schemas: serde_json::Map<String, Value> = doc["schemas"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), convert(v)))
        .collect();
    // A few names are referenced but not defined in the document: anything goes.
    let text = Value::Object(schemas.clone()).to_string();
    for r in text.split("#/components/schemas/").skip(1) {
        let name: String = r.chars().take_while(|c| *c != '"').collect();
        schemas.entry(name).or_insert_with(|| json!({}));
    }
    json!({"components": {"schemas": schemas}})
}

/// An AWS service model (botocore `service-2.json`, protocol rest-json)
/// as OpenAPI-style JSON Schema: a structure's members are its
/// properties (none other allowed), `required` as listed, members bound
/// to the URI, headers or query left out (they are not in the body); a
/// union holds exactly one member; strings keep their enums, lengths and
/// patterns, numbers their ranges, lists their lengths; a blob is base64
/// text; a document is any JSON.
pub fn service2_to_openapi(doc: &Value) -> Value {
    let mut schemas = serde_json::Map::new();
    for (name, s) in doc["shapes"].as_object().unwrap() {
        let mut out = serde_json::Map::new();
        let num = |out: &mut serde_json::Map<String, Value>, ty: &str| {
            out.insert("type".into(), json!(ty));
            if let Some(m) = s.get("min") {
                out.insert("minimum".into(), m.clone());
            }
            if let Some(m) = s.get("max") {
                out.insert("maximum".into(), m.clone());
            }
        };
        let document = s.get("document") == Some(&json!(true));
        match s["type"].as_str().unwrap() {
            // A document (`"document": true`): any JSON.
            "structure" if document => {}
            "structure" => {
                let mut props = serde_json::Map::new();
                for (m, def) in s["members"].as_object().unwrap() {
                    if def.get("location").is_some() {
                        continue;
                    }
                    let r = format!("#/components/schemas/{}", def["shape"].as_str().unwrap());
                    props.insert(m.clone(), json!({"$ref": r}));
                }
                let required: Vec<Value> = s
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|r| props.contains_key(r.as_str().unwrap()))
                    .cloned()
                    .collect();
                out.insert("type".into(), json!("object"));
                out.insert("properties".into(), Value::Object(props));
                out.insert("required".into(), Value::Array(required));
                out.insert("additionalProperties".into(), json!(false));
                if s.get("union") == Some(&json!(true)) {
                    out.insert("minProperties".into(), json!(1));
                    out.insert("maxProperties".into(), json!(1));
                }
            }
            "list" => {
                let r = format!(
                    "#/components/schemas/{}",
                    s["member"]["shape"].as_str().unwrap()
                );
                out.insert("type".into(), json!("array"));
                out.insert("items".into(), json!({"$ref": r}));
                if let Some(m) = s.get("min") {
                    out.insert("minItems".into(), m.clone());
                }
                if let Some(m) = s.get("max") {
                    out.insert("maxItems".into(), m.clone());
                }
            }
            "map" => {
                let r = format!(
                    "#/components/schemas/{}",
                    s["value"]["shape"].as_str().unwrap()
                );
                out.insert("type".into(), json!("object"));
                out.insert("additionalProperties".into(), json!({"$ref": r}));
            }
            "string" => {
                out.insert("type".into(), json!("string"));
                if let Some(e) = s.get("enum") {
                    out.insert("enum".into(), e.clone());
                }
                if let Some(m) = s.get("min") {
                    out.insert("minLength".into(), m.clone());
                }
                if let Some(m) = s.get("max") {
                    out.insert("maxLength".into(), m.clone());
                }
                if let Some(p) = s.get("pattern") {
                    out.insert("pattern".into(), p.clone());
                }
            }
            "blob" => {
                out.insert("type".into(), json!("string"));
                out.insert("contentEncoding".into(), json!("base64"));
            }
            "integer" | "long" => num(&mut out, "integer"),
            "float" | "double" => num(&mut out, "number"),
            "boolean" => {
                out.insert("type".into(), json!("boolean"));
            }
            "timestamp" => {
                out.insert("type".into(), json!(["string", "number"]));
            }
            // `document`: any JSON.
            _ => {}
        }
        schemas.insert(name.clone(), Value::Object(out));
    }
    json!({"components": {"schemas": schemas}})
}

/// OpenAPI picks a `oneOf` branch by its `discriminator`; JSON Schema
/// insists that exactly one branch match, which fails where branches
/// overlap (an input message matches both `EasyInputMessage` and `Item`).
/// Where a discriminator is given, the branch test is `anyOf`.
fn discriminated_one_of_as_any_of(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.contains_key("discriminator")
                && let Some(branches) = m.remove("oneOf")
            {
                m.insert("anyOf".into(), branches);
            }
            m.values_mut().for_each(discriminated_one_of_as_any_of);
        }
        Value::Array(a) => a.iter_mut().for_each(discriminated_one_of_as_any_of),
        _ => {}
    }
}
