//! The stylesheet and the script, built into the binary: the pages need
//! nothing from another host and nothing built at install time.

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

const FILES: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../assets/ui/app.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../assets/ui/style.css"),
    ),
];

/// A short hash of every file: part of their URLs, so a new binary's
/// files are never taken from a browser's cache of the old ones.
fn version() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| {
        let mut h = Sha256::new();
        for (_, _, text) in FILES {
            h.update(text.as_bytes());
        }
        hex::encode(&h.finalize()[..6])
    })
}

/// The URL of an asset.
pub fn url(name: &str) -> String {
    format!("/ui/assets/{name}?v={}", version())
}

/// `GET /ui/assets/{file}`.
pub async fn serve(Path(file): Path<String>) -> Response {
    let Some((_, mime, text)) = FILES.iter().find(|(name, _, _)| *name == file) else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    let mut resp = (*text).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=86400"),
    );
    resp
}
