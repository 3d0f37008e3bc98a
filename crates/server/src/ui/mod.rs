//! The approval inbox: web pages under `/ui` for the people who decide.
//!
//! | page | what |
//! |---|---|
//! | `GET /ui` | the inbox: every run waiting for decisions that the viewer may see, newest first, live (SSE) |
//! | `GET /ui/runs/{id}` | one paused run: its calls with the four decisions (approve, edit, reject, answer), decided together |
//! | `GET /ui/threads`, `GET /ui/threads/{id}` | recent threads; one thread as people read it, live while a run goes on, with a retry button for a failed run |
//! | `POST /ui/threads/{id}/delete` | operators: delete a thread, also one a (damaged) run waits on |
//! | `GET /ui/login` | a form that turns an API token into a session cookie (attempts limited per address and subject) |
//! | `POST /ui/logout` | ends the session, in the store: its cookie is refused everywhere from then on |
//! | `POST /ui/sessions/end` | operators: end every session of a subject |
//!
//! Server-rendered HTML (maud: every value is escaped), a stylesheet and
//! one plain script module embedded in the binary (nothing from another
//! host, no bundler): the pages work without the script (forms post, the
//! inbox reloads), the script adds live updates, showing only the chosen
//! decision's fields, and checking edited arguments as they are typed.
//!
//! Same auth as the API: a token's subject sees its own threads, operators
//! every thread and the artifacts. Sessions are HMAC-signed cookies
//! (`HttpOnly`, `SameSite=Strict`) that can be ended early through the
//! store; every form carries a CSRF token bound to the session, and
//! cross-site posts are refused. A session holds a limited number of live
//! streams at once.

mod args;
mod assets;
mod call_view;
mod conversation;
mod decide;
mod form;
mod inbox;
pub(crate) mod live;
mod page;
mod paused;
mod session;
mod thread;
mod throttle;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::state::AppState;

pub use live::close_streams;

/// The page for a post refused as cross-site (`crate::guard`).
pub fn refused(why: String) -> axum::response::Response {
    use axum::response::IntoResponse;
    let page = page::UiError::new(axum::http::StatusCode::FORBIDDEN, "Refused", why);
    page::with_security_headers(page.into_response())
}
pub use session::{Ui, end_sessions_of};

/// The `/ui` routes, to merge into the API's router.
pub fn routes(state: &AppState) -> Router<Arc<AppState>> {
    let ui = Arc::new(Ui::new(state));
    Router::new()
        .route("/ui", get(inbox::page))
        .route("/ui/", get(inbox::page))
        .route("/ui/events", get(inbox::events))
        .route("/ui/login", get(session::login_page).post(session::login))
        .route("/ui/session", get(session::anonymous))
        .route("/ui/logout", post(session::logout))
        .route("/ui/sessions/end", post(session::end_sessions))
        .route("/ui/runs/{id}", get(decide::page))
        .route("/ui/runs/{id}/decide", post(decide::decide))
        .route("/ui/runs/{id}/check", post(decide::check))
        .route("/ui/runs/{id}/events", get(decide::events))
        .route("/ui/threads", get(thread::list))
        .route("/ui/threads/{id}", get(thread::page))
        .route("/ui/threads/{id}/events", get(thread::events))
        .route("/ui/threads/{id}/retry", post(thread::retry))
        .route("/ui/threads/{id}/delete", post(thread::delete))
        .route("/ui/assets/{file}", get(assets::serve))
        .route("/ui/{*rest}", get(page::not_found_page))
        .layer(axum::middleware::map_response(page::security_headers))
        .layer(axum::Extension(ui))
}
