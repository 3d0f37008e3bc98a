//! A provider's model with settings of the package user's own — base URL,
//! key, headers, timeouts, the retry policy, Azure's API version and AD
//! token, Bedrock's region and credentials — read in the package's
//! spelling ([`Dialect`]) into the providers crate's `ModelBuilder`.

use std::sync::Arc;

use parlance::Model;
use parlance::providers::bedrock::auth::AwsCredentials;
use parlance::providers::{ModelBuilder, PROVIDERS, Provider, RetryPolicy, Secret};
use serde_json::{Map, Value};

use crate::{BindError, Dialect};

/// Every setting, in snake_case (JavaScript: camelCase, `baseURL`).
pub const NAMES: [&str; 14] = [
    "base_url",
    "api_key",
    "api_key_env",
    "headers",
    "user_agent",
    "connect_timeout",
    "first_byte_timeout",
    "idle_timeout",
    "retry",
    "api_version",
    "azure_ad_token",
    "region",
    "aws_credentials",
    "max_retries",
];

fn spelled(d: Dialect, snake: &str) -> String {
    match (d, snake) {
        (Dialect::Node, "base_url") => "baseURL".into(),
        _ => d.name(snake),
    }
}

fn string(what: &str, v: &Value) -> Result<String, BindError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| BindError::config(format!("{what}: expected a string, got {v}")))
}

fn object<'v>(what: &str, v: &'v Value) -> Result<&'v Map<String, Value>, BindError> {
    v.as_object()
        .ok_or_else(|| BindError::config(format!("{what}: expected an object, got {v}")))
}

fn retries(what: &str, v: &Value) -> Result<u32, BindError> {
    v.as_u64()
        .filter(|n| *n <= 100)
        .map(|n| n as u32)
        .ok_or_else(|| {
            BindError::config(format!(
                "{what}: expected a whole number from 0 to 100, got {v}"
            ))
        })
}

/// The retry policy: `{max_retries, initial_backoff, max_backoff,
/// max_retry_after}` (durations in the dialect's unit), from the default.
fn retry_policy(what: &str, v: &Value, d: Dialect) -> Result<RetryPolicy, BindError> {
    let mut p = RetryPolicy::default();
    for (key, v) in object(what, v)? {
        let at = format!("{what}.{key}");
        match key.as_str() {
            k if k == d.name("max_retries") => p.max_retries = retries(&at, v)?,
            k if k == d.name("initial_backoff") => p.initial_backoff = d.duration(&at, v)?,
            k if k == d.name("max_backoff") => p.max_backoff = d.duration(&at, v)?,
            k if k == d.name("max_retry_after") => p.max_retry_after = d.duration(&at, v)?,
            _ => {
                return Err(BindError::config(format!(
                    "{at}: unknown setting (known: {})",
                    [
                        "max_retries",
                        "initial_backoff",
                        "max_backoff",
                        "max_retry_after"
                    ]
                    .map(|n| d.name(n))
                    .join(", ")
                )));
            }
        }
    }
    Ok(p)
}

fn credentials(what: &str, v: &Value, d: Dialect) -> Result<AwsCredentials, BindError> {
    let m = object(what, v)?;
    let field = |snake: &str| -> Result<Option<String>, BindError> {
        let key = d.name(snake);
        match m.get(&key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => string(&format!("{what}.{key}"), v).map(Some),
        }
    };
    let need = |snake: &str| {
        field(snake)?
            .ok_or_else(|| BindError::config(format!("{what}.{}: required", d.name(snake))))
    };
    Ok(AwsCredentials {
        access_key_id: need("access_key_id")?,
        secret_access_key: Secret::new(need("secret_access_key")?),
        session_token: field("session_token")?.map(Secret::new),
    })
}

/// Applies settings (an object in dialect `d`; null values unset) to `b`.
pub fn apply(mut b: ModelBuilder, v: &Value, d: Dialect) -> Result<ModelBuilder, BindError> {
    if v.is_null() {
        return Ok(b);
    }
    for (key, v) in object("model settings", v)? {
        if v.is_null() {
            continue;
        }
        let Some(snake) = NAMES.iter().find(|n| spelled(d, n) == *key) else {
            let known: Vec<String> = NAMES.iter().map(|n| spelled(d, n)).collect();
            return Err(BindError::config(format!(
                "model settings: unknown setting {key:?} (known: {})",
                known.join(", ")
            )));
        };
        let what = key.as_str();
        b = match *snake {
            "base_url" => b.base_url(string(what, v)?),
            "api_key" => b.api_key(string(what, v)?),
            "api_key_env" => b.api_key_env(string(what, v)?),
            "headers" => {
                // Sorted: the same requests whatever order a dict had.
                let mut headers: Vec<(&String, &Value)> = object(what, v)?.iter().collect();
                headers.sort_by(|a, b| a.0.cmp(b.0));
                for (name, value) in headers {
                    b = b.header(name.clone(), string(&format!("{what}.{name}"), value)?);
                }
                b
            }
            "user_agent" => b.user_agent(string(what, v)?),
            "connect_timeout" => b.connect_timeout(d.duration(what, v)?),
            "first_byte_timeout" => b.first_byte_timeout(d.duration(what, v)?),
            "idle_timeout" => b.idle_timeout(d.duration(what, v)?),
            "retry" => b.retry(retry_policy(what, v, d)?),
            "max_retries" => b.retry(RetryPolicy {
                max_retries: retries(what, v)?,
                ..RetryPolicy::default()
            }),
            "api_version" => b.api_version(string(what, v)?),
            "azure_ad_token" => b.azure_ad_token(string(what, v)?),
            "region" => b.region(string(what, v)?),
            "aws_credentials" => b.aws_credentials(credentials(what, v, d)?),
            _ => unreachable!("every name of NAMES has its arm"),
        };
    }
    Ok(b)
}

/// The model `spec` (`"openai:gpt-4o-mini"`) with `settings`.
pub fn model(spec: &str, settings: &Value, d: Dialect) -> Result<Arc<dyn Model>, BindError> {
    if settings.is_null() {
        return Ok(parlance::model(spec)?);
    }
    let b = apply(ModelBuilder::from_spec(spec)?, settings, d)?;
    Ok(Arc::new(b.build()?))
}

/// The model `name` of provider `provider` (`openai`, `bedrock`...) with
/// `settings`.
pub fn provider_model(
    provider: &str,
    name: &str,
    settings: &Value,
    d: Dialect,
) -> Result<Arc<dyn Model>, BindError> {
    let Some(p) = Provider::named(provider) else {
        return Err(BindError::config(format!(
            "unknown provider {provider:?} (expected one of: {})",
            PROVIDERS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let b = apply(p.model(name), settings, d)?;
    Ok(Arc::new(b.build()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_setting_is_read_and_bad_ones_are_named() {
        let m = provider_model(
            "openai",
            "gpt-4o-mini",
            &json!({"baseURL": "http://127.0.0.1:9/v1", "apiKey": "sk-x", "headers": {"x-b": "2", "x-a": "1"},
                    "retry": {"maxRetries": 0, "initialBackoff": 10}, "connectTimeout": 500}),
            Dialect::Node,
        )
        .unwrap();
        assert_eq!((m.provider(), m.model_id()), ("openai", "gpt-4o-mini"));
        let e = provider_model("openai", "m", &json!({"base_url": "x"}), Dialect::Node)
            .err()
            .unwrap();
        assert!(
            e.text.starts_with(
                "model settings: unknown setting \"base_url\" (known: baseURL, apiKey"
            ),
            "{e}"
        );
        let e = provider_model(
            "openai",
            "m",
            &json!({"retry": {"max_retries": -1}}),
            Dialect::Python,
        )
        .err()
        .unwrap();
        assert_eq!(
            e.text,
            "retry.max_retries: expected a whole number from 0 to 100, got -1"
        );
        let e = provider_model(
            "bedrock",
            "m",
            &json!({"region": "eu-west-1", "aws_credentials": {"access_key_id": "A"}}),
            Dialect::Python,
        )
        .err()
        .unwrap();
        assert_eq!(e.text, "aws_credentials.secret_access_key: required");
        let ok = provider_model(
            "bedrock",
            "anthropic.claude-3-haiku",
            &json!({"region": "eu-west-1", "aws_credentials": {"access_key_id": "A", "secret_access_key": "S"}}),
            Dialect::Python,
        );
        assert!(ok.is_ok(), "{:?}", ok.err());
        let e = provider_model("nowhere", "m", &Value::Null, Dialect::Python)
            .err()
            .unwrap();
        assert!(e.text.starts_with("unknown provider \"nowhere\""), "{e}");
    }
}
