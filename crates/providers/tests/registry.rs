//! Models from a string and the builder, as a user meets them: the
//! registry's defaults, a missing key refused before any request, and what
//! a built model actually sends (over real HTTP on 127.0.0.1).

mod common;

use common::http::env;
use common::{fixture, json_file};
use parlance_model::{Model, ModelRequest};
use parlance_providers::{
    BuildError, DEFAULT_USER_AGENT, HttpModel, ModelBuilder, ModelSpec, Provider, RetryPolicy,
    wire_format,
};
use parlance_testkit::replay::{ReplayServer, Reply};

fn from_spec(spec: &str, vars: &[(&str, &str)]) -> Result<HttpModel, BuildError> {
    ModelBuilder::from_spec(spec)?.build_with_env(env(vars))
}

#[test]
fn a_missing_key_is_an_error_naming_the_variable() {
    let e = from_spec("anthropic:claude-sonnet-4-5", &[]).unwrap_err();
    assert_eq!(e.to_string(), "ANTHROPIC_API_KEY is not set");
    let e = from_spec("openai:gpt-4o-mini", &[("OPENAI_API_KEY", "")]).unwrap_err();
    assert_eq!(e.to_string(), "OPENAI_API_KEY is not set", "empty is unset");
    let e = from_spec("openai-responses:gpt-5", &[]).unwrap_err();
    assert_eq!(e.to_string(), "OPENAI_API_KEY is not set");
    let e = from_spec("gemini:gemini-2.5-flash", &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "GEMINI_API_KEY is not set (nor GOOGLE_API_KEY)"
    );
}

#[test]
fn each_provider_has_its_defaults() {
    let cases = [
        (
            "openai:gpt-4o-mini",
            ("OPENAI_API_KEY", "k"),
            "openai-chat",
            "https://api.openai.com/v1/chat/completions",
            "https://api.openai.com/v1/chat/completions",
        ),
        (
            "openai-responses:gpt-5",
            ("OPENAI_API_KEY", "k"),
            "openai-responses",
            "https://api.openai.com/v1/responses",
            "https://api.openai.com/v1/responses",
        ),
        (
            "anthropic:claude-sonnet-4-5",
            ("ANTHROPIC_API_KEY", "k"),
            "anthropic",
            "https://api.anthropic.com/v1/messages",
            "https://api.anthropic.com/v1/messages",
        ),
        (
            "gemini:models/gemini-2.5-flash",
            ("GOOGLE_API_KEY", "k"),
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        ),
    ];
    for (spec, var, format, url, stream_url) in cases {
        let m = from_spec(spec, &[var]).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(m.format().name, format, "{spec}");
        assert_eq!(m.url(false), url, "{spec}");
        assert_eq!(m.url(true), stream_url, "{spec}");
    }
    // The wire format's own name is accepted for OpenAI Chat.
    let m = from_spec("openai-chat:gpt-4o", &[("OPENAI_API_KEY", "k")]).unwrap();
    assert_eq!(m.model_id(), "gpt-4o");
    assert_eq!(m.provider(), "openai");
}

#[test]
fn the_base_url_variable_moves_a_provider_and_the_key_becomes_optional() {
    let m = from_spec(
        "anthropic:claude",
        &[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/proxy/")],
    )
    .unwrap();
    assert_eq!(m.url(false), "http://127.0.0.1:9/proxy/v1/messages");
}

#[test]
fn bad_model_strings_say_what_is_wrong() {
    let cases = [
        (
            "gpt-4o",
            "model \"gpt-4o\": expected provider:model, e.g. anthropic:claude-sonnet-4-5",
        ),
        ("openai:", "model \"openai:\": no model after the colon"),
        (":gpt-4o", "model \":gpt-4o\": no provider before the colon"),
        (
            "local",
            "model \"local\": the embedded model is built by parlance-local (the `local` feature of parlance-ai)",
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(
            from_spec(spec, &[]).unwrap_err().to_string(),
            want,
            "{spec}"
        );
    }
    // Every provider is named, in the registry's order, then `local`.
    let names: Vec<&str> = parlance_providers::PROVIDERS
        .iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(
        from_spec("nowhere:x", &[]).unwrap_err().to_string(),
        format!(
            "unknown provider \"nowhere\" (expected one of: {}, local)",
            names.join(", ")
        )
    );
    assert!(names.starts_with(&["openai", "openai-responses", "anthropic", "gemini"]));
    assert_eq!(
        ModelSpec::parse("local:/models/x.gguf").unwrap(),
        ModelSpec::Local {
            path: Some("/models/x.gguf")
        }
    );
    assert_eq!(
        ModelSpec::parse("openai:llama3:8b").unwrap(),
        ModelSpec::Remote {
            provider: "openai",
            model: "llama3:8b"
        },
        "a model id may hold a colon"
    );
}

#[test]
fn bad_settings_are_refused_at_build() {
    let b = || Provider::OPENAI.model("m").api_key("k");
    let e = b().base_url("api.example.com/v1").build().unwrap_err();
    assert!(
        matches!(e, BuildError::BadBaseUrl { .. }),
        "{e}: a relative URL"
    );
    let e = b().base_url("ftp://x/v1").build().unwrap_err();
    assert_eq!(
        e.to_string(),
        "base URL \"ftp://x/v1\": expected http or https, got ftp"
    );
    let e = b().header("bad name", "v").build().unwrap_err();
    assert_eq!(
        e.to_string(),
        "header \"bad name\": not a valid header name"
    );
    let e = b().header("x-ok", "line\nbreak").build().unwrap_err();
    assert!(e.to_string().starts_with("header \"x-ok\""), "{e}");
    let e = Provider::OPENAI
        .model("m")
        .api_key("sk-\nsecret")
        .build()
        .unwrap_err();
    assert!(
        !e.to_string().contains("secret"),
        "the key is never shown: {e}"
    );
    let format = wire_format("anthropic").unwrap();
    let e = ModelBuilder::new(format, "m").build().unwrap_err();
    assert_eq!(
        e.to_string(),
        "no base URL for this anthropic model: set one with .base_url()"
    );
}

fn chat_reply() -> Reply {
    Reply::json(
        200,
        &json_file(&fixture(
            "openai-chat",
            "lingua__toolCallRequest__chat-completions__response.json",
        )),
    )
}

#[tokio::test]
async fn a_built_model_sends_its_key_headers_and_user_agent() {
    let server = ReplayServer::start(vec![chat_reply(), chat_reply(), chat_reply()]).await;
    let request = ModelRequest {
        messages: vec![parlance_format::Message::user("hi")],
        ..Default::default()
    };

    // From the registry, key from the environment.
    let m = from_spec(
        "openai:gpt-test",
        &[
            ("OPENAI_API_KEY", "sk-env"),
            ("OPENAI_BASE_URL", &format!("{}/v1", server.url)),
        ],
    )
    .unwrap();
    m.generate(&request).await.unwrap();

    // By hand: a key, a header, a user agent, no retries.
    let m = Provider::OPENAI
        .model("gpt-test")
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-given")
        .header("OpenAI-Organization", "org-1")
        .user_agent("my-app/2")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    m.generate(&request).await.unwrap();

    // Another base URL and no key: nothing is sent for it.
    let m = ModelBuilder::new(wire_format("openai-chat").unwrap(), "gpt-test")
        .base_url(format!("{}/v1", server.url))
        .build()
        .unwrap();
    m.generate(&request).await.unwrap();

    let got = server.received();
    assert_eq!(got.len(), 3);
    assert!(got.iter().all(|r| r.path == "/v1/chat/completions"));
    assert_eq!(got[0].header("authorization"), Some("Bearer sk-env"));
    assert_eq!(got[0].header("user-agent"), Some(DEFAULT_USER_AGENT));
    assert_eq!(got[1].header("authorization"), Some("Bearer sk-given"));
    assert_eq!(got[1].header("openai-organization"), Some("org-1"));
    assert_eq!(got[1].header("user-agent"), Some("my-app/2"));
    assert_eq!(got[2].header("authorization"), None);
    assert_eq!(got[0].body["model"], "gpt-test");
}

#[tokio::test]
async fn anthropic_and_gemini_carry_the_key_their_way() {
    let anthropic_reply = Reply::json(
        200,
        &json_file(&fixture(
            "anthropic",
            "lingua__toolCallRequest__anthropic__response.json",
        )),
    );
    let server = ReplayServer::start(vec![anthropic_reply]).await;
    let m = from_spec(
        "anthropic:claude-test",
        &[
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", &server.url),
        ],
    )
    .unwrap();
    let request = ModelRequest {
        messages: vec![parlance_format::Message::user("hi")],
        ..Default::default()
    };
    m.generate(&request).await.unwrap();
    let got = &server.received()[0];
    assert_eq!(got.path, "/v1/messages");
    assert_eq!(got.header("x-api-key"), Some("sk-ant"));
    assert_eq!(got.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(got.header("authorization"), None);

    // Gemini: the key from the fallback variable, `models/` not doubled.
    let m = from_spec(
        "gemini:models/gemini-test",
        &[
            ("GOOGLE_API_KEY", "g-key"),
            ("GEMINI_BASE_URL", "http://127.0.0.1:9/v1beta"),
        ],
    )
    .unwrap();
    assert_eq!(m.model_id(), "gemini-test");
    assert!(format!("{m:?}").contains("Sensitive"), "{m:?}");
    assert!(!format!("{m:?}").contains("g-key"), "{m:?}");
}
