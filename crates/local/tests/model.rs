//! The real default model (SmolLM2-135M-Instruct, fetched by `.ci/run` with
//! `parlance model pull`), run in-process.

use std::sync::{Arc, OnceLock};

use parlance_agent::{Agent, RunInput, Tool, ToolContext, ToolError};
use parlance_format::{Block, Message, RunStatus, ToolStatus};
use parlance_local::{LocalError, LocalModel, default_model_path};
use parlance_model::{Model, ModelRequest, StreamEvent};
use serde_json::{Value, json};

fn model() -> Option<LocalModel> {
    static MODEL: OnceLock<Option<LocalModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = std::env::var("PARLANCE_TEST_MODEL")
                .map(Into::into)
                .unwrap_or_else(|_| default_model_path());
            if !path.exists() {
                assert!(
                    std::env::var("PARLANCE_REQUIRE_MODEL").is_err(),
                    "PARLANCE_REQUIRE_MODEL is set but {} is missing (run `parlance model pull`)",
                    path.display()
                );
                eprintln!(
                    "no local model at {}: skipped (run `parlance model pull`)",
                    path.display()
                );
                return None;
            }
            Some(LocalModel::load(&path).expect("the default model loads"))
        })
        .clone()
}

fn lookup() -> Tool {
    Tool::new("lookup_order", "Look up an order by its id, like A-1001.", |a: Value, _c: ToolContext| async move {
        Ok::<_, ToolError>(json!({"order_id": a["order_id"], "status": "shipped", "eta": "2026-12-02"}))
    })
    .with_schema(json!({"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^A-[0-9]{4}$"}},
                        "required": ["order_id"], "additionalProperties": false}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_with_a_tool_gives_a_schema_valid_call_that_runs() {
    let Some(model) = model() else { return };
    let agent = Agent::builder(Arc::new(model))
        .instructions("You help customers with their orders.")
        .tool(lookup())
        .build()
        .unwrap();
    let r = agent.run(RunInput::text("Where is my order A-1001?")).await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let call = r.messages[1]
        .tool_calls()
        .next()
        .expect("the model called the tool");
    assert_eq!(call.name, "lookup_order");
    let id = call.arguments["order_id"].as_str().unwrap();
    assert!(
        id.len() == 6 && id.starts_with("A-"),
        "the grammar kept the pattern: {id}"
    );
    let result = r.messages[2].content[0].as_tool_result().unwrap();
    assert_eq!(
        result.status,
        ToolStatus::Ok,
        "the engine validated and ran it"
    );
    assert!(
        r.output.as_str().is_some_and(|s| !s.is_empty()),
        "an answer after the result"
    );
    let usage = r.usage;
    assert!(usage.input_tokens > 0 && usage.output_tokens > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_schema_gives_a_valid_value() {
    let Some(model) = model() else { return };
    let schema = json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 1}, "country": {"type": "string"}},
                        "required": ["city", "country"], "additionalProperties": false});
    let agent = Agent::builder(Arc::new(model))
        .output_schema("place", schema)
        .build()
        .unwrap();
    let r = agent
        .run(RunInput::text("What is the capital of France?"))
        .await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert!(
        r.output["city"].as_str().is_some_and(|c| !c.is_empty()),
        "{}",
        r.output
    );
    assert!(r.output["country"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_equals_not_streaming() {
    let Some(model) = model() else { return };
    let req = ModelRequest {
        messages: vec![Message::user("Name three colours.")],
        ..Default::default()
    };
    let mut req = req;
    req.options.max_tokens = Some(40);
    // Sampled: the same seed gives the same answer.
    req.options.seed = Some(3);
    let plain = model.generate(&req).await.unwrap();
    let mut stream = model.stream(&req).await.unwrap();
    let mut text = String::new();
    let mut done = None;
    use futures::StreamExt;
    while let Some(e) = stream.next().await {
        match e.unwrap() {
            StreamEvent::TextDelta { text: t, .. } => text.push_str(&t),
            StreamEvent::Done(m) => done = Some(m),
            _ => {}
        }
    }
    let mut done = done.unwrap();
    let mut plain = plain;
    // Equal but for how long each took.
    for m in [&mut done, &mut plain] {
        let run = &mut m.metadata.as_mut().unwrap()["parlance_local"];
        assert_eq!(run["seed"], 3);
        assert!(run["decode_ms"].as_f64().unwrap() > 0.0);
        run["prompt_ms"] = 0.into();
        run["decode_ms"] = 0.into();
    }
    assert_eq!(done, plain);
    assert_eq!(text.trim(), plain.text());
    assert!(matches!(&plain.content[0], Block::Text(t) if !t.text.is_empty()));
}

#[test]
fn missing_and_corrupt_files_are_clear_errors() {
    let dir = std::env::temp_dir().join(format!("parlance-local-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("nope.gguf");
    let e = LocalModel::load(&missing).unwrap_err();
    assert_eq!(e, LocalError::Missing(missing.clone()));
    assert!(e.to_string().contains("run `parlance model pull`"));
    let junk = dir.join("junk.gguf");
    std::fs::write(&junk, b"this is not a model").unwrap();
    assert_eq!(
        LocalModel::load(&junk).unwrap_err(),
        LocalError::NotGguf(junk)
    );
    let truncated = dir.join("truncated.gguf");
    std::fs::write(&truncated, b"GGUF\x03\x00\x00\x00garbage").unwrap();
    assert!(matches!(
        LocalModel::load(&truncated),
        Err(LocalError::Load { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_sequence_ends_the_answer_before_it() {
    let Some(model) = model() else { return };
    let mut req = ModelRequest {
        messages: vec![Message::user("Tell me about the sea.")],
        ..Default::default()
    };
    req.options.max_tokens = Some(60);
    req.options.seed = Some(5);
    req.options.stop = vec![".".into()];
    let plain = model.generate(&req).await.unwrap();
    assert_eq!(
        plain.finish_reason_raw.as_deref(),
        Some("stop_sequence"),
        "{plain:?}"
    );
    assert_eq!(
        plain.finish_reason,
        Some(parlance_format::FinishReason::Stop)
    );
    let text = plain.text();
    assert!(!text.is_empty() && !text.contains('.'), "{text}");
    // A stream never shows the stop sequence either.
    let mut stream = model.stream(&req).await.unwrap();
    let mut streamed = String::new();
    use futures::StreamExt;
    while let Some(e) = stream.next().await {
        if let StreamEvent::TextDelta { text: t, .. } = e.unwrap() {
            streamed.push_str(&t);
        }
    }
    assert_eq!(streamed.trim(), text);
}
