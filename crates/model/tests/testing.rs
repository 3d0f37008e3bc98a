//! The test models of `parlance_model::testing`, as a user's test meets
//! them: a cassette written to a real file and read back, a request that
//! differs refused with its first difference named, tool arguments made
//! from a schema that validate against it.

use std::path::PathBuf;

use futures::StreamExt;
use parlance_format::{Block, Message, Role, ToolResult, ToolSpec, ToolStatus};
use parlance_model::testing::{
    Cassette, FunctionModel, Recorder, Replay, ScriptedModel, TestModel, schema_data::value_for,
};
use parlance_model::{Assembler, Model, ModelError, ModelRequest, OutputSchema, StreamEvent};
use serde_json::{Value, json};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("parlance-testing-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("cassette.jsonl")
}

fn weather_spec() -> ToolSpec {
    ToolSpec::new(
        "weather",
        "Today's weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 2}},
            "required": ["city"], "additionalProperties": false}),
    )
}

fn ask(text: &str) -> ModelRequest {
    ModelRequest {
        messages: vec![Message::system("Be brief."), Message::user(text)],
        tools: vec![weather_spec()].into(),
        ..ModelRequest::default()
    }
}

async fn streamed(model: &dyn Model, request: &ModelRequest) -> (Vec<String>, Message) {
    let mut events = model.stream(request).await.unwrap();
    let mut deltas = Vec::new();
    let mut asm = Assembler::new();
    while let Some(e) = events.next().await {
        let e = e.unwrap();
        asm.push(&e);
        match e {
            StreamEvent::TextDelta { text, .. } => deltas.push(text),
            StreamEvent::Done(m) => {
                assert_eq!(asm.finish(), m.content, "the deltas make the message");
                return (deltas, m);
            }
            _ => {}
        }
    }
    panic!("the stream ended without Done");
}

#[tokio::test]
async fn a_recorded_cassette_replays_the_same_answers_offline() {
    let path = temp("replay");
    let first = ask("Weather in Paris?");
    let real = ScriptedModel::new([
        Message::new(
            Role::Assistant,
            vec![Block::tool_call("c1", "weather", json!({"city": "Paris"}))],
        ),
        Message::assistant("Sunny in Paris."),
    ]);
    let recorder = Recorder::new(real, &path).unwrap();
    let a1 = recorder.generate(&first).await.unwrap();
    let mut second = first.clone();
    second.messages.push(a1.clone());
    second.messages.push(Message::new(
        Role::Tool,
        vec![Block::ToolResult {
            tool_result: ToolResult::text("c1", ToolStatus::Ok, "Sunny"),
        }],
    ));
    // The second call streamed: recorded when its stream ended.
    let (_, a2) = streamed(&recorder, &second).await;

    let cassette = Cassette::read(&path).unwrap();
    assert_eq!(cassette.exchanges.len(), 2);
    assert!(cassette.exchanges[1].request.stream);
    assert_eq!(
        cassette.exchanges[0].request.model.as_deref(),
        Some("scripted")
    );
    // One canonical JSON object a line.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2);

    let replay = Replay::open(&path).unwrap();
    assert_eq!(replay.provider(), "scripted");
    assert_eq!(replay.generate(&first).await.unwrap(), a1);
    let (deltas, m) = streamed(&replay, &second).await;
    assert_eq!(m, a2);
    assert_eq!(deltas.concat(), "Sunny in Paris.");
    assert!(deltas.len() > 1, "the text comes in pieces: {deltas:?}");
    assert_eq!(replay.remaining(), 0);
    let past = replay.generate(&second).await.unwrap_err();
    assert!(
        past.to_string()
            .contains("request 3 has no recorded exchange (the cassette holds 2"),
        "{past}"
    );
}

#[tokio::test]
async fn a_request_that_is_not_the_recorded_one_is_refused_with_the_difference() {
    let path = temp("mismatch");
    let recorder = Recorder::new(ScriptedModel::new([Message::assistant("Hi!")]), &path).unwrap();
    recorder.generate(&ask("Weather in Paris?")).await.unwrap();

    let replay = Replay::open(&path).unwrap();
    let err = replay.generate(&ask("Weather in Rome?")).await.unwrap_err();
    let ModelError::InvalidRequest { message } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        message,
        &format!(
            "cassette {}, exchange 1 of 1: the request is not the recorded one: messages[1].content[0].text: recorded \"Weather in Paris?\", got \"Weather in Rome?\" (re-record the cassette if the change is meant)",
            path.display()
        )
    );
    // A tool's schema changed: named too.
    let replay = Replay::open(&path).unwrap();
    let mut changed = ask("Weather in Paris?");
    let mut spec = weather_spec();
    spec.description = Some("The weather.".into());
    changed.tools = vec![spec].into();
    let err = replay.generate(&changed).await.unwrap_err().to_string();
    assert!(
        err.contains(
            "tools[0].description: recorded \"Today's weather in a city.\", got \"The weather.\""
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_recorded_error_replays_as_that_error() {
    let path = temp("error");
    let real = ScriptedModel::new([]);
    real.push_error(ModelError::RateLimited {
        message: "slow down".into(),
        retry_after: None,
    });
    let recorder = Recorder::new(real, &path).unwrap();
    let e = recorder.generate(&ask("Hi")).await.unwrap_err();
    let replay = Replay::open(&path).unwrap();
    assert_eq!(replay.generate(&ask("Hi")).await.unwrap_err(), e);
}

#[test]
fn a_cassette_that_is_not_one_is_refused_with_its_line() {
    let path = temp("bad");
    std::fs::write(
        &path,
        "\n{\"request\": {\"messages\": []}, \"response\": {\"role\": \"assistant\", \"content\": [{\"type\": \"txt\"}]}}\n",
    )
    .unwrap();
    let err = Replay::open(&path).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "cassette {} line 2: response.content[0].type",
            path.display()
        )),
        "{err}"
    );
    let err = Replay::open(path.with_file_name("missing.jsonl"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing.jsonl: cannot be read"), "{err}");
}

#[tokio::test]
async fn test_model_calls_every_tool_with_arguments_valid_against_its_schema() {
    let orders = ToolSpec::new(
        "orders",
        "Find orders.",
        json!({"type": "object", "properties": {
            "customer": {"type": "string", "format": "email"},
            "status": {"enum": ["open", "shipped"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "since": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"type": "string", "minLength": 3}, "minItems": 2, "uniqueItems": true},
            "note": {"type": "string"}},
            "required": ["customer", "status", "limit", "since", "tags"],
            "additionalProperties": false}),
    );
    let model = TestModel::new();
    let mut request = ask("Find my orders");
    request.tools = vec![weather_spec(), orders.clone()].into();
    let answer = model.generate(&request).await.unwrap();
    let calls: Vec<_> = answer.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].name, "weather");
    assert_eq!(calls[1].name, "orders");
    for (call, spec) in calls.iter().zip([weather_spec(), orders]) {
        let validator = jsonschema::validator_for(&spec.input_schema).unwrap();
        assert!(
            validator.is_valid(&call.arguments),
            "{}: {}",
            spec.name,
            call.arguments
        );
    }
    assert_eq!(calls[1].arguments["tags"], json!(["aaa", "bbb"]));

    // After the tools ran: their results, as JSON.
    let mut next = request.clone();
    next.messages.push(answer.clone());
    next.messages.push(Message::new(
        Role::Tool,
        calls
            .iter()
            .map(|c| Block::ToolResult {
                tool_result: ToolResult {
                    name: Some(c.name.clone()),
                    ..ToolResult::text(c.id.clone(), ToolStatus::Ok, format!("{} ok", c.name))
                },
            })
            .collect(),
    ));
    let done = model.generate(&next).await.unwrap();
    assert_eq!(
        done.text(),
        r#"{"weather":"weather ok","orders":"orders ok"}"#
    );
    assert_eq!(model.received().len(), 2);

    // Only the tools named; a name not offered is an error naming both.
    let only = TestModel::new().call_tools(["orders"]);
    let a = only.generate(&request).await.unwrap();
    assert_eq!(
        a.tool_calls().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["orders"]
    );
    let err = TestModel::new()
        .call_tools(["nope"])
        .generate(&request)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"nope\", which the request does not offer (offered: weather, orders)"),
        "{err}"
    );
    // No tools: it says so.
    let hi = ModelRequest {
        messages: vec![Message::user("Hi")],
        ..ModelRequest::default()
    };
    let plain = TestModel::new().generate(&hi).await.unwrap();
    assert_eq!(plain.text(), "success (no tool calls)");
}

#[tokio::test]
async fn test_model_answers_a_value_of_the_output_schema() {
    let schema = json!({"type": "object", "properties": {
        "city": {"type": "string"}, "celsius": {"type": "number", "exclusiveMinimum": -90, "maximum": 60}},
        "required": ["city", "celsius"]});
    let mut request = ModelRequest {
        messages: vec![Message::user("Weather?")],
        ..ModelRequest::default()
    };
    request.options.output_schema = Some(OutputSchema::new("report", schema.clone()));
    let text = TestModel::new().generate(&request).await.unwrap().text();
    let value: Value = serde_json::from_str(&text).unwrap();
    assert!(
        jsonschema::validator_for(&schema).unwrap().is_valid(&value),
        "{value}"
    );
    let fixed = TestModel::new().output(json!({"city": "Oslo", "celsius": 3}));
    assert_eq!(
        fixed.generate(&request).await.unwrap().text(),
        r#"{"city":"Oslo","celsius":3}"#
    );
    // Streamed: the same message.
    let (_, m) = streamed(&TestModel::new(), &request).await;
    assert_eq!(m.text(), text);
}

/// Every schema of the tool-argument vectors (testdata/tools) gets a value
/// that validates against it, for several seeds.
#[test]
fn made_up_values_validate_against_the_argument_vectors_schemas() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tools/arguments.json"
    );
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for case in &cases {
        let schema = &case["schema"];
        let validator = jsonschema::validator_for(schema).unwrap();
        for seed in 0..5 {
            let v = value_for(schema, seed);
            assert!(
                validator.is_valid(&v),
                "{} (seed {seed}): {v} is not valid against {schema}",
                case["name"]
            );
            checked += 1;
        }
    }
    assert!(checked >= 50, "{checked}");
}

#[tokio::test]
async fn function_model_answers_with_the_function_and_its_errors() {
    let model = FunctionModel::new(|r| {
        if r.tools.is_empty() {
            return Err(ModelError::InvalidRequest {
                message: "no tools".into(),
            });
        }
        Ok(Message::assistant(format!(
            "{} tools, {} messages",
            r.tools.len(),
            r.messages.len()
        )))
    })
    .named("mine", "v1");
    let a = model.generate(&ask("Hi")).await.unwrap();
    assert_eq!(a.text(), "1 tools, 2 messages");
    assert_eq!(
        (a.provider.as_deref(), a.model.as_deref()),
        (Some("mine"), Some("v1"))
    );
    assert_eq!(a.finish_reason, Some(parlance_format::FinishReason::Stop));
    let err = model.generate(&ModelRequest::default()).await.unwrap_err();
    assert_eq!(err.to_string(), "invalid request: no tools");

    let model = FunctionModel::new_async(|r: ModelRequest| async move {
        tokio::task::yield_now().await;
        Ok(Message::assistant(format!("async: {}", r.messages.len())))
    });
    let (deltas, m) = streamed(&model, &ask("Hi")).await;
    assert_eq!(m.text(), "async: 2");
    assert_eq!(deltas, ["async: ", "2"]);
}
