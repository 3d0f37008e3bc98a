//! The embedded model in a conversation, as a user meets it: the real
//! `parlance` binary, the real default model (SmolLM2-135M-Instruct), a
//! SQLite file, and Ollama and LM Studio folders made in a temporary home.
//!
//! The model runs one test at a time (two cores: two generations at once
//! would each crawl).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use serde_json::{Value, json};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Parlance's model cache, as the binary sees it (`None`: no model, skip).
fn cache() -> Option<PathBuf> {
    let out = Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(["model", "list", "--json"])
        .output()
        .unwrap();
    let models: Value = serde_json::from_slice(&out.stdout).unwrap();
    let default = models
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "SmolLM2-135M-Instruct.Q4_1" && m["source"] == "parlance");
    match default {
        Some(m) => Some(PathBuf::from(m["path"].as_str().unwrap())),
        None => {
            assert!(
                std::env::var("PARLANCE_REQUIRE_MODEL").is_err(),
                "PARLANCE_REQUIRE_MODEL is set but the default model is missing (run `parlance model pull`)"
            );
            eprintln!("no local model (run `parlance model pull`): skipped");
            None
        }
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "parlance-local-{name}-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the binary in `dir` with a home of its own there (so no real
/// Ollama or LM Studio folder is read), the model cache at `model`'s
/// folder, and `stdin` as input.
fn parlance(dir: &Path, model: &Path, args: &[&str], env: &[(&str, &Path)], stdin: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parlance"));
    cmd.args(args)
        .current_dir(dir)
        .env("HOME", dir.join("home"))
        .env("PARLANCE_MODELS", model.parent().unwrap())
        .env("OLLAMA_MODELS", dir.join("no-ollama"))
        .env_remove("PARLANCE_STORE_URL")
        .env_remove("PARLANCE_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// The stored messages of the thread `parlance chat` announced on stderr.
fn stored(dir: &Path, model: &Path, stderr: &str, store: &str) -> Vec<Value> {
    let id = stderr
        .split_whitespace()
        .find(|w| w.starts_with("thr_"))
        .unwrap_or_else(|| panic!("no thread id in {stderr}"));
    let out = parlance(
        dir,
        model,
        &["threads", "--store", store, "show", id, "--json"],
        &[],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"].clone())
        .collect()
}

fn answers(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect()
}

fn answer_text(m: &Value) -> String {
    m["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect()
}

/// The longest run of one word n-gram repeated back to back, over all n
/// up to 12: "I'm so sorry. I'm so sorry. I'm so sorry." is 3.
fn worst_repetition(text: &str) -> (usize, String) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut worst = (1, String::new());
    for n in 1..=12 {
        for start in 0..words.len() {
            let mut reps = 1;
            while start + (reps + 1) * n <= words.len()
                && words[start..start + n] == words[start + reps * n..start + (reps + 1) * n]
            {
                reps += 1;
            }
            // One word twice ("very very") is language, not a loop.
            if reps > worst.0 && reps * n >= 4 {
                worst = (reps, words[start..start + n].join(" "));
            }
        }
    }
    worst
}

const CHAT: &str = "Hello, who are you?\nWhat did I just ask?\nThanks. Tell me a fun fact.\n";

#[test]
fn a_three_turn_chat_with_the_default_sampling_does_not_loop() {
    let Some(model) = cache() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("chat");
    let out = parlance(
        &dir,
        &model,
        &["chat", "--model", "local", "--seed", "42", "--verbose"],
        &[],
        CHAT,
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning:"), "{stderr}");
    let messages = stored(&dir, &model, &stderr, "./parlance.db");
    let answers = answers(&messages);
    assert_eq!(answers.len(), 3, "{messages:?}");
    let mut all = String::new();
    for a in &answers {
        assert_eq!(
            a["finish_reason"], "stop",
            "each answer ends by itself: {a}"
        );
        assert!(answer_text(a).len() > 5, "{a}");
        // The seed is the one asked for, and reported.
        assert_eq!(a["metadata"]["parlance_local"]["seed"], 42);
        all.push_str(&answer_text(a));
        all.push(' ');
    }
    let (reps, ngram) = worst_repetition(&all);
    assert!(
        reps < 3,
        "{ngram:?} repeated {reps} times in a row in:\n{all}"
    );
    // --verbose: one line per model call with prefill and decode speed.
    let speeds: Vec<&str> = stderr.lines().filter(|l| l.contains("tokens/s")).collect();
    assert_eq!(speeds.len(), 3, "{stderr}");
    assert!(
        speeds[0].contains("generated in") && speeds[0].contains("seed 42"),
        "{stderr}"
    );
}

#[test]
fn greedy_decoding_loops_and_the_guard_stops_it_with_a_warning() {
    let Some(model) = cache() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("greedy");
    // Greedy and no repeat penalty: what `parlance chat --model local`
    // did before sampling, which looped on the second question.
    std::fs::write(
        dir.join("greedy.toml"),
        "[agents.chat]\nmodel = \"local\"\ntemperature = 0\nextra.local = { repeat_penalty = 1.0, num_thread = 1 }\n",
    )
    .unwrap();
    let out = parlance(
        &dir,
        &model,
        &["chat", "--config", "greedy.toml"],
        &[],
        CHAT,
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warning = stderr
        .lines()
        .find(|l| l.contains("warning: the model was caught in a loop and stopped"))
        .unwrap_or_else(|| panic!("no loop warning in:\n{stderr}"));
    assert!(warning.contains("I'm so sorry"), "{warning}");
    let messages = stored(&dir, &model, &stderr, "./parlance.db");
    let looped: Vec<&Value> = answers(&messages)
        .into_iter()
        .filter(|a| a["finish_reason_raw"] == "loop")
        .collect();
    assert!(!looped.is_empty(), "{messages:?}");
    for a in looped {
        assert_eq!(a["finish_reason"], "length");
        let tokens = a["usage"]["output_tokens"].as_u64().unwrap();
        assert!(
            tokens < 100,
            "stopped long before the 512-token budget: {tokens}"
        );
        assert!(
            a["metadata"]["parlance_warnings"][0]
                .as_str()
                .unwrap()
                .contains("loop")
        );
        let (reps, ngram) = worst_repetition(&answer_text(a));
        assert!(
            reps < 3,
            "the repeats are left out of the answer: {ngram:?} x{reps}"
        );
        assert!(
            a["metadata"]["parlance_local"].get("seed").is_none(),
            "greedy has no seed"
        );
    }
}

fn seed_thread(db: &Path, history: &[parlance_format::Message]) -> String {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = parlance_store::Store::open(&format!("sqlite://{}", db.display()))
            .await
            .unwrap();
        let thread = store.create_thread(None, json!({})).await.unwrap();
        let run = store.begin_run(&thread.id, &json!({})).await.unwrap();
        store.append(&run, history).await.unwrap();
        let done = parlance_format::Response {
            id: Some(run.id.clone()),
            thread_id: Some(thread.id.clone()),
            status: parlance_format::RunStatus::Completed,
            messages: Vec::new(),
            output: Value::Null,
            usage: Default::default(),
            cost: None,
            finish_reason: None,
            pending: Vec::new(),
            error: None,
        };
        store.finish_run(&run, &done).await.unwrap();
        thread.id
    })
}

#[test]
fn a_history_longer_than_the_context_runs_and_the_thread_keeps_it_all() {
    use parlance_format::{Block, Message, Role, ToolResult, ToolStatus};
    let Some(model) = cache() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("long");
    let db = dir.join("long.db");
    // About 1,500 tokens of history, a tool call among it, for a 512-token context.
    let mut history = Vec::new();
    for i in 0..24 {
        history.push(Message::user(format!(
            "Question {i}: tell me something about the number {i}, and about the weather in a city you like."
        )));
        if i == 3 {
            history.push(Message::new(
                Role::Assistant,
                vec![Block::tool_call("call_1", "lookup", json!({"n": i}))],
            ));
            history.push(Message::new(
                Role::Tool,
                vec![Block::tool_result(ToolResult::text(
                    "call_1",
                    ToolStatus::Ok,
                    "a number",
                ))],
            ));
        }
        history.push(Message::assistant(format!(
            "The number {i} is a fine number, and the weather in Lisbon is usually mild and sunny."
        )));
    }
    let thread = seed_thread(&db, &history);
    std::fs::write(
        dir.join("small.toml"),
        format!(
            "[store]\nurl = \"sqlite://{}\"\n[agents.chat]\nmodel = \"local\"\ninstructions = \"You are brief.\"\nmax_tokens = 48\nseed = 1\nextra.local = {{ num_ctx = 512 }}\n",
            db.display()
        ),
    )
    .unwrap();
    let out = parlance(
        &dir,
        &model,
        &["chat", "--config", "small.toml", "--thread", &thread],
        &[],
        "And what did my first question ask?\n",
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!text(&out.stdout).trim().is_empty(), "an answer");
    let warning = stderr
        .lines()
        .find(|l| {
            l.contains("warning: the conversation is longer than the model's 512-token context")
        })
        .unwrap_or_else(|| panic!("no context warning in:\n{stderr}"));
    assert!(
        warning.contains("oldest messages") && warning.contains("still in the conversation"),
        "{warning}"
    );
    let messages = stored(&dir, &model, &stderr, &format!("sqlite://{}", db.display()));
    assert_eq!(
        messages.len(),
        history.len() + 2,
        "the thread keeps every message"
    );
    for (stored, ours) in messages.iter().zip(&history) {
        assert_eq!(stored, &serde_json::to_value(ours).unwrap());
    }
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "assistant");
    let prompt = last["usage"]["input_tokens"].as_u64().unwrap();
    assert!(prompt + 48 <= 512, "the prompt was fitted: {prompt} tokens");
}

/// An Ollama store as `ollama pull` lays it out, holding the default model
/// (a link to it: nothing is copied) with a `params` layer.
fn ollama_store(root: &Path, model: &Path) {
    let weights = "a".repeat(64);
    let params = "b".repeat(64);
    std::fs::create_dir_all(root.join("blobs")).unwrap();
    std::os::unix::fs::symlink(model, root.join(format!("blobs/sha256-{weights}"))).unwrap();
    std::fs::write(
        root.join(format!("blobs/sha256-{params}")),
        r#"{"seed": 7, "num_ctx": 1024, "stop": ["<|im_end|>"]}"#,
    )
    .unwrap();
    let manifest = root.join("manifests/registry.ollama.ai/library/smollm2/135m");
    std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
    std::fs::write(
        manifest,
        json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
            "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": format!("sha256:{}", "c".repeat(64)), "size": 10},
            "layers": [
                {"mediaType": "application/vnd.ollama.image.model", "digest": format!("sha256:{weights}"), "size": 98362432},
                {"mediaType": "application/vnd.ollama.image.params", "digest": format!("sha256:{params}"), "size": 52}
            ]
        })
        .to_string(),
    )
    .unwrap();
}

#[test]
fn models_in_ollama_and_lm_studio_folders_are_listed_and_run_in_place() {
    let Some(model) = cache() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("found");
    let ollama = dir.join("ollama");
    ollama_store(&ollama, &model);
    let lms = dir.join("home/.lmstudio/models/HuggingFaceTB/SmolLM2-135M-Instruct-GGUF");
    std::fs::create_dir_all(&lms).unwrap();
    std::os::unix::fs::symlink(&model, lms.join("smollm2-135m-instruct-q4_1.gguf")).unwrap();
    let env = [("OLLAMA_MODELS", ollama.as_path())];

    let listed = parlance(&dir, &model, &["model", "list"], &env, "");
    let stdout = text(&listed.stdout);
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} is not listed:\n{stdout}"))
            .to_string()
    };
    assert!(line("smollm2:135m ").contains("ollama"), "{stdout}");
    assert!(line("smollm2:135m ").contains(&format!("{}", ollama.join("blobs/sha256-").display())));
    assert!(
        line("HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/smollm2-135m-instruct-q4_1 ")
            .contains("lm-studio")
    );
    assert!(line("SmolLM2-135M-Instruct.Q4_1 ").contains("parlance"));

    let ran = parlance(
        &dir,
        &model,
        &[
            "run",
            "--model",
            "local:smollm2:135m",
            "--verbose",
            "Say hello in five words.",
        ],
        &env,
        "",
    );
    let stderr = text(&ran.stderr);
    assert!(ran.status.success(), "{stderr}");
    assert!(!text(&ran.stdout).trim().is_empty());
    // Named as Ollama names it, with its published parameters applied.
    let stats = stderr
        .lines()
        .find(|l| l.contains("tokens/s"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(stats.starts_with("[local smollm2:135m:"), "{stats}");
    assert!(
        stats.contains("seed 7"),
        "the model's params layer: {stats}"
    );

    // LM Studio's file by its file name, from a configuration.
    std::fs::write(
        dir.join("lms.toml"),
        "[agents.a]\nmodel = \"local:smollm2-135m-instruct-q4_1\"\nmax_tokens = 16\n",
    )
    .unwrap();
    let ran = parlance(
        &dir,
        &model,
        &["run", "--config", "lms.toml", "-v", "Hi!"],
        &env,
        "",
    );
    let stderr = text(&ran.stderr);
    assert!(ran.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "[local HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/smollm2-135m-instruct-q4_1:"
        ),
        "{stderr}"
    );
}

#[test]
fn unknown_and_ambiguous_names_are_clear_errors() {
    let Some(model) = cache() else { return };
    let dir = temp_dir("names");
    for repo in ["a/One-GGUF", "b/Two-GGUF"] {
        let d = dir.join("home/.lmstudio/models").join(repo);
        std::fs::create_dir_all(&d).unwrap();
        std::os::unix::fs::symlink(&model, d.join("same.gguf")).unwrap();
    }
    let out = parlance(
        &dir,
        &model,
        &["run", "--model", "local:nope", "hi"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(e.contains("no local model named \"nope\""), "{e}");
    assert!(e.contains("parlance model list"), "{e}");
    let out = parlance(
        &dir,
        &model,
        &["run", "--model", "local:same", "hi"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(
        e.contains(
            "\"same\" is ambiguous: a/One-GGUF/same (lm-studio), b/Two-GGUF/same (lm-studio)"
        ),
        "{e}"
    );
    let out = parlance(
        &dir,
        &model,
        &["run", "--model", "local:./missing.gguf", "hi"],
        &[],
        "",
    );
    assert!(text(&out.stderr).contains("model file not found: ./missing.gguf"));
    let out = parlance(
        &dir,
        &model,
        &[
            "run",
            "--model",
            "local",
            "--temperature",
            "0.5",
            "--seed",
            "x",
            "hi",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--seed"));
    std::fs::write(
        dir.join("bad.toml"),
        "[agents.a]\nmodel = \"local\"\nextra.local = { repeat_penality = 1.2 }\n",
    )
    .unwrap();
    let out = parlance(
        &dir,
        &model,
        &["run", "--config", "bad.toml", "hi"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("options.extra.local.repeat_penality: unknown option"),
        "{}",
        text(&out.stderr)
    );
}
