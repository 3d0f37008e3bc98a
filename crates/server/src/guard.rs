//! Which browsers' requests the server takes: the `Host` names it serves
//! (against DNS rebinding) and, for requests that change something, the
//! site that sent them (against cross-site requests). Every deployment,
//! with tokens or without: a server without tokens on loopback trusts
//! whoever can reach it, and a page of any site can reach it through the
//! visitor's browser.
//!
//! - `Host`: an IP address, `localhost` (and `*.localhost`), or a name in
//!   `allowed_hosts` (`"*"`: any; for a proxy that checks it). A page whose
//!   name was re-pointed at 127.0.0.1 sends its own name, so it is
//!   refused (`421`); an IP address cannot be re-pointed. Vite's
//!   `server.allowedHosts` and Jupyter's `allow_remote_access` draw the same
//!   line.
//! - Unsafe methods (all but `GET`, `HEAD`, `OPTIONS`): `Sec-Fetch-Site`
//!   must be `same-origin` or `none`, and an `Origin` must be this
//!   server's own (`http(s)://` + its `Host`) or in `allowed_origins`
//!   (`403` otherwise; `Origin: null`, sent by local files and sandboxed
//!   pages, is never this server's). Clients that are not browsers send
//!   neither header and are not concerned.
//!
//! JSON endpoints also take `application/json` only ([`crate::body`]): a
//! page cannot send that to another origin without asking first (a CORS
//! preflight, which this server never grants).

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// The names and origins the server answers, from the configuration.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    hosts: Vec<String>,
    any_host: bool,
    origins: Vec<String>,
}

impl Guard {
    /// From `allowed_hosts` and `allowed_origins`.
    pub fn new(hosts: &[String], origins: &[String]) -> Guard {
        Guard {
            any_host: hosts.iter().any(|h| h == "*"),
            hosts: hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
            origins: origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    /// Why a request naming `host` (as `Host` sends it, port included) is
    /// not for this server, if it is not.
    pub fn misdirected(&self, host: &str) -> Option<String> {
        if self.any_host {
            return None;
        }
        let name = host_name(host).to_ascii_lowercase();
        let ok = name.parse::<IpAddr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.hosts.contains(&name);
        (!ok).then(|| {
            format!(
                "Host {host:?} is not a name this server answers to (IP addresses, localhost and allowed_hosts are): add it to allowed_hosts in the configuration if it is this server's"
            )
        })
    }

    /// Why a request that changes something comes from another site, if
    /// it does (the browser's `Sec-Fetch-Site` and `Origin`).
    pub fn cross_site(&self, headers: &HeaderMap) -> Option<String> {
        let get = |name| headers.get(name).and_then(|v| v.to_str().ok());
        let origin = get(header::ORIGIN.as_str());
        let allowed = origin.is_some_and(|o| {
            let o = o.trim_end_matches('/').to_ascii_lowercase();
            self.origins.contains(&o) || own_origin(&o, get(header::HOST.as_str()).unwrap_or(""))
        });
        if let Some(site) = get("sec-fetch-site")
            && site != "same-origin"
            && site != "none"
            && !allowed
        {
            return Some(format!(
                "refused: sent from another site's page (Sec-Fetch-Site: {site}, Origin: {}); add the origin to allowed_origins in the configuration if it is this server's",
                origin.unwrap_or("none")
            ));
        }
        match origin {
            Some(o) if !allowed => Some(format!(
                "refused: sent from another origin ({o}); add it to allowed_origins in the configuration if it is this server's"
            )),
            _ => None,
        }
    }
}

/// `example.com` of `example.com:8080`, `::1` of `[::1]:8080`.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host, |(name, _)| name)
}

/// Whether `origin` (lowercase) is `http(s)://` + `host`.
fn own_origin(origin: &str, host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    ["http://", "https://"]
        .iter()
        .any(|scheme| origin.strip_prefix(scheme) == Some(host.as_str()))
}

/// The middleware: `421` for a `Host` this server does not serve, `403`
/// for a cross-site request that changes something (a page under `/ui`
/// gets its error as a page, the API as JSON).
pub async fn check(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    if let Some(why) = host.as_deref().and_then(|h| guard.misdirected(h)) {
        tracing::info!(reason = %why, "request refused");
        return ApiError::new(StatusCode::MISDIRECTED_REQUEST, "misdirected_host", why)
            .into_response();
    }
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if !safe && let Some(why) = guard.cross_site(req.headers()) {
        tracing::info!(path = %req.uri().path(), reason = %why, "request refused");
        if req.uri().path().starts_with("/ui") {
            return crate::ui::refused(why);
        }
        return ApiError::new(StatusCode::FORBIDDEN, "cross_site", why).into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(list: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in list {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn hosts_served() {
        let g = Guard::new(&["parlance.example.com".into()], &[]);
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "app.localhost:1",
            "[::1]:8080",
            "10.0.0.7",
            "parlance.example.com",
            "Parlance.Example.com:443",
        ] {
            assert_eq!(g.misdirected(ok), None, "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "127.0.0.1.evil.example",
            "localhost.evil",
        ] {
            let why = g.misdirected(bad).expect(bad);
            assert!(why.contains("allowed_hosts"), "{why}");
        }
        assert_eq!(
            Guard::new(&["*".into()], &[]).misdirected("any.where"),
            None
        );
    }

    #[test]
    fn cross_site_requests() {
        let g = Guard::new(&[], &["https://parlance.example.com".into()]);
        let host = ("host", "127.0.0.1:8080");
        // Not a browser; the server's own pages; a configured origin.
        for ok in [
            headers(&[host]),
            headers(&[host, ("sec-fetch-site", "same-origin")]),
            headers(&[host, ("origin", "http://127.0.0.1:8080")]),
            headers(&[
                host,
                ("sec-fetch-site", "cross-site"),
                ("origin", "https://parlance.example.com/"),
            ]),
        ] {
            assert_eq!(g.cross_site(&ok), None, "{ok:?}");
        }
        for bad in [
            headers(&[host, ("sec-fetch-site", "cross-site")]),
            headers(&[
                host,
                ("sec-fetch-site", "same-site"),
                ("origin", "http://localhost:3000"),
            ]),
            headers(&[host, ("origin", "null")]),
            headers(&[host, ("origin", "http://127.0.0.1:9999")]),
            headers(&[host, ("origin", "https://127.0.0.1:8080.evil")]),
        ] {
            assert!(g.cross_site(&bad).is_some(), "{bad:?}");
        }
    }
}
