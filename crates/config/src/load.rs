//! Reading the configuration: the TOML file, then the environment.

use crate::{Config, ConfigError, TokenConfig};

/// Where settings come from when no file is given.
const NO_FILE: &str = "the environment";

impl Config {
    /// Reads a TOML file (none: defaults) and applies the environment.
    pub fn load(path: Option<&str>) -> Result<Config, ConfigError> {
        let (text, origin) = match path {
            Some(p) => (
                std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.to_string(),
                    source,
                })?,
                p,
            ),
            None => (String::new(), NO_FILE),
        };
        let vars: Vec<(String, String)> = std::env::vars().collect();
        let mut c = parse(&text, &vars, origin)?;
        c.apply_env(|k| std::env::var(k).ok())?;
        Ok(c)
    }

    /// Parses TOML, then sets every `PARLANCE__A__B=value` of `vars` at
    /// the path `a.b` before reading the settings.
    pub fn from_toml_with_env(
        text: &str,
        vars: &[(String, String)],
    ) -> Result<Config, ConfigError> {
        parse(text, vars, "the configuration")
    }

    /// Applies environment settings (through `get`, for tests).
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if let Some(v) = get("PARLANCE_LISTEN") {
            self.listen = Some(v);
        }
        if let Some(v) = get("PARLANCE_SECRET") {
            self.secret = Some(v);
        }
        if let Some(v) = get("PARLANCE_PREVIOUS_SECRETS") {
            self.previous_secrets = v
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
        }
        if let Some(v) = get("PARLANCE_STORE_URL") {
            self.store.url = Some(v);
        }
        if let Some(v) = get("PARLANCE_MAX_BODY_BYTES") {
            self.max_body_bytes = Some(v.parse().map_err(|_| ConfigError::Env {
                var: "PARLANCE_MAX_BODY_BYTES".into(),
                message: format!("not a number: {v:?}"),
            })?);
        }
        for (var, operator) in [
            ("PARLANCE_API_TOKENS", false),
            ("PARLANCE_OPERATOR_TOKENS", true),
        ] {
            if let Some(list) = get(var) {
                for pair in list.split(',').filter(|p| !p.trim().is_empty()) {
                    let (subject, token) =
                        pair.split_once('=').ok_or_else(|| ConfigError::Env {
                            var: var.into(),
                            message: format!("expected subject=token pairs, got {pair:?}"),
                        })?;
                    self.auth.tokens.push(TokenConfig {
                        token: token.trim().to_string(),
                        subject: subject.trim().to_string(),
                        operator,
                    });
                }
            }
        }
        Ok(())
    }
}

/// The TOML of `origin` with the `PARLANCE__` overrides of `vars` set.
fn parse(text: &str, vars: &[(String, String)], origin: &str) -> Result<Config, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        origin: origin.to_string(),
        message,
    };
    let mut overrides: Vec<&(String, String)> = vars
        .iter()
        .filter(|(k, _)| k.starts_with("PARLANCE__"))
        .collect();
    if overrides.is_empty() {
        // Straight from the text: errors keep their line and column.
        return toml::from_str::<Config>(text).map_err(|e| invalid(e.to_string()));
    }
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
    overrides.sort();
    for (key, value) in overrides {
        let path: Vec<String> = key["PARLANCE__".len()..]
            .split("__")
            .map(str::to_lowercase)
            .collect();
        let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.clone()));
        let mut table = &mut doc;
        for (i, part) in path.iter().enumerate() {
            if i + 1 == path.len() {
                table.insert(part.clone(), parsed.clone());
                break;
            }
            let entry = table
                .entry(part.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            table = entry.as_table_mut().ok_or_else(|| ConfigError::NotATable {
                var: key.clone(),
                part: part.clone(),
            })?;
        }
    }
    toml::Value::Table(doc)
        .try_into::<Config>()
        .map_err(|e| invalid(e.to_string()))
}
