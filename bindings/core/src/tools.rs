//! What a tool written in Python or JavaScript gives back, as the content
//! blocks the model reads: a plain value (text for a string, a `json`
//! block otherwise), or — when the tool returns the package's `Content` —
//! canonical blocks (images, audio, files, several blocks), read with the
//! format's strict block reader so a malformed one names its path.

use parlance::format::FormatError;
use parlance::{Block, IntoToolContent, ToolFailure};
use serde_json::Value;

/// A returned plain value as content.
pub fn value_content(v: Value) -> Result<Vec<Block>, ToolFailure> {
    v.into_content()
}

/// Returned content blocks (a list of canonical blocks) as content; a
/// malformed block fails the call with its path
/// (`(returned content)[1].image: ...`).
pub fn blocks_content(v: &Value) -> Result<Vec<Block>, ToolFailure> {
    let what = "(returned content)";
    let Value::Array(items) = v else {
        return Err(ToolFailure::unexpected(
            "TypeError",
            format!("{what}: expected a list of content blocks"),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, b)| {
            Block::from_value(b).map_err(|e: FormatError| {
                ToolFailure::unexpected("TypeError", e.under(&format!("{what}[{i}]")).to_string())
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_are_read_strictly() {
        let ok = blocks_content(&json!([
            {"type": "text", "text": "A chart:"},
            {"type": "image", "image": {"data": "iVBORw0KGgo=", "media_type": "image/png"}},
        ]))
        .unwrap();
        assert_eq!(ok.len(), 2);
        assert!(matches!(ok[1], Block::Image { .. }));
        let e = blocks_content(&json!([{"type": "image", "image": {"dta": "x"}}])).unwrap_err();
        let e = format!("{e:?}");
        assert!(e.contains("(returned content)[0].image"), "{e}");
        assert!(blocks_content(&json!({"type": "text"})).is_err());
    }

    #[test]
    fn a_plain_value_is_text_or_json() {
        assert_eq!(value_content(json!("hi")).unwrap(), vec![Block::text("hi")]);
        assert_eq!(
            value_content(json!({"a": 1})).unwrap(),
            vec![Block::json(json!({"a": 1}))]
        );
    }
}
