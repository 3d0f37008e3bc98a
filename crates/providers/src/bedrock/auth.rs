//! AWS credentials and SigV4 signing for Bedrock.
//!
//! Credentials come from the standard places, in the AWS SDKs' order:
//! `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`),
//! then the profile (`AWS_PROFILE`, else `default`) in the shared
//! credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else
//! `~/.aws/credentials`) and the shared config file (`AWS_CONFIG_FILE`,
//! else `~/.aws/config`, where the section is `[profile NAME]`): static
//! keys, or a `credential_process` (the command is run, its JSON read, and
//! run again a few minutes before the keys it gave expire). A profile
//! that gets its keys through AWS's own services (`sso_session`,
//! `role_arn`, `web_identity_token_file`...) is named in an error, with the
//! one-line `credential_process` that makes the AWS CLI do it: those flows
//! call SSO and STS, whose clients Parlance does not carry (see
//! docs/providers.md). The region comes from `AWS_REGION`, then
//! `AWS_DEFAULT_REGION`, then the profile's `region`.
//!
//! Signing uses the `aws-sigv4` crate over the final URL and body, on every
//! attempt (a signature is valid for five minutes, and a retry may come
//! later); it adds `x-amz-date`, `authorization` and, with a session
//! token, `x-amz-security-token`.

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

/// Where a signer's credentials come from.
#[derive(Debug)]
pub enum AwsCredentialSource {
    /// Keys given once (the environment, a profile's static keys, code).
    Static(AwsCredentials),
    /// A profile's `credential_process`, run when its keys are needed.
    Process(CredentialProcess),
}

/// A `credential_process` command and the keys it last gave.
#[derive(Debug)]
pub struct CredentialProcess {
    /// The command line, run by the shell (`sh -c`; `cmd /C` on Windows).
    pub command: String,
    /// Where it was configured (for errors).
    pub from: String,
    cached: tokio::sync::Mutex<Option<(AwsCredentials, Option<SystemTime>)>>,
}

/// Keys that expire within this margin are fetched again (the AWS SDKs'
/// own margin).
const REFRESH_MARGIN: std::time::Duration = std::time::Duration::from_secs(300);

/// The longest a `credential_process` may run.
const PROCESS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

impl CredentialProcess {
    /// A command, configured at `from`.
    pub fn new(command: impl Into<String>, from: impl Into<String>) -> Self {
        CredentialProcess {
            command: command.into(),
            from: from.into(),
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// The keys: the last ones while they are good for five minutes
    /// more, else the command's new ones.
    pub async fn credentials(&self, now: SystemTime) -> Result<AwsCredentials, ModelError> {
        let mut cached = self.cached.lock().await;
        if let Some((c, expires)) = &*cached
            && expires.is_none_or(|e| e > now + REFRESH_MARGIN)
        {
            return Ok(c.clone());
        }
        let fresh = self.run().await?;
        *cached = Some(fresh.clone());
        Ok(fresh.0)
    }

    async fn run(&self) -> Result<(AwsCredentials, Option<SystemTime>), ModelError> {
        let fail = |why: String| ModelError::Authentication {
            message: format!("credential_process of {}: {why}", self.from),
        };
        let command = self.command.clone();
        let child = tokio::task::spawn_blocking(move || {
            let mut cmd = if cfg!(windows) {
                let mut c = std::process::Command::new("cmd");
                c.arg("/C");
                c
            } else {
                let mut c = std::process::Command::new("sh");
                c.arg("-c");
                c
            };
            cmd.arg(&command)
                .stdin(std::process::Stdio::null())
                .output()
        });
        let out = match tokio::time::timeout(PROCESS_TIMEOUT, child).await {
            Err(_) => return Err(fail(format!("no answer within {PROCESS_TIMEOUT:?}"))),
            Ok(Err(e)) => return Err(fail(format!("could not be waited for: {e}"))),
            Ok(Ok(Err(e))) => return Err(fail(format!("could not be started: {e}"))),
            Ok(Ok(Ok(out))) => out,
        };
        if !out.status.success() {
            let stderr: String = String::from_utf8_lossy(&out.stderr)
                .chars()
                .take(300)
                .collect();
            return Err(fail(format!(
                "exited with {}: {}",
                out.status,
                stderr.trim()
            )));
        }
        parse_process_output(&out.stdout).map_err(fail)
    }
}

/// A `credential_process`'s standard output (`{"Version": 1,
/// "AccessKeyId", "SecretAccessKey", "SessionToken"?, "Expiration"?}`) →
/// keys and when they expire.
pub fn parse_process_output(stdout: &[u8]) -> Result<(AwsCredentials, Option<SystemTime>), String> {
    let v: serde_json::Value =
        serde_json::from_slice(stdout).map_err(|e| format!("its output is not JSON ({e})"))?;
    let text = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
    };
    match v.get("Version").and_then(serde_json::Value::as_u64) {
        Some(1) => {}
        other => return Err(format!("Version: expected 1, got {other:?}")),
    }
    let id = text("AccessKeyId").ok_or("AccessKeyId: missing")?;
    let secret = text("SecretAccessKey").ok_or("SecretAccessKey: missing")?;
    let expires = match text("Expiration") {
        None => None,
        Some(e) => {
            let t = aws_smithy_types::DateTime::from_str(
                e,
                aws_smithy_types::date_time::Format::DateTime,
            )
            .map_err(|err| format!("Expiration: {e:?} is not an RFC 3339 time ({err})"))?;
            Some(SystemTime::try_from(t).map_err(|err| format!("Expiration: {e:?}: {err}"))?)
        }
    };
    Ok((
        AwsCredentials {
            access_key_id: id.to_string(),
            secret_access_key: Secret::new(secret.to_string()),
            session_token: text("SessionToken").map(|t| Secret::new(t.to_string())),
        },
        expires,
    ))
}

/// Signs each attempt of a request with SigV4, with the credentials of
/// its source at that moment.
#[derive(Debug)]
pub struct SigV4 {
    /// Where the keys come from.
    pub source: AwsCredentialSource,
    /// The region (`us-east-1`).
    pub region: String,
    /// The signing name (`bedrock`).
    pub service: &'static str,
}

impl crate::transport::Sign for SigV4 {
    fn sign<'a>(
        &'a self,
        req: &'a mut HttpRequest,
    ) -> futures::future::BoxFuture<'a, Result<(), ModelError>> {
        Box::pin(async move {
            let now = SystemTime::now();
            let credentials = match &self.source {
                AwsCredentialSource::Static(c) => c.clone(),
                AwsCredentialSource::Process(p) => p.credentials(now).await?,
            };
            let signer = AwsSigner {
                credentials,
                region: self.region.clone(),
                service: self.service,
            };
            sign_request(req, &signer, now)
        })
    }
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
    pub credentials: Result<Option<AwsCredentialSource>, String>,
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
) -> Result<Option<AwsCredentialSource>, String> {
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
        return Ok(Some(AwsCredentialSource::Static(c)));
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
            return Ok(Some(AwsCredentialSource::Static(c)));
        }
        if let Some(command) = get("credential_process") {
            return Ok(Some(AwsCredentialSource::Process(CredentialProcess::new(
                command, from,
            ))));
        }
        for other in [
            "sso_session",
            "sso_start_url",
            "role_arn",
            "web_identity_token_file",
            "credential_source",
        ] {
            if s.contains_key(other) {
                return Err(format!(
                    "{from} gets its credentials through {other} (a call to AWS's SSO or STS service, which Parlance does not make): let the AWS CLI make it, with `credential_process = aws configure export-credentials --profile {name} --format process` in another profile, or export static keys, or use a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK)",
                    name = profiles.name
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
