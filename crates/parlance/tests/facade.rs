//! The facade as a library user meets it: one dependency, `use parlance::...`.

#[test]
fn local_needs_its_feature_and_unknown_providers_are_named() {
    // `cargo test --workspace` builds the facade with `local` (the Python
    // and npm packages turn it on): the refusal is for builds without it.
    if !cfg!(feature = "local") {
        let Err(e) = parlance::model("local") else {
            panic!("local without its feature")
        };
        assert_eq!(
            e.to_string(),
            "model \"local\": the embedded model is built by parlance-local (the `local` feature of parlance-ai)"
        );
    }
    let Err(e) = parlance::model("acme:m1") else {
        panic!("an unknown provider")
    };
    assert!(
        e.to_string().starts_with("unknown provider \"acme\""),
        "{e}"
    );
}

#[test]
fn a_model_with_settings_of_its_own() {
    let m = parlance::Provider::ANTHROPIC
        .model("claude-sonnet-4-5")
        .api_key("sk-ant-test")
        .build()
        .unwrap();
    use parlance::Model;
    assert_eq!(m.provider(), "anthropic");
    assert_eq!(m.model_id(), "claude-sonnet-4-5");
}

/// docs/agent.md "Model fallback", with keys of the test's own, then an
/// agent over a fallback whose first model is overloaded.
#[tokio::test]
async fn a_fallback_through_the_facade() {
    use parlance::fallback::FallbackOn;
    use parlance::testing::FunctionModel;
    use parlance::{Agent, Fallback, IntoModel, Message, Model, ModelError};

    let anthropic = parlance::Provider::ANTHROPIC
        .model("claude-sonnet-4-5")
        .api_key("sk-ant-test")
        .build()
        .unwrap();
    let openai = parlance::Provider::OPENAI
        .model("gpt-4o")
        .api_key("sk-test")
        .build()
        .unwrap();
    let model = Fallback::new([anthropic.into_model(), openai.into_model()])
        .unwrap()
        .on(FallbackOn::kinds(["rate_limited", "overloaded", "server", "timeout"]).unwrap());
    assert_eq!(
        model.model_id(),
        "anthropic:claude-sonnet-4-5,openai:gpt-4o"
    );
    Agent::builder(model).build().unwrap();

    let busy = FunctionModel::new(|_| {
        Err(ModelError::Overloaded {
            message: "busy".into(),
            retry_after: None,
        })
    })
    .named("anthropic", "claude-sonnet-4-5");
    let spare = FunctionModel::new(|_| Ok(Message::assistant("hello"))).named("openai", "gpt-4o");
    let agent = Agent::builder(Fallback::new([busy.into_model(), spare.into_model()]).unwrap())
        .build()
        .unwrap();
    let r = agent.run("hi").await.into_result().unwrap();
    assert_eq!(r.text(), "hello");
    let answer = r.messages.last().unwrap();
    assert_eq!(answer.provider.as_deref(), Some("openai"));
    assert_eq!(
        answer.metadata.as_ref().unwrap()["parlance_fallback"][0]["reason"],
        "overloaded"
    );
}
