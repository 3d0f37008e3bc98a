//! A canonical request written for one API: what `parlance convert` does
//! when a conversation moves between APIs (pure: JSON in, JSON out).
//!
//! The API's encoder does the translation; this adds what only a move
//! between APIs needs: options written for another API (or vendor) are
//! not sent and are named in a warning, and a stream flag the body cannot
//! carry is named too.

use parlance_model::{ModelError, RequestDocument};
use serde_json::Value;

use crate::format::WireFormat;
use crate::wire::Encoded;

/// `doc` as `to`'s request body for `model`, with a warning for each
/// thing not carried (the encoder's, and options meant for other APIs).
pub fn write_request(
    to: &WireFormat,
    doc: &RequestDocument,
    model: &str,
) -> Result<Encoded, ModelError> {
    let mut encoded = (to.encode_request)(&doc.request, model, doc.stream)?;
    for (key, fields) in &doc.request.options.extra {
        if key == to.name || key == to.provider {
            continue;
        }
        let names: Vec<&str> = match fields {
            Value::Object(m) => m.keys().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        encoded.warnings.push(format!(
            "options.extra.{key} not sent to {}: options for {key} ({})",
            to.name,
            names.join(", ")
        ));
    }
    if doc.stream && to.endpoint.stream_path != to.endpoint.path {
        encoded.warnings.push(format!(
            "stream: {} streams through its own endpoint ({}), not a field of the body",
            to.name, to.endpoint.stream_path
        ));
    }
    Ok(encoded)
}
