//! [`FunctionModel`]: the answer is whatever your function makes of the
//! request.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use parlance_format::Message;

use super::{as_answer, stream_of};
use crate::{EventStream, Model, ModelError, ModelRequest};

type SyncAnswer = dyn Fn(&ModelRequest) -> Result<Message, ModelError> + Send + Sync;
type AsyncAnswer =
    dyn Fn(ModelRequest) -> BoxFuture<'static, Result<Message, ModelError>> + Send + Sync;

#[derive(Clone)]
enum Answer {
    Sync(Arc<SyncAnswer>),
    Async(Arc<AsyncAnswer>),
}

/// A model that answers with a function of the request: its messages,
/// the tools offered and the options. For tests that check what the
/// model is sent, or answer differently by what it holds; and the way a
/// model written in Python or TypeScript reaches the engine.
///
/// The function returns the assistant's message; its role is set to
/// assistant, and its provider, model and finish reason filled in when
/// missing. An error it returns is the call's error, as a provider's
/// would be. `stream` yields the message's text as deltas, then `Done`.
///
/// ```
/// use parlance_model::testing::FunctionModel;
/// use parlance_model::Model;
/// # use parlance_model::ModelRequest;
/// use parlance_format::Message;
///
/// let model = FunctionModel::new(|request| {
///     let last = request.messages.last().map(Message::text).unwrap_or_default();
///     Ok(Message::assistant(format!("you said {last:?}; {} tools", request.tools.len())))
/// });
/// # futures::executor::block_on(async {
/// # let request = ModelRequest { messages: vec![Message::user("hi")], ..Default::default() };
/// let answer = model.generate(&request).await.unwrap();
/// assert_eq!(answer.text(), "you said \"hi\"; 0 tools");
/// # });
/// ```
#[derive(Clone)]
pub struct FunctionModel {
    answer: Answer,
    provider: String,
    model_id: String,
}

impl std::fmt::Debug for FunctionModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionModel")
            .field("provider", &self.provider)
            .field("model_id", &self.model_id)
            .finish_non_exhaustive()
    }
}

impl FunctionModel {
    /// A model answering with `f(&request)`.
    pub fn new<F>(f: F) -> Self
    where
        F: Fn(&ModelRequest) -> Result<Message, ModelError> + Send + Sync + 'static,
    {
        FunctionModel {
            answer: Answer::Sync(Arc::new(f)),
            provider: "function".into(),
            model_id: "function".into(),
        }
    }

    /// A model answering with what `f(request)` resolves to (the request
    /// is the function's own copy, so the future may keep it).
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn(ModelRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Message, ModelError>> + Send + 'static,
    {
        FunctionModel {
            answer: Answer::Async(Arc::new(move |r| Box::pin(f(r)))),
            provider: "function".into(),
            model_id: "function".into(),
        }
    }

    /// The provider and model id it reports (`function` and `function`
    /// unless set), and writes on the messages it answers with.
    pub fn named(mut self, provider: impl Into<String>, model_id: impl Into<String>) -> Self {
        self.provider = provider.into();
        self.model_id = model_id.into();
        self
    }

    async fn answer(&self, request: &ModelRequest) -> Result<Message, ModelError> {
        let msg = match &self.answer {
            Answer::Sync(f) => f(request)?,
            Answer::Async(f) => f(request.clone()).await?,
        };
        Ok(as_answer(msg, &self.provider, &self.model_id))
    }
}

impl Model for FunctionModel {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(self.answer(request))
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        Box::pin(async move { Ok(stream_of(&self.answer(request).await?)) })
    }
}
