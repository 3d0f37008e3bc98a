//! Test support: the shared fixtures and specs (read where they are, in
//! `../shared/`), a validator for the official OpenAPI request schemas, and
//! a uniform view of each provider's pure translation functions.
#![allow(dead_code)]

pub mod server;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use parlance_format::Message;
use parlance_model::{ModelError, ModelRequest, StreamEvent};
use parlance_providers::transport::StreamDecoder;
use parlance_providers::{DecodedRequest, Encoded, anthropic, openai_chat};
use serde_json::{Value, json};

pub fn shared() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    assert!(
        p.join("fixtures").is_dir(),
        "../shared/fixtures is missing (looked in {})",
        p.display()
    );
    p
}

pub fn fixture_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared().join("fixtures").join(dir))
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
}

pub const OPENAI_CHAT: Api = Api {
    dir: "openai-chat",
    endpoint: "/chat/completions",
    spec: "openai/openapi.yaml",
    request_component: "CreateChatCompletionRequest",
    decode_request: openai_chat::from_wire::decode_request,
    encode_request: openai_chat::to_wire::encode_request,
    decode_response: openai_chat::from_wire::decode_response,
    new_stream: || Box::new(openai_chat::stream::ChatStream::new()),
    classify: openai_chat::from_wire::classify,
};

pub const ANTHROPIC: Api = Api {
    dir: "anthropic",
    endpoint: "/v1/messages",
    spec: "anthropic/openapi.yml",
    request_component: "CreateMessageParams",
    decode_request: anthropic::from_wire::decode_request,
    encode_request: anthropic::to_wire::encode_request,
    decode_response: anthropic::from_wire::decode_response,
    new_stream: || Box::new(anthropic::stream::AnthropicStream::new()),
    classify: anthropic::from_wire::classify,
};

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
}

fn spec_doc(spec: &str) -> Value {
    static DOCS: OnceLock<Mutex<HashMap<String, &'static Value>>> = OnceLock::new();
    let docs = DOCS.get_or_init(Default::default);
    let mut docs = docs.lock().unwrap();
    let doc = docs.entry(spec.to_string()).or_insert_with(|| {
        let v = yaml_file(&shared().join("specs").join(spec));
        Box::leak(Box::new(v))
    });
    (*doc).clone()
}

/// Validates `body` against `#/components/schemas/{component}` of an
/// OpenAPI 3.1 document (its schemas are JSON Schema 2020-12).
pub fn spec_errors(spec: &str, component: &str, body: &Value) -> Vec<String> {
    static VALIDATORS: OnceLock<Mutex<HashMap<String, &'static jsonschema::Validator>>> =
        OnceLock::new();
    let validators = VALIDATORS.get_or_init(Default::default);
    let key = format!("{spec}#{component}");
    let validator = {
        let mut map = validators.lock().unwrap();
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
