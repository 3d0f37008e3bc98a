//! What Parlance's test suites share, in one dev-only crate (never
//! published) rather than test files of one crate included by another's
//! through `#[path]`:
//!
//! - [`replay`]: a replay HTTP server on 127.0.0.1 standing in for model
//!   providers and tools (the provider, CLI and facade tests);
//! - `store` (feature `store`): the two store backends, a temp dir,
//!   scripted messages and the `both!` macro (the store and runtime tests);
//! - [`temporal`]: a Temporal dev server (the Temporal executor's tests).
//!
//! Published crates name it as a dev-dependency by `path` alone: `cargo
//! package` drops such dev-dependencies, so it never reaches crates.io.

pub mod replay;
#[cfg(feature = "store")]
pub mod store;
pub mod temporal;
