//! The test models through the facade, in an agent's runs: a cassette
//! recorded from a real provider adapter (OpenAI Chat Completions, pointed
//! at a replay server on 127.0.0.1) replays offline with the same result;
//! the shared cassette under testdata/cassettes replays here as it does in
//! Python and TypeScript; TestModel calls a tool with arguments its schema
//! accepts; a model that fails fails the run with its message.

use std::path::PathBuf;

use parlance::testing::{FunctionModel, Recorder, Replay, TestModel};
use parlance::{Agent, Message, ModelError, RunStatus, Tool};
use parlance_testkit::replay::{ReplayServer, Reply};
use serde_json::{Value, json};

/// The cassette every language replays (see testdata/cassettes/README.md).
fn shared_cassette() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/cassettes/weather.jsonl"
    ))
}

/// The agent of the shared cassette, as each language builds it.
fn weather_agent(model: impl parlance::IntoModel) -> Agent {
    let weather = Tool::new(
        "weather",
        "Today's weather in a city.",
        |args: Value| async move {
            Ok(format!(
                "Sunny and 21 °C in {}",
                args["city"].as_str().unwrap_or("?")
            ))
        },
    )
    .with_schema(
        json!({"type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"], "additionalProperties": false}),
    );
    Agent::builder(model)
        .instructions("You answer questions about the weather.")
        .tool(weather)
        .build()
        .unwrap()
}

fn chat(message: Value, finish: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}}),
    )
}

/// A run recorded from the OpenAI adapter against a server on 127.0.0.1.
async fn record(path: &std::path::Path) -> parlance::Response {
    let server = ReplayServer::start(vec![
        chat(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]}),
            "tool_calls",
        ),
        chat(
            json!({"role": "assistant", "content": "It is sunny and 21 °C in Paris."}),
            "stop",
        ),
    ])
    .await;
    let real = parlance::Provider::named("openai")
        .unwrap()
        .model("gpt-4o-mini")
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .build()
        .unwrap();
    let recorder = Recorder::new(real, path).unwrap();
    let r = weather_agent(recorder)
        .run("What's the weather in Paris?")
        .await;
    assert_eq!(server.received().len(), 2);
    r
}

/// Every message of a run, without what differs between two runs of it.
fn transcript(r: &parlance::Response) -> Vec<Message> {
    r.messages.clone()
}

#[tokio::test]
async fn a_run_recorded_from_a_provider_replays_offline_with_the_same_result() {
    let dir = std::env::temp_dir().join(format!("parlance-facade-testing-{}", std::process::id()));
    let path = dir.join("weather.jsonl");
    let recorded = record(&path).await;
    assert_eq!(
        recorded.status,
        RunStatus::Completed,
        "{:?}",
        recorded.error
    );
    assert_eq!(recorded.text(), "It is sunny and 21 °C in Paris.");

    let replayed = weather_agent(Replay::open(&path).unwrap())
        .run("What's the weather in Paris?")
        .await;
    assert_eq!(
        replayed.status,
        RunStatus::Completed,
        "{:?}",
        replayed.error
    );
    assert_eq!(replayed.output, recorded.output);
    assert_eq!(transcript(&replayed), transcript(&recorded));
    assert_eq!(replayed.usage, recorded.usage);

    // Streamed, from the same cassette: the text arrives in pieces.
    use futures::StreamExt;
    let mut events = weather_agent(Replay::open(&path).unwrap())
        .run("What's the weather in Paris?")
        .stream();
    let (mut deltas, mut last) = (Vec::new(), None);
    while let Some(e) = events.next().await {
        match e {
            parlance::RunEvent::TextDelta(t) => deltas.push(t),
            parlance::RunEvent::RunCompleted(r) => last = Some(r),
            _ => {}
        }
    }
    assert_eq!(deltas.concat(), "It is sunny and 21 °C in Paris.");
    assert!(deltas.len() > 1);
    assert_eq!(last.unwrap().output, recorded.output);

    // The committed cassette is this recording (re-record it with
    // PARLANCE_RECORD_CASSETTES=1 when the format changes on purpose).
    let shared = shared_cassette();
    if std::env::var_os("PARLANCE_RECORD_CASSETTES").is_some() {
        std::fs::copy(&path, &shared).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        std::fs::read_to_string(&shared).unwrap(),
        "testdata/cassettes/weather.jsonl is not what the run records now"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn the_shared_cassette_replays_and_a_changed_agent_is_told_where() {
    let r = weather_agent(Replay::open(shared_cassette()).unwrap())
        .run("What's the weather in Paris?")
        .await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.text(), "It is sunny and 21 °C in Paris.");

    let r = weather_agent(Replay::open(shared_cassette()).unwrap())
        .run("What's the weather in Rome?")
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "model_error");
    assert!(
        e.message.contains("exchange 1 of 2: the request is not the recorded one: messages[1].content[0].text: recorded \"What's the weather in Paris?\", got \"What's the weather in Rome?\""),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn test_model_calls_the_tool_with_arguments_its_schema_accepts() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    let book = Tool::new("book", "Book a table.", move |args: Value| {
        log.lock().unwrap().push(args.clone());
        async move { Ok("booked") }
    })
    .with_schema(json!({"type": "object", "properties": {
        "name": {"type": "string", "minLength": 1},
        "guests": {"type": "integer", "minimum": 1, "maximum": 12},
        "date": {"type": "string", "format": "date"}},
        "required": ["name", "guests", "date"], "additionalProperties": false}));
    let model = TestModel::new();
    let agent = Agent::builder(model.clone()).tool(book).build().unwrap();
    let r = agent.run("Book for two").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.text(), r#"{"book":"booked"}"#);
    assert_eq!(
        *seen.lock().unwrap(),
        [json!({"name": "a", "guests": 1, "date": "2024-01-01"})]
    );
    assert_eq!(model.received().len(), 2);
}

#[tokio::test]
async fn a_model_that_fails_fails_the_run_with_its_message() {
    let model = FunctionModel::new(|_| {
        Err(ModelError::Unsupported {
            message: "this model only speaks French".into(),
        })
    });
    let r = Agent::builder(model).build().unwrap().run("Hello").await;
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "model_error");
    assert_eq!(
        e.message,
        "unsupported by this provider: this model only speaks French"
    );
}

#[tokio::test]
async fn the_testing_example_runs_offline() {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap().join("examples");
    let path = dir.join(format!("testing{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is not built: run `cargo build -p parlance-ai --examples` or `cargo test -p parlance-ai`",
        path.display()
    );
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(path)
            .env_remove("PARLANCE_MODEL")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], r#"TestModel: {"weather":"Sunny in a"}"#);
    assert_eq!(lines[1], "FunctionModel: offered: weather");
    assert_eq!(lines[2], "Replay: It is sunny in Paris.");
    assert!(
        lines[3].starts_with("Changed: invalid request: cassette ")
            && lines[3].contains("messages[0].content[0].text: recorded \"What's the weather in Paris?\", got \"And in Rome?\""),
        "{}",
        lines[3]
    );
}
