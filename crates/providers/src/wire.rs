//! Helpers every provider translation shares: reading JSON leniently but
//! with clear errors, id rules, data URLs, and the one rule for opaque data
//! that another provider produced.

use std::borrow::Cow;

use parlance_format::Media;
use parlance_model::ModelError;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// A translated request body, with what was dropped on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The provider's request body.
    pub body: Value,
    /// One line per thing dropped or degraded (foreign opaque data...).
    pub warnings: Vec<String>,
}

/// A provider request read back into canonical form.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedRequest {
    /// The model named in the request.
    pub model: Option<String>,
    /// Whether the request asked for a stream.
    pub stream: bool,
    /// The conversation, tools and options it carries.
    pub request: parlance_model::ModelRequest,
    /// One line per field of the request that Parlance does not carry
    /// (dropped), naming its path: `messages[0].content[1].citations: ...`.
    pub warnings: Vec<String>,
}

impl DecodedRequest {
    /// The canonical request document (model, stream, conversation, tools, options).
    pub fn document(&self) -> parlance_model::RequestDocument {
        parlance_model::RequestDocument {
            model: self.model.clone(),
            stream: self.stream,
            request: self.request.clone(),
        }
    }
}

/// Every `decode_request` goes through here, so that all of them hold to
/// the same rules: errors speak of a malformed *request*; a body nested
/// deeper than the format's limit is refused up front (every value in it
/// is then within the limit); and the result is a conversation the
/// canonical reader accepts (a decoder never writes what the reader would
/// refuse: a tool result answering no call, media without a type...).
pub(crate) fn checked_request(
    body: &Value,
    decode: impl FnOnce(&Value) -> Result<DecodedRequest, ModelError>,
) -> Result<DecodedRequest, ModelError> {
    let as_request = |e: ModelError| match e {
        ModelError::MalformedResponse { message } => ModelError::MalformedRequest { message },
        other => other,
    };
    if !parlance_format::within_depth(body, parlance_format::MAX_VALUE_DEPTH) {
        return Err(ModelError::MalformedRequest {
            message: format!(
                "(root): nested deeper than {} levels of arrays and objects (the format's limit)",
                parlance_format::MAX_VALUE_DEPTH
            ),
        });
    }
    let decoded = decode(body).map_err(as_request)?;
    let doc = serde_json::json!({
        "messages": decoded.request.messages,
        "tools": &*decoded.request.tools,
    });
    parlance_format::Conversation::from_value(&doc).map_err(|e| ModelError::MalformedRequest {
        message: format!("in canonical form, {e}"),
    })?;
    Ok(decoded)
}

/// A value from a provider's answer kept as it is (tool call input...),
/// within the format's depth limit so that the message can be stored and
/// read back.
pub(crate) fn free_value(v: &Value, what: &str) -> Result<Value, ModelError> {
    if parlance_format::within_depth(v, parlance_format::MAX_VALUE_DEPTH) {
        Ok(v.clone())
    } else {
        Err(malformed(format!(
            "{what}: nested deeper than {} levels of arrays and objects (the format's limit)",
            parlance_format::MAX_VALUE_DEPTH
        )))
    }
}

/// Names, as warnings, the fields of `v` a decoder does not read: each key
/// outside `read` (and not `null`, which means absent) gives
/// `"{what}.{key}: {why}"`, the reason from `reasons` or a general one.
/// Nothing in a request is then lost silently.
pub(crate) fn unread(
    v: &Value,
    read: &[&str],
    what: &str,
    reasons: &[(&str, &str)],
    warnings: &mut Vec<String>,
) {
    let Some(m) = v.as_object() else { return };
    for (k, x) in m {
        if x.is_null() || read.contains(&k.as_str()) {
            continue;
        }
        let why = reasons.iter().find(|(f, _)| f == k).map_or(
            "dropped: Parlance has no place for it in canonical form",
            |(_, w)| *w,
        );
        let at = if what.is_empty() {
            k.clone()
        } else {
            format!("{what}.{k}")
        };
        warnings.push(format!("{at}: {why}"));
    }
}

/// Warnings for the parts of an output schema an API without them drops
/// (its name, description and strictness are OpenAI's).
pub(crate) fn output_schema_extras(
    s: &parlance_model::OutputSchema,
    api: &str,
    warnings: &mut Vec<String>,
) {
    if s.description.is_some() {
        warnings.push(format!(
            "output_schema.description dropped: {api} takes the schema alone"
        ));
    }
    if s.strict.is_some() {
        warnings.push(format!(
            "output_schema.strict dropped: {api} takes the schema alone"
        ));
    }
}

/// A cache point for a provider's breakpoint after a block.
pub(crate) fn cache_point(ttl: Option<String>) -> parlance_format::Block {
    parlance_format::Block::CachePoint {
        cache_point: parlance_format::CachePoint { ttl },
    }
}

pub(crate) fn malformed(message: impl Into<String>) -> ModelError {
    ModelError::MalformedResponse {
        message: message.into(),
    }
}

pub(crate) fn unsupported(message: impl Into<String>) -> ModelError {
    ModelError::Unsupported {
        message: message.into(),
    }
}

/// Where a block is, for error messages: `messages[2].content[1]`.
pub(crate) fn at(mi: usize, bi: usize) -> String {
    format!("messages[{mi}].content[{bi}]")
}

pub(crate) fn obj<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, ModelError> {
    v.as_object()
        .ok_or_else(|| malformed(format!("{what}: expected an object")))
}

pub(crate) fn str_field<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a str, ModelError> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| malformed(format!("{what}.{key}: expected a string")))
}

pub(crate) fn opt_str(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A count from the wire (max tokens, top_k, a thinking budget) as the
/// `u32` the canonical options hold: one past `u32::MAX` is `u32::MAX`,
/// never wrapped round to a small one.
pub(crate) fn count(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

pub(crate) fn u64_at(v: &Value, path: &[&str]) -> Option<u64> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    cur.as_u64()
}

/// Whether opaque data tagged `provider` may be sent to `me`.
pub(crate) fn is_own(provider: &Option<String>, me: &str) -> bool {
    provider.as_deref() == Some(me)
}

/// Maps a tool call id onto a provider's rules: kept when it already
/// fits; otherwise made to fit and made unique by a short hash of the
/// original, so the call and its result always map the same way.
pub(crate) fn wire_id(id: &str, max_len: usize, allowed: fn(char) -> bool) -> Cow<'_, str> {
    if !id.is_empty() && id.len() <= max_len && id.chars().all(allowed) {
        return Cow::Borrowed(id);
    }
    let hash = hex::encode(&Sha256::digest(id.as_bytes())[..4]);
    let clean: String = id
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect();
    let keep = max_len.saturating_sub(hash.len() + 1);
    let clean: String = clean.chars().take(keep).collect();
    Cow::Owned(format!("{clean}_{hash}"))
}

/// `data:` URL of inline media (`where_` names the block for the error).
pub(crate) fn data_url(where_: &str, m: &Media) -> Result<String, ModelError> {
    let data = m.data.as_deref().unwrap_or_default();
    Ok(format!("data:{};base64,{data}", media_type(where_, m)?))
}

/// The media type inline data needs (the canonical reader requires it; a
/// value built by hand may lack it).
pub(crate) fn media_type<'a>(where_: &str, m: &'a Media) -> Result<&'a str, ModelError> {
    m.media_type
        .as_deref()
        .ok_or_else(|| unsupported(format!("{where_}: inline data needs a media_type")))
}

/// Splits a `data:` URL into media type and base64 data.
pub(crate) fn split_data_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    let media_type = meta.strip_suffix(";base64")?;
    Some((media_type.to_string(), data.to_string()))
}

/// A JSON value as text for APIs that only take text.
pub(crate) fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Merges the extra options meant for this API into a request body: the
/// vendor's (`openai`: every API of the vendor), then the API's own
/// (`openai-responses`), which win.
pub(crate) fn merge_extra(
    body: &mut Map<String, Value>,
    extra: &Map<String, Value>,
    provider: &str,
    format: &str,
) {
    for key in [provider, format] {
        if let Some(Value::Object(own)) = extra.get(key) {
            deep_merge(body, own);
        }
        if provider == format {
            break;
        }
    }
}

/// Objects merge key by key (so `{"generationConfig": {"seed": 1}}` adds
/// to the generation config Parlance wrote); anything else replaces.
fn deep_merge(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(Value::Object(a)), Value::Object(b)) => deep_merge(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Files a decoded request's fields that have no canonical name under the
/// API's name (the wire format's, not the vendor's: they mean something to
/// that API only).
pub(crate) fn scoped_extra(extra: Map<String, Value>, format: &str) -> Map<String, Value> {
    let mut out = Map::new();
    if !extra.is_empty() {
        out.insert(format.to_string(), Value::Object(extra));
    }
    out
}

/// A decoded answer is what the canonical reader accepts (call ids and
/// names not empty, media with a type...): checked here, once, rather than
/// trusted, so a provider's odd answer is a malformed response and never
/// a message that fails later, where it is stored or sent on. The check
/// reads the typed message in place ([`parlance_format::Message::check`]):
/// writing it to JSON and reading it back, as this once did, cost a run
/// 20 % of its CPU (docs/performance.md).
pub(crate) fn checked_message(
    m: parlance_format::Message,
) -> Result<parlance_format::Message, ModelError> {
    check(&m)?;
    Ok(m)
}

fn check(m: &parlance_format::Message) -> Result<(), ModelError> {
    m.check()
        .map_err(|e| malformed(format!("in canonical form, {e}")))
}

/// A stream decoder whose final message is checked (see
/// [`checked_message`]); every wire format's decoder is one.
pub(crate) struct Checked<D>(pub D);

impl<D: crate::transport::StreamDecoder> crate::transport::StreamDecoder for Checked<D> {
    fn event(
        &mut self,
        name: &str,
        data: &str,
    ) -> Result<Vec<parlance_model::StreamEvent>, ModelError> {
        check_done(self.0.event(name, data)?)
    }

    fn end(&mut self) -> Result<Vec<parlance_model::StreamEvent>, ModelError> {
        check_done(self.0.end()?)
    }
}

fn check_done(
    events: Vec<parlance_model::StreamEvent>,
) -> Result<Vec<parlance_model::StreamEvent>, ModelError> {
    for e in &events {
        if let parlance_model::StreamEvent::Done(m) = e {
            check(m)?;
        }
    }
    Ok(events)
}
