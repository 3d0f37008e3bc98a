//! AWS credentials and SigV4 signing for Bedrock.
//!
//! Credentials come from the standard places, in the AWS SDKs' order:
//! `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`),
//! then the profile (`AWS_PROFILE`, else `default`) in the shared
//! credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else
//! `~/.aws/credentials`) and the shared config file (`AWS_CONFIG_FILE`,
//! else `~/.aws/config`, where the section is `[profile NAME]`). Only
//! static keys are read there: a profile that gets its keys another way
//! (`role_arn`, `sso_session`, `credential_process`...) is named in an
//! error rather than skipped. The region comes from `AWS_REGION`, then
//! `AWS_DEFAULT_REGION`, then the profile's `region`.
//!
//! Signing uses the `aws-sigv4` crate over the final URL and body; it adds
//! `x-amz-date`, `authorization` and, with a session token,
//! `x-amz-security-token`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use parlance_model::ModelError;
use reqwest::header::{HeaderName, HeaderValue};

use crate::transport::{HttpRequest, Secret};

/// Static AWS credentials.
#[derive(Clone)]
pub struct AwsCredentials {
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key_id: String,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret_access_key: Secret,
    /// `AWS_SESSION_TOKEN` (temporary credentials).
    pub session_token: Option<Secret>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("session_token", &self.session_token.is_some())
            .finish_non_exhaustive()
    }
}

/// What signs each request: credentials, region and signing name.
#[derive(Debug, Clone)]
pub struct AwsSigner {
    /// The credentials.
    pub credentials: AwsCredentials,
    /// The region (`us-east-1`).
    pub region: String,
    /// The signing name (`bedrock`).
    pub service: &'static str,
}

/// Where the shared files and the profile are, from the environment.
struct Profiles {
    name: String,
    credentials: HashMap<String, String>,
    config: HashMap<String, String>,
}

fn home(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("HOME")
        .or_else(|| env("USERPROFILE"))
        .map(PathBuf::from)
}

/// The `[section]` of an INI-style AWS file: its `key = value` lines
/// (comments `#`/`;` and indented sub-settings skipped).
pub fn ini_section(text: &str, section: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            inside = name.split_whitespace().collect::<Vec<_>>().join(" ") == section;
            continue;
        }
        if !inside || line.starts_with(char::is_whitespace) {
            continue;
        }
        if let Some((k, v)) = trimmed.split_once('=') {
            out.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    out
}

fn read_profiles(env: &dyn Fn(&str) -> Option<String>) -> Result<Profiles, String> {
    let name = env("AWS_PROFILE").unwrap_or_else(|| "default".into());
    let file = |var: &str, default: &str| {
        env(var)
            .map(PathBuf::from)
            .or_else(|| home(env).map(|h| h.join(".aws").join(default)))
    };
    let read = |path: Option<PathBuf>| -> Result<Option<String>, String> {
        match path {
            None => Ok(None),
            Some(p) => match std::fs::read_to_string(&p) {
                Ok(t) => Ok(Some(t)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("{}: {e}", p.display())),
            },
        }
    };
    let credentials = read(file("AWS_SHARED_CREDENTIALS_FILE", "credentials"))?
        .map(|t| ini_section(&t, &name))
        .unwrap_or_default();
    let section = if name == "default" {
        "default".to_string()
    } else {
        format!("profile {name}")
    };
    let config = read(file("AWS_CONFIG_FILE", "config"))?
        .map(|t| ini_section(&t, &section))
        .unwrap_or_default();
    Ok(Profiles {
        name,
        credentials,
        config,
    })
}

/// What the environment and the shared files say: the credentials and
/// the region.
pub struct AwsEnv {
    /// `Ok(None)`: none anywhere. An error names what is wrong (an
    /// unreadable file, a profile with keys of a kind Parlance does not
    /// read, half a key pair).
    pub credentials: Result<Option<AwsCredentials>, String>,
    /// `AWS_REGION`, `AWS_DEFAULT_REGION`, or the profile's.
    pub region: Option<String>,
}

/// Credentials and region from the environment and the shared files.
pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> AwsEnv {
    let profiles = read_profiles(env);
    let region = env("AWS_REGION")
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .or_else(|| {
            profiles
                .as_ref()
                .ok()
                .and_then(|p| p.config.get("region").cloned())
        })
        .filter(|r| !r.is_empty());
    AwsEnv {
        credentials: profiles.and_then(|p| credentials(env, &p)),
        region,
    }
}

fn credentials(
    env: &dyn Fn(&str) -> Option<String>,
    profiles: &Profiles,
) -> Result<Option<AwsCredentials>, String> {
    let pair =
        |id: Option<String>, secret: Option<String>, token: Option<String>, from: &str| match (
            id, secret,
        ) {
            (Some(id), Some(secret)) => Ok(Some(AwsCredentials {
                access_key_id: id,
                secret_access_key: Secret::new(secret),
                session_token: token.filter(|t| !t.is_empty()).map(Secret::new),
            })),
            (None, None) => Ok(None),
            (Some(_), None) => Err(format!(
                "{from}: an access key id without its secret access key"
            )),
            (None, Some(_)) => Err(format!(
                "{from}: a secret access key without its access key id"
            )),
        };
    if let Some(c) = pair(
        env("AWS_ACCESS_KEY_ID"),
        env("AWS_SECRET_ACCESS_KEY"),
        env("AWS_SESSION_TOKEN"),
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
    )? {
        return Ok(Some(c));
    }
    for (what, s) in [
        ("the shared credentials file", &profiles.credentials),
        ("the shared config file", &profiles.config),
    ] {
        let get = |k: &str| s.get(k).cloned().filter(|v| !v.is_empty());
        let from = format!("profile {:?} in {what}", profiles.name);
        if let Some(c) = pair(
            get("aws_access_key_id"),
            get("aws_secret_access_key"),
            get("aws_session_token"),
            &from,
        )? {
            return Ok(Some(c));
        }
        for other in [
            "role_arn",
            "sso_session",
            "sso_start_url",
            "credential_process",
            "web_identity_token_file",
            "credential_source",
        ] {
            if s.contains_key(other) {
                return Err(format!(
                    "{from} gets its credentials through {other}, which Parlance does not run: export static ones (`aws configure export-credentials --format env`) or use a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK)"
                ));
            }
        }
    }
    Ok(None)
}

/// Signs `http` (a JSON POST) in place at `time`: adds `x-amz-date`,
/// `authorization` and, with a session token, `x-amz-security-token`.
/// Only `host` and those are signed (the least SigV4 asks for), so headers
/// a proxy may rewrite do not break the signature.
pub fn sign_request(
    http: &mut HttpRequest,
    signer: &AwsSigner,
    time: SystemTime,
) -> Result<(), ModelError> {
    let bad = |e: &dyn std::fmt::Display| ModelError::Unsupported {
        message: format!("the request could not be signed: {e}"),
    };
    let c = &signer.credentials;
    let identity: Identity = Credentials::new(
        &c.access_key_id,
        c.secret_access_key.expose(),
        c.session_token.as_ref().map(|t| t.expose().to_string()),
        None,
        "parlance",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(&signer.region)
        .name(signer.service)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| bad(&e))?
        .into();
    let signable = SignableRequest::new(
        "POST",
        http.url.as_str(),
        std::iter::empty(),
        SignableBody::Bytes(&http.body),
    )
    .map_err(|e| bad(&e))?;
    let (instructions, _) = sign(signable, &params).map_err(|e| bad(&e))?.into_parts();
    for (name, value) in instructions.headers() {
        let mut v = HeaderValue::from_str(value).map_err(|e| bad(&e))?;
        let n = HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(&e))?;
        if n == reqwest::header::AUTHORIZATION || n.as_str() == "x-amz-security-token" {
            v.set_sensitive(true);
        }
        http.headers.insert(n, v);
    }
    Ok(())
}

/// The model id as a URI label: every byte outside the unreserved set
/// (`A-Z a-z 0-9 - . _ ~`) percent-encoded, so `...-v1:0` is `...-v1%3A0`
/// (as the AWS SDKs send it).
pub fn encode_label(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for b in label.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
