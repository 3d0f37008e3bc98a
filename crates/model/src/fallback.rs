//! [`Fallback`]: a model that is an ordered list of models. Each request
//! goes to the first; when it fails with an error of a kind the fallback
//! moves on by ([`FallbackOn`]: rate limited, overloaded, a server error,
//! a timeout, a network failure, a context too long by default), the next
//! is asked, and so on. An invalid request, an authentication or
//! permission error is never moved on from: another model would refuse it
//! too, or hide a key that must be fixed.
//!
//! The history is canonical, so any model of the list can take the
//! conversation mid-way: what only one provider can read back (reasoning
//! signatures, encrypted reasoning, provider ids) carries that provider's
//! name, and every other provider's translation drops it.
//!
//! A stream falls back only before its first event: once an event has
//! reached the caller, an error is the call's error.
//!
//! A model that answered `429` with a `retry-after` is skipped until that
//! time has passed (at most [`MAX_COOLDOWN`]): kept by this value, and,
//! given [`SharedCooldowns`] (a store's, `parlance_runtime::StoreCooldowns`),
//! shared with every process and server of that store. When every model
//! is cooling down, the call fails as rate limited without a request, its
//! `retry_after` the shortest wait.
//!
//! Why each model before the one that answered was passed over is a
//! `tracing` event (target `parlance::fallback`) and, on the answer, the
//! metadata entry `parlance_fallback` (a list of `{index, model, reason,
//! error}`). When every model fails, the error is the last model's, its
//! message naming each model's failure.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures::StreamExt;
use futures::future::BoxFuture;
use parlance_format::Message;
use serde_json::{Map, Value, json};

use crate::{EventStream, IntoModel, Model, ModelError, ModelRequest, StreamEvent};

/// Every kind of [`ModelError`], by its [`ModelError::kind`] name.
pub const ERROR_KINDS: [&str; 13] = [
    "authentication",
    "permission",
    "rate_limited",
    "quota_exceeded",
    "overloaded",
    "invalid_request",
    "context_too_long",
    "server",
    "network",
    "timeout",
    "malformed_response",
    "malformed_request",
    "unsupported",
];

/// The kinds a fallback moves on by unless told otherwise.
pub const DEFAULT_FALLBACK_KINDS: [&str; 6] = [
    "rate_limited",
    "overloaded",
    "server",
    "timeout",
    "network",
    "context_too_long",
];

/// The kinds a fallback never moves on by: the next model would refuse
/// the same request, or a key or permission needs fixing.
pub const NEVER_FALLBACK_KINDS: [&str; 4] = [
    "authentication",
    "permission",
    "invalid_request",
    "malformed_request",
];

/// The longest a model is skipped after a `429`, whatever its
/// `retry-after` said.
pub const MAX_COOLDOWN: Duration = Duration::from_secs(3600);

/// A fallback that cannot be made: what is wrong, and where in the list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FallbackError {
    /// No model in the list.
    #[error("expected at least one model, got an empty list")]
    Empty,
    /// A kind name that is no [`ModelError`] kind.
    #[error("[{index}]: unknown error kind {name:?} (known: {})", ERROR_KINDS.join(", "))]
    UnknownKind {
        /// Its position in the list of kinds.
        index: usize,
        /// What it said.
        name: String,
    },
    /// A kind a fallback never moves on by.
    #[error(
        "[{index}]: {name:?} never falls back (another model would refuse the request too, or the key needs fixing; never: {})",
        NEVER_FALLBACK_KINDS.join(", ")
    )]
    NeverKind {
        /// Its position in the list of kinds.
        index: usize,
        /// What it said.
        name: String,
    },
}

/// The kinds of [`ModelError`] a [`Fallback`] moves on by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FallbackOn {
    kinds: Vec<&'static str>,
}

impl Default for FallbackOn {
    /// [`DEFAULT_FALLBACK_KINDS`].
    fn default() -> Self {
        FallbackOn {
            kinds: DEFAULT_FALLBACK_KINDS.to_vec(),
        }
    }
}

impl FallbackOn {
    /// These kinds, by name (`rate_limited`, `server`...: see
    /// [`ERROR_KINDS`]). An unknown name, or one of
    /// [`NEVER_FALLBACK_KINDS`], is an error naming its position.
    pub fn kinds<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Result<Self, FallbackError> {
        let mut kinds = Vec::new();
        for (index, name) in names.into_iter().enumerate() {
            let name = name.as_ref();
            let Some(kind) = ERROR_KINDS.iter().find(|k| **k == name) else {
                return Err(FallbackError::UnknownKind {
                    index,
                    name: name.to_string(),
                });
            };
            if NEVER_FALLBACK_KINDS.contains(kind) {
                return Err(FallbackError::NeverKind {
                    index,
                    name: name.to_string(),
                });
            }
            if !kinds.contains(kind) {
                kinds.push(*kind);
            }
        }
        Ok(FallbackOn { kinds })
    }

    /// Whether a fallback moves on after `error`.
    pub fn moves_on(&self, error: &ModelError) -> bool {
        self.kinds.contains(&error.kind())
    }

    /// The kinds' names.
    pub fn names(&self) -> &[&'static str] {
        &self.kinds
    }
}

/// A model that is an ordered list of models: see the [module](self).
///
/// ```
/// use parlance_model::fallback::{Fallback, FallbackOn};
/// use parlance_model::testing::FunctionModel;
/// use parlance_model::{IntoModel, Model, ModelError, ModelRequest};
/// use parlance_format::Message;
///
/// let busy = FunctionModel::new(|_| {
///     Err(ModelError::Overloaded { message: "busy".into(), retry_after: None })
/// })
/// .named("anthropic", "claude-sonnet-4-5");
/// let spare = FunctionModel::new(|_| Ok(Message::assistant("hello")))
///     .named("openai", "gpt-4o");
/// let model = Fallback::new([busy.into_model(), spare.into_model()])
///     .unwrap()
///     .on(FallbackOn::kinds(["overloaded", "rate_limited"]).unwrap());
/// # futures::executor::block_on(async {
/// let request = ModelRequest { messages: vec![Message::user("hi")], ..Default::default() };
/// let answer = model.generate(&request).await.unwrap();
/// assert_eq!(answer.provider.as_deref(), Some("openai"));
/// # });
/// ```
pub struct Fallback {
    models: Vec<Arc<dyn Model>>,
    names: Vec<String>,
    /// Per model: its name on a shared board (its name, and where its
    /// requests go when it says).
    board_keys: Vec<String>,
    id: String,
    on: FallbackOn,
    /// Per model: skipped until then (a `429` with a `retry-after`).
    cooldown: Mutex<Vec<Option<Instant>>>,
    /// Cooldowns shared beyond this value.
    shared: Option<Arc<dyn SharedCooldowns>>,
}

/// Cooldowns shared beyond one [`Fallback`] value: with other processes
/// and servers, through a store (`parlance_runtime::StoreCooldowns`).
/// Models are named `provider:model`, followed by a space and 16 hex
/// digits of the SHA-256 of their [`Model::endpoint`] when they have one. A board that cannot be read or
/// written says nothing: the fallback then keeps its own cooldowns.
pub trait SharedCooldowns: Send + Sync {
    /// When model `name` may be asked again, if someone shared that it is
    /// cooling down.
    fn until<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Option<SystemTime>>;

    /// Shares that model `name` is cooling down until `until`.
    fn cool<'a>(&'a self, name: &'a str, until: SystemTime) -> BoxFuture<'a, ()>;
}

impl std::fmt::Debug for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fallback")
            .field("models", &self.names)
            .field("on", &self.on.kinds)
            .finish_non_exhaustive()
    }
}

/// Why one model was passed over.
struct Skip {
    index: usize,
    reason: &'static str,
    error: String,
}

impl Fallback {
    /// The models, tried in this order, moving on by the default kinds
    /// ([`DEFAULT_FALLBACK_KINDS`]). An empty list is an error.
    pub fn new<M: IntoModel>(models: impl IntoIterator<Item = M>) -> Result<Self, FallbackError> {
        let models: Vec<Arc<dyn Model>> = models.into_iter().map(IntoModel::into_model).collect();
        if models.is_empty() {
            return Err(FallbackError::Empty);
        }
        let names: Vec<String> = models
            .iter()
            .map(|m| format!("{}:{}", m.provider(), m.model_id()))
            .collect();
        let board_keys = models
            .iter()
            .zip(&names)
            .map(|(m, name)| match m.endpoint() {
                // Hashed: a base URL may carry what should not be stored.
                Some(url) => {
                    use sha2::Digest;
                    let h = hex::encode(sha2::Sha256::digest(url.as_bytes()));
                    format!("{name} {}", &h[..16])
                }
                None => name.clone(),
            })
            .collect();
        Ok(Fallback {
            board_keys,
            id: names.join(","),
            cooldown: Mutex::new(vec![None; models.len()]),
            models,
            names,
            on: FallbackOn::default(),
            shared: None,
        })
    }

    /// Shares cooldowns through `board` (a store's): a model another
    /// process or server saw rate limited is skipped here too, and this
    /// value's `429`s are shared.
    pub fn shared_cooldowns(mut self, board: Arc<dyn SharedCooldowns>) -> Self {
        self.shared = Some(board);
        self
    }

    /// [`Self::cooling`], after asking the shared board (whose cooldown,
    /// if later, is kept here too).
    async fn cooling_now(&self, i: usize) -> Option<Duration> {
        if let Some(board) = &self.shared
            && let Some(until) = board.until(&self.board_keys[i]).await
            && let Ok(left) = until.duration_since(SystemTime::now())
            && !left.is_zero()
        {
            let until = Instant::now().checked_add(left.min(MAX_COOLDOWN));
            let mut c = self.cooldown.lock().unwrap_or_else(|e| e.into_inner());
            if c[i] < until {
                c[i] = until;
            }
        }
        self.cooling(i, Instant::now())
    }

    /// Moves on by these kinds instead.
    pub fn on(mut self, on: FallbackOn) -> Self {
        self.on = on;
        self
    }

    /// The models, in order.
    pub fn models(&self) -> &[Arc<dyn Model>] {
        &self.models
    }

    /// The kinds it moves on by.
    pub fn fallback_on(&self) -> &FallbackOn {
        &self.on
    }

    /// How long model `i` is still skipped for, if it is.
    fn cooling(&self, i: usize, now: Instant) -> Option<Duration> {
        let c = self.cooldown.lock().unwrap_or_else(|e| e.into_inner());
        c[i].and_then(|until| until.checked_duration_since(now))
            .filter(|d| !d.is_zero())
    }

    /// Notes model `i`'s failure: a `429` with a wait starts its cooldown
    /// (shared, with a board).
    async fn failed(&self, i: usize, error: &ModelError) {
        if let ModelError::RateLimited {
            retry_after: Some(wait),
            ..
        } = error
        {
            let wait = (*wait).min(MAX_COOLDOWN);
            let until = Instant::now().checked_add(wait);
            self.cooldown.lock().unwrap_or_else(|e| e.into_inner())[i] = until;
            if let Some(board) = &self.shared
                && let Some(at) = SystemTime::now().checked_add(wait)
            {
                board.cool(&self.board_keys[i], at).await;
            }
        }
    }

    fn skip_cooling(&self, i: usize, left: Duration, skipped: &mut Vec<Skip>) {
        let error = format!(
            "skipped: rate limited, cooling down for {:.1} s more",
            left.as_secs_f64()
        );
        tracing::info!(
            target: "parlance::fallback",
            index = i,
            model = %self.names[i],
            reason = "cooling_down",
            "{}: {error}",
            self.names[i]
        );
        skipped.push(Skip {
            index: i,
            reason: "cooling_down",
            error,
        });
    }

    fn skip_failed(&self, i: usize, error: &ModelError, skipped: &mut Vec<Skip>) {
        tracing::warn!(
            target: "parlance::fallback",
            index = i,
            model = %self.names[i],
            reason = error.kind(),
            error = %error,
            "{} failed ({}); trying the next model",
            self.names[i],
            error.kind()
        );
        skipped.push(Skip {
            index: i,
            reason: error.kind(),
            error: error.to_string(),
        });
    }

    /// `error` of model `i`, the call's error, its message naming the
    /// model and every model passed over before it.
    fn explain(&self, i: usize, mut error: ModelError, skipped: &[Skip]) -> ModelError {
        if self.models.len() > 1 {
            let m = error.message_mut();
            let mut text = format!("model[{i}] {}: {m}", self.names[i]);
            if !skipped.is_empty() {
                text.push_str(" (before it: ");
                text.push_str(&describe(&self.names, skipped));
                text.push(')');
            }
            *m = text;
        }
        error
    }

    /// Every model was skipped, cooling down: rate limited, no request sent.
    fn all_cooling(&self, skipped: &[Skip], now: Instant) -> ModelError {
        let wait = (0..self.models.len())
            .filter_map(|i| self.cooling(i, now))
            .min();
        ModelError::RateLimited {
            message: format!(
                "every model of the fallback is cooling down after a 429: {}",
                describe(&self.names, skipped)
            ),
            retry_after: wait,
        }
    }

    /// The answer, its metadata naming the models passed over.
    fn answered(&self, mut msg: Message, skipped: &[Skip]) -> Message {
        if !skipped.is_empty() {
            let list: Vec<Value> = skipped
                .iter()
                .map(|s| {
                    json!({
                        "index": s.index,
                        "model": self.names[s.index],
                        "reason": s.reason,
                        "error": s.error,
                    })
                })
                .collect();
            msg.metadata
                .get_or_insert_with(Map::new)
                .insert("parlance_fallback".into(), Value::Array(list));
        }
        msg
    }

    async fn generate_now(&self, request: &ModelRequest) -> Result<Message, ModelError> {
        let mut skipped = Vec::new();
        let mut last: Option<(usize, ModelError)> = None;
        for (i, model) in self.models.iter().enumerate() {
            if let Some(left) = self.cooling_now(i).await {
                self.skip_cooling(i, left, &mut skipped);
                continue;
            }
            if let Some((j, e)) = last.take() {
                self.skip_failed(j, &e, &mut skipped);
            }
            match model.generate(request).await {
                Ok(msg) => return Ok(self.answered(msg, &skipped)),
                Err(e) => {
                    self.failed(i, &e).await;
                    if !self.on.moves_on(&e) {
                        return Err(self.explain(i, e, &skipped));
                    }
                    last = Some((i, e));
                }
            }
        }
        Err(match last {
            Some((i, e)) => self.explain(i, e, &skipped),
            None => self.all_cooling(&skipped, Instant::now()),
        })
    }

    async fn stream_now<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> Result<EventStream<'a>, ModelError> {
        let mut skipped = Vec::new();
        let mut last: Option<(usize, ModelError)> = None;
        for (i, model) in self.models.iter().enumerate() {
            if let Some(left) = self.cooling_now(i).await {
                self.skip_cooling(i, left, &mut skipped);
                continue;
            }
            if let Some((j, e)) = last.take() {
                self.skip_failed(j, &e, &mut skipped);
            }
            // A stream may fail as it starts or with its first item: both
            // are before any event reached the caller.
            let first = match model.stream(request).await {
                Err(e) => Err(e),
                Ok(mut s) => match s.next().await {
                    Some(Err(e)) => Err(e),
                    first => Ok((first, s)),
                },
            };
            match first {
                Ok((first, rest)) => {
                    let meta = (!skipped.is_empty()).then(|| self.answered(empty(), &skipped));
                    let events = futures::stream::iter(first).chain(rest);
                    return Ok(match meta {
                        None => Box::pin(events),
                        Some(meta) => Box::pin(events.map(move |e| match e {
                            Ok(StreamEvent::Done(mut m)) => {
                                merge_metadata(&mut m, &meta);
                                Ok(StreamEvent::Done(m))
                            }
                            other => other,
                        })),
                    });
                }
                Err(e) => {
                    self.failed(i, &e).await;
                    if !self.on.moves_on(&e) {
                        return Err(self.explain(i, e, &skipped));
                    }
                    last = Some((i, e));
                }
            }
        }
        Err(match last {
            Some((i, e)) => self.explain(i, e, &skipped),
            None => self.all_cooling(&skipped, Instant::now()),
        })
    }
}

fn empty() -> Message {
    Message::new(parlance_format::Role::Assistant, Vec::new())
}

fn merge_metadata(m: &mut Message, from: &Message) {
    if let Some(meta) = &from.metadata {
        let into = m.metadata.get_or_insert_with(Map::new);
        for (k, v) in meta {
            into.insert(k.clone(), v.clone());
        }
    }
}

fn describe(names: &[String], skipped: &[Skip]) -> String {
    skipped
        .iter()
        .map(|s| format!("model[{}] {}: {}", s.index, names[s.index], s.error))
        .collect::<Vec<_>>()
        .join("; ")
}

impl Model for Fallback {
    /// `fallback`: each answer names the provider that wrote it.
    fn provider(&self) -> &str {
        "fallback"
    }

    /// The models, `provider:model` each, joined by commas.
    fn model_id(&self) -> &str {
        &self.id
    }

    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(self.generate_now(request))
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        Box::pin(self.stream_now(request))
    }
}
