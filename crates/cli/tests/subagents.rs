//! Agents that call agents through the real `parlance serve`
//! (`[agents.support] agents = ["researcher"]`): the sub-agent's run is
//! kept on its own thread; its waiting call is listed in the parent's
//! place; decided through the parent, or through its own run by a second
//! server process (the first one gone), both runs finish; a circle of
//! agents and an unknown agent stop the server with the setting named.
//! Handoffs (`handoffs = ["billing"]`): the run is finished by the agent
//! handed to, the run records it, and the thread's next run is its.

mod common;

use std::time::Duration;

use common::replay::ReplayServer;
use common::*;
use serde_json::{Value, json};

const RESEARCHER: &str = r#"
[agents.researcher]
model = "mock:gpt-test"
instructions = "You look orders up and refund them."
description = "Looks orders up and refunds them; send it the whole task."
tools = ["refund"]
"#;

/// The provider's answers: the parent delegates, the researcher asks for
/// a refund (a person answers it), then each finishes.
async fn provider() -> ReplayServer {
    ReplayServer::start(vec![
        chat(calls(&[(
            "p1",
            "researcher",
            json!({"input": "Refund 20 on order A-7"}),
        )])),
        chat(calls(&[("r1", "refund", json!({"amount": 20}))])),
        chat(text("Refunded 20 on A-7.")),
        chat(text("Your refund of 20 is done.")),
    ])
    .await
}

fn setup(provider: &ReplayServer) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = temp_dir();
    let extra = Extra {
        agent: "agents = [\"researcher\"]",
        tables: RESEARCHER,
        ..Extra::default()
    };
    let config = config_with(&dir, &provider.url, "http://127.0.0.1:9", "", &extra);
    (dir, config)
}

/// Starts a run of `support` on a new thread; returns it paused.
async fn paused(url: &str) -> Value {
    let (_, t) = post(url, "/v1/threads", &json!({}), None).await;
    let (status, r) = post(
        url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund order A-7", "thread_id": t["id"]}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "requires_approval", "{r}");
    r
}

fn answer(request: &Value, text: &str) -> Value {
    json!({"decisions": [{
        "tool_call_id": request["tool_call_id"],
        "digest": request["digest"],
        "decision": "answered",
        "content": [{"type": "text", "text": text}],
    }]})
}

async fn until_done(url: &str, run: &str) -> Value {
    for _ in 0..100 {
        let (_, r) = get(url, &format!("/v1/runs/{run}"), None).await;
        if r["status"] != "requires_approval" && r["status"] != "running" {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("run {run} did not finish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agents_waiting_call_is_decided_through_its_parent() {
    let provider = provider().await;
    let (_dir, config) = setup(&provider);
    let server = start(&config);
    let r = paused(&server.url).await;
    let pending = &r["pending"];
    assert_eq!(pending.as_array().unwrap().len(), 1, "{r}");
    assert_eq!(pending[0]["name"], "refund", "{r}");
    assert_eq!(pending[0]["tool_call_id"], "r1");
    let child_run = pending[0]["run_id"]
        .as_str()
        .expect("names the sub-agent's run");
    // The sub-agent's run, on its own thread, linked to the parent's call.
    let (_, child) = get(&server.url, &format!("/v1/runs/{child_run}"), None).await;
    assert_eq!(child["status"], "requires_approval");
    let (_, thread) = get(
        &server.url,
        &format!("/v1/threads/{}", child["thread_id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(thread["thread"]["parent_run_id"], r["id"], "{thread}");
    assert_eq!(thread["thread"]["parent_call_id"], "p1");
    // The parent as stored lists the same.
    let (_, stored) = get(
        &server.url,
        &format!("/v1/runs/{}", r["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(stored["pending"], r["pending"]);
    // The inbox: the parent's call points to the sub-agent's run, whose
    // page has the decision form.
    let page = anonymous_page(
        &server.url,
        &format!("/ui/runs/{}", r["id"].as_str().unwrap()),
    )
    .await;
    assert!(
        page.contains(&format!("href=\"/ui/runs/{child_run}\"")),
        "{page}"
    );
    assert!(page.contains("decide them there"), "{page}");
    assert!(
        !page.contains("Send decisions"),
        "no form for a call that waits on another run"
    );
    let page = anonymous_page(&server.url, &format!("/ui/runs/{child_run}")).await;
    assert!(page.contains("Send decisions"), "{page}");

    let run = r["id"].as_str().unwrap();
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{run}/decisions"),
        &answer(&pending[0], "refund 20 done"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"], "Your refund of 20 is done.");
    // The parent's model read the researcher's answer, and only that.
    let last = &provider.received()[3].body["messages"];
    let tool = last
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool["content"], "Refunded 20 on A-7.", "{last}");
    assert_eq!(
        until_done(&server.url, child_run).await["status"],
        "completed"
    );
    // The thread view: the parent's links its sub-agent's thread, which
    // names its caller.
    let child_thread = child["thread_id"].as_str().unwrap();
    let page = anonymous_page(
        &server.url,
        &format!("/ui/threads/{}", r["thread_id"].as_str().unwrap()),
    )
    .await;
    assert!(page.contains("Sub-agents"), "{page}");
    assert!(
        page.contains(&format!("href=\"/ui/threads/{child_thread}\"")),
        "{page}"
    );
    let page = anonymous_page(&server.url, &format!("/ui/threads/{child_thread}")).await;
    assert!(page.contains("A sub-agent's thread"), "{page}");
    assert!(
        page.contains("Refunded 20 on A-7."),
        "the sub-agent's steps: {page}"
    );
    // The researcher was told the task alone, under its own instructions.
    let sent = &provider.received()[1].body["messages"];
    assert_eq!(sent[0]["content"], "You look orders up and refund them.");
    assert_eq!(sent[1]["content"], "Refund 20 on order A-7");
    // The parent was offered the researcher with its description.
    let tools = &provider.received()[0].body["tools"];
    let offered = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "researcher")
        .unwrap();
    assert_eq!(
        offered["function"]["description"],
        "Looks orders up and refunds them; send it the whole task."
    );
}

/// Answers the one waiting call of `run` through the inbox's form, as a
/// reviewer would (an anonymous session: the server has no tokens).
async fn decide_in_the_inbox(url: &str, run: &str, text: &str) -> reqwest::Response {
    let (client, cookie) = anonymous_session(url).await;
    let page = client
        .get(format!("{url}/ui/runs/{run}"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let body = format!(
        "csrf={}&call.0.id={}&call.0.digest={}&call.0.decision=answer&call.0.answer={}",
        enc(&hidden(&page, "csrf")),
        enc(&hidden(&page, "call.0.id")),
        enc(&hidden(&page, "call.0.digest")),
        enc(text),
    );
    client
        .post(format!("{url}/ui/runs/{run}/decide"))
        .header("cookie", &cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_decided_in_the_inbox_of_a_second_server_finishes_both() {
    // The inbox resumes the sub-agent streaming; its caller goes on without.
    let provider = ReplayServer::start(vec![
        chat(calls(&[(
            "p1",
            "researcher",
            json!({"input": "Refund 20 on order A-7"}),
        )])),
        chat(calls(&[("r1", "refund", json!({"amount": 20}))])),
        chat_stream(text("Refunded 20 on A-7.")),
        chat(text("Your refund of 20 is done.")),
    ])
    .await;
    let (_dir, config) = setup(&provider);
    let first = start(&config);
    let r = paused(&first.url).await;
    drop(first);
    // Another process, knowing nothing but the store: a reviewer answers
    // the sub-agent's refund in its inbox.
    let second = start(&config);
    let child_run = r["pending"][0]["run_id"].as_str().unwrap();
    let sent = decide_in_the_inbox(&second.url, child_run, "refund 20 done").await;
    assert_eq!(sent.status(), 303, "{:?}", sent.text().await);
    let child = until_done(&second.url, child_run).await;
    assert_eq!(child["status"], "completed", "{child}");
    assert_eq!(child["output"], "Refunded 20 on A-7.");
    // The parent goes on by itself.
    let parent = until_done(&second.url, r["id"].as_str().unwrap()).await;
    assert_eq!(parent["status"], "completed", "{parent}");
    assert_eq!(parent["output"], "Your refund of 20 is done.");
    assert_eq!(provider.received().len(), 4, "each model step once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_decided_on_its_own_run_by_a_second_server_finishes_both() {
    let provider = provider().await;
    let (_dir, config) = setup(&provider);
    let first = start(&config);
    let r = paused(&first.url).await;
    drop(first);
    let second = start(&config);
    let request = &r["pending"][0];
    let child_run = request["run_id"].as_str().unwrap();
    let (status, child) = post(
        &second.url,
        &format!("/v1/runs/{child_run}/decisions"),
        &answer(request, "refund 20 done"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{child}");
    assert_eq!(child["status"], "completed", "{child}");
    let parent = until_done(&second.url, r["id"].as_str().unwrap()).await;
    assert_eq!(parent["output"], "Your refund of 20 is done.", "{parent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_that_call_each_other_in_a_circle_or_an_unknown_agent_are_refused() {
    for (tables, want) in [
        (
            "[agents.researcher]\nmodel = \"mock:gpt-test\"\nagents = [\"support\"]\n",
            "agents.researcher.agents: agents call or hand over to each other in a circle: researcher -> support -> researcher",
        ),
        (
            "",
            "agents.support.agents: [0]: no agent named \"researcher\"",
        ),
    ] {
        let dir = temp_dir();
        let extra = Extra {
            agent: "agents = [\"researcher\"]",
            tables,
            ..Extra::default()
        };
        let config = config_with(&dir, "http://127.0.0.1:9", "http://127.0.0.1:9", "", &extra);
        let (code, _out, err) = run::parlance(&["serve", "--config", config.to_str().unwrap()], "");
        assert_ne!(code, 0);
        assert!(err.contains(want), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handoff_through_the_api_gives_the_thread_to_the_other_agent() {
    let provider = ReplayServer::start(vec![
        chat(calls(&[("h1", "transfer_to_billing", json!({}))])),
        chat(text("Billing here: your refund is on its way.")),
        chat(text("Still billing: the invoice is attached.")),
    ])
    .await;
    let dir = temp_dir();
    let extra = Extra {
        agent: "handoffs = [\"billing\"]",
        tables: "[agents.billing]\nmodel = \"mock:gpt-test\"\ninstructions = \"You handle billing.\"\ndescription = \"Refunds and invoices.\"\n",
        ..Extra::default()
    };
    let config = config_with(&dir, &provider.url, "http://127.0.0.1:9", "", &extra);
    let server = start(&config);
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let body = |input: &str| json!({"agent": "support", "input": input, "thread_id": t["id"]});
    let (status, r) = post(&server.url, "/v1/runs", &body("A refund, please"), None).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        r["output"], "Billing here: your refund is on its way.",
        "{r}"
    );
    let (_, stored) = get(
        &server.url,
        &format!("/v1/runs/{}", r["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(stored["handoff"], "billing", "{stored}");
    let tool = r["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(
        tool["metadata"]["handoff"],
        json!({"from": "support", "to": "billing"})
    );
    // Support was offered the handoff, described by billing.
    let offered = &provider.received()[0].body["tools"];
    let transfer = offered
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "transfer_to_billing")
        .unwrap();
    assert_eq!(
        transfer["function"]["description"],
        "Hand the conversation to the billing agent: Refunds and invoices."
    );
    assert_eq!(
        provider.received()[1].body["messages"][0]["content"],
        "You handle billing."
    );

    // The next run, asked of support, is billing's.
    let (_, next) = post(&server.url, "/v1/runs", &body("And the invoice?"), None).await;
    assert_eq!(
        next["output"], "Still billing: the invoice is attached.",
        "{next}"
    );
    assert_eq!(
        provider.received()[2].body["messages"][0]["content"],
        "You handle billing."
    );
    // Billing has no tools: it is offered none (not support's handoff).
    let third = &provider.received()[2].body;
    assert!(third.get("tools").is_none(), "{third}");
}
