//! Who is looking: a session cookie made from an API token at the login
//! form, and the CSRF token every form carries.
//!
//! The cookie is `v1.EXPIRES.WHO.MAC`: `WHO` is a fingerprint of the token
//! (never the token itself), `anon` for an anonymous caller (a server with
//! no token configured), and `MAC` an HMAC over the rest with a key derived
//! from the server's secret, so every server sharing a store accepts it
//! and nobody can make one. A token removed from the configuration ends
//! its sessions at once (its fingerprint no longer names anyone); others
//! end after [`LIFETIME_SECS`]. The cookie is `HttpOnly` (no script reads
//! it) and `SameSite=Strict` (no other site's page sends it).
//!
//! Every state-changing form carries a CSRF token: an HMAC of the session
//! cookie, so it is worth nothing without the cookie and nothing for
//! another session. Posts that a browser marks as coming from another site
//! (`Sec-Fetch-Site`, `Origin`) are refused before anything else, by the
//! server's guard (`crate::guard`), for the API and the pages alike.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use hmac::{Hmac, Mac};
use maud::html;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::page::{self, UiError};
use crate::auth::Principal;
use crate::state::AppState;

/// The session cookie's name.
pub const COOKIE: &str = "parlance_ui";

/// How long a session lasts: 12 hours.
pub const LIFETIME_SECS: u64 = 12 * 3600;

/// The UI's keys and the tokens it knows by fingerprint.
pub struct Ui {
    key: Vec<u8>,
    by_fingerprint: HashMap<String, Principal>,
    anonymous: bool,
}

fn mac(key: &[u8]) -> Hmac<Sha256> {
    Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length")
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A token's fingerprint: enough to find it again, useless to call the API.
fn fingerprint(token: &str) -> String {
    let digest = Sha256::digest(format!("parlance ui token v1:{token}").as_bytes());
    hex::encode(&digest[..16])
}

impl Ui {
    /// Keys derived from the server's secret; the configured tokens.
    pub fn new(state: &AppState) -> Ui {
        let mut m = mac(&state.signer.approval_key());
        m.update(b"parlance ui sessions v1");
        Ui {
            key: m.finalize().into_bytes().to_vec(),
            by_fingerprint: state
                .config
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
            anonymous: state.config.auth.tokens.is_empty(),
        }
    }

    fn sign(&self, text: &str) -> String {
        let mut m = mac(&self.key);
        m.update(text.as_bytes());
        hex::encode(m.finalize().into_bytes())
    }

    fn verify(&self, text: &str, given: &str) -> bool {
        let Ok(bytes) = hex::decode(given) else {
            return false;
        };
        let mut m = mac(&self.key);
        m.update(text.as_bytes());
        m.verify_slice(&bytes).is_ok()
    }

    /// A session cookie's value for `who` (a fingerprint, or `anon`).
    fn issue(&self, who: &str) -> String {
        let body = format!("v1.{}.{who}", now_secs() + LIFETIME_SECS);
        let sig = self.sign(&body);
        format!("{body}.{sig}")
    }

    /// The caller a cookie value stands for, if it is ours, unexpired,
    /// and its token is still configured.
    fn check(&self, value: &str) -> Option<Principal> {
        let (body, sig) = value.rsplit_once('.')?;
        if !self.verify(body, sig) {
            return None;
        }
        let mut parts = body.splitn(3, '.');
        let (version, expires, who) = (parts.next()?, parts.next()?, parts.next()?);
        if version != "v1" || expires.parse::<u64>().ok()? < now_secs() {
            return None;
        }
        if who == "anon" {
            return self.anonymous.then_some(Principal {
                subject: None,
                operator: false,
            });
        }
        self.by_fingerprint.get(who).cloned()
    }

    /// The CSRF token of a session.
    pub fn csrf(&self, session: &str) -> String {
        self.sign(&format!("csrf:{session}"))
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
    session: String,
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
        self.session
            .split('.')
            .nth(1)
            .and_then(|e| e.parse().ok())
            .unwrap_or(0)
    }

    /// Refuses a post without this session's CSRF token (another site's
    /// posts never get here: `crate::guard`).
    pub fn check_post(&self, given: Option<&str>) -> Result<(), UiError> {
        let ok = given.is_some_and(|g| self.ui.verify(&format!("csrf:{}", self.session), g));
        if !ok {
            return Err(UiError::new(
                StatusCode::FORBIDDEN,
                "Form expired",
                "This form's security token is missing or belongs to another session (did you log in again in another tab?). Reload the page and try again.",
            ));
        }
        Ok(())
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
        if let Some(session) = cookie_value(&parts.headers)
            && let Some(who) = ui.check(&session)
        {
            return Ok(Viewer {
                who,
                csrf: ui.csrf(&session),
                ui,
                session,
            });
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

/// `POST /ui/login`: a known token gets a session cookie.
pub async fn login(
    Extension(ui): Extension<Arc<Ui>>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let next = safe_next(form.next.as_deref()).to_string();
    let token = form.token.trim();
    if !ui.by_fingerprint.contains_key(&fingerprint(token)) {
        let why = if token.is_empty() {
            "token: required"
        } else {
            "token: unknown token"
        };
        return login_form(&next, Some(why), StatusCode::UNAUTHORIZED);
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

/// `POST /ui/logout`: the cookie is removed.
pub async fn logout(viewer: Viewer, headers: HeaderMap, Form(form): Form<CsrfForm>) -> Response {
    if let Err(e) = viewer.check_post(form.csrf.as_deref()) {
        return e.into_response();
    }
    let mut resp = Redirect::to("/ui/login").into_response();
    resp.headers_mut()
        .insert(header::SET_COOKIE, set_cookie("", &headers));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ui(anonymous: bool) -> Ui {
        Ui {
            key: b"k".to_vec(),
            by_fingerprint: [(
                fingerprint("tok-a"),
                Principal {
                    subject: Some("a".into()),
                    operator: false,
                },
            )]
            .into(),
            anonymous,
        }
    }

    #[test]
    fn sessions_are_ours_unexpired_and_name_a_configured_token() {
        let u = ui(false);
        let s = u.issue(&fingerprint("tok-a"));
        assert!(!s.contains("tok-a"));
        assert_eq!(u.check(&s).unwrap().subject.as_deref(), Some("a"));
        // Another key, a changed subject, an expired one, a removed token.
        let mut other = ui(false);
        other.key = b"other".to_vec();
        assert!(other.check(&s).is_none());
        let forged = s.replace(&fingerprint("tok-a"), &fingerprint("tok-b"));
        assert!(u.check(&forged).is_none());
        let body = format!("v1.{}.{}", clock() - 1, fingerprint("tok-a"));
        assert!(u.check(&format!("{body}.{}", u.sign(&body))).is_none());
        let mut gone = ui(false);
        gone.by_fingerprint.clear();
        assert!(gone.check(&s).is_none());
        // Anonymous sessions only where no token is configured.
        assert!(u.check(&u.issue("anon")).is_none());
        let open = ui(true);
        assert_eq!(open.check(&open.issue("anon")).unwrap().subject, None);
        for junk in ["", ".", "v1", "v1.x.y.z", "a.b.c.d.e"] {
            assert!(u.check(junk).is_none(), "{junk}");
        }
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
        let viewer = Viewer {
            who: u.check(&s).unwrap(),
            csrf: u.csrf(&s),
            ui: Arc::clone(&u),
            session: s.clone(),
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
