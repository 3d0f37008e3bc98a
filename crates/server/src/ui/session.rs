//! Who is looking: a session cookie made from an API token at the login
//! form, and the CSRF token every form carries.
//!
//! The cookie is `v2.ID.ISSUED.EXPIRES.WHO.MAC`: `ID` a random session id,
//! `ISSUED` when it was made (microseconds since the epoch), `WHO` a
//! fingerprint of the token (never the token itself), `anon` for an
//! anonymous caller (a server with no token configured), and `MAC` an
//! HMAC over the rest with a key derived from the server's secret, so
//! every server sharing a store accepts it and nobody can make one (a
//! rotated secret's key still verifies, never signs). A token removed from
//! the configuration ends its sessions at once (its fingerprint no longer
//! names anyone); others end after [`LIFETIME_SECS`], at logout, or when
//! an operator ends every session of their subject. The cookie is
//! `HttpOnly` (no script reads it) and `SameSite=Strict` (no other site's
//! page sends it).
//!
//! Ending a session early is a record in the store (`parlance_store`'s
//! `sessions`), so every server sharing it agrees at once. Every request
//! with a session asks the store: one lookup by primary key, no cache.
//! A cache of "ended" per subject would save that lookup but leave a
//! stolen cookie usable for the cache's lifetime on every other server
//! after a logout; a page already reads the store several times, so the
//! lookup costs little next to what it protects.
//!
//! Every state-changing form carries a CSRF token: an HMAC of the session
//! cookie, so it is worth nothing without the cookie and nothing for
//! another session. Posts that a browser marks as coming from another site
//! (`Sec-Fetch-Site`, `Origin`) are refused before anything else, by the
//! server's guard (`crate::guard`), for the API and the pages alike.
//!
//! Login attempts are limited per address and per subject
//! ([`super::throttle`]); live streams per session ([`StreamSlot`]).

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{ConnectInfo, FromRequestParts, Query, State};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use hmac::{Hmac, Mac};
use maud::html;
use parlance_store::Store;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::page::{self, UiError};
use super::throttle::Throttle;
use crate::auth::Principal;
use crate::config::{DEFAULT_LIVE_STREAMS, DEFAULT_LOGINS_PER_ADDRESS, DEFAULT_LOGINS_PER_SUBJECT};
use crate::state::AppState;

/// The session cookie's name.
pub const COOKIE: &str = "parlance_ui";

/// How long a session lasts: 12 hours.
pub const LIFETIME_SECS: u64 = 12 * 3600;

/// The UI's keys, the tokens it knows by fingerprint, where ended
/// sessions are recorded, and the limits of sessions.
pub struct Ui {
    /// The first signs; the others (a rotated secret's) verify.
    keys: Vec<Vec<u8>>,
    by_fingerprint: HashMap<String, Principal>,
    /// The configured subjects (an operator ends the sessions of one).
    subjects: BTreeSet<String>,
    anonymous: bool,
    store: Option<Store>,
    by_address: Throttle,
    by_subject: Throttle,
    max_streams: usize,
    /// Live streams open, by session id.
    streams: Mutex<HashMap<String, usize>>,
}

fn mac(key: &[u8]) -> Hmac<Sha256> {
    Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length")
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Now, in microseconds since the epoch (when a session was issued, or up
/// to when a subject's sessions are ended: fine enough that a session made
/// just after an operator ended the subject's is not ended with them).
pub fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// A token's fingerprint: enough to find it again, useless to call the API.
fn fingerprint(token: &str) -> String {
    let digest = Sha256::digest(format!("parlance ui token v1:{token}").as_bytes());
    hex::encode(&digest[..16])
}

/// A session cookie, checked: ours, unexpired, its token still configured.
#[derive(Debug, Clone)]
struct Session {
    /// The cookie's value.
    value: String,
    id: String,
    issued_us: i64,
    expires: u64,
    who: Principal,
}

impl Ui {
    /// Keys derived from the server's secret (and its previous ones); the
    /// configured tokens; the store where ended sessions are recorded.
    pub fn new(state: &AppState) -> Ui {
        let mut ui = Ui::with_keys(
            state.signer.approval_keys().iter().map(|k| k.as_ref()),
            &state.config,
        );
        ui.store = Some(state.store.clone());
        ui
    }

    fn with_keys<'a>(approval_keys: impl Iterator<Item = &'a [u8]>, config: &crate::Config) -> Ui {
        let keys = approval_keys
            .map(|k| {
                let mut m = mac(k);
                m.update(b"parlance ui sessions v1");
                m.finalize().into_bytes().to_vec()
            })
            .collect();
        let limits = &config.sessions;
        Ui {
            keys,
            by_fingerprint: config
                .auth
                .tokens
                .iter()
                .map(|t| {
                    let who = Principal {
                        subject: Some(t.subject.clone()),
                        operator: t.operator,
                    };
                    (fingerprint(&t.token), who)
                })
                .collect(),
            subjects: config
                .auth
                .tokens
                .iter()
                .map(|t| t.subject.clone())
                .collect(),
            anonymous: config.auth.tokens.is_empty(),
            store: None,
            by_address: Throttle::per_minute(
                limits
                    .login_attempts_per_address
                    .unwrap_or(DEFAULT_LOGINS_PER_ADDRESS),
            ),
            by_subject: Throttle::per_minute(
                limits
                    .login_attempts_per_subject
                    .unwrap_or(DEFAULT_LOGINS_PER_SUBJECT),
            ),
            max_streams: limits.max_live_streams.unwrap_or(DEFAULT_LIVE_STREAMS),
            streams: Mutex::default(),
        }
    }

    fn sign(&self, text: &str) -> String {
        let mut m = mac(&self.keys[0]);
        m.update(text.as_bytes());
        hex::encode(m.finalize().into_bytes())
    }

    fn verify(&self, text: &str, given: &str) -> bool {
        let Ok(bytes) = hex::decode(given) else {
            return false;
        };
        self.keys.iter().any(|k| {
            let mut m = mac(k);
            m.update(text.as_bytes());
            m.verify_slice(&bytes).is_ok()
        })
    }

    /// A session cookie's value for `who` (a fingerprint, or `anon`).
    fn issue(&self, who: &str) -> String {
        let id = hex::encode(rand::random::<[u8; 16]>());
        let body = format!(
            "v2.{id}.{}.{}.{who}",
            now_micros(),
            now_secs() + LIFETIME_SECS
        );
        let sig = self.sign(&body);
        format!("{body}.{sig}")
    }

    /// The session a cookie value stands for, if it is ours, unexpired,
    /// and its token is still configured (whether it was ended early is
    /// the store's to say: [`Ui::ended`]).
    fn check(&self, value: &str) -> Option<Session> {
        let (body, sig) = value.rsplit_once('.')?;
        if !self.verify(body, sig) {
            return None;
        }
        let mut parts = body.splitn(5, '.');
        let (version, id, issued, expires, who) = (
            parts.next()?,
            parts.next()?,
            parts.next()?,
            parts.next()?,
            parts.next()?,
        );
        let expires = expires.parse::<u64>().ok()?;
        if version != "v2" || expires < now_secs() {
            return None;
        }
        let who = if who == "anon" {
            self.anonymous.then_some(Principal::ANONYMOUS)?
        } else {
            self.by_fingerprint.get(who).cloned()?
        };
        Some(Session {
            value: value.to_string(),
            id: id.to_string(),
            issued_us: issued.parse().ok()?,
            expires,
            who,
        })
    }

    /// Whether `s` was ended before it expired (logged out, or its
    /// subject's sessions ended by an operator), on any server sharing
    /// the store.
    async fn ended(&self, s: &Session) -> Result<bool, parlance_store::StoreError> {
        match &self.store {
            Some(store) => store.session_ended(s.who.name(), &s.id, s.issued_us).await,
            None => Ok(false),
        }
    }

    /// The CSRF token of a session.
    pub fn csrf(&self, session: &str) -> String {
        self.sign(&format!("csrf:{session}"))
    }

    /// A slot for one more live stream of `session`, if it has one left.
    fn open_stream(self: &Arc<Self>, session: &Session) -> Option<StreamSlot> {
        let mut open = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(session.id.clone()).or_default();
        if *n >= self.max_streams {
            return None;
        }
        *n += 1;
        Some(StreamSlot {
            ui: Arc::clone(self),
            session: session.clone(),
        })
    }
}

/// One of the live streams a session may hold open: taken when the
/// stream starts, given back when it ends (the page closed, the
/// connection dropped, the session ended).
pub struct StreamSlot {
    ui: Arc<Ui>,
    session: Session,
}

impl StreamSlot {
    /// Whether the stream's session was ended meanwhile (a store that
    /// cannot be read ends nothing: the stream tries again next time).
    pub async fn session_ended(&self) -> bool {
        self.ui.ended(&self.session).await.unwrap_or(false)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.ui.streams.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.session.id) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.session.id);
            }
        }
    }
}

/// The caller of a page, from the session cookie. Pages without one
/// redirect to the login form (or, with no token configured, to a fresh
/// anonymous session).
#[derive(Clone)]
pub struct Viewer {
    /// Who it is.
    pub who: Principal,
    /// The CSRF token its forms carry.
    pub csrf: String,
    ui: Arc<Ui>,
    session: Session,
}

impl Viewer {
    /// The page header's view of this viewer.
    pub fn banner(&self) -> page::Banner<'_> {
        page::Banner {
            who: &self.who,
            csrf: &self.csrf,
        }
    }

    /// When the session ends, in seconds since the epoch (live pages end
    /// their streams then).
    pub fn expires(&self) -> u64 {
        self.session.expires
    }

    /// Refuses a post without this session's CSRF token (another site's
    /// posts never get here: `crate::guard`).
    pub fn check_post(&self, given: Option<&str>) -> Result<(), UiError> {
        let ok = given.is_some_and(|g| self.ui.verify(&format!("csrf:{}", self.session.value), g));
        if !ok {
            return Err(UiError::new(
                StatusCode::FORBIDDEN,
                "Form expired",
                "This form's security token is missing or belongs to another session (did you log in again in another tab?). Reload the page and try again.",
            ));
        }
        Ok(())
    }

    /// The configured subjects (whose sessions an operator can end).
    pub fn subjects(&self) -> impl Iterator<Item = &str> {
        self.ui.subjects.iter().map(String::as_str)
    }

    /// A slot for one more live stream of this session, or `429` when it
    /// already holds as many as it may ([`crate::config::SessionsConfig`]).
    pub fn open_stream(&self) -> Result<StreamSlot, UiError> {
        self.ui.open_stream(&self.session).ok_or_else(|| {
            UiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "Too many live pages",
                format!(
                    "This session already has {} live pages open (sessions.max_live_streams): close one, then reload this page.",
                    self.ui.max_streams
                ),
            )
        })
    }
}

fn cookie_value(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_string())
}

impl FromRequestParts<Arc<AppState>> for Viewer {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        _state: &Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        let ui = parts
            .extensions
            .get::<Arc<Ui>>()
            .cloned()
            .expect("the UI routes carry the Ui");
        if let Some(value) = cookie_value(&parts.headers)
            && let Some(session) = ui.check(&value)
        {
            match ui.ended(&session).await {
                Ok(false) => {
                    return Ok(Viewer {
                        who: session.who.clone(),
                        csrf: ui.csrf(&value),
                        ui,
                        session,
                    });
                }
                Ok(true) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "ui: reading the ended sessions failed");
                    return Err(UiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "Try again",
                        "The session could not be checked (the store did not answer). Try again in a moment.",
                    )
                    .into_response());
                }
            }
        }
        // Where to come back to after logging in: this page, if it is one.
        let here = parts
            .uri
            .path_and_query()
            .map_or("/ui", |p| p.as_str())
            .to_string();
        let is_page = parts.method == axum::http::Method::GET && !here.contains("/events");
        let next = if is_page { here } else { "/ui".to_string() };
        let target = if ui.anonymous { "session" } else { "login" };
        if !is_page {
            return Err(UiError::new(
                StatusCode::UNAUTHORIZED,
                "Session ended",
                "Your session has ended: log in again.",
            )
            .into_response());
        }
        let to = format!("/ui/{target}?next={}", encode_component(&next));
        Err(Redirect::to(&to).into_response())
    }
}

fn encode_component(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Only a path of ours is a place to go back to (never another host).
fn safe_next(next: Option<&str>) -> &str {
    match next {
        Some(n)
            if n.starts_with("/ui")
                && !n.starts_with("//")
                && !n.contains('\\')
                && !n.chars().any(char::is_control) =>
        {
            n
        }
        _ => "/ui",
    }
}

/// `Set-Cookie` for a session (or its removal, with an empty value).
fn set_cookie(value: &str, headers: &HeaderMap) -> HeaderValue {
    let secure = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|p| p.eq_ignore_ascii_case("https"));
    let age = if value.is_empty() { 0 } else { LIFETIME_SECS };
    let text = format!(
        "{COOKIE}={value}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age={age}{}",
        if secure { "; Secure" } else { "" }
    );
    HeaderValue::from_str(&text).expect("cookie text is ASCII")
}

/// `?next=` on the login pages.
#[derive(Deserialize)]
pub struct Next {
    next: Option<String>,
}

/// `GET /ui/login`: the form.
pub async fn login_page(Extension(ui): Extension<Arc<Ui>>, Query(q): Query<Next>) -> Response {
    if ui.anonymous {
        return Redirect::to(&format!(
            "/ui/session?next={}",
            encode_component(safe_next(q.next.as_deref()))
        ))
        .into_response();
    }
    login_form(safe_next(q.next.as_deref()), None, StatusCode::OK)
}

fn login_form(next: &str, error: Option<&str>, status: StatusCode) -> Response {
    let body = html! {
        h1 { "Log in" }
        p { "Paste the API token you were given; this browser then keeps a session for 12 hours (the token itself is not stored)." }
        form method="post" action="/ui/login" class="login" {
            input type="hidden" name="next" value=(next);
            label for="token" { "API token" }
            input #token type="password" name="token" required autocomplete="current-password"
                autofocus aria-invalid=[error.map(|_| "true")] aria-describedby="token-error";
            p #token-error .error role="alert" { @if let Some(e) = error { (e) } }
            button type="submit" { "Log in" }
        }
    };
    (status, page::layout("Log in", None, body)).into_response()
}

/// The login form's fields.
#[derive(Deserialize)]
pub struct LoginForm {
    token: String,
    next: Option<String>,
}

/// Who is asking to log in, for the limit per address: the peer's IP
/// (behind a proxy, the proxy's: every client behind it shares it).
fn address(ext: &Extensions) -> String {
    ext.get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_string(), |c| c.0.ip().to_string())
}

/// `429` with `Retry-After` and the login form saying why.
fn too_many(next: &str, why: &str, retry_after: u64) -> Response {
    let text = format!("{why}: try again in {retry_after} s.");
    let mut resp = login_form(next, Some(&text), StatusCode::TOO_MANY_REQUESTS);
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    resp
}

/// `POST /ui/login`: a known token gets a session cookie. Every attempt
/// counts against its address's limit, and one with a known token also
/// against its subject's (a wrong token names no subject).
pub async fn login(
    Extension(ui): Extension<Arc<Ui>>,
    ext: Extensions,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let next = safe_next(form.next.as_deref()).to_string();
    let token = form.token.trim();
    if let Err(wait) = ui.by_address.take(&address(&ext)) {
        return too_many(&next, "Too many login attempts from this address", wait);
    }
    let Some(who) = ui.by_fingerprint.get(&fingerprint(token)) else {
        let why = if token.is_empty() {
            "token: required"
        } else {
            "token: unknown token"
        };
        return login_form(&next, Some(why), StatusCode::UNAUTHORIZED);
    };
    if let Err(wait) = ui.by_subject.take(who.name()) {
        return too_many(&next, "Too many logins for this subject", wait);
    }
    let session = ui.issue(&fingerprint(token));
    let mut resp = Redirect::to(&next).into_response();
    resp.headers_mut()
        .insert(header::SET_COOKIE, set_cookie(&session, &headers));
    resp
}

/// `GET /ui/session`: with no token configured, an anonymous session
/// (the API's anonymous caller: never an operator).
pub async fn anonymous(
    Extension(ui): Extension<Arc<Ui>>,
    headers: HeaderMap,
    Query(q): Query<Next>,
) -> Response {
    let next = safe_next(q.next.as_deref()).to_string();
    if !ui.anonymous {
        return Redirect::to(&format!("/ui/login?next={}", encode_component(&next)))
            .into_response();
    }
    let mut resp = Redirect::to(&next).into_response();
    resp.headers_mut()
        .insert(header::SET_COOKIE, set_cookie(&ui.issue("anon"), &headers));
    resp
}

/// The logout form's field.
#[derive(Deserialize)]
pub struct CsrfForm {
    /// The session's CSRF token.
    pub csrf: Option<String>,
}

/// `POST /ui/logout`: the session is ended in the store (its cookie, if
/// kept or stolen, is refused by every server sharing it), and the cookie
/// is removed.
pub async fn logout(viewer: Viewer, headers: HeaderMap, Form(form): Form<CsrfForm>) -> Response {
    if let Err(e) = viewer.check_post(form.csrf.as_deref()) {
        return e.into_response();
    }
    if let Some(store) = &viewer.ui.store {
        let s = &viewer.session;
        let until_ms = (s.expires as i64).saturating_mul(1000);
        if let Err(e) = store.end_session(s.who.name(), &s.id, until_ms).await {
            tracing::warn!(error = %e, "ui: recording a logout failed");
            return UiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "Not logged out",
                "The logout could not be recorded (the store did not answer): your session is still valid. Try again in a moment.",
            )
            .into_response();
        }
    }
    let mut resp = Redirect::to("/ui/login").into_response();
    resp.headers_mut()
        .insert(header::SET_COOKIE, set_cookie("", &headers));
    resp
}

/// The form that ends every session of a subject.
#[derive(Deserialize)]
pub struct EndSessionsForm {
    csrf: Option<String>,
    subject: String,
}

/// Ends every session of `subject` issued up to now, on every server
/// sharing `store`; returns that time (microseconds since the epoch).
pub async fn end_sessions_of(
    store: &Store,
    subject: &str,
) -> Result<i64, parlance_store::StoreError> {
    let up_to = now_micros();
    // Sessions issued up to now have all expired one lifetime from now.
    let until_ms = ((now_secs() + LIFETIME_SECS) as i64).saturating_mul(1000);
    store.end_sessions_of(subject, up_to, until_ms).await?;
    Ok(up_to)
}

/// `POST /ui/sessions/end`: an operator ends every session of a subject
/// (theirs too, if they name themselves); the inbox says so.
pub async fn end_sessions(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
    Form(form): Form<EndSessionsForm>,
) -> Result<Response, UiError> {
    viewer.check_post(form.csrf.as_deref())?;
    if !viewer.who.operator {
        return Err(UiError::new(
            StatusCode::FORBIDDEN,
            "Operators only",
            "Only an operator can end another subject's sessions.",
        ));
    }
    let subject = form.subject.trim();
    if !viewer.ui.subjects.contains(subject) {
        return Err(UiError::new(
            StatusCode::BAD_REQUEST,
            "Unknown subject",
            format!("subject: no configured token has the subject {subject:?}"),
        ));
    }
    end_sessions_of(&state.store, subject).await.map_err(|e| {
        tracing::warn!(error = %e, "ui: ending sessions failed");
        UiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "Sessions not ended",
            "The store did not answer: nothing was ended. Try again in a moment.",
        )
    })?;
    tracing::info!(
        subject,
        by = viewer.who.name(),
        "ui: every session of the subject ended"
    );
    let body = html! {
        h1 { "Sessions ended" }
        p role="status" { "Every session of " strong { (subject) } " issued until now is ended, on every server sharing the store. Its API tokens still work: remove them from the configuration to end those." }
        p { a href="/ui" { "Back to the inbox" } }
    };
    Ok(page::layout("Sessions ended", Some(viewer.banner()), body).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ui_with(keys: &[&str], anonymous: bool) -> Ui {
        let toml = if anonymous {
            ""
        } else {
            "[[auth.tokens]]\ntoken = \"tok-a\"\nsubject = \"a\"\n"
        };
        let config = crate::Config::from_toml_with_env(toml, &[]).unwrap();
        Ui::with_keys(keys.iter().map(|k| k.as_bytes()), &config)
    }

    fn ui(anonymous: bool) -> Ui {
        ui_with(&["k"], anonymous)
    }

    #[test]
    fn sessions_are_ours_unexpired_and_name_a_configured_token() {
        let u = ui(false);
        let s = u.issue(&fingerprint("tok-a"));
        assert!(!s.contains("tok-a"));
        assert_eq!(u.check(&s).unwrap().who.subject.as_deref(), Some("a"));
        // Another key, a changed subject, an expired one, a removed token.
        let other = ui_with(&["other"], false);
        assert!(other.check(&s).is_none());
        let forged = s.replace(&fingerprint("tok-a"), &fingerprint("tok-b"));
        assert!(u.check(&forged).is_none());
        let body = format!("v2.id.1.{}.{}", clock() - 1, fingerprint("tok-a"));
        assert!(u.check(&format!("{body}.{}", u.sign(&body))).is_none());
        let body = format!("v2.id.1.{}.{}", clock() + 60, fingerprint("tok-a"));
        assert!(u.check(&format!("{body}.{}", u.sign(&body))).is_some());
        // The cookies of before (no session id: they could not be ended).
        let body = format!("v1.{}.{}", clock() + 60, fingerprint("tok-a"));
        assert!(u.check(&format!("{body}.{}", u.sign(&body))).is_none());
        let mut gone = ui(false);
        gone.by_fingerprint.clear();
        assert!(gone.check(&s).is_none());
        // Anonymous sessions only where no token is configured.
        assert!(u.check(&u.issue("anon")).is_none());
        let open = ui(true);
        assert_eq!(open.check(&open.issue("anon")).unwrap().who.subject, None);
        for junk in ["", ".", "v1", "v1.x.y.z", "a.b.c.d.e", "v2.a.b.c.d.e.f"] {
            assert!(u.check(junk).is_none(), "{junk}");
        }
    }

    #[test]
    fn each_session_has_its_own_id_and_issue_time() {
        let u = ui(false);
        let (a, b) = (
            u.issue(&fingerprint("tok-a")),
            u.issue(&fingerprint("tok-a")),
        );
        let (a, b) = (u.check(&a).unwrap(), u.check(&b).unwrap());
        assert_ne!(a.id, b.id);
        assert_eq!(a.id.len(), 32);
        let now = now_micros();
        assert!(a.issued_us <= b.issued_us && b.issued_us <= now);
        assert!(
            now - a.issued_us < 3_600_000_000,
            "{} vs {now}",
            a.issued_us
        );
    }

    #[test]
    fn a_rotated_secret_still_verifies_and_never_signs() {
        let old = ui_with(&["old"], false);
        let s = old.issue(&fingerprint("tok-a"));
        let csrf = old.csrf(&s);
        let rotated = ui_with(&["new", "old"], false);
        assert!(rotated.check(&s).is_some(), "the old secret's session");
        assert!(rotated.verify(&format!("csrf:{s}"), &csrf));
        let fresh = rotated.issue(&fingerprint("tok-a"));
        assert!(old.check(&fresh).is_none(), "signed with the new one");
        assert!(ui_with(&["new"], false).check(&fresh).is_some());
        assert!(ui_with(&["new"], false).check(&s).is_none(), "once dropped");
    }

    #[test]
    fn live_streams_are_counted_per_session_and_freed() {
        let toml = "[sessions]\nmax_live_streams = 2\n[[auth.tokens]]\ntoken = \"tok-a\"\nsubject = \"a\"\n";
        let config = crate::Config::from_toml_with_env(toml, &[]).unwrap();
        let u = Arc::new(Ui::with_keys([b"k".as_slice()].into_iter(), &config));
        let one = u.check(&u.issue(&fingerprint("tok-a"))).unwrap();
        let two = u.check(&u.issue(&fingerprint("tok-a"))).unwrap();
        let a = u.open_stream(&one).unwrap();
        let _b = u.open_stream(&one).unwrap();
        assert!(
            u.open_stream(&one).is_none(),
            "a third for the same session"
        );
        let _c = u.open_stream(&two).expect("another session has its own");
        drop(a);
        let _d = u.open_stream(&one).expect("a closed one frees its slot");
        assert!(u.open_stream(&one).is_none());
    }

    /// The real clock (not the code's own reading of it).
    fn clock() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    #[test]
    fn a_session_lasts_twelve_hours_and_its_cookie_says_so() {
        let u = Arc::new(ui(false));
        let s = u.issue(&fingerprint("tok-a"));
        let session = u.check(&s).unwrap();
        let viewer = Viewer {
            who: session.who.clone(),
            csrf: u.csrf(&s),
            ui: Arc::clone(&u),
            session,
        };
        let now = clock();
        assert!(
            (now + 43_200 - 5..=now + 43_200 + 5).contains(&viewer.expires()),
            "{} from {now}",
            viewer.expires()
        );
        let mut h = HeaderMap::new();
        let cookie = set_cookie(&s, &h);
        assert_eq!(
            cookie.to_str().unwrap(),
            format!("parlance_ui={s}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=43200")
        );
        h.insert("x-forwarded-proto", "HTTPS".parse().unwrap());
        assert!(set_cookie(&s, &h).to_str().unwrap().ends_with("; Secure"));
        assert!(
            set_cookie("", &h)
                .to_str()
                .unwrap()
                .starts_with("parlance_ui=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0;")
        );
    }

    #[test]
    fn csrf_tokens_belong_to_their_session() {
        let u = ui(false);
        let (a, b) = (u.issue("one"), u.issue("two"));
        assert_ne!(u.csrf(&a), u.csrf(&b));
        assert_eq!(u.csrf(&a).len(), 64);
        assert!(u.verify(&format!("csrf:{a}"), &u.csrf(&a)));
        assert!(!u.verify(&format!("csrf:{b}"), &u.csrf(&a)));
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut h = HeaderMap::new();
        assert_eq!(cookie_value(&h), None);
        h.append(header::COOKIE, "a=1; parlance_uix=no".parse().unwrap());
        assert_eq!(cookie_value(&h), None);
        h.append(
            header::COOKIE,
            "b=2;  parlance_ui=v1.2.x.sig ; c=3".parse().unwrap(),
        );
        assert_eq!(cookie_value(&h).as_deref(), Some("v1.2.x.sig"));
    }

    #[test]
    fn a_place_to_come_back_to_is_encoded_for_a_query() {
        assert_eq!(encode_component("/ui/runs/r_1-a.b~"), "/ui/runs/r_1-a.b~");
        assert_eq!(
            encode_component("/ui/threads?x=a b&c=é"),
            "/ui/threads%3Fx%3Da%20b%26c%3D%C3%A9"
        );
    }

    #[test]
    fn only_our_own_paths_are_places_to_go_back_to() {
        assert_eq!(safe_next(Some("/ui/runs/r1")), "/ui/runs/r1");
        for bad in [
            "https://evil.example/",
            "//evil.example",
            "/v1/runs",
            "/ui\\x",
            "/ui\n",
        ] {
            assert_eq!(safe_next(Some(bad)), "/ui", "{bad:?}");
        }
    }
}
