//! `parlance convert`: the translation layer from the command line — the
//! providers crate's one conversion (the Python and npm packages call the
//! same), with the flags' names in its errors.

use parlance_providers::convert::{self as conv, Converted, Input, Params};
use serde_json::json;

/// What the input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// A request body (or, from canonical, a conversation to send).
    Request,
    /// A response body.
    Response,
    /// A stream: raw SSE text, one JSON event per line, or a JSON array of events.
    Stream,
}

const FLAGS: Params = Params {
    from: "--from",
    to: "--to",
    model: "--model",
};

/// Converts `text` of `kind` from one format to another.
pub fn convert(
    from: &str,
    to: &str,
    kind: Kind,
    model: Option<&str>,
    input: &[u8],
) -> Result<Converted, String> {
    let kind = match kind {
        Kind::Request => conv::Kind::Request,
        Kind::Response => conv::Kind::Response,
        Kind::Stream => conv::Kind::Stream,
    };
    let mut out = conv::convert(Input::Bytes(input), from, to, kind, model, &FLAGS)
        .map_err(|e| e.to_string())?;
    if let Some(t) = parlance_providers::wire_format(to)
        && kind == conv::Kind::Request
        && t.endpoint.path.contains("{model}")
    {
        // The model goes in the URL; shown here for reading.
        if let (Some(body), Some(m)) = (out.output.as_object_mut(), &out.model) {
            body.insert("model".into(), json!(m));
        }
    }
    Ok(out)
}
