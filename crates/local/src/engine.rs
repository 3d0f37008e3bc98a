//! The llama.cpp engine behind the `Model` trait.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use futures::future::BoxFuture;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};
use parlance_format::{Block, Message};
use parlance_model::{EventStream, Model, ModelError, ModelRequest, StreamEvent};
use serde_json::{Map, Value};

use crate::models::{ModelEntry, Source};

/// Loading a local model failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LocalError {
    /// No file at the path.
    #[error("model file not found: {0} (run `parlance model pull`)")]
    Missing(PathBuf),
    /// The file is not a GGUF model.
    #[error("{0} is not a GGUF model file (it does not start with the GGUF magic bytes)")]
    NotGguf(PathBuf),
    /// llama.cpp could not load it.
    #[error("llama.cpp could not load {path}: {message}")]
    Load {
        /// The file.
        path: PathBuf,
        /// What llama.cpp said.
        message: String,
    },
    /// No model of that name was found.
    #[error(
        "no local model named {name:?} (searched {searched}; `parlance model list` shows the names, `local:PATH` takes a GGUF file)"
    )]
    Unknown {
        /// The name asked for.
        name: String,
        /// The folders searched.
        searched: String,
    },
    /// Several models answer to that name.
    #[error("local model name {name:?} is ambiguous: {candidates} (use the full name)")]
    Ambiguous {
        /// The name asked for.
        name: String,
        /// The models it could mean.
        candidates: String,
    },
}

/// The process's llama.cpp backend (it may be initialised only once).
pub(crate) fn backend() -> &'static LlamaBackend {
    static BACKEND: OnceLock<LlamaBackend> = OnceLock::new();
    BACKEND.get_or_init(|| {
        let mut b = LlamaBackend::init().expect("llama.cpp initialises once per process");
        b.void_logs();
        b
    })
}

pub(crate) struct Engine {
    pub(crate) name: String,
    pub(crate) model: LlamaModel,
    pub(crate) template: LlamaChatTemplate,
    /// The context used unless a request sets `num_ctx`.
    pub(crate) n_ctx: u32,
    /// What the model was trained for: the most a request may ask.
    pub(crate) n_ctx_train: u32,
    pub(crate) threads: i32,
    /// The model's published parameters (an Ollama model's `params`).
    pub(crate) params: Map<String, Value>,
    /// One generation at a time: the model is small and the cores few.
    pub(crate) busy: Mutex<()>,
}

/// A GGUF model run in-process by llama.cpp.
#[derive(Clone)]
pub struct LocalModel {
    engine: Arc<Engine>,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("name", &self.engine.name)
            .field("n_ctx", &self.engine.n_ctx)
            .finish()
    }
}

impl LocalModel {
    /// Loads a GGUF file: threads as many as the physical cores, a context
    /// of the model's own limit (at most 8,192 tokens), Parlance's sampling
    /// defaults.
    pub fn load(path: impl AsRef<Path>) -> Result<LocalModel, LocalError> {
        Self::load_with(path, Map::new())
    }

    /// Loads a model found by [`crate::list_models`] or [`crate::resolve`],
    /// named as listed, with its published parameters as its defaults.
    pub fn load_entry(entry: &ModelEntry) -> Result<LocalModel, LocalError> {
        let mut m = Self::load_with(&entry.path, entry.params.clone())?;
        if entry.source != Source::Parlance {
            Arc::get_mut(&mut m.engine).expect("just made").name = entry.name.clone();
        }
        Ok(m)
    }

    /// The model a model string names: `local` (the default model) or
    /// `local:NAME` (a GGUF path, or a name `parlance model list` shows:
    /// Parlance's cache, Ollama's store, LM Studio's folder).
    pub fn from_spec(spec: &str) -> Result<LocalModel, LocalError> {
        match spec.strip_prefix("local:") {
            Some(name) => Self::load_entry(&crate::resolve(name)?),
            None => Self::load(crate::default_model_path()),
        }
    }

    fn load_with(
        path: impl AsRef<Path>,
        params: Map<String, Value>,
    ) -> Result<LocalModel, LocalError> {
        let path = path.as_ref().to_path_buf();
        if !path.is_file() {
            return Err(LocalError::Missing(path));
        }
        if !crate::models::is_gguf(&path) {
            return Err(LocalError::NotGguf(path));
        }
        let model = LlamaModel::load_from_file(backend(), &path, &LlamaModelParams::default())
            .map_err(|e| LocalError::Load {
                path: path.clone(),
                message: e.to_string(),
            })?;
        let template = model
            .chat_template(None)
            .or_else(|_| LlamaChatTemplate::new("chatml"))
            .map_err(|e| LocalError::Load {
                path: path.clone(),
                message: format!("chat template: {e}"),
            })?;
        let n_ctx_train = model.n_ctx_train().max(512);
        let n_ctx = n_ctx_train.min(8192);
        let threads = crate::threads::default_threads() as i32;
        let name = path
            .file_stem()
            .map_or_else(|| "local".into(), |s| s.to_string_lossy().to_string());
        Ok(LocalModel {
            engine: Arc::new(Engine {
                name,
                model,
                template,
                n_ctx,
                n_ctx_train,
                threads,
                params,
                busy: Mutex::new(()),
            }),
        })
    }

    /// The context limit in tokens (unless a request sets `num_ctx`).
    pub fn context_limit(&self) -> u32 {
        self.engine.n_ctx
    }

    /// The threads a generation uses (unless a request sets `num_thread`).
    pub fn threads(&self) -> usize {
        self.engine.threads as usize
    }
}

pub(crate) fn err(message: impl std::fmt::Display) -> ModelError {
    ModelError::Server {
        status: 500,
        message: format!("local model: {message}"),
    }
}

impl Model for LocalModel {
    fn provider(&self) -> &str {
        "local"
    }

    fn model_id(&self) -> &str {
        &self.engine.name
    }

    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        let engine = self.engine.clone();
        let request = request.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || engine.generate(&request, &mut |_| {}))
                .await
                .map_err(|e| err(format!("generation task: {e}")))?
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        let engine = self.engine.clone();
        let request = request.clone();
        Box::pin(async move {
            let (tx, rx) = futures::channel::mpsc::unbounded();
            tokio::task::spawn_blocking(move || {
                let mut started = false;
                let result = engine.generate(&request, &mut |piece| {
                    if !started {
                        let _ = tx.unbounded_send(Ok(StreamEvent::BlockStart {
                            index: 0,
                            block: Block::text(""),
                        }));
                        started = true;
                    }
                    let _ = tx.unbounded_send(Ok(StreamEvent::TextDelta {
                        index: 0,
                        text: piece.to_string(),
                    }));
                });
                let _ = tx.unbounded_send(result.map(StreamEvent::Done));
            });
            Ok(Box::pin(rx) as EventStream<'a>)
        })
    }
}
