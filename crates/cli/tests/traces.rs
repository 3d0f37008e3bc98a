//! OpenTelemetry traces of the real `parlance serve`: with
//! OTEL_EXPORTER_OTLP_ENDPOINT set, a run's spans arrive at an OTLP
//! receiver (HTTP/protobuf, decoded with opentelemetry-proto) as one tree:
//! `invoke_agent` → `chat` per model call and `execute_tool` per call,
//! with the GenAI semantic conventions' attributes and errors as status.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::routing::post as route_post;
use common::replay::{ReplayServer, Reply};
use common::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::{Span, span::SpanKind, status::StatusCode};
use prost::Message;
use serde_json::json;

/// Spans received, with their resource's service name.
type Received = Arc<Mutex<Vec<(String, Span)>>>;

async fn receiver() -> (String, Received) {
    let got: Received = Arc::default();
    let keep = Arc::clone(&got);
    let app = axum::Router::new().route(
        "/v1/traces",
        route_post(move |body: Bytes| {
            let keep = Arc::clone(&keep);
            async move {
                let req = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                for rs in req.resource_spans {
                    let service = rs
                        .resource
                        .iter()
                        .flat_map(|r| &r.attributes)
                        .find(|a| a.key == "service.name")
                        .and_then(|a| a.value.as_ref()?.value.clone())
                        .map(|v| match v {
                            Any::StringValue(s) => s,
                            other => format!("{other:?}"),
                        })
                        .unwrap_or_default();
                    for ss in rs.scope_spans {
                        for s in ss.spans {
                            keep.lock().unwrap().push((service.clone(), s));
                        }
                    }
                }
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

fn attrs(s: &Span) -> HashMap<String, Any> {
    s.attributes
        .iter()
        .filter_map(|a| Some((a.key.clone(), a.value.as_ref()?.value.clone()?)))
        .collect()
}

fn str_attr(s: &Span, key: &str) -> Option<String> {
    match attrs(s).get(key)? {
        Any::StringValue(v) => Some(v.clone()),
        other => Some(format!("{other:?}")),
    }
}

fn int_attr(s: &Span, key: &str) -> Option<i64> {
    match attrs(s).get(key)? {
        Any::IntValue(v) => Some(*v),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_three_parallel_calls_and_a_failure_is_one_span_tree() {
    let (otlp, got) = receiver().await;
    let provider = ReplayServer::start(vec![
        chat(calls(&[
            ("c1", "lookup_order", json!({"id": "A-1"})),
            ("c2", "lookup_order", json!({"id": "A-2"})),
            ("c3", "lookup_order", json!({"id": "A-3"})),
        ])),
        chat(text("Two shipped, one unknown.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![
        Reply::json(200, &json!({"status": "shipped"})),
        Reply::json(500, &json!({"error": "database down"})),
        Reply::json(200, &json!({"status": "shipped"})),
    ])
    .await;
    let dir = temp_dir();
    let server = start_with_env(
        &config(&dir, &provider.url, &tool.url, ""),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    );
    let (_, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "A-1, A-2, A-3?"}),
        None,
    )
    .await;
    assert_eq!(r["status"], "completed", "{r}");
    // Shutting down sends what is left in the batch.
    let mut server = server;
    std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    server.child.wait().unwrap();
    for _ in 0..100 {
        if got.lock().unwrap().len() >= 6 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let spans = got.lock().unwrap().clone();
    assert_eq!(spans.len(), 6, "{spans:#?}");
    assert!(spans.iter().all(|(service, _)| service == "parlance"));
    let spans: Vec<Span> = spans.into_iter().map(|(_, s)| s).collect();
    let named = |n: &str| -> Vec<&Span> { spans.iter().filter(|s| s.name == n).collect() };

    let root = named("invoke_agent support");
    assert_eq!(root.len(), 1, "{spans:#?}");
    let root = root[0];
    assert!(root.parent_span_id.is_empty());
    assert_eq!(
        str_attr(root, "gen_ai.operation.name").as_deref(),
        Some("invoke_agent")
    );
    assert_eq!(
        str_attr(root, "gen_ai.agent.name").as_deref(),
        Some("support")
    );
    assert_eq!(
        str_attr(root, "gen_ai.provider.name").as_deref(),
        Some("openai")
    );
    assert_eq!(
        str_attr(root, "gen_ai.request.model").as_deref(),
        Some("gpt-test")
    );
    assert_eq!(int_attr(root, "gen_ai.usage.input_tokens"), Some(20));
    assert_eq!(int_attr(root, "gen_ai.usage.output_tokens"), Some(10));
    assert_eq!(
        str_attr(root, "parlance.run.status").as_deref(),
        Some("completed")
    );
    assert_ne!(
        root.status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );

    let mut chats = named("chat gpt-test");
    chats.sort_by_key(|s| s.start_time_unix_nano);
    assert_eq!(chats.len(), 2, "{spans:#?}");
    for (c, finish) in chats.iter().zip(["[\"tool_calls\"]", "[\"stop\"]"]) {
        assert_eq!(c.trace_id, root.trace_id);
        assert_eq!(c.parent_span_id, root.span_id);
        assert_eq!(c.kind, SpanKind::Client as i32);
        assert_eq!(
            str_attr(c, "gen_ai.operation.name").as_deref(),
            Some("chat")
        );
        assert_eq!(
            str_attr(c, "gen_ai.provider.name").as_deref(),
            Some("openai")
        );
        assert_eq!(
            str_attr(c, "gen_ai.request.model").as_deref(),
            Some("gpt-test")
        );
        assert_eq!(
            str_attr(c, "gen_ai.response.model").as_deref(),
            Some("gpt-test")
        );
        assert_eq!(
            str_attr(c, "gen_ai.response.finish_reasons").as_deref(),
            Some(finish)
        );
        assert_eq!(int_attr(c, "gen_ai.usage.input_tokens"), Some(10));
        assert_eq!(int_attr(c, "gen_ai.usage.output_tokens"), Some(5));
        // Content is recorded only when switched on.
        assert_eq!(str_attr(c, "gen_ai.input.messages"), None);
    }

    let tools = named("execute_tool lookup_order");
    assert_eq!(tools.len(), 3, "{spans:#?}");
    let mut ids: Vec<String> = tools
        .iter()
        .map(|t| str_attr(t, "gen_ai.tool.call.id").unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    for t in &tools {
        assert_eq!(t.trace_id, root.trace_id);
        assert_eq!(t.parent_span_id, root.span_id);
        assert_eq!(
            str_attr(t, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(
            str_attr(t, "gen_ai.tool.name").as_deref(),
            Some("lookup_order")
        );
        // Between the model call that asked for it and the next one.
        assert!(t.start_time_unix_nano >= chats[0].end_time_unix_nano);
        assert!(t.end_time_unix_nano <= chats[1].start_time_unix_nano);
    }
    let failed: Vec<&&Span> = tools
        .iter()
        .filter(|t| {
            t.status
                .as_ref()
                .is_some_and(|s| s.code == StatusCode::Error as i32)
        })
        .collect();
    assert_eq!(failed.len(), 1, "{tools:#?}");
    assert_eq!(
        str_attr(failed[0], "error.type").as_deref(),
        Some("tool_failed")
    );
    assert!(
        failed[0]
            .status
            .as_ref()
            .unwrap()
            .message
            .contains("lookup_order failed"),
        "{:?}",
        failed[0].status
    );
    // Parallel: the three ran at once (each starts before any ends).
    let last_start = tools.iter().map(|t| t.start_time_unix_nano).max().unwrap();
    let first_end = tools.iter().map(|t| t.end_time_unix_nano).min().unwrap();
    assert!(last_start <= first_end, "the calls ran one after another");
}
