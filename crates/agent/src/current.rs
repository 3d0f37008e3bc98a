//! The run a model call belongs to. A [`Model`](parlance_model::Model) is
//! handed only its request; a model written in another language needs
//! what the run's caller handed over with
//! [`Agent::with_deps`](crate::Agent::with_deps) (a Python event loop, for
//! one), so each run makes its deps visible to the calls it drives.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use crate::Deps;

tokio::task_local! {
    static DEPS: Option<Deps>;
}

/// The deps of the run whose model call is being made (see
/// [`Agent::with_deps`](crate::Agent::with_deps)), when they are a `T`;
/// `None` outside a run, or when the run has none. For a model of the
/// application's: the tools get theirs from their
/// [`ToolContext`](crate::ToolContext).
pub fn current_deps<T: Any + Send + Sync>() -> Option<Arc<T>> {
    let deps = DEPS.try_with(Clone::clone).ok().flatten()?;
    deps.downcast::<T>().ok()
}

/// Runs `f` with `deps` as the current run's.
pub(crate) fn scope<F: Future>(deps: Option<Deps>, f: F) -> impl Future<Output = F::Output> {
    DEPS.scope(deps, f)
}
