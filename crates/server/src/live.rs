//! The runs this server streams, their events numbered and kept in
//! memory while they run (for clients that reconnect: `streams`). Apart
//! from the handlers, so that the shared state holds it without them.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use futures::{Stream, StreamExt};
use parlance_agent::RunEvent;
use parlance_runtime::{ResumeError, RunHandle};
use tokio::sync::watch;

/// An event's id: the log position of the last message at or before it,
/// and how many events after that message it is (0: the message itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct EventId {
    /// The run's log position.
    pub position: u64,
    /// Events since that message.
    pub after: u64,
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.after {
            0 => write!(f, "{}", self.position),
            k => write!(f, "{}.{k}", self.position),
        }
    }
}

impl FromStr for EventId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad =
            || format!("{s:?} is not an event id (a number, or two joined by a dot: 12 or 12.3)");
        let (position, after) = s.split_once('.').unwrap_or((s, "0"));
        Ok(EventId {
            position: position.trim().parse().map_err(|_| bad())?,
            after: after.trim().parse().map_err(|_| bad())?,
        })
    }
}

/// A streamed run's events of this part of it, as this server sent them.
pub struct LiveRun {
    /// The run.
    pub run_id: String,
    /// Its thread.
    pub thread_id: String,
    /// The log position when this part began (its events come after).
    pub start: u64,
    events: Mutex<Vec<(EventId, RunEvent)>>,
    /// How many events there are; `true` beside it once the run ended.
    count: watch::Sender<(usize, bool)>,
    /// Why the run never started, when it ended without an event (its
    /// decisions refused: it still waits).
    refused: Mutex<Option<ResumeError>>,
}

impl LiveRun {
    /// The events from index `from` on, and whether the run ended.
    fn since(&self, from: usize) -> (Vec<(EventId, RunEvent)>, bool) {
        let ended = self.count.borrow().1;
        let events = self.events.lock().expect("not poisoned");
        (events.get(from..).unwrap_or_default().to_vec(), ended)
    }

    /// Waits for the run's first event: `Err` with the reason when it
    /// ended without one (refused decisions, a store that failed).
    pub async fn started(&self) -> Result<(), ResumeError> {
        let mut rx = self.count.subscribe();
        let _ = rx.wait_for(|(n, ended)| *n > 0 || *ended).await;
        match self.refused.lock().expect("not poisoned").take() {
            Some(e) if self.count.borrow().0 == 0 => Err(e),
            _ => Ok(()),
        }
    }

    /// The index of the first event past `after`.
    pub fn index_after(&self, after: EventId) -> usize {
        let events = self.events.lock().expect("not poisoned");
        events.partition_point(|(id, _)| *id <= after)
    }

    /// Its events from index `from` on (0: all of them), then live until
    /// the run ends.
    pub fn follow(self: Arc<Self>, from: usize) -> impl Stream<Item = (EventId, RunEvent)> + Send {
        let rx = self.count.subscribe();
        futures::stream::unfold(
            (self, rx, from, false),
            |(live, mut rx, next, done)| async move {
                if done {
                    return None;
                }
                loop {
                    let (events, ended) = live.since(next);
                    if !events.is_empty() {
                        let next = next + events.len();
                        let batch = futures::stream::iter(events);
                        return Some((batch, (live, rx, next, false)));
                    }
                    if ended {
                        return None;
                    }
                    if rx.changed().await.is_err() {
                        return None;
                    }
                }
            },
        )
        .flatten()
    }
}

/// The runs this server streams, by id.
#[derive(Default)]
pub struct LiveRuns(Mutex<HashMap<String, Arc<LiveRun>>>);

impl LiveRuns {
    /// The run `id`, if this server streams it.
    pub fn get(&self, id: &str) -> Option<Arc<LiveRun>> {
        self.0.lock().expect("not poisoned").get(id).cloned()
    }

    /// Takes `handle`'s events (a streamed run): numbered and kept as they
    /// come, whoever reads them, until the run stops.
    /// `None` when the run's log position is unknown (no ids to give).
    pub fn adopt(self: &Arc<Self>, handle: RunHandle) -> Result<Arc<LiveRun>, RunHandle> {
        let Some(start) = handle.log_start else {
            return Err(handle);
        };
        let live = Arc::new(LiveRun {
            run_id: handle.run_id.clone(),
            thread_id: handle.thread_id.clone(),
            start,
            events: Mutex::new(Vec::new()),
            count: watch::channel((0, false)).0,
            refused: Mutex::new(None),
        });
        self.0
            .lock()
            .expect("not poisoned")
            .insert(live.run_id.clone(), live.clone());
        let (runs, pumped) = (self.clone(), live.clone());
        tokio::spawn(async move {
            let mut id = EventId {
                position: start,
                after: 0,
            };
            let (events, outcome) = handle.split();
            let mut events = std::pin::pin!(events);
            while let Some(e) = events.next().await {
                id = match e {
                    RunEvent::MessageCompleted(_) => EventId {
                        position: id.position + 1,
                        after: 0,
                    },
                    _ => EventId {
                        after: id.after + 1,
                        ..id
                    },
                };
                let n = {
                    let mut kept = pumped.events.lock().expect("not poisoned");
                    kept.push((id, e));
                    kept.len()
                };
                pumped.count.send_replace((n, false));
            }
            if pumped.count.borrow().0 == 0
                && let Err(e) = outcome.await
            {
                *pumped.refused.lock().expect("not poisoned") = Some(e);
            }
            // Its outcome is stored: from now on the store tells it all
            // (and a later part of the run, here or elsewhere, too).
            pumped.count.send_modify(|c| c.1 = true);
            let mut map = runs.0.lock().expect("not poisoned");
            // A later part of the run (a resume) may have taken its place.
            if map
                .get(&pumped.run_id)
                .is_some_and(|l| Arc::ptr_eq(l, &pumped))
            {
                map.remove(&pumped.run_id);
            }
        });
        Ok(live)
    }
}
