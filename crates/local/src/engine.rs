//! The llama.cpp engine behind the `Model` trait.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use futures::future::BoxFuture;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use parlance_format::{Block, FinishReason, Message, Role, Usage};
use parlance_model::{EventStream, Model, ModelError, ModelRequest, StreamEvent};
use serde_json::Value;

use crate::prompt::{Shape, chat, shape};

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
}

/// The process's llama.cpp backend (it may be initialised only once).
fn backend() -> &'static LlamaBackend {
    static BACKEND: OnceLock<LlamaBackend> = OnceLock::new();
    BACKEND.get_or_init(|| {
        let mut b = LlamaBackend::init().expect("llama.cpp initialises once per process");
        b.void_logs();
        b
    })
}

struct Engine {
    name: String,
    model: LlamaModel,
    template: LlamaChatTemplate,
    n_ctx: u32,
    threads: i32,
    /// One generation at a time: the model is small and the cores few.
    busy: Mutex<()>,
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
    /// Loads a GGUF file: threads as many as the cores, a context of the
    /// model's own limit (at most 8,192 tokens).
    pub fn load(path: impl AsRef<Path>) -> Result<LocalModel, LocalError> {
        let path = path.as_ref().to_path_buf();
        let mut magic = [0u8; 4];
        match std::fs::File::open(&path) {
            Err(_) => return Err(LocalError::Missing(path)),
            Ok(mut f) => {
                use std::io::Read;
                if f.read_exact(&mut magic).is_err() || &magic != b"GGUF" {
                    return Err(LocalError::NotGguf(path));
                }
            }
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
        let n_ctx = model.n_ctx_train().clamp(512, 8192);
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as i32;
        let name = path
            .file_stem()
            .map_or_else(|| "local".into(), |s| s.to_string_lossy().to_string());
        Ok(LocalModel {
            engine: Arc::new(Engine {
                name,
                model,
                template,
                n_ctx,
                threads,
                busy: Mutex::new(()),
            }),
        })
    }

    /// The context limit in tokens.
    pub fn context_limit(&self) -> u32 {
        self.engine.n_ctx
    }
}

fn err(message: impl std::fmt::Display) -> ModelError {
    ModelError::Server {
        status: 500,
        message: format!("local model: {message}"),
    }
}

fn new_call_id() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!(
        "call_{:x}{:x}",
        nanos & 0xffff_ffff_ffff,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

impl Engine {
    /// Generates one answer; `on_text` gets free-text pieces as they come.
    fn generate(
        &self,
        req: &ModelRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Message, ModelError> {
        let _guard = self
            .busy
            .lock()
            .map_err(|_| err("a previous generation panicked"))?;
        let messages: Vec<LlamaChatMessage> = chat(req)
            .into_iter()
            .map(|(r, c)| LlamaChatMessage::new(r, c).map_err(err))
            .collect::<Result<_, _>>()?;
        let prompt = self
            .model
            .apply_chat_template(&self.template, &messages, true)
            .map_err(err)?;
        let shape = shape(req);
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), true, true);
        let max_new = req.options.max_tokens.unwrap_or(512) as usize;
        if tokens.len() + max_new > self.n_ctx as usize {
            return Err(ModelError::ContextTooLong {
                message: format!(
                    "{} prompt tokens + {max_new} to generate exceed the model's {} token context",
                    tokens.len(),
                    self.n_ctx
                ),
            });
        }
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(self.n_ctx))
            .with_n_threads(self.threads)
            .with_n_threads_batch(self.threads);
        let mut ctx = self.model.new_context(backend(), params).map_err(err)?;
        let mut batch = LlamaBatch::new(tokens.len().max(512), 1);
        let last = tokens.len() as i32 - 1;
        for (i, t) in tokens.iter().enumerate() {
            batch
                .add(*t, i as i32, &[0], i as i32 == last)
                .map_err(err)?;
        }
        ctx.decode(&mut batch).map_err(err)?;
        let mut samplers = Vec::new();
        if let Shape::Constrained(schema) = &shape {
            let grammar = llama_cpp_2::json_schema_to_grammar(&schema.to_string())
                .map_err(|e| err(format!("schema to grammar: {e}")))?;
            samplers.push(
                LlamaSampler::grammar(&self.model, &grammar, "root")
                    .map_err(|e| err(format!("grammar: {e:?}")))?,
            );
        }
        samplers.push(LlamaSampler::greedy());
        let mut sampler = LlamaSampler::chain_simple(samplers);
        let mut out: Vec<u8> = Vec::new();
        let mut emitted = 0;
        let mut n = tokens.len() as i32;
        let mut generated = 0;
        let mut finished = false;
        while generated < max_new {
            // `sample` also accepts the token (grammar state included).
            let token = sampler.sample(&ctx, batch.n_tokens() - 1);
            if vocab.is_eog(token) {
                finished = true;
                break;
            }
            out.extend(vocab.token_to_piece(token, false, None));
            generated += 1;
            if shape == Shape::Text {
                // Hand over only complete UTF-8.
                let valid = match std::str::from_utf8(&out[emitted..]) {
                    Ok(s) => s.len(),
                    Err(e) => e.valid_up_to(),
                };
                if valid > 0 {
                    on_text(std::str::from_utf8(&out[emitted..emitted + valid]).expect("checked"));
                    emitted += valid;
                }
            }
            batch.clear();
            batch.add(token, n, &[0], true).map_err(err)?;
            n += 1;
            ctx.decode(&mut batch).map_err(err)?;
        }
        let text = String::from_utf8_lossy(&out).trim().to_string();
        let mut msg = match &shape {
            Shape::Text => Message::new(Role::Assistant, vec![Block::text(text)]),
            Shape::Constrained(_) => constrained_message(&text, finished)?,
        };
        let tool_calls = msg.tool_calls().next().is_some();
        msg.finish_reason = Some(match (finished, tool_calls) {
            (false, _) => FinishReason::Length,
            (true, true) => FinishReason::ToolCalls,
            (true, false) => FinishReason::Stop,
        });
        msg.finish_reason_raw = Some(if finished { "eog" } else { "max_tokens" }.into());
        msg.usage = Some(Usage {
            input_tokens: tokens.len() as u64,
            output_tokens: generated as u64,
            ..Usage::default()
        });
        msg.provider = Some("local".into());
        msg.model = Some(self.name.clone());
        Ok(msg)
    }
}

/// The constrained JSON reply → canonical blocks.
fn constrained_message(text: &str, finished: bool) -> Result<Message, ModelError> {
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // Cut off by the token limit: keep what came as text.
        Err(_) if !finished => return Ok(Message::new(Role::Assistant, vec![Block::text(text)])),
        Err(e) => {
            return Err(ModelError::MalformedResponse {
                message: format!("local model: the constrained reply is not JSON ({e}): {text}"),
            });
        }
    };
    if let Some(calls) = v.get("tool_calls").and_then(Value::as_array) {
        let blocks = calls
            .iter()
            .map(|c| {
                Block::tool_call(
                    new_call_id(),
                    c["name"].as_str().unwrap_or_default(),
                    c["arguments"].clone(),
                )
            })
            .collect();
        return Ok(Message::new(Role::Assistant, blocks));
    }
    let answer = v.get("answer").cloned().unwrap_or(Value::Null);
    let text = match answer {
        Value::String(s) => s,
        other => other.to_string(),
    };
    Ok(Message::new(Role::Assistant, vec![Block::text(text)]))
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
