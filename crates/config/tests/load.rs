//! Reading the configuration as `parlance serve`, `run`, `chat` and
//! `threads` do: real files, the environment, and errors that name the
//! file, the setting or the variable.

use std::path::PathBuf;

use parlance_config::{Config, ConfigError, DEFAULT_STORE_URL, StoreConfig};

/// A file of this test's own under the system's temp dir.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("parlance-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_file_is_read_and_its_errors_name_it() {
    let good = file(
        "good.toml",
        "listen = \"127.0.0.1:9\"\n[store]\nurl = \"postgres://db/x\"\n[tools.t]\nkind = \"external\"\ndescription = \"T.\"\ninput_schema = '{\"type\": \"object\"}'\n",
    );
    let c = Config::load(Some(good.to_str().unwrap())).unwrap();
    assert_eq!(c.listen.as_deref(), Some("127.0.0.1:9"));
    assert_eq!(c.store.url_or_default(), "postgres://db/x");
    assert_eq!(c.tools["t"].schema("t").unwrap()["type"], "object");

    let missing = good.with_file_name("missing.toml");
    let e = Config::load(Some(missing.to_str().unwrap())).unwrap_err();
    assert!(matches!(e, ConfigError::Read { .. }), "{e:?}");
    assert!(e.to_string().starts_with(missing.to_str().unwrap()), "{e}");
    assert!(
        std::error::Error::source(&e).is_some(),
        "the io error is its source"
    );

    let bad = file(
        "bad.toml",
        "listen = \"127.0.0.1:9\"\n[agents.a]\nmodle = \"x\"\n",
    );
    let e = Config::load(Some(bad.to_str().unwrap())).unwrap_err();
    let text = e.to_string();
    assert!(text.starts_with(&format!("{}: ", bad.display())), "{text}");
    assert!(text.contains("modle"), "{text}");
    assert!(text.contains("line 3"), "{text}");

    let broken = file("broken.toml", "listen = \n");
    let e = Config::load(Some(broken.to_str().unwrap())).unwrap_err();
    assert!(matches!(e, ConfigError::Invalid { .. }), "{e:?}");
}

#[test]
fn the_store_url_defaults_to_parlance_db() {
    assert_eq!(DEFAULT_STORE_URL, "sqlite://./parlance.db");
    assert_eq!(StoreConfig::default().url_or_default(), DEFAULT_STORE_URL);
    assert_eq!(
        parlance_config::store_url(Some("sqlite://x.db".into())),
        "sqlite://x.db"
    );
}

#[test]
fn an_override_through_a_value_is_refused_by_name() {
    let vars = vec![("PARLANCE__LISTEN__PORT".to_string(), "9".to_string())];
    let e = Config::from_toml_with_env("listen = \"127.0.0.1:1\"\n", &vars).unwrap_err();
    assert_eq!(
        e.to_string(),
        "PARLANCE__LISTEN__PORT: listen is not a table"
    );
}

#[test]
fn a_tool_schema_that_is_not_json_names_the_tool() {
    let c = Config::from_toml_with_env(
        "[tools.lookup]\nkind = \"http\"\ndescription = \"L.\"\ninput_schema = \"{nope\"\n",
        &[],
    )
    .unwrap();
    let e = c.tools["lookup"].schema("lookup").unwrap_err();
    assert!(matches!(e, ConfigError::ToolSchema { .. }), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("tools.lookup.input_schema: not JSON: "),
        "{e}"
    );
}

#[test]
fn a_body_limit_that_is_not_a_number_is_refused() {
    let e = Config::default()
        .apply_env(|k| (k == "PARLANCE_MAX_BODY_BYTES").then(|| "2MB".to_string()))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "PARLANCE_MAX_BODY_BYTES: not a number: \"2MB\""
    );
}

#[test]
fn any_setting_comes_from_the_environment() {
    let text = "listen = \"127.0.0.1:1\"\n[agents.support]\nmodel = \"openai-chat:gpt-4o\"\n";
    let vars = vec![
        (
            "PARLANCE__AGENTS__SUPPORT__MODEL".to_string(),
            "anthropic:claude-sonnet-4-5".to_string(),
        ),
        (
            "PARLANCE__AGENTS__SUPPORT__MAX_MODEL_CALLS".to_string(),
            "4".to_string(),
        ),
        (
            "PARLANCE__PROVIDERS__LOCAL__FORMAT".to_string(),
            "openai-chat".to_string(),
        ),
        (
            "PARLANCE__PROVIDERS__LOCAL__BASE_URL".to_string(),
            "http://127.0.0.1:9/v1".to_string(),
        ),
        ("PARLANCE__LISTEN".to_string(), "127.0.0.1:2".to_string()),
        ("OTHER".to_string(), "x".to_string()),
    ];
    let c = Config::from_toml_with_env(text, &vars).unwrap();
    assert_eq!(c.listen.as_deref(), Some("127.0.0.1:2"));
    assert_eq!(c.agents["support"].model, "anthropic:claude-sonnet-4-5");
    assert_eq!(c.agents["support"].max_model_calls, Some(4));
    assert_eq!(
        c.providers["local"].base_url.as_deref(),
        Some("http://127.0.0.1:9/v1")
    );
    let bad = vec![(
        "PARLANCE__AGENTS__SUPPORT__COLOUR".to_string(),
        "red".to_string(),
    )];
    let e = Config::from_toml_with_env(text, &bad).unwrap_err();
    assert!(e.to_string().contains("colour"), "{e}");
    assert!(matches!(e, ConfigError::Invalid { .. }), "{e:?}");
}

#[test]
fn token_lists_from_the_environment() {
    let mut c = Config::default();
    c.apply_env(|k| (k == "PARLANCE_API_TOKENS").then(|| "alice=t1, bob=t2".to_string()))
        .unwrap();
    assert_eq!(c.auth.tokens.len(), 2);
    assert_eq!(
        (
            c.auth.tokens[1].subject.as_str(),
            c.auth.tokens[1].token.as_str()
        ),
        ("bob", "t2")
    );
    let e = Config::default()
        .apply_env(|k| (k == "PARLANCE_API_TOKENS").then(|| "nope".to_string()))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "PARLANCE_API_TOKENS: expected subject=token pairs, got \"nope\""
    );
}

#[test]
fn a_model_is_a_string_or_a_list_of_them() {
    use parlance_config::AgentModel;
    let c = Config::from_toml_with_env(
        "[agents.one]\nmodel = \"openai:gpt-4o\"\n[agents.two]\nmodel = [\"anthropic:claude-sonnet-4-5\", \"openai:gpt-4o\"]\nfallback_on = [\"rate_limited\", \"server\"]\n",
        &[],
    )
    .unwrap();
    assert_eq!(
        c.agents["one"].model,
        AgentModel::One("openai:gpt-4o".into())
    );
    assert_eq!(
        c.agents["two"].model.specs(),
        ["anthropic:claude-sonnet-4-5", "openai:gpt-4o"]
    );
    assert_eq!(
        c.agents["two"].fallback_on.as_deref(),
        Some(&["rate_limited".to_string(), "server".to_string()][..])
    );
    assert_eq!(
        c.agents["two"].model.to_string(),
        "anthropic:claude-sonnet-4-5,openai:gpt-4o"
    );
    // From the environment, as a TOML list.
    let c = Config::from_toml_with_env(
        "[agents.a]\nmodel = \"openai:gpt-4o\"\n",
        &[(
            "PARLANCE__AGENTS__A__MODEL".into(),
            "[\"openai:gpt-4o\", \"gemini:gemini-2.5-flash\"]".into(),
        )],
    )
    .unwrap();
    assert_eq!(c.agents["a"].model.specs().len(), 2);
    // An entry that is not a string is named by its index.
    let e = Config::from_toml_with_env("[agents.a]\nmodel = [\"openai:gpt-4o\", 3]\n", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("model[1]: expected a model string, got 3"),
        "{e}"
    );
    assert!(e.contains("line 2"), "{e}");
}
