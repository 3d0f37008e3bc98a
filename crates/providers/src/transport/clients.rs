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

use super::{install_crypto, network_error};

type Built = Arc<OnceLock<Result<reqwest::Client, ModelError>>>;

/// Where a transport's requests go out.
#[derive(Clone, Debug)]
pub(super) enum Clients {
    /// The process's client for these timeouts, built once, in the
    /// background.
    Shared {
        built: Built,
        connect: Duration,
        idle: Duration,
    },
    /// The application's own clients, taken in turn.
    Own {
        list: Arc<[reqwest::Client]>,
        next: Arc<AtomicUsize>,
    },
}

fn build(connect: Duration, idle: Duration) -> Result<reqwest::Client, ModelError> {
    install_crypto();
    reqwest::Client::builder()
        .connect_timeout(connect)
        .read_timeout(idle)
        .build()
        .map_err(|e| network_error(&e))
}

impl Clients {
    /// The process's client for these timeouts (reqwest clients are cheap
    /// to clone: one pool behind an `Arc`), its build started on a thread
    /// of its own the first time it is asked for.
    pub(super) fn shared(connect: Duration, idle: Duration) -> Clients {
        type Registry = Vec<((Duration, Duration), Built)>;
        static SHARED: Mutex<Registry> = Mutex::new(Vec::new());
        let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        let built = match shared.iter().find(|(k, _)| *k == (connect, idle)) {
            Some((_, b)) => Arc::clone(b),
            None => {
                let built: Built = Arc::default();
                shared.push(((connect, idle), Arc::clone(&built)));
                let cell = Arc::clone(&built);
                // No thread to be had: the first request builds it.
                let _ = std::thread::Builder::new()
                    .name("parlance-http-client".into())
                    .spawn(move || cell.get_or_init(|| build(connect, idle)).is_ok());
                built
            }
        };
        Clients::Shared {
            built,
            connect,
            idle,
        }
    }

    /// These clients, taken in turn; `None` when there are none.
    pub(super) fn own(list: impl IntoIterator<Item = reqwest::Client>) -> Option<Clients> {
        let list: Arc<[reqwest::Client]> = list.into_iter().collect();
        (!list.is_empty()).then(|| Clients::Own {
            list,
            next: Default::default(),
        })
    }

    /// The client for the next request. The shared one may still be being
    /// built: this waits for it (once per process, milliseconds), or
    /// reports why it could not be built (no usable root certificates).
    pub(super) fn next(&self) -> Result<&reqwest::Client, ModelError> {
        match self {
            Clients::Shared {
                built,
                connect,
                idle,
            } => built
                .get_or_init(|| build(*connect, *idle))
                .as_ref()
                .map_err(Clone::clone),
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
