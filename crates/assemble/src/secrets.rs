//! The secrets a server knows (API tokens, provider API keys, its signing
//! secret) and the one place that scrubs them: from what is stored (the
//! store's redactor), returned (every answer and event) and logged (the
//! log writer, see `logging`).

use std::sync::{Arc, RwLock};

use parlance_store::Redactor;
use serde_json::Value;

use parlance_config::Config;

/// Environment variables that hold provider keys by default: every
/// provider's of the registry (so a provider added there is covered
/// here), and Azure's Entra ID token.
fn key_vars() -> impl Iterator<Item = &'static str> {
    parlance_providers::PROVIDERS
        .iter()
        .flat_map(|p| p.api_key_env.iter().copied())
        .chain([parlance_providers::azure::AD_TOKEN_ENV])
}

/// Every secret of `config` (and the environment it names), plus `signing`.
pub fn collect(config: &Config, signing: &str) -> Vec<String> {
    let mut out: Vec<String> = config.auth.tokens.iter().map(|t| t.token.clone()).collect();
    out.push(signing.to_string());
    out.extend(config.previous_secrets.iter().cloned());
    let vars = key_vars().map(str::to_string).chain(
        config
            .providers
            .values()
            .filter_map(|p| p.api_key_env.clone()),
    );
    for var in vars {
        if let Ok(v) = std::env::var(&var) {
            out.push(v);
        }
    }
    out
}

static GLOBAL: RwLock<Option<Arc<Redactor>>> = RwLock::new(None);

/// Makes `r` the redactor of the logs and of error answers.
pub fn install(r: Arc<Redactor>) {
    *GLOBAL.write().unwrap_or_else(|e| e.into_inner()) = Some(r);
}

/// `text` with the installed secrets scrubbed.
pub fn redact(text: &str) -> std::borrow::Cow<'_, str> {
    let guard = GLOBAL.read().unwrap_or_else(|e| e.into_inner());
    match guard.as_ref() {
        Some(r) => std::borrow::Cow::Owned(r.redact(text).into_owned()),
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// A JSON value with the secrets of `r` scrubbed from every string in it.
pub fn redact_value(r: &Redactor, v: Value) -> Value {
    if r.is_empty() {
        return v;
    }
    let text = v.to_string();
    match r.redact(&text) {
        std::borrow::Cow::Borrowed(_) => v,
        std::borrow::Cow::Owned(s) => serde_json::from_str(&s).unwrap_or(v),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_registered_provider_key_is_a_secret() {
        let vars: Vec<&str> = super::key_vars().collect();
        for v in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "MISTRAL_API_KEY",
            "OLLAMA_API_KEY",
            "AZURE_OPENAI_AD_TOKEN",
        ] {
            assert!(vars.contains(&v), "{v} is not scrubbed");
        }
    }
}
