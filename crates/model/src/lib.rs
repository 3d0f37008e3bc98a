//! The narrow waist between Parlance and model providers.
//!
//! A provider implements [`Model`]: `generate` turns one [`ModelRequest`]
//! into one canonical assistant [`Message`] (with usage and finish reason);
//! `stream` yields [`StreamEvent`]s whose final `Done` carries the same
//! message. Everything provider-specific (wire format, ids, opaque
//! reasoning data) stays inside the provider.

#![warn(missing_docs)]

pub mod document;
pub mod documents;
mod error;
pub mod fallback;
mod request;
pub mod schema;
pub mod scripted;
mod stream;
pub mod testing;

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
pub use parlance_format::Message;

pub use document::RequestDocument;
pub use error::ModelError;
pub use fallback::{Fallback, FallbackError, FallbackOn, SharedCooldowns};
pub use request::{Effort, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice};
pub use stream::{Assembler, StreamEvent, set_arguments};

/// Anything an agent can be built around: a model, or one already shared.
pub trait IntoModel {
    /// The model, shared.
    fn into_model(self) -> Arc<dyn Model>;
}

impl<M: Model + 'static> IntoModel for M {
    fn into_model(self) -> Arc<dyn Model> {
        Arc::new(self)
    }
}

impl IntoModel for Arc<dyn Model> {
    fn into_model(self) -> Arc<dyn Model> {
        self
    }
}

impl<M: Model + 'static> IntoModel for Arc<M> {
    fn into_model(self) -> Arc<dyn Model> {
        self
    }
}

/// What a caught panic said (its `&str` or `String` payload): how a
/// panic in a model step, a tool or a stream's task is reported.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

/// A stream of events from one model call.
pub type EventStream<'a> = BoxStream<'a, Result<StreamEvent, ModelError>>;

/// A model behind some provider.
pub trait Model: Send + Sync {
    /// The provider's name as it appears in messages (`anthropic`, `openai`, ...).
    fn provider(&self) -> &str;

    /// The model's id.
    fn model_id(&self) -> &str;

    /// Where its requests go (a URL; never a secret), when it has such a
    /// place: two models of one provider and id behind different
    /// endpoints (accounts, regions, proxies) are rate limited apart, so
    /// shared cooldowns tell them apart by it. `None` by default.
    fn endpoint(&self) -> Option<&str> {
        None
    }

    /// One request, one assistant message.
    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>>;

    /// One request as a stream of events ending with `Done(message)`, the
    /// same message `generate` would return.
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>>;
}
