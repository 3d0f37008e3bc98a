//! `Fallback` with scripted failing models: which errors move on and which
//! do not, the error when every model fails, cooldowns after a 429, and
//! streams that fall back only before their first event.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use parlance_format::{Block, Message, Role, Thinking};
use parlance_model::fallback::{ERROR_KINDS, FallbackError};
use parlance_model::testing::FunctionModel;
use parlance_model::{
    EventStream, Fallback, FallbackOn, IntoModel, Model, ModelError, ModelRequest, StreamEvent,
};
use serde_json::json;

/// A model answering from a script of results, counting its calls and
/// keeping what it was sent.
#[derive(Clone)]
struct Scripted {
    provider: &'static str,
    script: Arc<Mutex<VecDeque<Result<Message, ModelError>>>>,
    sent: Arc<Mutex<Vec<ModelRequest>>>,
}

impl Scripted {
    fn new(provider: &'static str, script: Vec<Result<Message, ModelError>>) -> Self {
        Scripted {
            provider,
            script: Arc::new(Mutex::new(script.into())),
            sent: Arc::default(),
        }
    }

    fn calls(&self) -> usize {
        self.sent.lock().unwrap().len()
    }

    fn model(&self) -> Arc<dyn Model> {
        let me = self.clone();
        FunctionModel::new(move |r| {
            me.sent.lock().unwrap().push(r.clone());
            me.script
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| Ok(Message::assistant(format!("{} again", me.provider))))
        })
        .named(self.provider, format!("{}-model", self.provider))
        .into_model()
    }
}

fn rate_limited(wait: Option<u64>) -> ModelError {
    ModelError::RateLimited {
        message: "slow down".into(),
        retry_after: wait.map(Duration::from_millis),
    }
}

fn server(status: u16) -> ModelError {
    ModelError::Server {
        status,
        message: "unavailable".into(),
    }
}

fn invalid() -> ModelError {
    ModelError::InvalidRequest {
        message: "messages: bad".into(),
    }
}

fn ask() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("hi")],
        ..Default::default()
    }
}

fn fallback(models: &[&Scripted]) -> Fallback {
    Fallback::new(models.iter().map(|m| m.model())).unwrap()
}

#[tokio::test]
async fn a_429_and_a_503_move_on_and_the_answer_says_why() {
    let a = Scripted::new("anthropic", vec![Err(rate_limited(None))]);
    let b = Scripted::new("openai", vec![Err(server(503))]);
    let c = Scripted::new("gemini", vec![Ok(Message::assistant("hello"))]);
    let f = fallback(&[&a, &b, &c]);
    let m = f.generate(&ask()).await.unwrap();
    assert_eq!(m.text(), "hello");
    assert_eq!(m.provider.as_deref(), Some("gemini"));
    assert_eq!((a.calls(), b.calls(), c.calls()), (1, 1, 1));
    let why = &m.metadata.as_ref().unwrap()["parlance_fallback"];
    assert_eq!(
        why,
        &json!([
            {"index": 0, "model": "anthropic:anthropic-model", "reason": "rate_limited", "error": "rate limited: slow down"},
            {"index": 1, "model": "openai:openai-model", "reason": "server", "error": "provider error (HTTP 503): unavailable"},
        ])
    );
    // Each model got the same canonical request.
    assert_eq!(a.sent.lock().unwrap()[0], ask());
    assert_eq!(c.sent.lock().unwrap()[0], ask());
    assert_eq!(f.provider(), "fallback");
    assert_eq!(
        f.model_id(),
        "anthropic:anthropic-model,openai:openai-model,gemini:gemini-model"
    );
}

#[tokio::test]
async fn an_answer_from_the_first_model_has_no_fallback_metadata() {
    let a = Scripted::new("anthropic", vec![Ok(Message::assistant("first"))]);
    let b = Scripted::new("openai", vec![]);
    let m = fallback(&[&a, &b]).generate(&ask()).await.unwrap();
    assert_eq!(m.text(), "first");
    assert_eq!(m.metadata, None);
    assert_eq!(b.calls(), 0);
}

#[tokio::test]
async fn an_invalid_request_or_a_bad_key_never_moves_on() {
    for error in [
        invalid(),
        ModelError::Authentication {
            message: "bad key".into(),
        },
        ModelError::Permission {
            message: "no".into(),
        },
    ] {
        let a = Scripted::new("anthropic", vec![Err(error.clone())]);
        let b = Scripted::new("openai", vec![Ok(Message::assistant("never"))]);
        let e = fallback(&[&a, &b]).generate(&ask()).await.unwrap_err();
        assert_eq!(e.kind(), error.kind());
        assert_eq!(b.calls(), 0, "{error}");
        assert!(
            e.to_string()
                .contains("model[0] anthropic:anthropic-model: "),
            "{e}"
        );
    }
}

#[tokio::test]
async fn a_400_after_a_429_is_the_error_and_names_the_429() {
    let a = Scripted::new("anthropic", vec![Err(rate_limited(None))]);
    let b = Scripted::new("openai", vec![Err(invalid())]);
    let c = Scripted::new("gemini", vec![]);
    let e = fallback(&[&a, &b, &c]).generate(&ask()).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid request: model[1] openai:openai-model: messages: bad (before it: model[0] anthropic:anthropic-model: rate limited: slow down)"
    );
    assert_eq!(c.calls(), 0);
}

#[tokio::test]
async fn when_every_model_fails_the_error_is_the_last_and_names_each() {
    let a = Scripted::new("anthropic", vec![Err(rate_limited(None))]);
    let b = Scripted::new(
        "openai",
        vec![Err(ModelError::ContextTooLong {
            message: "too long".into(),
        })],
    );
    let c = Scripted::new(
        "gemini",
        vec![Err(ModelError::Timeout {
            message: "no answer within 1s".into(),
        })],
    );
    let e = fallback(&[&a, &b, &c]).generate(&ask()).await.unwrap_err();
    assert_eq!(e.kind(), "timeout");
    assert_eq!(
        e.to_string(),
        "timed out: model[2] gemini:gemini-model: no answer within 1s (before it: \
         model[0] anthropic:anthropic-model: rate limited: slow down; \
         model[1] openai:openai-model: context too long: too long)"
    );
}

#[tokio::test]
async fn the_kinds_are_configurable() {
    let a = Scripted::new("anthropic", vec![Err(rate_limited(None))]);
    let b = Scripted::new("openai", vec![]);
    let f = fallback(&[&a, &b]).on(FallbackOn::kinds(["server", "overloaded"]).unwrap());
    let e = f.generate(&ask()).await.unwrap_err();
    assert_eq!(e.kind(), "rate_limited");
    assert_eq!(b.calls(), 0);
    // Quota is not a default kind, but may be named.
    let a = Scripted::new(
        "anthropic",
        vec![Err(ModelError::QuotaExceeded {
            message: "billing".into(),
        })],
    );
    let b = Scripted::new("openai", vec![]);
    assert!(fallback(&[&a, &b]).generate(&ask()).await.is_err());
    let f = fallback(&[&a, &b]).on(FallbackOn::kinds(["quota_exceeded"]).unwrap());
    a.script
        .lock()
        .unwrap()
        .push_back(Err(ModelError::QuotaExceeded {
            message: "billing".into(),
        }));
    assert_eq!(f.generate(&ask()).await.unwrap().text(), "openai again");
}

#[test]
fn bad_kinds_and_an_empty_list_are_errors_naming_where() {
    let e = FallbackOn::kinds(["server", "rate_limit"]).unwrap_err();
    assert_eq!(
        e,
        FallbackError::UnknownKind {
            index: 1,
            name: "rate_limit".into()
        }
    );
    assert!(
        e.to_string()
            .starts_with("[1]: unknown error kind \"rate_limit\" (known: authentication, "),
        "{e}"
    );
    let e = FallbackOn::kinds(["invalid_request"]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("[0]: \"invalid_request\" never falls back"),
        "{e}"
    );
    assert!(FallbackOn::kinds(["authentication"]).is_err());
    let none: Vec<Arc<dyn Model>> = Vec::new();
    let e = Fallback::new(none).unwrap_err();
    assert_eq!(e, FallbackError::Empty);
    assert_eq!(
        e.to_string(),
        "expected at least one model, got an empty list"
    );
}

/// Every kind `ModelError::kind` names is a kind the list knows.
#[test]
fn every_error_kind_is_known() {
    let all = [
        ModelError::Authentication { message: "".into() },
        ModelError::Permission { message: "".into() },
        rate_limited(None),
        ModelError::QuotaExceeded { message: "".into() },
        ModelError::Overloaded {
            message: "".into(),
            retry_after: None,
        },
        invalid(),
        ModelError::ContextTooLong { message: "".into() },
        server(500),
        ModelError::Network { message: "".into() },
        ModelError::Timeout { message: "".into() },
        ModelError::MalformedResponse { message: "".into() },
        ModelError::MalformedRequest { message: "".into() },
        ModelError::Unsupported { message: "".into() },
    ];
    let kinds: Vec<&str> = all.iter().map(ModelError::kind).collect();
    assert_eq!(kinds, ERROR_KINDS);
}

#[tokio::test]
async fn a_429_with_retry_after_is_skipped_until_then() {
    let a = Scripted::new("anthropic", vec![Err(rate_limited(Some(60_000)))]);
    let b = Scripted::new("openai", vec![]);
    let f = fallback(&[&a, &b]);
    assert_eq!(f.generate(&ask()).await.unwrap().text(), "openai again");
    let m = f.generate(&ask()).await.unwrap();
    assert_eq!(m.text(), "openai again");
    assert_eq!(a.calls(), 1, "the first model is cooling down");
    let why = &m.metadata.as_ref().unwrap()["parlance_fallback"][0];
    assert_eq!(why["reason"], "cooling_down");
    assert!(
        why["error"]
            .as_str()
            .unwrap()
            .starts_with("skipped: rate limited, cooling down for 6"),
        "{why}"
    );
    // A 429 without a wait: asked again next time.
    let a = Scripted::new("anthropic", vec![Err(rate_limited(None))]);
    let b = Scripted::new("openai", vec![]);
    let f = fallback(&[&a, &b]);
    f.generate(&ask()).await.unwrap();
    f.generate(&ask()).await.unwrap();
    assert_eq!(a.calls(), 2);
}

/// A board in memory, standing for a store's.
#[derive(Default)]
struct Board(Mutex<std::collections::HashMap<String, std::time::SystemTime>>);

impl parlance_model::SharedCooldowns for Board {
    fn until<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Option<std::time::SystemTime>> {
        let got = self.0.lock().unwrap().get(name).copied();
        Box::pin(async move { got })
    }

    fn cool<'a>(&'a self, name: &'a str, until: std::time::SystemTime) -> BoxFuture<'a, ()> {
        self.0.lock().unwrap().insert(name.to_string(), until);
        Box::pin(async {})
    }
}

#[tokio::test]
async fn a_shared_cooldown_is_skipped_by_another_fallback_of_the_board() {
    let board = Arc::new(Board::default());
    let a = Scripted::new("anthropic", vec![Err(rate_limited(Some(60_000)))]);
    let b = Scripted::new("openai", vec![]);
    let here = fallback(&[&a, &b]).shared_cooldowns(board.clone());
    here.generate(&ask()).await.unwrap();
    let shared = board.0.lock().unwrap()["anthropic:anthropic-model"];
    let left = shared.duration_since(std::time::SystemTime::now()).unwrap();
    assert!(
        left > Duration::from_secs(59) && left <= Duration::from_secs(60),
        "{left:?}"
    );
    // Another process's fallback, its own models, the same board: the
    // first is not asked.
    let a2 = Scripted::new("anthropic", vec![]);
    let b2 = Scripted::new("openai", vec![]);
    let there = fallback(&[&a2, &b2]).shared_cooldowns(board.clone());
    let m = there.generate(&ask()).await.unwrap();
    assert_eq!((a2.calls(), b2.calls()), (0, 1));
    assert_eq!(
        m.metadata.unwrap()["parlance_fallback"][0]["reason"],
        "cooling_down"
    );
    // Streams ask the board too.
    let s: Vec<_> = there.stream(&ask()).await.unwrap().collect().await;
    assert!(s.last().unwrap().is_ok());
    assert_eq!((a2.calls(), b2.calls()), (0, 2));
    // A fallback without the board knows nothing of it.
    let a3 = Scripted::new("anthropic", vec![]);
    fallback(&[&a3, &b2]).generate(&ask()).await.unwrap();
    assert_eq!(a3.calls(), 1);
}

#[tokio::test]
async fn a_cooldown_ends() {
    let a = Scripted::new("anthropic", vec![Err(rate_limited(Some(30)))]);
    let b = Scripted::new("openai", vec![]);
    let f = fallback(&[&a, &b]);
    f.generate(&ask()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(f.generate(&ask()).await.unwrap().text(), "anthropic again");
    assert_eq!((a.calls(), b.calls()), (2, 1));
}

#[tokio::test]
async fn every_model_cooling_down_is_rate_limited_without_a_request() {
    let a = Scripted::new("anthropic", vec![Err(rate_limited(Some(60_000)))]);
    let b = Scripted::new("openai", vec![Err(rate_limited(Some(30_000)))]);
    let f = fallback(&[&a, &b]);
    let e = f.generate(&ask()).await.unwrap_err();
    assert_eq!(e.kind(), "rate_limited");
    let e = f.generate(&ask()).await.unwrap_err();
    assert_eq!((a.calls(), b.calls()), (1, 1));
    let ModelError::RateLimited {
        message,
        retry_after,
    } = &e
    else {
        panic!("{e:?}")
    };
    assert!(
        message.starts_with("every model of the fallback is cooling down after a 429: model[0] anthropic:anthropic-model: skipped"),
        "{message}"
    );
    let wait = retry_after.unwrap();
    assert!(
        wait <= Duration::from_secs(30) && wait > Duration::from_secs(29),
        "{wait:?}"
    );
}

/// A model whose stream is scripted event by event: an error where the
/// script says.
struct Streamed {
    provider: &'static str,
    /// `None`: `stream` itself fails with `fail`.
    events: Option<Vec<Result<StreamEvent, ModelError>>>,
    fail: ModelError,
    calls: AtomicUsize,
}

impl Streamed {
    fn new(provider: &'static str, events: Vec<Result<StreamEvent, ModelError>>) -> Arc<Self> {
        Arc::new(Streamed {
            provider,
            events: Some(events),
            fail: invalid(),
            calls: AtomicUsize::new(0),
        })
    }

    fn failing(provider: &'static str, fail: ModelError) -> Arc<Self> {
        Arc::new(Streamed {
            provider,
            events: None,
            fail,
            calls: AtomicUsize::new(0),
        })
    }
}

impl Model for Streamed {
    fn provider(&self) -> &str {
        self.provider
    }
    fn model_id(&self) -> &str {
        "m"
    }
    fn generate<'a>(&'a self, _: &'a ModelRequest) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(async { Err(invalid()) })
    }
    fn stream<'a>(
        &'a self,
        _: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            match &self.events {
                None => Err(self.fail.clone()),
                Some(events) => {
                    Ok(Box::pin(futures::stream::iter(events.clone())) as EventStream<'a>)
                }
            }
        })
    }
}

fn answer(provider: &str, text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.provider = Some(provider.into());
    m
}

async fn read(model: &dyn Model) -> (Vec<StreamEvent>, Result<Message, ModelError>) {
    let mut out = Vec::new();
    let request = ask();
    let mut s = match model.stream(&request).await {
        Ok(s) => s,
        Err(e) => return (out, Err(e)),
    };
    while let Some(e) = s.next().await {
        match e {
            Ok(StreamEvent::Done(m)) => return (out, Ok(m)),
            Ok(e) => out.push(e),
            Err(e) => return (out, Err(e)),
        }
    }
    panic!("no Done")
}

#[tokio::test]
async fn a_stream_falls_back_before_its_first_event() {
    let a = Streamed::failing("anthropic", server(529));
    let b = Streamed::new("openai", vec![Err(rate_limited(None))]);
    let c = Streamed::new(
        "gemini",
        vec![
            Ok(StreamEvent::TextDelta {
                index: 0,
                text: "hel".into(),
            }),
            Ok(StreamEvent::TextDelta {
                index: 0,
                text: "lo".into(),
            }),
            Ok(StreamEvent::Done(answer("gemini", "hello"))),
        ],
    );
    let f = Fallback::new([
        a.clone().into_model(),
        b.clone().into_model(),
        c.clone().into_model(),
    ])
    .unwrap();
    let (events, done) = read(&f).await;
    let done = done.unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(done.text(), "hello");
    assert_eq!(done.provider.as_deref(), Some("gemini"));
    let why = &done.metadata.as_ref().unwrap()["parlance_fallback"];
    assert_eq!(why[0]["reason"], "server");
    assert_eq!(why[1]["reason"], "rate_limited");
}

#[tokio::test]
async fn after_its_first_event_a_streams_error_is_the_calls_error() {
    let a = Streamed::new(
        "anthropic",
        vec![
            Ok(StreamEvent::TextDelta {
                index: 0,
                text: "hel".into(),
            }),
            Err(ModelError::Network {
                message: "connection reset".into(),
            }),
        ],
    );
    let b = Streamed::new("openai", vec![Ok(StreamEvent::Done(answer("openai", "x")))]);
    let f = Fallback::new([a.clone().into_model(), b.clone().into_model()]).unwrap();
    let (events, done) = read(&f).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        done.unwrap_err(),
        ModelError::Network {
            message: "connection reset".into()
        }
    );
    assert_eq!(b.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_stream_that_is_refused_does_not_move_on() {
    let a = Streamed::new("anthropic", vec![Err(invalid())]);
    let b = Streamed::new("openai", vec![Ok(StreamEvent::Done(answer("openai", "x")))]);
    let f = Fallback::new([a.clone().into_model(), b.clone().into_model()]).unwrap();
    let (_, done) = read(&f).await;
    assert_eq!(done.unwrap_err().kind(), "invalid_request");
    assert_eq!(b.calls.load(Ordering::SeqCst), 0);
}

/// The history is the canonical one: a thread whose thinking carries
/// Anthropic's signature reaches the next model unchanged (its own
/// translation drops what it cannot read; see the providers' tests).
#[tokio::test]
async fn the_next_model_gets_the_canonical_history() {
    let mut thinking = Message::new(
        Role::Assistant,
        vec![
            Block::Thinking(Thinking {
                thinking: "Let me think.".into(),
                signature: Some("sig".into()),
                provider: Some("anthropic".into()),
                ..Default::default()
            }),
            Block::text("Earlier answer."),
        ],
    );
    thinking.provider = Some("anthropic".into());
    let request = ModelRequest {
        messages: vec![Message::user("hi"), thinking, Message::user("and now?")],
        ..Default::default()
    };
    let a = Scripted::new("anthropic", vec![Err(server(500))]);
    let b = Scripted::new("openai", vec![]);
    fallback(&[&a, &b]).generate(&request).await.unwrap();
    assert_eq!(b.sent.lock().unwrap()[0], request);
}
