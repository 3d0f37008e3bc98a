//! Models for your own tests: no network, no key, the same answers every
//! time.
//!
//! | model | what it answers | use it to |
//! |---|---|---|
//! | [`ScriptedModel`] | the messages you list, in order | test a run step by step |
//! | [`FunctionModel`] | what your function returns for the request | assert on what the model is sent |
//! | [`TestModel`] | every tool called with arguments made from its schema, then a text (or a value of the output schema) | smoke-test an agent's tools with no script at all |
//! | [`Recorder`] / [`Replay`] | a real model's answers, written to a cassette then served from it | run a suite offline against what a provider really said |
//!
//! Each streams too: the message's text as deltas, then `Done`.
//!
//! ```
//! use parlance_model::testing::TestModel;
//! # use parlance_model::{Model, ModelRequest};
//! # use parlance_format::{Message, ToolSpec};
//! # futures::executor::block_on(async {
//! let model = TestModel::new();
//! let request = ModelRequest {
//!     messages: vec![Message::user("Weather in Paris?")],
//!     tools: vec![ToolSpec::new("weather", "Today's weather.", serde_json::json!({
//!         "type": "object",
//!         "properties": {"city": {"type": "string", "minLength": 2}},
//!         "required": ["city"],
//!     }))].into(),
//!     ..ModelRequest::default()
//! };
//! let answer = model.generate(&request).await.unwrap();
//! let call = answer.tool_calls().next().unwrap();
//! assert_eq!(call.name, "weather");
//! assert_eq!(call.arguments, serde_json::json!({"city": "aa"}));
//! # });
//! ```

mod cassette;
mod function;
mod recorder;
mod replay;
pub mod schema_data;
mod test_model;

/// The request of an exchange, as a cassette writes it.
pub use crate::document::RequestDocument;
pub use crate::scripted::ScriptedModel;
pub use cassette::{Cassette, CassetteError, Exchange};
pub use function::FunctionModel;
pub use recorder::Recorder;
pub use replay::Replay;
pub use test_model::{CallTools, TestModel};

use futures::stream;
use parlance_format::{Block, FinishReason, Message, Role};

use crate::EventStream;

/// What every test model does to an answer before giving it: the
/// assistant's role, the model's provider and id where the answer has
/// none, and a finish reason (tool calls when it calls tools), so the
/// message reads like a provider's.
pub(crate) fn as_answer(mut msg: Message, provider: &str, model_id: &str) -> Message {
    msg.role = Role::Assistant;
    if msg.provider.is_none() {
        msg.provider = Some(provider.to_string());
    }
    if msg.model.is_none() {
        msg.model = Some(model_id.to_string());
    }
    if msg.finish_reason.is_none() {
        let calls = msg
            .content
            .iter()
            .any(|b| matches!(b, Block::ToolCall { .. }));
        msg.finish_reason = Some(if calls {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        });
    }
    msg
}

/// The message as a provider's stream: its blocks' text in word-sized
/// deltas, tool arguments in fragments, then `Done`.
pub(crate) fn stream_of<'a>(msg: &Message) -> EventStream<'a> {
    let events = crate::scripted::events_for(msg).into_iter().map(Ok);
    Box::pin(stream::iter(events))
}
