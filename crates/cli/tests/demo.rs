//! The README's main command, as a new user runs it: `parlance demo` with
//! the embedded defaults (the local model from the cache, a SQLite file).

use std::process::Command;

#[test]
fn the_demo_calls_a_real_tool_with_a_local_model() {
    let model = parlance_local::default_model_path();
    if !model.exists() {
        assert!(
            std::env::var("PARLANCE_REQUIRE_MODEL").is_err(),
            "the default model is required but missing"
        );
        eprintln!("no local model (run `parlance model pull`): skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("parlance-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(["demo", "Where is my order A-1002?"])
        .current_dir(&dir)
        .env_remove("PARLANCE_STORE_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |prefix: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in:\n{stdout}"))
            .to_string()
    };
    assert!(
        line("call ").contains("lookup_order {\"order_id\":\"A-"),
        "{stdout}"
    );
    assert!(
        line("result ")
            .starts_with("result  ok lookup_order (arguments valid against the tool's schema)"),
        "{stdout}"
    );
    assert!(line("answer ").len() > "answer  ".len(), "{stdout}");
    assert!(line("thread ").contains("./parlance.db"));
    assert!(
        dir.join("parlance.db").exists(),
        "the thread went to the embedded SQLite store"
    );
    let listed = Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(["threads", "list"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("parlance demo"));
}

#[test]
fn model_pull_from_a_path_checks_it_is_gguf() {
    let dir = std::env::temp_dir().join(format!("parlance-pull-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fake = dir.join("fake.gguf");
    std::fs::write(&fake, b"GGUF\x03\x00tiny").unwrap();
    let bad = dir.join("bad.gguf");
    std::fs::write(&bad, b"not a model").unwrap();
    let cache = dir.join("cache");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_parlance"))
            .args(args)
            .env("PARLANCE_MODELS", &cache)
            .output()
            .unwrap()
    };
    let ok = run(&["model", "pull", "--path", fake.to_str().unwrap()]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(cache.join("fake.gguf").exists());
    let listed = run(&["model", "list"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("fake.gguf"));
    let refused = run(&["model", "pull", "--path", bad.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is not a GGUF model file"));
}
