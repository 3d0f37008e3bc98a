//! The server against its own users: input of any depth through every
//! entry point (the inbox's forms, decisions, API bodies) is refused with
//! the limit named, and the server stays up for everyone else; a damaged
//! record in the store never takes a list down, and operators can still
//! delete it.

mod common;

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::{Value, json};

const TOKENS: &str = "[[auth.tokens]]\ntoken = \"tok-alice-123\"\nsubject = \"alice\"\n[[auth.tokens]]\ntoken = \"tok-ops-98765\"\nsubject = \"ops\"\noperator = true\n";
const ALICE: Option<&str> = Some("tok-alice-123");
const OPS: Option<&str> = Some("tok-ops-98765");

/// `[agents.payer]`: an HTTP tool that waits for a decision and whose
/// schema allows keys it does not name (on purpose: the engine refuses
/// undeclared arguments otherwise), so that an edit can nest a value
/// under one.
fn payer(tool_url: &str) -> String {
    format!(
        r#"
[agents.payer]
model = "mock:gpt-test"
tools = ["pay"]

[tools.pay]
kind = "http"
url = "{tool_url}/pay"
description = "Pay an order."
needs_approval = true
input_schema = '{{"type": "object", "properties": {{"amount": {{"type": "number"}}}}, "required": ["amount"], "additionalProperties": true}}'
"#
    )
}

/// `levels` nested arrays and objects around `1`.
fn nested(levels: usize) -> Value {
    let mut v = json!(1);
    for i in 0..levels {
        v = if i % 2 == 0 {
            json!([v])
        } else {
            json!({"a": v})
        };
    }
    v
}

/// JSON text of `levels` nested arrays (too deep to build as a value).
fn deep_text(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// A session cookie for `token`, from the login form.
async fn login(url: &str, token: &str) -> String {
    let resp = client()
        .post(format!("{url}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}&next=%2Fui", enc(token)))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 303, "login");
    let cookie = resp.headers()["set-cookie"].to_str().unwrap();
    cookie.split(';').next().unwrap().to_string()
}

async fn page(url: &str, path: &str, cookie: &str) -> (u16, String) {
    let resp = client()
        .get(format!("{url}{path}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

/// Posts a form body as it is (field names are not encoded: a browser
/// may send `/` raw, and a million-level pointer must stay small).
async fn post_form(url: &str, path: &str, cookie: &str, body: String) -> (u16, String) {
    let resp = client()
        .post(format!("{url}{path}"))
        .header("cookie", cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

/// A run paused on a new thread of alice's: (run id, thread id).
async fn paused_run(url: &str, agent: &str) -> (String, String) {
    let (_, t) = post(url, "/v1/threads", &json!({}), ALICE).await;
    let (status, p) = post(
        url,
        "/v1/runs",
        &json!({"agent": agent, "input": "Pay 40", "thread_id": t["id"]}),
        ALICE,
    )
    .await;
    assert_eq!(status, 200, "{p}");
    assert_eq!(p["status"], "requires_approval", "{p}");
    (
        p["id"].as_str().unwrap().to_string(),
        t["id"].as_str().unwrap().to_string(),
    )
}

/// The fields every decision form carries, for run `run`'s call 0.
async fn form_head(url: &str, run: &str, cookie: &str) -> String {
    let (status, html) = page(url, &format!("/ui/runs/{run}"), cookie).await;
    assert_eq!(status, 200, "{html}");
    format!(
        "csrf={}&call.0.id={}&call.0.digest={}&call.0.decision=edit",
        enc(&hidden(&html, "csrf")),
        enc(&hidden(&html, "call.0.id")),
        enc(&hidden(&html, "call.0.digest")),
    )
}

/// The run as the API reads it.
async fn run_status(url: &str, run: &str) -> String {
    let (status, r) = get(url, &format!("/v1/runs/{run}"), ALICE).await;
    assert_eq!(status, 200, "{r}");
    r["status"].as_str().unwrap().to_string()
}

fn pay_call(id: &str) -> Reply {
    chat(call(id, "pay", json!({"amount": 40})))
}

const LIMIT_MESSAGE: &str = "nested deeper than 100 levels";

/// A form field naming a million levels (a 1 MB post), on the check and
/// the decide endpoints, as a field and as "other fields": refused with
/// the limit named; the server stays up and another user's run goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_million_level_form_field_is_refused_and_the_server_stays_up() {
    let provider =
        ReplayServer::start(vec![pay_call("c1"), pay_call("c2"), chat(text("Paid."))]).await;
    let tool = ReplayServer::start(vec![Reply::json(200, &json!({"paid": 40}))]).await;
    let dir = temp_dir();
    let extra = payer(&tool.url);
    let cfg = config_with(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        TOKENS,
        &Extra {
            tables: &extra,
            ..Extra::default()
        },
    );
    let server = start(&cfg);
    let (mine, _) = paused_run(&server.url, "payer").await;
    let (other, _) = paused_run(&server.url, "payer").await;
    let cookie = login(&server.url, "tok-alice-123").await;
    let head = form_head(&server.url, &mine, &cookie).await;
    let deep = "/".repeat(1_000_000);
    for field in [
        format!("call.0.f.s.{deep}=x"),
        format!("call.0.f.x.{deep}={}", enc("{\"k\": 1}")),
        format!("call.0.f.o.{deep}="),
    ] {
        let body = format!("{head}&call.0.mode=form&call.0.f.n!./amount=5&{field}");
        let (status, answer) = post_form(
            &server.url,
            &format!("/ui/runs/{mine}/check"),
            &cookie,
            body.clone(),
        )
        .await;
        assert_eq!(status, 200, "{answer:.300}");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["ok"], false, "{answer}");
        assert!(answer.to_string().contains(LIMIT_MESSAGE), "{answer:.500}");
        let (status, html) = post_form(
            &server.url,
            &format!("/ui/runs/{mine}/decide"),
            &cookie,
            body,
        )
        .await;
        assert_eq!(status, 422, "{html:.300}");
        assert!(html.contains(LIMIT_MESSAGE), "{html:.2000}");
    }
    // Still up: the run waits, the other user's run is decided and ends.
    assert_eq!(run_status(&server.url, &mine).await, "requires_approval");
    let (_, r) = get(&server.url, &format!("/v1/runs/{other}"), ALICE).await;
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{other}/decisions"),
        &json!({"decisions": [{"tool_call_id": r["pending"][0]["tool_call_id"], "digest": r["pending"][0]["digest"], "decision": "approved"}]}),
        ALICE,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["output"], "Paid.", "{done}");
}

/// Edits deeper than the limit but within what JSON readers take (120
/// levels: the old code stored them, then no inbox could be drawn): from
/// the JSON box, from form fields, from the API; all refused with the
/// path and the limit, and the inbox still draws. An edit at the limit is
/// taken, stored and read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_deeper_than_the_limit_is_never_stored() {
    let provider = ReplayServer::start(vec![pay_call("c1"), chat(text("Paid."))]).await;
    let tool = ReplayServer::start(vec![Reply::json(200, &json!({"paid": 5}))]).await;
    let dir = temp_dir();
    let extra = payer(&tool.url);
    let cfg = config_with(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        TOKENS,
        &Extra {
            tables: &extra,
            ..Extra::default()
        },
    );
    let server = start(&cfg);
    let (run, _) = paused_run(&server.url, "payer").await;
    let cookie = login(&server.url, "tok-alice-123").await;
    let head = form_head(&server.url, &run, &cookie).await;
    let too_deep = json!({"amount": 5, "x": nested(120)});
    let pointer = "/a".repeat(60);
    for edit in [
        format!(
            "call.0.mode=json&call.0.json={}",
            enc(&too_deep.to_string())
        ),
        format!(
            "call.0.mode=form&call.0.f.n!./amount=5&call.0.f.j.{pointer}={}",
            enc(&nested(60).to_string())
        ),
        format!(
            "call.0.mode=form&call.0.f.n!./amount=5&call.0.f.s.{}=x",
            "/a".repeat(101)
        ),
    ] {
        let (status, html) = post_form(
            &server.url,
            &format!("/ui/runs/{run}/decide"),
            &cookie,
            format!("{head}&{edit}"),
        )
        .await;
        assert_eq!(status, 422, "{edit:.80}: {html:.300}");
        assert!(html.contains(LIMIT_MESSAGE), "{edit:.80}: {html:.3000}");
    }
    let (_, r) = get(&server.url, &format!("/v1/runs/{run}"), ALICE).await;
    let pending = &r["pending"][0];
    let decide = |arguments: Value| json!({"decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"], "decision": "edited", "arguments": arguments}]});
    let (status, e) = post(
        &server.url,
        &format!("/v1/runs/{run}/decisions"),
        &decide(too_deep.clone()),
        ALICE,
    )
    .await;
    assert_eq!(status, 400, "{e}");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("decisions[0].arguments") && msg.contains(LIMIT_MESSAGE),
        "{e}"
    );
    let (status, inbox) = page(&server.url, "/ui", &cookie).await;
    assert_eq!(status, 200, "{inbox:.500}");
    assert!(inbox.contains(&run), "{inbox:.2000}");
    assert_eq!(run_status(&server.url, &run).await, "requires_approval");

    // At the limit: taken, run, stored, read back.
    let at_limit = json!({"amount": 5, "x": nested(99)});
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{run}/decisions"),
        &decide(at_limit.clone()),
        ALICE,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["output"], "Paid.", "{done}");
    assert_eq!(tool.received()[0].body, at_limit);
    let (status, r) = get(&server.url, &format!("/v1/runs/{run}"), ALICE).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "completed");
    let (status, inbox) = page(&server.url, "/ui", &cookie).await;
    assert_eq!(status, 200, "{inbox:.500}");
}

/// API bodies nested a million levels deep, and free-form values over
/// the limit: 400 naming the limit and the path; the server stays up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_bodies_of_any_depth_are_refused_with_the_limit_named() {
    let provider = ReplayServer::start(vec![]).await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", TOKENS));
    let raw = |path: &'static str, body: String| {
        let url = server.url.clone();
        async move {
            let resp = reqwest::Client::new()
                .post(format!("{url}{path}"))
                .header("content-type", "application/json")
                .header("authorization", "Bearer tok-alice-123")
                .body(body)
                .send()
                .await
                .unwrap();
            let status = resp.status().as_u16();
            let v: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
            (status, v)
        }
    };
    let deep = deep_text(1_000_000);
    for (path, body, at) in [
        (
            "/v1/threads",
            format!("{{\"metadata\": {deep}}}"),
            "metadata",
        ),
        (
            "/v1/runs",
            format!(
                "{{\"agent\": \"support\", \"input\": [{{\"role\": \"user\", \"content\": [{{\"type\": \"json\", \"json\": {deep}}}]}}]}}"
            ),
            "input",
        ),
        (
            "/v1/runs/run_x/decisions",
            format!(
                "{{\"decisions\": [{{\"tool_call_id\": \"c\", \"digest\": \"d\", \"decision\": \"edited\", \"arguments\": {deep}}}]}}"
            ),
            "decisions",
        ),
    ] {
        let (status, e) = raw(path, body).await;
        assert_eq!(status, 400, "{path}: {e}");
        let msg = e["error"]["message"].as_str().unwrap();
        assert!(
            msg.starts_with(at) && msg.contains("nested deeper than 128") && msg.contains("100"),
            "{path}: {e}"
        );
    }
    // Within what JSON readers take, over the format's limit.
    let (status, e) = post(
        &server.url,
        "/v1/threads",
        &json!({"metadata": {"k": nested(110)}}),
        ALICE,
    )
    .await;
    assert_eq!(status, 400, "{e}");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("metadata") && msg.contains(LIMIT_MESSAGE),
        "{e}"
    );
    let (status, e) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": [{"role": "user", "content": [{"type": "json", "json": nested(110)}]}]}),
        ALICE,
    )
    .await;
    assert_eq!(status, 400, "{e}");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("input[0].content[0].json") && msg.contains(LIMIT_MESSAGE),
        "{e}"
    );
    let (status, _) = get(&server.url, "/v1/threads", ALICE).await;
    assert_eq!(status, 200);
}

/// A message made unreadable in the SQLite file itself: the inbox lists
/// the damaged run (with its ids) beside the others, thread lists still
/// draw, the API names the record, the store's log says which and why,
/// and an operator deletes the thread (API or inbox) though its run waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_record_never_takes_down_a_list() {
    let provider = ReplayServer::start(vec![pay_call("c1"), pay_call("c2"), pay_call("c3")]).await;
    let dir = temp_dir();
    let extra = payer("http://127.0.0.1:9");
    let cfg = config_with(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        TOKENS,
        &Extra {
            tables: &extra,
            ..Extra::default()
        },
    );
    let (server, log) = start_logged(&cfg, &[("RUST_LOG", "warn")]);
    let (bad, bad_thread) = paused_run(&server.url, "payer").await;
    let (good, _) = paused_run(&server.url, "payer").await;
    let (bad2, bad_thread2) = paused_run(&server.url, "payer").await;
    // The damage, written into the database file directly.
    let db = dir.join("threads.db");
    let conn = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    for thread in [&bad_thread, &bad_thread2] {
        sqlx::query("UPDATE parlance_messages SET body = '{\"role\": \"assistant\", \"content\": [{\"type\": \"nope\"}]}' WHERE thread_id = ? AND seq = 1")
            .bind(thread)
            .execute(&conn)
            .await
            .unwrap();
    }
    conn.close().await;

    let ops = login(&server.url, "tok-ops-98765").await;
    let (status, inbox) = page(&server.url, "/ui", &ops).await;
    assert_eq!(status, 200, "{inbox:.1000}");
    assert!(inbox.contains("Damaged record"), "{inbox}");
    for id in [&bad, &bad_thread, &good] {
        assert!(inbox.contains(id.as_str()), "{id}: {inbox}");
    }
    assert!(inbox.contains("message 1 is not readable"), "{inbox}");
    let alice = login(&server.url, "tok-alice-123").await;
    let (status, inbox) = page(&server.url, "/ui", &alice).await;
    assert_eq!(status, 200, "{inbox:.1000}");
    assert!(inbox.contains(&good) && inbox.contains(&bad), "{inbox}");
    for path in [
        "/ui/threads".to_string(),
        format!("/ui/threads/{bad_thread}"),
    ] {
        let (status, html) = page(&server.url, &path, &ops).await;
        assert_eq!(status, 200, "{path}: {html:.1000}");
        assert!(html.contains(bad_thread.as_str()), "{path}: {html}");
    }
    let (status, list) = get(&server.url, "/v1/threads", OPS).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["items"].as_array().unwrap().len(), 3, "{list}");
    let (status, e) = get(&server.url, &format!("/v1/threads/{bad_thread}"), OPS).await;
    assert_eq!(status, 500, "{e}");
    assert_eq!(e["error"]["code"], "damaged_record", "{e}");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("thread {bad_thread} message 1")),
        "{e}"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("a stored message is not readable")
            && logged.contains(bad_thread.as_str())
            && logged.contains("unknown block type"),
        "{logged}"
    );

    // Deleting: refused while the run waits, unless an operator forces it.
    let del = |path: String, token: &'static str| {
        let url = server.url.clone();
        async move {
            reqwest::Client::new()
                .delete(format!("{url}{path}"))
                .header("authorization", format!("Bearer {token}"))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    let path = format!("/v1/threads/{bad_thread}");
    assert_eq!(del(path.clone(), "tok-ops-98765").await, 409);
    assert_eq!(
        del(format!("{path}?force=true"), "tok-alice-123").await,
        403
    );
    assert_eq!(
        del(format!("{path}?force=true"), "tok-ops-98765").await,
        204
    );
    let (status, _) = get(&server.url, &path, OPS).await;
    assert_eq!(status, 404);

    // The other one from the inbox's own button.
    let (_, inbox) = page(&server.url, "/ui", &ops).await;
    let action = format!("/ui/threads/{bad_thread2}/delete");
    assert!(inbox.contains(&action), "{inbox}");
    let csrf = |html: &str| format!("csrf={}", enc(&hidden(html, "csrf")));
    let (_, alices) = page(&server.url, "/ui", &alice).await;
    let (status, html) = post_form(&server.url, &action, &alice, csrf(&alices)).await;
    assert_eq!(status, 403, "{html:.500}");
    let (status, _) = post_form(&server.url, &action, &ops, csrf(&inbox)).await;
    assert_eq!(status, 303);
    let (status, inbox) = page(&server.url, "/ui", &ops).await;
    assert_eq!(status, 200);
    assert!(
        !inbox.contains("Damaged record") && !inbox.contains(&bad2),
        "{inbox}"
    );
    assert!(inbox.contains(&good), "{inbox}");
}
