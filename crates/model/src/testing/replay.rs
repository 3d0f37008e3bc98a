//! [`Replay`]: a cassette's exchanges served in order, each request
//! checked against the recorded one.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use futures::future::BoxFuture;
use parlance_format::Message;

use super::cassette::{Cassette, CassetteError, first_difference};
use super::stream_of;
use crate::{EventStream, Model, ModelError, ModelRequest};

/// Serves a cassette written by [`Recorder`](super::Recorder): the first
/// call gets the first recorded answer, the second the second, and so
/// on, offline. Each request must be the recorded one (messages, tools
/// and options, compared as canonical JSON; the stream flag is not
/// compared): when it is not, the call fails with an invalid-request
/// error naming the exchange and the first difference, e.g.
///
/// ```text
/// invalid request: cassette tests/weather.jsonl, exchange 2 of 2: the request is not the recorded one: messages[2].content[0].tool_result.content[0].text: recorded "Sunny", got "Rainy" (re-record the cassette if the change is meant)
/// ```
///
/// so a change to instructions, tools or a tool's output shows up as the
/// test's failure. A recorded error is served as that error. A call past
/// the last exchange fails too.
///
/// ```
/// use parlance_model::testing::{Recorder, Replay, ScriptedModel};
/// use parlance_model::{Model, ModelRequest};
/// use parlance_format::Message;
///
/// # futures::executor::block_on(async {
/// let dir = std::env::temp_dir().join(format!("parlance-doc-{}", std::process::id()));
/// let path = dir.join("hello.jsonl");
/// let request = ModelRequest { messages: vec![Message::user("Hi")], ..Default::default() };
///
/// let real = ScriptedModel::new([Message::assistant("Hello!")]);
/// let recorded = Recorder::new(real, &path).unwrap().generate(&request).await.unwrap();
///
/// let replayed = Replay::open(&path).unwrap().generate(&request).await.unwrap();
/// assert_eq!(replayed, recorded);
/// # std::fs::remove_dir_all(dir).unwrap();
/// # });
/// ```
#[derive(Debug)]
pub struct Replay {
    cassette: Cassette,
    path: PathBuf,
    provider: String,
    model_id: String,
    next: Mutex<usize>,
}

impl Replay {
    /// Serves the cassette at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Replay, CassetteError> {
        let path = path.as_ref();
        Ok(Replay::new(Cassette::read(path)?, path))
    }

    /// Serves `cassette` (`path` names it in errors).
    pub fn new(cassette: Cassette, path: impl AsRef<Path>) -> Replay {
        // The provider and model as recorded, so that answers and spans
        // read as they did.
        let first = cassette.exchanges.first();
        let provider = first
            .and_then(|e| e.response.as_ref().ok())
            .and_then(|m| m.provider.clone())
            .unwrap_or_else(|| "replay".into());
        let model_id = first
            .and_then(|e| e.request.model.clone())
            .unwrap_or_else(|| "replay".into());
        Replay {
            cassette,
            path: path.as_ref().to_path_buf(),
            provider,
            model_id,
            next: Mutex::new(0),
        }
    }

    /// How many exchanges are left to serve.
    pub fn remaining(&self) -> usize {
        self.cassette.exchanges.len() - *self.next.lock().expect("not poisoned")
    }

    fn answer(&self, request: &ModelRequest) -> Result<Message, ModelError> {
        let total = self.cassette.exchanges.len();
        let index = {
            let mut next = self.next.lock().expect("not poisoned");
            let i = *next;
            if i < total {
                *next += 1;
            }
            i
        };
        let Some(exchange) = self.cassette.exchanges.get(index) else {
            return Err(ModelError::InvalidRequest {
                message: format!(
                    "cassette {}: request {} has no recorded exchange (the cassette holds {total}; re-record it if the run is meant to call the model more)",
                    self.path.display(),
                    index + 1
                ),
            });
        };
        if let Some(difference) = first_difference(&exchange.request.request, request) {
            return Err(ModelError::InvalidRequest {
                message: format!(
                    "cassette {}, exchange {} of {total}: the request is not the recorded one: {difference} (re-record the cassette if the change is meant)",
                    self.path.display(),
                    index + 1
                ),
            });
        }
        exchange.response.clone()
    }
}

impl Model for Replay {
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
        Box::pin(async move { self.answer(request) })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        Box::pin(async move { Ok(stream_of(&self.answer(request)?)) })
    }
}
