//! One entry for every way a package runs an agent: a [`Work`] (a run,
//! a stateless retry, a resume, or any of them on a stored thread),
//! awaited for its response ([`complete`]) or read as [`Events`]. The
//! packages' `run`/`stream`/`resume`... methods only build the `Work`.

use std::pin::Pin;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use parlance::store::{ResumeError, RunHandle, Store, ThreadRunner};
use parlance::{Agent, Checkpoint, Decision, Message, Response, Resume, RunEvent, RunInput};
use serde_json::Value;

use crate::{BindError, Dialect, input};

/// What a run does.
pub enum Work {
    /// A new run: input, earlier turns, ids.
    Run(RunInput),
    /// A failed run again from its history (`RunInput::turns`, the failed
    /// turn last): its failed calls run again.
    Retry(RunInput),
    /// Decisions applied to a paused run.
    Resume(Box<Resume>),
    /// Work on a stored thread (history from the store, every step
    /// committed as it completes).
    Thread {
        /// The store.
        store: Store,
        /// What to do there.
        job: ThreadJob,
    },
    /// A run, retry or resume whose steps also go to the application's
    /// [`Checkpoint`] as they complete (see [`Work::checkpoint`]).
    Checkpointed(Box<Work>, Arc<dyn Checkpoint>),
}

/// What a run on a stored thread does.
pub enum ThreadJob {
    /// New input on a thread.
    Run {
        /// The thread.
        thread: String,
        /// The new messages.
        input: Vec<Message>,
    },
    /// The thread's last run again, which must have failed.
    Retry {
        /// The thread.
        thread: String,
    },
    /// Decisions for the run waiting on them (from any process).
    Resume {
        /// The paused run.
        run: String,
        /// The decisions.
        decisions: Vec<Decision>,
    },
    /// A run whose process died, taken over and carried on from its last
    /// committed step.
    CarryOn {
        /// The dead run.
        run: String,
        /// Takeovers at the same step before it is given up.
        max_attempts: u32,
    },
}

fn optional_string(v: &Value, key: &str) -> Result<Option<String>, BindError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(BindError::config(format!(
            "{key}: expected a string, got {other}"
        ))),
    }
}

/// `max_attempts` (default 3): takeovers at the same step, at least 1.
fn max_attempts(v: &Value, key: &str) -> Result<u32, BindError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(parlance::store::DEFAULT_MAX_ATTEMPTS),
        Some(x) => match x.as_u64() {
            Some(n @ 1..=1000) => Ok(n as u32),
            _ => Err(BindError::config(format!(
                "{key}: expected a whole number from 1 to 1000, got {x}"
            ))),
        },
    }
}

fn required<'v>(v: &'v Value, key: &str, what: &str) -> Result<&'v Value, BindError> {
    match v.get(key) {
        None | Some(Value::Null) => Err(BindError::config(format!("{key}: {what} needs it"))),
        Some(x) => Ok(x),
    }
}

impl Work {
    /// This work with `checkpoint` receiving each step as it completes
    /// (an error from it fails the run with code `store`). A run on a
    /// stored thread is refused: its store is its checkpoint.
    pub fn checkpoint(
        self,
        checkpoint: Arc<dyn Checkpoint>,
        d: Dialect,
    ) -> Result<Work, BindError> {
        match self {
            Work::Thread { .. } => Err(BindError::config(format!(
                "checkpoint: a run on a stored thread is checkpointed by its store ({} and checkpoint cannot be given together)",
                d.name("store")
            ))),
            Work::Checkpointed(..) => Err(BindError::config("checkpoint: given twice")),
            w => Ok(Work::Checkpointed(Box::new(w), checkpoint)),
        }
    }

    /// Reads a work from its JSON description, in dialect `d`'s spelling:
    /// `{"kind": "run", "input", "turns"?, "runId"?, "threadId"?}`,
    /// `{"kind": "retry", "turns", ...}`, `{"kind": "resume", "paused",
    /// "decisions", "turns"?}`. With a `store`, the same kinds on a stored
    /// thread: `run` takes `threadId` and `input`, `retry` `threadId`,
    /// `resume` `runId` and `decisions`.
    pub fn read(v: &Value, store: Option<Store>, d: Dialect) -> Result<Work, BindError> {
        let (run_id, thread_id) = (d.name("run_id"), d.name("thread_id"));
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        let run_input = |with_input: bool| -> Result<RunInput, BindError> {
            let mut input = if with_input {
                input::run_input(required(v, "input", "a run")?)?
            } else {
                RunInput::default()
            };
            input.turns = input::turns(v.get("turns"))?;
            input.run_id = optional_string(v, &run_id)?;
            input.thread_id = optional_string(v, &thread_id)?;
            Ok(input)
        };
        let Some(store) = store else {
            return match kind {
                "run" => Ok(Work::Run(run_input(true)?)),
                "retry" => {
                    required(v, "turns", "a retry without a store")?;
                    Ok(Work::Retry(run_input(false)?))
                }
                "resume" => Ok(Work::Resume(Box::new(Resume {
                    turns: input::turns(v.get("turns"))?,
                    paused: input::paused(required(v, "paused", "a resume")?)?,
                    decisions: input::decisions(required(v, "decisions", "a resume")?)?,
                }))),
                other => Err(BindError::config(format!(
                    "work: unknown kind {other:?} (expected run, retry or resume)"
                ))),
            };
        };
        let thread = || -> Result<String, BindError> {
            optional_string(v, &thread_id)?.ok_or_else(|| {
                BindError::config(format!(
                    "{thread_id}: a run on a store needs its thread's id"
                ))
            })
        };
        let job = match kind {
            "run" => ThreadJob::Run {
                thread: thread()?,
                input: input::messages(required(v, "input", "a run")?, "input")?,
            },
            "retry" => ThreadJob::Retry { thread: thread()? },
            "resume" => ThreadJob::Resume {
                run: optional_string(v, &run_id)?.ok_or_else(|| {
                    BindError::config(format!("{run_id}: a resume on a store needs the run's id"))
                })?,
                decisions: input::decisions(required(v, "decisions", "a resume")?)?,
            },
            "carry_on" => ThreadJob::CarryOn {
                run: optional_string(v, &run_id)?.ok_or_else(|| {
                    BindError::config(format!("{run_id}: carrying a run on needs its id"))
                })?,
                max_attempts: max_attempts(v, &d.name("max_attempts"))?,
            },
            other => {
                return Err(BindError::config(format!(
                    "work: unknown kind {other:?} (expected run, retry, resume or carry_on)"
                )));
            }
        };
        Ok(Work::Thread { store, job })
    }
}

/// Runs `work` to its end: the response (a failed run is a response too);
/// an error only when nothing ran (refused decisions, a busy thread...).
pub async fn complete(agent: &Agent, work: Work) -> Result<Response, BindError> {
    let (work, c) = match work {
        Work::Checkpointed(w, c) => (*w, Some(c)),
        w => (w, None),
    };
    match work {
        Work::Run(input) => Ok(with(agent.run(input), c, |b, c| b.checkpoint(c)).await),
        Work::Retry(input) => Ok(with(retry(agent, input), c, |b, c| b.checkpoint(c)).await),
        Work::Resume(resume) => Ok(with(agent.resume(*resume), c, |b, c| b.checkpoint(c)).await?),
        Work::Checkpointed(..) => Err(BindError::config("checkpoint: given twice")),
        Work::Thread { store, job } => {
            let runner = ThreadRunner::new(store, agent.clone());
            Ok(match job {
                ThreadJob::Run { thread, input } => runner.run(&thread, input).await?,
                ThreadJob::Retry { thread } => runner.retry(&thread).await?,
                ThreadJob::Resume { run, decisions } => runner.resume(&run, decisions).await?,
                ThreadJob::CarryOn { run, max_attempts } => {
                    match runner.take_over(&run, false, max_attempts, false).await? {
                        Ok(handle) => handle.outcome().await?,
                        Err(why) => return Err(why.into_error(&run).into()),
                    }
                }
            })
        }
    }
}

/// `b`, with the checkpoint when there is one.
fn with<B>(
    b: B,
    c: Option<Arc<dyn Checkpoint>>,
    set: impl FnOnce(B, Arc<dyn Checkpoint>) -> B,
) -> B {
    match c {
        Some(c) => set(b, c),
        None => b,
    }
}

fn retry(agent: &Agent, input: RunInput) -> parlance::agent::RunBuilder<'_> {
    let RunInput {
        turns,
        run_id,
        thread_id,
        ..
    } = input;
    let mut b = agent.retry(turns);
    if let Some(id) = run_id {
        b = b.id(id);
    }
    if let Some(t) = thread_id {
        b = b.thread(t);
    }
    b
}

type Outcome = BoxFuture<'static, Result<Response, ResumeError>>;

enum State {
    NotStarted(Box<(Agent, Work)>),
    Running {
        events: BoxStream<'static, RunEvent>,
        /// A thread run's outcome: the reason when its events end
        /// without `RunCompleted`.
        outcome: Option<Outcome>,
    },
    Done,
}

/// A run's events, pulled one at a time; the last is `RunCompleted`.
/// Dropping it does not stop the run (it finishes, so what it stores
/// stays consistent).
pub struct Events {
    state: State,
}

impl Events {
    /// Events of `work`, started on the first [`next`](Events::next) (on
    /// whatever runtime polls it).
    pub fn lazy(agent: Agent, work: Work) -> Events {
        Events {
            state: State::NotStarted(Box::new((agent, work))),
        }
    }

    /// Events of `work`, started now when it can be (a run, a retry, a
    /// resume: refused decisions are an error here); a thread's work
    /// starts on the first pull (claiming the thread is asynchronous).
    /// Must be called inside the runtime (a run spawns its task).
    pub fn start(agent: Agent, work: Work) -> Result<Events, BindError> {
        let (work, c) = match work {
            Work::Checkpointed(w, c) => (*w, Some(c)),
            w => (w, None),
        };
        let events = match work {
            Work::Thread { .. } => return Ok(Events::lazy(agent, work)),
            Work::Run(input) => with(agent.run(input), c, |b, c| b.checkpoint(c))
                .stream()
                .boxed(),
            Work::Retry(input) => with(retry(&agent, input), c, |b, c| b.checkpoint(c))
                .stream()
                .boxed(),
            Work::Resume(resume) => with(agent.resume(*resume), c, |b, c| b.checkpoint(c))
                .stream()?
                .boxed(),
            Work::Checkpointed(..) => return Err(BindError::config("checkpoint: given twice")),
        };
        Ok(Events {
            state: State::Running {
                events,
                outcome: None,
            },
        })
    }

    async fn begin(agent: Agent, work: Work) -> Result<State, BindError> {
        let Work::Thread { store, job } = work else {
            return Ok(Events::start(agent, work)?.state);
        };
        let runner = ThreadRunner::new(store, agent);
        let handle: RunHandle = match job {
            ThreadJob::Run { thread, input } => runner.start(&thread, input, true).await?,
            ThreadJob::Retry { thread } => runner.start_retry(&thread, true).await?,
            ThreadJob::Resume { run, decisions } => {
                runner.start_resume(&run, decisions, true).await?
            }
            ThreadJob::CarryOn { run, max_attempts } => {
                match runner.take_over(&run, false, max_attempts, true).await? {
                    Ok(handle) => handle,
                    Err(why) => return Err(why.into_error(&run).into()),
                }
            }
        };
        let (events, outcome) = handle.split();
        Ok(State::Running {
            events: events.boxed(),
            outcome: Some(outcome.boxed()),
        })
    }

    /// The next event; `None` once the run is over (after
    /// `RunCompleted`). A thread run whose events end early reports why.
    pub async fn next(&mut self) -> Result<Option<RunEvent>, BindError> {
        if let State::NotStarted(_) = self.state {
            let State::NotStarted(b) = std::mem::replace(&mut self.state, State::Done) else {
                unreachable!("matched above")
            };
            let (agent, work) = *b;
            self.state = Events::begin(agent, work).await?;
        }
        let State::Running { events, outcome } = &mut self.state else {
            return Ok(None);
        };
        match Pin::new(events).next().await {
            Some(e) => {
                if matches!(e, RunEvent::RunCompleted(_)) {
                    self.state = State::Done;
                }
                Ok(Some(e))
            }
            None => {
                let outcome = outcome.take();
                self.state = State::Done;
                match outcome {
                    Some(o) => o.await.map(|_| None).map_err(BindError::from),
                    None => Ok(None),
                }
            }
        }
    }

    /// Whether the run is over (no more events).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }
}

impl Events {
    /// The run's response, skipping the events before it.
    pub async fn response(mut self) -> Result<Response, BindError> {
        while let Some(e) = self.next().await? {
            if let RunEvent::RunCompleted(r) = e {
                return Ok(r);
            }
        }
        // Every run ends with its response: an end without one is a bug.
        Err(BindError::internal(
            "the run's events ended without its response",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parlance::scripted::ScriptedModel;
    use parlance::{RunStatus, Tool};
    use serde_json::json;

    fn agent(script: Vec<Message>) -> Agent {
        let pay = Tool::new(
            "pay",
            "Pays.",
            |_args: serde_json::Value, _ctx: parlance::ToolContext| async {
                Ok::<_, parlance::ToolError>(json!("paid"))
            },
        )
        .needs_approval();
        Agent::builder(ScriptedModel::new(script))
            .tool(pay)
            .build()
            .unwrap()
    }

    /// A store in a fresh SQLite file.
    async fn store(name: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("parlance-run-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let _ = std::fs::remove_file(dir.join("t.db"));
        Store::open(&format!("sqlite://{}", dir.join("t.db").display()))
            .await
            .unwrap()
    }

    fn calls_pay() -> Message {
        Message::new(
            parlance::Role::Assistant,
            vec![parlance::Block::tool_call("c1", "pay", json!({}))],
        )
    }

    #[tokio::test]
    async fn events_are_send_and_end_with_the_response() {
        fn send<T: Send>(_: &T) {}
        let a = agent(vec![Message::assistant("Hi.")]);
        let mut events = Events::start(a, Work::Run(RunInput::text("Hello"))).unwrap();
        send(&events);
        let mut last = None;
        while let Some(e) = events.next().await.unwrap() {
            last = Some(e);
        }
        assert!(matches!(last, Some(RunEvent::RunCompleted(r)) if r.text() == "Hi."));
        assert!(events.is_done());
        assert!(events.next().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_thread_run_pauses_and_resumes_from_the_store_streamed_or_not() {
        let store = store("resume").await;
        let thread = store.create_thread(None, json!({})).await.unwrap().id;
        let a = agent(vec![calls_pay(), Message::assistant("Done.")]);
        let paused = complete(
            &a,
            Work::Thread {
                store: store.clone(),
                job: ThreadJob::Run {
                    thread: thread.clone(),
                    input: vec![Message::user("Pay")],
                },
            },
        )
        .await
        .unwrap();
        assert_eq!(paused.status, RunStatus::RequiresApproval);
        // A refused decision: the stream ends with the reason, the run waits.
        let bad = Events::lazy(
            a.clone(),
            Work::Thread {
                store: store.clone(),
                job: ThreadJob::Resume {
                    run: paused.id.clone().unwrap(),
                    decisions: vec![
                        Decision::from_value(
                            &json!({"decision": "approved", "tool_call_id": "nope", "digest": format!("sha256:{}", "0".repeat(64))}),
                        )
                        .unwrap(),
                    ],
                },
            },
        );
        let e = bad.response().await.unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Decision, "{e}");
        let done = Events::lazy(
            a,
            Work::Thread {
                store: store.clone(),
                job: ThreadJob::Resume {
                    run: paused.id.clone().unwrap(),
                    decisions: vec![Decision::approve(&paused.pending[0])],
                },
            },
        )
        .response()
        .await
        .unwrap();
        assert_eq!(done.text(), "Done.");
        assert_eq!(store.history(&thread).await.unwrap().len(), 4);
    }

    #[tokio::test]
    async fn a_busy_thread_is_a_store_error_of_kind_busy() {
        let store = store("busy").await;
        let thread = store.create_thread(None, json!({})).await.unwrap().id;
        let a = agent(vec![calls_pay()]);
        let job = |t: &str| Work::Thread {
            store: store.clone(),
            job: ThreadJob::Run {
                thread: t.to_string(),
                input: vec![Message::user("Pay")],
            },
        };
        complete(&a, job(&thread)).await.unwrap();
        let e = complete(&a, job(&thread)).await.unwrap_err();
        assert_eq!(e.store_kind, Some("busy"), "{e}");
        let e = Events::lazy(a, job("no-such-thread"))
            .response()
            .await
            .unwrap_err();
        assert_eq!(e.store_kind, Some("not_found"), "{e}");
    }

    fn read_error(v: Value, store: Option<Store>, d: Dialect) -> String {
        match Work::read(&v, store, d) {
            Ok(_) => panic!("{v} was read"),
            Err(e) => {
                assert_eq!(e.kind, crate::ErrorKind::Config, "{e}");
                e.text
            }
        }
    }

    #[tokio::test]
    async fn a_work_without_what_it_needs_names_the_missing_field_in_the_dialect() {
        let s = store("read").await;
        let py = Dialect::Python;
        let js = Dialect::Node;
        // Without a store.
        assert_eq!(
            read_error(json!({"kind": "run"}), None, py),
            "input: a run needs it"
        );
        assert_eq!(
            read_error(json!({"kind": "retry"}), None, py),
            "turns: a retry without a store needs it"
        );
        assert_eq!(
            read_error(json!({"kind": "resume", "decisions": []}), None, py),
            "paused: a resume needs it"
        );
        assert_eq!(
            read_error(json!({"kind": "run", "input": "hi", "runId": 7}), None, js),
            "runId: expected a string, got 7"
        );
        assert_eq!(
            read_error(json!({"kind": "pause"}), None, py),
            "work: unknown kind \"pause\" (expected run, retry or resume)"
        );
        assert_eq!(
            read_error(json!({}), None, py),
            "work: unknown kind \"\" (expected run, retry or resume)"
        );
        // On a store: the ids, spelled as the package spells them.
        assert_eq!(
            read_error(json!({"kind": "run", "input": "hi"}), Some(s.clone()), py),
            "thread_id: a run on a store needs its thread's id"
        );
        assert_eq!(
            read_error(json!({"kind": "retry"}), Some(s.clone()), js),
            "threadId: a run on a store needs its thread's id"
        );
        assert_eq!(
            read_error(
                json!({"kind": "resume", "decisions": []}),
                Some(s.clone()),
                js
            ),
            "runId: a resume on a store needs the run's id"
        );
        assert_eq!(
            read_error(
                json!({"kind": "resume", "run_id": "r"}),
                Some(s.clone()),
                py
            ),
            "decisions: a resume needs it"
        );
        assert_eq!(
            read_error(json!({"kind": "run", "thread_id": "t"}), Some(s), py),
            "input: a run needs it"
        );
    }
}
