//! Parlance's HTTP API (axum).
//!
//! | method and path | what |
//! |---|---|
//! | `POST /v1/runs` | run an agent: stateless (`turns[]`) or on a thread (`thread_id`, detached from the connection); `stream: true` answers with SSE |
//! | `GET /v1/runs/{id}` | a run on a thread as stored: status, messages, output, usage, pending calls, error |
//! | `POST /v1/runs/{id}/decisions` | decide pending calls; the run resumes (on any server sharing the store) |
//! | `POST /v1/threads`, `GET /v1/threads` | create, list (the caller's own, paged) |
//! | `GET /v1/threads/{id}`, `DELETE /v1/threads/{id}` | read (messages, runs; artifacts for operators), delete |
//! | `POST /v1/threads/{id}/retry` | retry the thread's failed last run |
//! | `GET /v1/runs/{id}/events` | a run's events after `Last-Event-ID`, from this server or the store ([`streams`]) |
//! | `POST /v1/chat/completions`, `POST /v1/responses` | OpenAI's APIs, `model` = a configured agent ([`protocols`]) |
//! | `POST /v1/agents/{agent}/chat`, `POST /v1/agents/{agent}/ag-ui` | the Vercel AI SDK's UI stream, AG-UI ([`protocols`]) |
//! | `/mcp`, `POST /a2a/{agent}` | MCP (each agent a tool), A2A ([`protocols`]) |
//! | `POST /v1/sessions/end` | operators: end every inbox session of a subject ([`sessions`]) |
//! | `GET /openapi.json` | the OpenAPI 3.1 document (also checked in as `schema/openapi.json`) |
//! | `GET /healthz` | liveness |
//! | `GET /metrics` | Prometheus metrics (operators; see `metrics.rs`) |
//! | `/ui` | the approval inbox: web pages for the people who decide ([`ui`]) |
//!
//! Errors are `{"error": {"code", "message"}}`; invalid requests name the
//! JSON path. Browsers' requests are checked first ([`guard`]: the `Host`
//! names served, no cross-site request that changes something). Bearer
//! tokens come from the configuration or the environment; a token sees
//! only its own threads.
//!
//! Where things are: the routes and their layers in `routes.rs`, start-up
//! and shutdown in `start.rs` ([`serve`]), the shared state in [`state`],
//! one module per protocol in [`protocols`], each reading a run's events
//! through [`streams`]. The agents themselves are built from the
//! configuration by `parlance-assemble`, which `parlance run` and
//! `parlance chat` use without this crate's server.

pub mod admission;
pub mod api;
pub mod auth;
pub mod body;
/// The application configuration (the `parlance-config` crate).
pub use parlance_config as config;
pub mod error;
pub mod executor;
pub mod guard;
pub mod identity;
pub mod live;
pub mod metrics;
mod openapi;
pub mod protocols;
mod routes;
pub mod runs;
pub mod sessions;
pub mod signing;
mod start;
pub mod state;
pub mod streams;
pub mod threads;
pub mod ui;

pub use auth::Principal;
pub use config::Config;
pub use error::ApiError;
pub use openapi::openapi;
pub use routes::{DEFAULT_MAX_BODY, router};
pub use start::{StartError, check_exposure, raise_fd_limit, serve};
pub use state::AppState;
