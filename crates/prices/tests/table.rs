//! Reading price tables: the built-in one, a user's, and bad ones.

use parlance_format::Usage;
use parlance_prices::{PriceError, PriceTable};

fn usage(input: u64, cached: u64, written: Option<u64>, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cached_tokens: cached,
        cache_write_tokens: written,
        reasoning_tokens: None,
    }
}

fn err(text: &str) -> PriceError {
    PriceTable::from_json_str(text, "my-prices.json").unwrap_err()
}

/// The built-in table is read in outline, each provider's models on its
/// first lookup and each pattern on its first use: read whole, as a
/// user's file is (every pattern compiled), it is valid, and both find
/// the same entry, price and window for every model id of every provider
/// (and for ids no rule matches).
#[test]
fn the_builtin_table_read_in_outline_is_the_table_read_whole() {
    let text = parlance_prices::BUILTIN_JSON;
    let whole = PriceTable::from_json_str(text, "prices.json").unwrap();
    let outline = PriceTable::read_builtin();
    assert_eq!(outline.origin(), whole.origin());
    let doc: serde_json::Value = serde_json::from_str(text).unwrap();
    let usage = Usage {
        input_tokens: 1_000_000,
        output_tokens: 1_000,
        cached_tokens: 10_000,
        cache_write_tokens: Some(100),
        reasoning_tokens: None,
    };
    let mut checked = 0;
    for p in doc["providers"].as_array().unwrap() {
        let provider = p["id"].as_str().unwrap();
        let ids = p["models"].as_array().unwrap().iter();
        for model in ids
            .map(|m| m["id"].as_str().unwrap())
            .chain(["no-such-model-x"])
        {
            let (a, b) = (whole.find(provider, model), outline.find(provider, model));
            assert_eq!(
                a.map(|f| (f.provider, f.model, f.context_window)),
                b.map(|f| (f.provider, f.model, f.context_window)),
                "{provider}:{model}"
            );
            assert_eq!(
                whole.cost(provider, model, &usage),
                outline.cost(provider, model, &usage),
                "{provider}:{model}"
            );
            checked += 1;
        }
    }
    assert!(checked > 1_000, "{checked}");
}

#[test]
fn the_builtin_table_parses_and_names_its_origin() {
    let t = PriceTable::builtin();
    let o = t.origin();
    assert_eq!(o.package.as_deref(), Some("genai-prices"));
    assert_eq!(o.license.as_deref(), Some("MIT"));
    assert!(o.version.is_some() && o.refreshed.is_some());
    for (provider, model) in [
        ("anthropic", "claude-sonnet-4-5"),
        ("openai", "gpt-4o-mini"),
        ("openai-responses", "gpt-5"),
        ("gemini", "gemini-2.5-flash"),
        ("google", "gemini-2.5-pro"),
        ("mistral", "mistral-large-latest"),
        ("deepseek", "deepseek-chat"),
        ("xai", "grok-4"),
        ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ] {
        assert!(t.find(provider, model).is_some(), "{provider}:{model}");
    }
}

#[test]
fn unknown_models_and_providers_have_no_cost() {
    let t = PriceTable::builtin();
    let u = usage(10, 0, None, 10);
    assert_eq!(t.cost("anthropic", "no-such-model", &u), None);
    assert_eq!(t.cost("ollama", "llama3.2", &u), None);
    assert_eq!(t.cost("vllm", "gpt-4o", &u), None);
}

#[test]
fn tiers_apply_past_their_start_to_the_whole_call() {
    let t = PriceTable::from_json_str(
        r#"{"providers": [{"id": "p", "models": [{"id": "m",
            "input": {"base": "1", "tiers": [{"start": 100, "price": "2"}]},
            "output": {"base": "10", "tiers": [{"start": 100, "price": "20"}]}}]}]}"#,
        "t",
    )
    .unwrap();
    assert_eq!(
        t.cost("p", "m", &usage(100, 0, None, 1)),
        Some((100.0 + 10.0) / 1e6)
    );
    assert_eq!(
        t.cost("p", "m", &usage(101, 0, None, 1)),
        Some((202.0 + 20.0) / 1e6)
    );
}

#[test]
fn a_missing_cache_price_is_the_input_price_and_a_missing_output_price_is_no_cost() {
    let t = PriceTable::from_json_str(
        r#"{"providers": [{"id": "p", "models": [
            {"id": "a", "input": "2", "output": "4"},
            {"id": "b", "input": "2"}]}]}"#,
        "t",
    )
    .unwrap();
    assert_eq!(
        t.cost("p", "a", &usage(10, 4, Some(3), 1)),
        Some((20.0 + 4.0) / 1e6)
    );
    assert_eq!(t.cost("p", "b", &usage(10, 0, None, 1)), None);
    assert_eq!(t.cost("p", "b", &usage(10, 0, None, 0)), Some(20.0 / 1e6));
}

#[test]
fn a_users_table_comes_first_and_the_builtin_one_after() {
    let mine = PriceTable::from_json_str(
        r#"{"providers": [{"id": "anthropic", "models": [
            {"id": "negotiated", "match": {"starts_with": "claude-sonnet-4-5"}, "input": 1, "output": 0.5}]}]}"#,
        "mine",
    )
    .unwrap()
    .then(PriceTable::builtin().clone());
    let u = usage(1_000_000, 0, None, 1_000_000);
    assert_eq!(mine.cost("anthropic", "claude-sonnet-4-5", &u), Some(1.5));
    assert_eq!(
        mine.cost("anthropic", "claude-opus-4-1", &u),
        PriceTable::builtin().cost("anthropic", "claude-opus-4-1", &u)
    );
    assert!(mine.cost("anthropic", "claude-opus-4-1", &u).is_some());
}

#[test]
fn bad_tables_name_the_file_and_the_json_path() {
    let e = err("{");
    assert_eq!(e.file, "my-prices.json");
    assert!(e.message.contains("not JSON"), "{e}");
    let e = err(r#"{"providers": [{"id": "p", "models": [{"id": "m", "input": "cheap"}]}]}"#);
    assert_eq!(e.path, "$.providers[0].models[0].input");
    assert_eq!(
        e.to_string(),
        "price table my-prices.json: $.providers[0].models[0].input: \"cheap\" is not a price (a non-negative decimal number)"
    );
    let e = err(r#"{"providers": [{"id": "p", "models": [{"id": "m", "output": -1}]}]}"#);
    assert_eq!(e.path, "$.providers[0].models[0].output");
    let e = err(r#"{"providers": [{"id": "p", "models": [{"id": "m", "inptu": "1"}]}]}"#);
    assert_eq!(e.path, "$.providers[0].models[0].inptu");
    let e =
        err(r#"{"providers": [{"id": "p", "models": [{"id": "m", "match": {"regex": "("}}]}]}"#);
    assert_eq!(e.path, "$.providers[0].models[0].match.regex");
    let e = err(r#"{"providers": [{"id": "p", "models": [{"id": "m", "match": {}}]}]}"#);
    assert_eq!(e.path, "$.providers[0].models[0].match");
    let e = err(
        r#"{"providers": [{"id": "p", "models": [{"id": "m", "input": {"base": "1", "tiers": [{"start": "x", "price": "2"}]}}]}]}"#,
    );
    assert_eq!(e.path, "$.providers[0].models[0].input.tiers[0].start");
    let e = err(r#"{"unit": "EUR", "providers": []}"#);
    assert_eq!(e.path, "$.unit");
    let e = err(r#"{}"#);
    assert_eq!(e.path, "$.providers");
}

#[test]
fn a_table_file_that_is_missing_is_an_error_naming_it() {
    let e = PriceTable::from_file("/nonexistent/prices.json").unwrap_err();
    assert_eq!(e.file, "/nonexistent/prices.json");
    assert!(e.message.contains("cannot read"), "{e}");
}

#[test]
fn context_windows_come_from_the_table_and_a_users_table_can_set_one() {
    let builtin = PriceTable::builtin();
    assert_eq!(
        builtin.context_window("openai", "gpt-4o-mini"),
        Some(128_000)
    );
    // A message's provider spelling reaches the same entry.
    assert_eq!(
        builtin.context_window("openai-responses", "gpt-4o-mini"),
        Some(128_000)
    );
    assert_eq!(builtin.context_window("acme", "m1"), None);

    // A user's entry that only prices a model keeps the built-in window;
    // one that sets a window wins.
    let mine = PriceTable::from_json_str(
        r#"{"providers": [{"id": "openai", "models": [
            {"id": "gpt-4o-mini", "input": "1", "output": "2"},
            {"id": "gpt-4o", "input": "1", "output": "2", "context_window": 1000}]}]}"#,
        "mine.json",
    )
    .unwrap()
    .then(builtin.clone());
    assert_eq!(mine.context_window("openai", "gpt-4o-mini"), Some(128_000));
    assert_eq!(mine.context_window("openai", "gpt-4o"), Some(1000));
}

#[test]
fn a_context_window_that_is_not_a_positive_count_is_refused_with_its_path() {
    for bad in ["0", "-5", "\"big\"", "1.5"] {
        let text = format!(
            r#"{{"providers": [{{"id": "acme", "models": [{{"id": "m1", "input": "1", "context_window": {bad}}}]}}]}}"#
        );
        let e = PriceTable::from_json_str(&text, "mine.json").unwrap_err();
        assert_eq!(e.path, "$.providers[0].models[0].context_window", "{bad}");
        assert!(
            e.message.contains("positive whole number of tokens"),
            "{bad}: {e}"
        );
    }
}
