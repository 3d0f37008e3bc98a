//! Every wire format by name: what `parlance convert` and the provider
//! registry look formats up in.

use crate::format::WireFormat;
use crate::{anthropic, bedrock, gemini, mistral, ollama, openai_chat, openai_responses};

/// The formats, in documentation order.
pub static WIRE_FORMATS: [&WireFormat; 7] = [
    &openai_chat::FORMAT,
    &openai_responses::FORMAT,
    &anthropic::FORMAT,
    &gemini::FORMAT,
    &mistral::FORMAT,
    &ollama::FORMAT,
    &bedrock::FORMAT,
];

/// The format named `name` (`openai-chat`, `openai-responses`,
/// `anthropic`, `gemini`, `mistral`, `ollama`, `bedrock-converse`).
pub fn wire_format(name: &str) -> Option<&'static WireFormat> {
    WIRE_FORMATS.iter().copied().find(|f| f.name == name)
}
