//! [`Recorder`]: a real model whose every exchange is written to a
//! cassette.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::future::BoxFuture;
use parlance_format::Message;

use super::cassette::{CassetteError, Exchange};
use crate::{EventStream, Model, ModelError, ModelRequest, StreamEvent};

/// Wraps a model (a provider's, usually) and appends each exchange, the
/// request as sent and the message that came back (or the error), to a
/// cassette file, as it happens. Replay the file with
/// [`Replay`](super::Replay) and the same test runs offline, against what
/// the provider really said.
///
/// The cassette starts empty (`new` truncates the file; `append` keeps
/// what it holds). Exchanges are written in the order the calls finish,
/// so record one run at a time. A streamed call is recorded when its
/// stream ends, with the message `Done` carried.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use parlance_model::testing::{Recorder, Replay};
/// # let real: std::sync::Arc<dyn parlance_model::Model> = std::sync::Arc::new(parlance_model::testing::TestModel::new());
/// // Once, with a key: `real` is a provider's model.
/// let model = Recorder::new(real, "tests/cassettes/weather.jsonl")?;
/// // From then on, offline:
/// let model = Replay::open("tests/cassettes/weather.jsonl")?;
/// # Ok(()) }
/// ```
pub struct Recorder {
    inner: Arc<dyn Model>,
    path: PathBuf,
    file: Mutex<File>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field(
                "model",
                &format_args!("{}:{}", self.inner.provider(), self.inner.model_id()),
            )
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// Records `model`'s exchanges into a new cassette at `path` (its
    /// folder is made if missing; a file there is emptied).
    pub fn new(
        model: impl crate::IntoModel,
        path: impl AsRef<Path>,
    ) -> Result<Recorder, CassetteError> {
        Recorder::open(model.into_model(), path.as_ref(), true)
    }

    /// Records `model`'s exchanges after those `path` already holds.
    pub fn append(
        model: impl crate::IntoModel,
        path: impl AsRef<Path>,
    ) -> Result<Recorder, CassetteError> {
        Recorder::open(model.into_model(), path.as_ref(), false)
    }

    fn open(inner: Arc<dyn Model>, path: &Path, truncate: bool) -> Result<Recorder, CassetteError> {
        let fail = |e: std::io::Error| CassetteError {
            path: path.to_path_buf(),
            line: None,
            message: format!("cannot be written: {e}"),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(!truncate)
            .write(true)
            .truncate(truncate)
            .open(path)
            .map_err(fail)?;
        Ok(Recorder {
            inner,
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// The cassette file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one exchange as one line. A cassette that cannot be written
    /// fails the call: a test must not pass on a recording that is not there.
    fn write(
        &self,
        stream: bool,
        request: &ModelRequest,
        response: Result<Message, ModelError>,
    ) -> Result<Message, ModelError> {
        let exchange = Exchange::new(self.inner.model_id(), stream, request, response);
        let mut line = parlance_format::to_json(&exchange.to_value());
        line.push('\n');
        let written = self
            .file
            .lock()
            .expect("not poisoned")
            .write_all(line.as_bytes());
        if let Err(e) = written {
            return Err(ModelError::InvalidRequest {
                message: format!(
                    "the cassette {} cannot be written: {e}",
                    self.path.display()
                ),
            });
        }
        exchange.response
    }
}

impl Model for Recorder {
    fn provider(&self) -> &str {
        self.inner.provider()
    }

    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(async move {
            let answer = self.inner.generate(request).await;
            self.write(false, request, answer)
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        Box::pin(async move {
            let events = match self.inner.stream(request).await {
                Ok(events) => events,
                Err(e) => return Err(self.write(true, request, Err(e)).unwrap_err()),
            };
            let recorded = events.map(move |event| match event {
                Ok(StreamEvent::Done(msg)) => {
                    self.write(true, request, Ok(msg)).map(StreamEvent::Done)
                }
                Ok(other) => Ok(other),
                Err(e) => Err(self.write(true, request, Err(e)).unwrap_err()),
            });
            Ok(Box::pin(recorded) as EventStream<'a>)
        })
    }
}
