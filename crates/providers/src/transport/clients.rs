//! The HTTP clients a transport sends through: the process's shared one,
//! or clients of the application's own.
//!
//! Building a reqwest client costs milliseconds (rustls reads the system's
//! certificate store, a file per certificate), which is most of a
//! process's start-up. The shared client is therefore built on a thread of
//! its own from the moment the first model is made, while the process goes
//! on starting (opening its store, reading its configuration); the first
//! request takes it when it is ready, waiting for the rest of the build if
//! it is not.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use parlance_model::ModelError;

use super::{HttpConfig, install_crypto, network_error};

type Built = Arc<OnceLock<Result<reqwest::Client, ModelError>>>;

/// The process's HTTP client for one pair of connect and idle timeouts:
/// one connection pool and TLS set-up, shared by every model (and the
/// server's HTTP tools) with those timeouts. Cheap to clone. Its build
/// starts on a thread of its own when the first handle is made;
/// [`SharedClient::get`] waits for it if it is not done.
#[derive(Clone, Debug)]
pub struct SharedClient {
    built: Built,
    connect: Duration,
    idle: Duration,
}

fn build(connect: Duration, idle: Duration) -> Result<reqwest::Client, ModelError> {
    install_crypto();
    reqwest::Client::builder()
        .connect_timeout(connect)
        .read_timeout(idle)
        .build()
        .map_err(|e| network_error(&e))
}

impl SharedClient {
    /// The process's client for these timeouts (`connect_timeout`,
    /// `idle_timeout` as the read timeout), its build started in the
    /// background the first time it is asked for.
    pub fn new(config: &HttpConfig) -> SharedClient {
        let (connect, idle) = (config.connect_timeout, config.idle_timeout);
        type Registry = Vec<((Duration, Duration), Built)>;
        static SHARED: Mutex<Registry> = Mutex::new(Vec::new());
        let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        let built = match shared.iter().find(|(k, _)| *k == (connect, idle)) {
            Some((_, b)) => Arc::clone(b),
            None => {
                let built: Built = Arc::default();
                shared.push(((connect, idle), Arc::clone(&built)));
                let cell = Arc::clone(&built);
                start_build(Box::new(move || {
                    let _ = cell.get_or_init(|| build(connect, idle));
                }));
                built
            }
        };
        SharedClient {
            built,
            connect,
            idle,
        }
    }

    /// The client, once built: this waits for the background build if it
    /// is still going (once per process, milliseconds), or says why it
    /// could not be built (no usable root certificates).
    pub fn get(&self) -> Result<&reqwest::Client, ModelError> {
        self.built
            .get_or_init(|| build(self.connect, self.idle))
            .as_ref()
            .map_err(Clone::clone)
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The holds in force, and the builds they hold back.
static HOLDS: Mutex<(usize, Vec<Job>)> = Mutex::new((0, Vec::new()));

/// Runs a client's build on a thread of its own, now or when the last
/// [`BuildHold`] ends.
fn start_build(job: Job) {
    let mut holds = HOLDS.lock().unwrap_or_else(|p| p.into_inner());
    if holds.0 > 0 {
        holds.1.push(job);
        return;
    }
    drop(holds);
    spawn_build(job);
}

fn spawn_build(job: Job) {
    // No thread to be had: the first request builds it.
    let _ = std::thread::Builder::new()
        .name("parlance-http-client".into())
        .spawn(job);
}

/// Holds back the background builds of the shared clients made while it
/// lives; they start when the last hold ends. A server holds them while
/// it starts: on one CPU the build (the system's root certificates read,
/// about 4 ms) otherwise runs before the listener is up. A request made
/// meanwhile is not held: it builds its client itself.
#[must_use = "the builds start again when the hold is dropped"]
pub struct BuildHold(());

/// Holds back the shared clients' background builds (see [`BuildHold`]).
pub fn hold_builds() -> BuildHold {
    HOLDS.lock().unwrap_or_else(|p| p.into_inner()).0 += 1;
    BuildHold(())
}

impl Drop for BuildHold {
    fn drop(&mut self) {
        let jobs = {
            let mut holds = HOLDS.lock().unwrap_or_else(|p| p.into_inner());
            holds.0 -= 1;
            if holds.0 > 0 {
                return;
            }
            std::mem::take(&mut holds.1)
        };
        jobs.into_iter().for_each(spawn_build);
    }
}

/// Where a transport's requests go out.
#[derive(Clone, Debug)]
pub(super) enum Clients {
    /// The process's client for these timeouts.
    Shared(SharedClient),
    /// The application's own clients, taken in turn.
    Own {
        list: Arc<[reqwest::Client]>,
        next: Arc<AtomicUsize>,
    },
}

impl Clients {
    /// These clients, taken in turn; `None` when there are none.
    pub(super) fn own(list: impl IntoIterator<Item = reqwest::Client>) -> Option<Clients> {
        let list: Arc<[reqwest::Client]> = list.into_iter().collect();
        (!list.is_empty()).then(|| Clients::Own {
            list,
            next: Default::default(),
        })
    }

    /// The client for the next request (see [`SharedClient::get`]).
    pub(super) fn next(&self) -> Result<&reqwest::Client, ModelError> {
        match self {
            Clients::Shared(shared) => shared.get(),
            Clients::Own { list, next } => {
                let i = if list.len() == 1 {
                    0
                } else {
                    next.fetch_add(1, Ordering::Relaxed) % list.len()
                };
                Ok(&list[i])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn held() -> usize {
        HOLDS.lock().unwrap().1.len()
    }

    /// A client made under a hold is built when the hold ends, not
    /// before; asked for meanwhile, it is built by the one asking.
    #[test]
    fn a_held_build_starts_when_the_hold_ends() {
        let config = |ms| HttpConfig {
            // Timeouts of this test's own: clients of their own.
            connect_timeout: Duration::from_millis(ms),
            ..HttpConfig::default()
        };
        let hold = hold_builds();
        let waiting = SharedClient::new(&config(7_771));
        let asked = SharedClient::new(&config(7_772));
        assert!(held() >= 2);
        assert!(waiting.built.get().is_none());
        assert!(asked.get().is_ok());
        drop(hold);
        assert_eq!(held(), 0);
        let t0 = Instant::now();
        while waiting.built.get().is_none() {
            assert!(t0.elapsed() < Duration::from_secs(30), "never built");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
