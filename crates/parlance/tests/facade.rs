//! The facade as a library user meets it: one dependency, `use parlance::...`.

#[test]
fn local_needs_its_feature_and_unknown_providers_are_named() {
    let Err(e) = parlance::model("local") else {
        panic!("local without its feature")
    };
    assert_eq!(
        e.to_string(),
        "model \"local\": the embedded model is built by parlance-local (the `local` feature of parlance-ai)"
    );
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
