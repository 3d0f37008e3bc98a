//! Reading and checking messages (docs/guide/messages.md): one strict
//! reader in every language. Offline.
//! `cargo run -p parlance-ai --example guide_messages`

use parlance::Message;
use parlance::documents::{DocKind, parse_document, read_document};
use serde_json::json;

fn main() -> anyhow::Result<()> {
    // The kind is recognised from the fields; the canonical form is written back.
    let doc = parse_document(None, r#"{"role": "user", "content": "Hi"}"#)?;
    println!("{}", doc.kind.name());
    let m = Message::from_value(&json!({"role": "user", "content": "Hi"}))?;
    println!("{}", parlance::format::to_json(&m));

    // The older shapes of the seeds are read into today's.
    let old = json!({"role": "assistant", "content": [
        {"type": "tool_call", "id": "c1", "name": "get_order", "args": {"order_id": "A-1"}}]});
    println!("{}", parlance::format::to_json(&Message::from_value(&old)?));

    // A problem is named by its JSON path.
    let bad = json!({"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "foo"}]});
    if let Err(e) = read_document(Some(DocKind::Message), &bad) {
        println!("{e}");
    }
    Ok(())
}
