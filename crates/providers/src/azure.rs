//! Azure OpenAI: where a deployment's requests go and how they are
//! authorized. The wire formats are OpenAI's own (Chat Completions and
//! Responses); only the URLs and the key differ.
//!
//! - The base URL is the resource's endpoint
//!   (`https://NAME.openai.azure.com`, from `AZURE_OPENAI_ENDPOINT`).
//! - Without an `api-version`, requests go to the v1 API, which takes none
//!   and the deployment name as `model` in the body:
//!   `{endpoint}/openai/v1/chat/completions`, `{endpoint}/openai/v1/responses`.
//! - With an `api-version` (the builder's, else `OPENAI_API_VERSION`, else
//!   `AZURE_OPENAI_API_VERSION`), Chat goes to the deployment's URL,
//!   `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=V`,
//!   and Responses to `{endpoint}/openai/responses?api-version=V`, as
//!   Azure's own `AzureOpenAI` clients send them.
//! - The key goes in the `api-key` header; an Entra ID token (the builder's
//!   or `AZURE_OPENAI_AD_TOKEN`) as `Authorization: Bearer`. One of them is
//!   required whatever the base URL: Azure has no anonymous access.
//!
//! The variable names are those of OpenAI's Python and Node SDKs'
//! `AzureOpenAI` clients.

use crate::error::BuildError;
use crate::format::WireFormat;

/// The resource's endpoint (`https://NAME.openai.azure.com`).
pub const ENDPOINT_ENV: &str = "AZURE_OPENAI_ENDPOINT";
/// The resource's key, sent in the `api-key` header.
pub const KEY_ENV: &str = "AZURE_OPENAI_API_KEY";
/// An Entra ID (Azure AD) access token, sent as a bearer token.
pub const AD_TOKEN_ENV: &str = "AZURE_OPENAI_AD_TOKEN";
/// The `api-version` of the deployment URLs, the first set one wins.
pub const API_VERSION_ENV: [&str; 2] = ["OPENAI_API_VERSION", "AZURE_OPENAI_API_VERSION"];
/// The header carrying the key.
pub const KEY_HEADER: &str = "api-key";

/// The URLs of a plain and a streamed request for `deployment` at the
/// resource `endpoint` (no trailing slash; an `/openai` or `/openai/v1`
/// tail is taken as part of the endpoint's API path and not repeated).
pub(crate) fn urls(
    format: &WireFormat,
    endpoint: &str,
    deployment: &str,
    api_version: Option<&str>,
) -> Result<[String; 2], BuildError> {
    let endpoint = endpoint
        .trim_end_matches("/openai/v1")
        .trim_end_matches("/openai");
    let path = |p: &str| match api_version {
        None => format!("{endpoint}/openai/v1{p}"),
        // Only Chat (and the older completions and embeddings) routes by
        // deployment; Responses takes the deployment as `model`.
        Some(v) if format.name == crate::openai_chat::NAME => {
            format!("{endpoint}/openai/deployments/{deployment}{p}?api-version={v}")
        }
        Some(v) => format!("{endpoint}/openai{p}?api-version={v}"),
    };
    if let Some(v) = api_version {
        check(v, "api-version", |c| c.is_ascii_alphanumeric() || c == '-')?;
    }
    check(deployment, "deployment name", |c| {
        c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
    })?;
    let e = &format.endpoint;
    Ok([path(e.path), path(e.stream_path)])
}

/// `value` is non-empty and made only of `ok` characters (it goes into a
/// URL unescaped).
fn check(value: &str, what: &str, ok: impl Fn(char) -> bool) -> Result<(), BuildError> {
    if !value.is_empty() && value.chars().all(ok) {
        return Ok(());
    }
    Err(BuildError::BadSetting {
        setting: format!("Azure OpenAI {what}"),
        value: value.to_string(),
        why: "expected letters, digits and - (a deployment name may also hold _ and .)".into(),
    })
}
