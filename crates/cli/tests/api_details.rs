//! Small promises of the HTTP API, through the real `parlance serve`: JSON
//! errors for every refusal, one JSON value per body, inline agents read
//! field by field, decisions that stream, and a clear word for the loser
//! of two concurrent decisions.

mod common;

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_json_and_bodies_are_one_value() {
    let provider = ReplayServer::start(vec![]).await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", ""));
    let client = reqwest::Client::new();
    for (method, path) in [
        ("PUT", "/v1/runs"),
        ("DELETE", "/v1/runs"),
        ("PATCH", "/v1/threads"),
    ] {
        let resp = client
            .request(method.parse().unwrap(), format!("{}{path}", server.url))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 405, "{method} {path}");
        let e: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
        assert_eq!(
            e["error"]["code"], "method_not_allowed",
            "{method} {path}: {e}"
        );
    }
    let resp = client
        .post(format!("{}/v1/threads", server.url))
        .header("content-type", "application/json")
        .body("{\"metadata\": {}} trailing")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let e: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("(body): trailing characters"),
        "{e}"
    );
    for (agent, expected) in [
        (
            json!({"model": "mock:gpt-test", "colour": "red"}),
            "agent.colour: unknown field `colour`, expected one of `model`",
        ),
        (
            json!({"model": 5}),
            "agent.model: invalid type: integer `5`, expected a model string (\"openai:gpt-4o\") or a list of them",
        ),
        (
            json!(7),
            "agent: invalid type: integer `7`, expected an agent's name or an agent object",
        ),
    ] {
        let (status, e) = post(
            &server.url,
            "/v1/runs",
            &json!({"agent": agent, "input": "hi"}),
            None,
        )
        .await;
        assert_eq!(status, 400, "{e}");
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(expected), "{message}");
        assert!(!message.contains("untagged"), "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decisions_stream_and_the_loser_of_a_race_is_told_why() {
    let provider = ReplayServer::start(vec![
        chat(call("call_9", "refund", json!({"amount": 40}))),
        Reply::Delayed(800, Box::new(chat_stream(text("Refund done.")))),
    ])
    .await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", ""));
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let (_, paused) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 40", "thread_id": t["id"]}),
        None,
    )
    .await;
    let pending = &paused["pending"][0];
    let path = format!("/v1/runs/{}/decisions", paused["id"].as_str().unwrap());
    let body = json!({"stream": true, "decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"],
        "decision": "answered", "content": [{"type": "text", "text": "refund #991 issued"}]}]});
    let mut racers = Vec::new();
    for _ in 0..6 {
        let (url, path, body) = (server.url.clone(), path.clone(), body.clone());
        racers.push(tokio::spawn(async move {
            let resp = reqwest::Client::new()
                .post(format!("{url}{path}"))
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            (resp.status().as_u16(), resp.text().await.unwrap())
        }));
    }
    let mut winners = 0;
    for r in racers {
        let (status, text) = r.await.unwrap();
        if status == 200 {
            winners += 1;
            let events = events(&text);
            assert_eq!(events[0].0, "run_started", "{text}");
            assert!(
                events
                    .iter()
                    .any(|(e, d)| e == "text_delta" && d["text"] == "Refund done."),
                "{text}"
            );
            let (last, done) = events.last().unwrap();
            assert_eq!(
                (last.as_str(), &done["status"]),
                ("run_completed", &json!("completed"))
            );
        } else {
            assert_eq!(status, 409, "{text}");
            assert!(!text.contains("is requires_approval"), "{text}");
            assert!(
                text.contains("another request decided it first")
                    || text.contains("not waiting for decisions"),
                "{text}"
            );
        }
    }
    assert_eq!(winners, 1);
}
