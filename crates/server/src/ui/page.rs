//! The frame every page shares (head, navigation, who is logged in), the
//! error page, the headers that keep the pages to themselves, and small
//! pieces of markup (times, status badges).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};

use crate::auth::Principal;

/// Who is looking, as the page's header shows it (and its log-out form).
#[derive(Clone, Copy)]
pub struct Banner<'a> {
    /// The viewer.
    pub who: &'a Principal,
    /// The CSRF token of the log-out form.
    pub csrf: &'a str,
}

/// The whole page around `body`.
pub fn layout(title: &str, viewer: Option<Banner<'_>>, body: Markup) -> Html<String> {
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Parlance" }
                link rel="stylesheet" href=(super::assets::url("style.css"));
                script type="module" src=(super::assets::url("app.js")) {}
            }
            body {
                a .skip href="#main" { "Skip to content" }
                header .top {
                    nav aria-label="Main" {
                        a .brand href="/ui" { "Parlance" }
                        @if viewer.is_some() {
                            a href="/ui" { "Inbox" }
                            a href="/ui/threads" { "Threads" }
                        }
                    }
                    @if let Some(v) = viewer {
                        div .who {
                            span { (v.who.subject.as_deref().unwrap_or("anonymous")) }
                            @if v.who.operator { " " span .badge .operator { "operator" } }
                            @if v.who.subject.is_some() {
                                form method="post" action="/ui/logout" {
                                    input type="hidden" name="csrf" value=(v.csrf);
                                    button .link type="submit" { "Log out" }
                                }
                            }
                        }
                    }
                }
                main #main tabindex="-1" { (body) }
            }
        }
    };
    Html(page.into_string())
}

/// A page that could not be shown, as a page that says why.
#[derive(Debug)]
pub struct UiError {
    /// The HTTP status.
    pub status: StatusCode,
    title: String,
    message: String,
}

impl UiError {
    /// An error page.
    pub fn new(status: StatusCode, title: &str, message: impl Into<String>) -> UiError {
        UiError {
            status,
            title: title.into(),
            message: message.into(),
        }
    }

    /// `404`: the thing does not exist, or is not the viewer's to see
    /// (the same answer, as in the API).
    pub fn not_found(what: &str) -> UiError {
        UiError::new(
            StatusCode::NOT_FOUND,
            "Not found",
            format!("{what} was not found."),
        )
    }
}

impl From<parlance_store::StoreError> for UiError {
    fn from(e: parlance_store::StoreError) -> Self {
        use parlance_store::StoreError as E;
        match e {
            E::NotFound(what) => UiError::not_found(&what),
            E::Busy { .. } | E::Conflict(_) | E::LeaseLost { .. } => {
                UiError::new(StatusCode::CONFLICT, "Conflict", e.to_string())
            }
            other => {
                tracing::error!(error = %other, "store error (ui)");
                UiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Store error",
                    parlance_assemble::secrets::redact(&other.to_string()).into_owned(),
                )
            }
        }
    }
}

impl IntoResponse for UiError {
    fn into_response(self) -> Response {
        let body = html! {
            h1 { (self.title) }
            p .error role="alert" { (self.message) }
            p { a href="/ui" { "Back to the inbox" } }
        };
        (self.status, layout(&self.title, None, body)).into_response()
    }
}

/// Any other path under `/ui`.
pub async fn not_found_page() -> UiError {
    UiError::not_found("This page")
}

/// What every answer under `/ui` carries: scripts and styles from this
/// server only (no inline script, so an escaping mistake could not run
/// one), never framed, no referrer to other sites, and pages never
/// cached.
pub async fn security_headers(resp: Response) -> Response {
    with_security_headers(resp)
}

/// [`security_headers`], for an answer made outside the `/ui` routes.
pub fn with_security_headers(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    resp
}

/// A time (milliseconds since the epoch) in UTC; the script shows it in
/// the reader's time zone and as "3 min ago".
pub fn when(ms: i64) -> Markup {
    let iso = iso(ms);
    html! { time datetime=(iso) data-ago { (iso.replace('T', " ").trim_end_matches(":00Z")) " UTC" } }
}

/// `2026-11-01T14:03:00Z` (to the minute).
pub fn iso(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:00Z",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// Days since 1970-01-01 to a date (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A run's or a call's status as a badge (`completed`, `tool_failed`...).
pub fn badge(status: &str) -> Markup {
    let tone = match status {
        "completed" | "ok" | "approved" | "edited" | "answered" => "good",
        "requires_approval" | "running" | "waiting" => "wait",
        "rejected" => "neutral",
        _ => "bad",
    };
    let label = match status {
        "requires_approval" => "waiting for decisions",
        other => other,
    };
    html! { span class={ "badge " (tone) } data-status=(status) { (label.replace('_', " ")) } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_utc() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(1_782_914_580_000), "2026-07-01T14:03:00Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00Z");
    }
}
