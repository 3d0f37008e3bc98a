//! Sessions that end: a logout and an operator's "end every session of
//! X" are recorded in the store (every server sharing it refuses the
//! cookie afterwards); the secret rotates with the previous one still
//! verifying (sessions, and runs that paused before the rotation stay
//! decidable); login attempts are limited per address and per subject;
//! live streams are capped per session. All through the real binary on
//! 127.0.0.1.

mod common;

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::{Value, json};

const TOKENS: &str = "[[auth.tokens]]\ntoken = \"tok-alice-123\"\nsubject = \"alice\"\n[[auth.tokens]]\ntoken = \"tok-bob-4567\"\nsubject = \"bob\"\n[[auth.tokens]]\ntoken = \"tok-ops-98765\"\nsubject = \"ops\"\noperator = true\n";
const ALICE: Option<&str> = Some("tok-alice-123");
const BOB: Option<&str> = Some("tok-bob-4567");
const OPS: Option<&str> = Some("tok-ops-98765");

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Posts the login form: the status, the cookie (if one was set), the
/// `Retry-After` header and the body.
async fn try_login(url: &str, token: &str) -> (u16, Option<String>, Option<String>, String) {
    let resp = client()
        .post(format!("{url}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}&next=%2Fui", enc(token)))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let cookie = resp
        .headers()
        .get("set-cookie")
        .map(|c| c.to_str().unwrap().split(';').next().unwrap().to_string());
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    (status, cookie, retry, resp.text().await.unwrap())
}

/// A session cookie for `token`, from the login form.
async fn login(url: &str, token: &str) -> String {
    let (status, cookie, _, body) = try_login(url, token).await;
    assert_eq!(status, 303, "login: {body}");
    cookie.expect("a session cookie")
}

async fn page(url: &str, path: &str, cookie: &str) -> (u16, String) {
    let resp = client()
        .get(format!("{url}{path}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let location = resp
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_string());
    let body = resp.text().await.unwrap();
    (status, location.unwrap_or(body))
}

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

/// Whether `cookie` still opens the inbox (else: sent to the login form).
async fn accepted(url: &str, cookie: &str) -> bool {
    let (status, body) = page(url, "/ui", cookie).await;
    match status {
        200 => true,
        303 | 302 | 307 => {
            assert!(body.starts_with("/ui/login"), "redirected to {body}");
            false
        }
        _ => panic!("{status}: {body}"),
    }
}

/// Two servers on one store (one SQLite file, one generated secret): a
/// cookie replayed after its logout is refused by both; the other
/// sessions of the same subject are not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_out_cookie_is_refused_by_every_server_sharing_the_store() {
    let dir = temp_dir();
    let cfg = config(&dir, "http://127.0.0.1:9", "http://127.0.0.1:9", TOKENS);
    let a = start(&cfg);
    let b = start(&cfg);
    let cookie = login(&a.url, "tok-alice-123").await;
    let other = login(&b.url, "tok-alice-123").await;
    assert!(
        accepted(&b.url, &cookie).await,
        "the other server accepts it"
    );
    let (_, inbox) = page(&a.url, "/ui", &cookie).await;
    let csrf = hidden(&inbox, "csrf");
    // A live page open on the other server while the session is ended.
    let live = client()
        .get(format!("{}/ui/events", b.url))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(live.status().as_u16(), 200);
    let (status, body) = post_form(
        &a.url,
        "/ui/logout",
        &cookie,
        format!("csrf={}", enc(&csrf)),
    )
    .await;
    assert_eq!(status, 303, "{body}");
    // Its stream ends (it would otherwise last the session's 12 hours;
    // the bound only turns a hang into a failure).
    let ended = tokio::time::timeout(std::time::Duration::from_secs(120), live.text()).await;
    assert!(ended.is_ok(), "the live stream of an ended session goes on");
    // The stolen (or kept) cookie, replayed after the logout.
    assert!(
        !accepted(&a.url, &cookie).await,
        "replayed on the same server"
    );
    assert!(
        !accepted(&b.url, &cookie).await,
        "replayed on another server"
    );
    let (status, _) = post_form(
        &b.url,
        "/ui/logout",
        &cookie,
        format!("csrf={}", enc(&csrf)),
    )
    .await;
    assert_eq!(status, 401, "a post with it is refused too");
    let (status, _) = page(&b.url, "/ui/events", &cookie).await;
    assert_eq!(status, 401, "and a live stream");
    assert!(
        accepted(&a.url, &other).await,
        "alice's other session lives on"
    );
    assert!(accepted(&a.url, &login(&a.url, "tok-alice-123").await).await);
}

/// An operator ends every session of a subject, from the API and from
/// the inbox: every one issued until then is refused on every server;
/// another subject's are not, and a later login works. Only operators
/// may, and only for a configured subject.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_ends_every_session_of_a_subject() {
    let dir = temp_dir();
    let cfg = config(&dir, "http://127.0.0.1:9", "http://127.0.0.1:9", TOKENS);
    let a = start(&cfg);
    let b = start(&cfg);
    let alice = [
        login(&a.url, "tok-alice-123").await,
        login(&b.url, "tok-alice-123").await,
    ];
    let bob = login(&a.url, "tok-bob-4567").await;
    let body = json!({"subject": "alice"});
    let (status, e) = post(&a.url, "/v1/sessions/end", &body, BOB).await;
    assert_eq!(status, 403, "{e}");
    assert_eq!(e["error"]["code"], "forbidden");
    let (status, e) = post(
        &a.url,
        "/v1/sessions/end",
        &json!({"subject": "alcie"}),
        OPS,
    )
    .await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(
        e["error"]["message"],
        "subject: no configured token has the subject \"alcie\""
    );
    let (status, e) = post(&a.url, "/v1/sessions/end", &json!({"who": "alice"}), OPS).await;
    assert_eq!(status, 400, "{e}");
    for c in &alice {
        assert!(accepted(&a.url, c).await, "nothing ended yet");
    }
    let (status, done) = post(&b.url, "/v1/sessions/end", &body, OPS).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["subject"], "alice");
    assert!(done["ended_up_to"].as_i64().unwrap() > 0, "{done}");
    for c in &alice {
        assert!(!accepted(&a.url, c).await);
        assert!(!accepted(&b.url, c).await);
    }
    assert!(accepted(&a.url, &bob).await, "bob's session lives on");
    let fresh = login(&a.url, "tok-alice-123").await;
    assert!(accepted(&b.url, &fresh).await, "a later login works");
    // The API tokens themselves are not sessions.
    let (status, _) = get(&a.url, "/v1/threads", ALICE).await;
    assert_eq!(status, 200);

    // From the inbox: operators get the form, others do not.
    let ops = login(&a.url, "tok-ops-98765").await;
    let (_, inbox) = page(&a.url, "/ui", &ops).await;
    assert!(inbox.contains("action=\"/ui/sessions/end\""), "{inbox}");
    assert!(inbox.contains("<option value=\"alice\">"), "{inbox}");
    let (_, theirs) = page(&a.url, "/ui", &bob).await;
    assert!(!theirs.contains("/ui/sessions/end"));
    let csrf = hidden(&inbox, "csrf");
    let (status, _) = post_form(
        &a.url,
        "/ui/sessions/end",
        &bob,
        format!("csrf={}&subject=alice", enc(&hidden(&theirs, "csrf"))),
    )
    .await;
    assert_eq!(status, 403, "not an operator");
    assert!(accepted(&a.url, &fresh).await);
    let (status, html) = post_form(
        &a.url,
        "/ui/sessions/end",
        &ops,
        format!("csrf={}&subject=alice", enc(&csrf)),
    )
    .await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Sessions ended"), "{html}");
    assert!(!accepted(&b.url, &fresh).await, "ended from the inbox");
    assert!(accepted(&a.url, &ops).await && accepted(&a.url, &bob).await);
}

/// `[agents.payer]`: an HTTP tool that waits for a decision.
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
input_schema = '{{"type": "object", "properties": {{"amount": {{"type": "number"}}}}, "required": ["amount"]}}'
"#
    )
}

/// A run of `agent` paused on a new thread of alice's: its id.
async fn paused_run(url: &str, agent: &str) -> String {
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
    p["id"].as_str().unwrap().to_string()
}

/// The secret rotates (`secret` new, the old one in `previous_secrets`):
/// runs that paused before stay decidable, from the inbox (not "decided
/// elsewhere") and from the API, a stateless paused response signed
/// before still resumes, and the sessions of before stay valid. Without
/// the previous secret they would all be refused (shown first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_run_stays_decidable_across_a_secret_rotation() {
    let pay = |id: &str| chat(call(id, "pay", json!({"amount": 40})));
    let provider = ReplayServer::start(vec![
        pay("c1"),
        pay("c2"),
        chat(call("c3", "refund", json!({"amount": 40}))),
        chat(text("Paid.")),
        chat(text("Paid too.")),
        chat(text("Refunded.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![
        Reply::json(200, &json!({"paid": 40})),
        Reply::json(200, &json!({"paid": 40})),
    ])
    .await;
    let dir = temp_dir();
    let tables = payer(&tool.url);
    let with_secrets = |top: &str| {
        config_with(
            &dir,
            &provider.url,
            "http://127.0.0.1:9",
            TOKENS,
            &Extra {
                top,
                tables: &tables,
                ..Extra::default()
            },
        )
    };
    let old = "secret = \"the-old-secret-0123456789\"";
    let server = start(&with_secrets(old));
    let in_ui = paused_run(&server.url, "payer").await;
    let in_api = paused_run(&server.url, "payer").await;
    let (status, stateless) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 40"}),
        ALICE,
    )
    .await;
    assert_eq!(status, 200, "{stateless}");
    assert_eq!(stateless["status"], "requires_approval");
    let cookie = login(&server.url, "tok-alice-123").await;
    drop(server);

    // Rotated without keeping the old secret: everything of before is refused.
    let server = start(&with_secrets("secret = \"the-new-secret-9876543210\""));
    assert!(!accepted(&server.url, &cookie).await);
    let (_, r) = get(&server.url, &format!("/v1/runs/{in_api}"), ALICE).await;
    let approve = |r: &Value| json!({"decisions": [{"tool_call_id": r["pending"][0]["tool_call_id"], "digest": r["pending"][0]["digest"], "decision": "approved"}]});
    let (status, e) = post(
        &server.url,
        &format!("/v1/runs/{in_api}/decisions"),
        &approve(&r),
        ALICE,
    )
    .await;
    assert_eq!(status, 400, "{e}");
    drop(server);

    // Rotated properly: the old secret verifies, the new one signs.
    let server = start(&with_secrets(
        "secret = \"the-new-secret-9876543210\"\nprevious_secrets = [\"the-old-secret-0123456789\"]",
    ));
    assert!(accepted(&server.url, &cookie).await, "a session of before");
    let (status, html) = page(&server.url, &format!("/ui/runs/{in_ui}"), &cookie).await;
    assert_eq!(status, 200, "{html}");
    let form = format!(
        "csrf={}&call.0.id={}&call.0.digest={}&call.0.decision=approve",
        enc(&hidden(&html, "csrf")),
        enc(&hidden(&html, "call.0.id")),
        enc(&hidden(&html, "call.0.digest")),
    );
    let (status, body) = post_form(
        &server.url,
        &format!("/ui/runs/{in_ui}/decide"),
        &cookie,
        form,
    )
    .await;
    assert!(!body.contains("decided elsewhere"), "{body}");
    assert_eq!(status, 303, "decided from the inbox: {body}");
    let (_, r) = get(&server.url, &format!("/v1/runs/{in_api}"), ALICE).await;
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{in_api}/decisions"),
        &approve(&r),
        ALICE,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    let p = &stateless["pending"][0];
    let decision = json!({"tool_call_id": p["tool_call_id"], "digest": p["digest"], "decision": "answered",
        "content": [{"type": "text", "text": "refund #991 issued"}]});
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{}/decisions", stateless["id"].as_str().unwrap()),
        &json!({"decisions": [decision], "paused": stateless, "agent": "support"}),
        ALICE,
    )
    .await;
    assert_eq!(status, 200, "a stateless run paused before: {done}");
    assert_eq!(done["status"], "completed", "{done}");
    // What is new is signed with the new secret: a fresh session works
    // on a server that knows only the new one.
    let fresh = login(&server.url, "tok-alice-123").await;
    drop(server);
    let server = start(&with_secrets("secret = \"the-new-secret-9876543210\""));
    assert!(accepted(&server.url, &fresh).await);
    assert!(!accepted(&server.url, &cookie).await);
}

/// Login attempts: per address, every attempt counts (wrong tokens too),
/// and past the limit even the right token gets `429` with `Retry-After`;
/// per subject, logins with that subject's token count, wherever they
/// come from, and another subject is not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_attempts_are_limited_per_address_and_per_subject() {
    let dir = temp_dir();
    let per_address = config_with(
        &dir,
        "http://127.0.0.1:9",
        "http://127.0.0.1:9",
        TOKENS,
        &Extra {
            tables: "[sessions]\nlogin_attempts_per_address = 3\n",
            ..Extra::default()
        },
    );
    let server = start(&per_address);
    let mut statuses = Vec::new();
    for token in [
        "wrong-1",
        "wrong-2",
        "tok-alice-123",
        "wrong-3",
        "tok-alice-123",
    ] {
        let (status, cookie, retry, body) = try_login(&server.url, token).await;
        if status == 429 {
            let retry: u64 = retry.expect("Retry-After").parse().unwrap();
            assert!((1..=60).contains(&retry), "{retry}");
            assert!(cookie.is_none());
            assert!(
                body.contains("Too many login attempts from this address: try again in"),
                "{body}"
            );
        }
        statuses.push(status);
    }
    assert_eq!(statuses, [401, 401, 303, 429, 429]);
    drop(server);

    let dir = temp_dir();
    let per_subject = config_with(
        &dir,
        "http://127.0.0.1:9",
        "http://127.0.0.1:9",
        TOKENS,
        &Extra {
            tables: "[sessions]\nlogin_attempts_per_subject = 2\n",
            ..Extra::default()
        },
    );
    let server = start(&per_subject);
    let mut refused = 0;
    for _ in 0..5 {
        let (status, _, retry, body) = try_login(&server.url, "tok-alice-123").await;
        if status == 429 {
            refused += 1;
            assert!(retry.is_some());
            assert!(body.contains("Too many logins for this subject"), "{body}");
        } else {
            assert_eq!(status, 303, "{body}");
        }
    }
    assert_eq!(refused, 3, "two logins, then refused");
    login(&server.url, "tok-bob-4567").await;
    let (status, ..) = try_login(&server.url, "wrong").await;
    assert_eq!(status, 401, "a wrong token names no subject");
}

/// An open live stream (`GET` of an `/events` page), its status.
async fn open_stream(url: &str, path: &str, cookie: &str) -> (u16, reqwest::Response) {
    let resp = client()
        .get(format!("{url}{path}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp)
}

/// A session holds at most `max_live_streams` live streams (the inbox's,
/// a run's, a thread's, together); the next is refused with `429` and
/// says why; another session has its own; closing one frees its slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_streams_are_capped_per_session() {
    let provider = ReplayServer::start(vec![chat(call("c1", "pay", json!({"amount": 40})))]).await;
    let dir = temp_dir();
    let tables = format!(
        "{}\n[sessions]\nmax_live_streams = 3\n",
        payer("http://127.0.0.1:9")
    );
    let cfg = config_with(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        TOKENS,
        &Extra {
            tables: &tables,
            ..Extra::default()
        },
    );
    let server = start(&cfg);
    let run = paused_run(&server.url, "payer").await;
    let (_, r) = get(&server.url, &format!("/v1/runs/{run}"), ALICE).await;
    let thread = r["thread_id"].as_str().unwrap().to_string();
    let cookie = login(&server.url, "tok-alice-123").await;
    let mut open = Vec::new();
    for path in [
        "/ui/events".to_string(),
        format!("/ui/runs/{run}/events"),
        format!("/ui/threads/{thread}/events"),
    ] {
        let (status, resp) = open_stream(&server.url, &path, &cookie).await;
        assert_eq!(status, 200, "{path}");
        open.push(resp);
    }
    for path in ["/ui/events".to_string(), format!("/ui/runs/{run}/events")] {
        let (status, resp) = open_stream(&server.url, &path, &cookie).await;
        assert_eq!(status, 429, "{path}");
        let body = resp.text().await.unwrap();
        assert!(
            body.contains("This session already has 3 live pages open (sessions.max_live_streams)"),
            "{body}"
        );
    }
    // Another session (of the same subject) has its own.
    let other = login(&server.url, "tok-alice-123").await;
    let (status, _kept) = open_stream(&server.url, "/ui/events", &other).await;
    assert_eq!(status, 200);
    // Closing one frees its slot (once the server sees the connection
    // gone: it is asked again until then; no time is asserted).
    drop(open.pop());
    let mut tries = 0;
    let reopened = loop {
        let (status, resp) = open_stream(&server.url, "/ui/events", &cookie).await;
        if status == 200 {
            break resp;
        }
        assert_eq!(status, 429);
        tries += 1;
        assert!(tries < 600, "the closed stream's slot was never freed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let (status, _) = open_stream(&server.url, "/ui/events", &cookie).await;
    assert_eq!(status, 429, "full again");
    drop(reopened);
}
