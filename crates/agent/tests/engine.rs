//! The tool engine, row by row of the seed's outcome tables, for async and
//! blocking tools. Timeouts run on a paused clock, not real sleeps.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use parlance_agent::{
    CallReport, CallSettings, EventSink, InvalidArgumentsBudget, Json, OnToolException, Tool,
    ToolBox, ToolContext, ToolError, ToolEvent,
};
use parlance_format::{Block, ToolCall, ToolStatus};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Order {
    /// The order id.
    order_id: String,
}

/// What each tool does depends on the order id it is given.
async fn order_tool(
    args: Order,
    _ctx: ToolContext,
) -> Result<Json<Value>, parlance_agent::ToolFailure> {
    behave(&args.order_id)?;
    if args.order_id == "sleep" {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    Ok(Json(
        json!({"order_id": args.order_id, "status": "shipped"}),
    ))
}

fn blocking_order_tool(
    args: Order,
    ctx: ToolContext,
) -> Result<Json<Value>, parlance_agent::ToolFailure> {
    behave(&args.order_id)?;
    if args.order_id == "sleep" {
        // A blocking tool cannot be stopped from outside; a well-behaved
        // one watches its cancellation token.
        while !ctx.cancel.is_cancelled() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    Ok(Json(
        json!({"order_id": args.order_id, "status": "shipped"}),
    ))
}

fn behave(order_id: &str) -> Result<(), parlance_agent::ToolFailure> {
    match order_id {
        "missing" => Err(ToolError::new("no order A-9999").into()),
        "parse" => {
            let _: u32 = "12x".parse()?;
            Ok(())
        }
        "panic" => panic!("card number missing for customer 42"),
        _ => Ok(()),
    }
}

fn toolbox() -> ToolBox {
    let mut tb = ToolBox::new();
    tb.add(Tool::new("get_order", "Look up an order.", order_tool))
        .unwrap();
    tb.add(Tool::blocking(
        "get_order_sync",
        "Look up an order (blocking).",
        blocking_order_tool,
    ))
    .unwrap();
    tb
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

async fn run(tb: &ToolBox, c: &ToolCall, settings: &CallSettings) -> CallReport {
    tb.run_call(0, c, &c.arguments, settings, None).await
}

fn text(r: &CallReport) -> String {
    r.result.content.iter().filter_map(Block::as_text).collect()
}

#[tokio::test]
async fn outcome_table_for_async_and_blocking_tools() {
    let tb = toolbox();
    let s = CallSettings::default();
    for tool in ["get_order", "get_order_sync"] {
        // Returns a value: the value is the result.
        let r = run(&tb, &call("c1", tool, json!({"order_id": "A-1"})), &s).await;
        assert_eq!(r.result.status, ToolStatus::Ok, "{tool}");
        assert_eq!(
            r.result.content,
            vec![Block::json(json!({"order_id": "A-1", "status": "shipped"}))]
        );
        assert_eq!(r.cause, None);

        // Returns a ToolError: its message goes back.
        let r = run(&tb, &call("c2", tool, json!({"order_id": "missing"})), &s).await;
        assert_eq!(r.result.status, ToolStatus::Error);
        assert_eq!(text(&r), "no order A-9999");

        // Any other error: tool_failed with the type and message; the run goes on.
        let r = run(&tb, &call("c3", tool, json!({"order_id": "parse"})), &s).await;
        assert_eq!(r.result.status, ToolStatus::ToolFailed);
        assert_eq!(
            text(&r),
            format!(
                "{tool} failed: core::num::error::ParseIntError: invalid digit found in string"
            )
        );
        assert_eq!(
            r.cause.as_ref().unwrap().error_type,
            "core::num::error::ParseIntError"
        );

        // A panic: tool_failed too.
        let r = run(&tb, &call("c4", tool, json!({"order_id": "panic"})), &s).await;
        assert_eq!(r.result.status, ToolStatus::ToolFailed);
        assert_eq!(
            text(&r),
            format!("{tool} failed: panic: card number missing for customer 42")
        );

        // Invalid arguments never reach the function.
        let r = run(&tb, &call("c5", tool, json!({"order": "A-1"})), &s).await;
        assert_eq!(r.result.status, ToolStatus::InvalidArguments);
        assert_eq!(
            text(&r),
            format!(
                "Invalid arguments for {tool}:\norder: unexpected property\norder_id: required property missing"
            )
        );
    }
}

#[tokio::test]
async fn unknown_tools_and_malformed_json_are_results() {
    let tb = toolbox();
    let s = CallSettings::default();
    let r = run(&tb, &call("c1", "get_ordr", json!({})), &s).await;
    assert_eq!(r.result.status, ToolStatus::Error);
    assert_eq!(
        text(&r),
        "unknown tool \"get_ordr\"; available tools: get_order, get_order_sync"
    );

    let mut c = call("c2", "get_order", Value::Null);
    c.raw_arguments = Some("{\"order_id\": \"A-1\"".into());
    let r = run(&tb, &c, &s).await;
    assert_eq!(r.result.status, ToolStatus::InvalidArguments);
    assert_eq!(
        text(&r),
        "Invalid arguments for get_order:\n(arguments): not valid JSON: EOF while parsing an object at line 1 column 18"
    );
}

#[tokio::test(start_paused = true)]
async fn async_timeout_cancels_the_call() {
    let tb = toolbox();
    let s = CallSettings::default();
    let started = tokio::time::Instant::now();
    let r = run(
        &tb,
        &call("c1", "get_order", json!({"order_id": "sleep"})),
        &s,
    )
    .await;
    assert_eq!(r.result.status, ToolStatus::Timeout);
    assert_eq!(text(&r), "get_order timed out after 60s and was cancelled");
    assert_eq!(
        r.result.artifact,
        Some(json!({"timeout": {"after_ms": 60000, "stopped": true}}))
    );
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(60),
        "the default is 60 s"
    );

    // Per agent (settings) and per tool.
    let short = CallSettings {
        timeout: Duration::from_millis(1500),
        ..CallSettings::default()
    };
    let r = run(
        &tb,
        &call("c2", "get_order", json!({"order_id": "sleep"})),
        &short,
    )
    .await;
    assert_eq!(text(&r), "get_order timed out after 1.5s and was cancelled");

    let mut tb2 = ToolBox::new();
    tb2.add(Tool::new("get_order", "x", order_tool).timeout(Duration::from_secs(5)))
        .unwrap();
    let t0 = tokio::time::Instant::now();
    let r = run(
        &tb2,
        &call("c3", "get_order", json!({"order_id": "sleep"})),
        &s,
    )
    .await;
    assert_eq!(r.result.status, ToolStatus::Timeout);
    assert_eq!(t0.elapsed(), Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn a_detached_tool_that_times_out_is_told_to_stop_and_said_to_be_maybe_running() {
    // The future only waits for work elsewhere (a spawned task here, a
    // JavaScript promise in the npm package): dropping it stops nothing.
    let finished = Arc::new(AtomicUsize::new(0));
    let f = finished.clone();
    let mut tb = ToolBox::new();
    tb.add(
        Tool::new("remote", "x", move |_: Value, ctx: ToolContext| {
            let f = f.clone();
            let work = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(90)).await;
                f.fetch_add(1, Ordering::SeqCst);
            });
            async move {
                ctx.cancel.cancelled().await;
                drop(work); // detached: it runs on whatever happens to this call
                Ok::<_, ToolError>("done")
            }
        })
        .detached(),
    )
    .unwrap();
    let t = tb.get("remote").unwrap();
    assert!(!t.stops_at_timeout());
    let r = run(
        &tb,
        &call("c", "remote", json!({})),
        &CallSettings::default(),
    )
    .await;
    assert_eq!(r.result.status, ToolStatus::Timeout);
    assert_eq!(
        text(&r),
        "remote timed out after 60s; it was told to stop but may still be running, and its result will be discarded"
    );
    assert_eq!(
        r.result.artifact,
        Some(json!({"timeout": {"after_ms": 60000, "stopped": false}}))
    );
    // And it was: the work elsewhere finishes after the timeout.
    tokio::time::sleep(Duration::from_secs(31)).await;
    assert_eq!(finished.load(Ordering::SeqCst), 1);
    assert!(Tool::new("t", "x", order_tool).stops_at_timeout());
    assert!(!Tool::blocking("t", "x", blocking_order_tool).stops_at_timeout());
}

#[tokio::test(start_paused = true)]
async fn async_timeout_drops_the_future() {
    struct Dropped(Arc<AtomicUsize>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let d = drops.clone();
    let mut tb = ToolBox::new();
    tb.add(Tool::new(
        "slow",
        "x",
        move |_: Value, _ctx: ToolContext| {
            let guard = Dropped(d.clone());
            async move {
                tokio::time::sleep(Duration::from_secs(100)).await;
                drop(guard);
                Ok::<_, ToolError>("done")
            }
        },
    ))
    .unwrap();
    let r = run(&tb, &call("c", "slow", json!({})), &CallSettings::default()).await;
    assert_eq!(r.result.status, ToolStatus::Timeout);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the tool's future was dropped at the timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn blocking_timeout_abandons_the_thread_and_discards_its_late_result() {
    let tb = Arc::new(toolbox());
    let tb2 = tb.clone();
    let task = tokio::spawn(async move {
        let c = call("c1", "get_order_sync", json!({"order_id": "sleep"}));
        run(&tb2, &c, &CallSettings::default()).await
    });
    // A running blocking task keeps the paused clock from advancing by
    // itself: move it by hand once the call is waiting.
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    tokio::time::advance(Duration::from_secs(60)).await;
    let r = task.await.unwrap();
    assert_eq!(r.result.status, ToolStatus::Timeout);
    // A blocking thread cannot be stopped: the model is told so, not
    // that the call was cancelled.
    assert_eq!(
        text(&r),
        "get_order_sync timed out after 60s; it was told to stop but may still be running, and its result will be discarded"
    );
    assert_eq!(
        r.result.artifact,
        Some(json!({"timeout": {"after_ms": 60000, "stopped": false}}))
    );
    // The worker saw its cancellation token and returned; that late result
    // is discarded (and logged), never delivered.
    for _ in 0..1000 {
        if tb.late_results_discarded() == 1 {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the late result was not discarded");
}

#[tokio::test]
async fn blocking_tools_do_not_stall_the_runtime() {
    // One worker thread for async tasks: a blocking tool holding it would
    // stop the async tool from finishing first.
    let mut tb = ToolBox::new();
    tb.add(Tool::blocking(
        "block",
        "x",
        |_: Value, _ctx: ToolContext| {
            std::thread::sleep(Duration::from_millis(300));
            Ok::<_, ToolError>("blocked")
        },
    ))
    .unwrap();
    tb.add(Tool::new(
        "quick",
        "x",
        |_: Value, _ctx: ToolContext| async { Ok::<_, ToolError>("quick") },
    ))
    .unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let o = order.clone();
    let sink: EventSink = Arc::new(move |e: &ToolEvent| {
        if let ToolEvent::Finished { name, .. } = e {
            o.lock().unwrap().push(name.clone());
        }
    });
    let a = call("a", "block", json!({}));
    let b = call("b", "quick", json!({}));
    let reports = tb
        .run_calls(
            &[(&a, &a.arguments), (&b, &b.arguments)],
            &CallSettings::default(),
            Some(&sink),
        )
        .await;
    assert_eq!(
        *order.lock().unwrap(),
        ["quick", "block"],
        "quick finished while block was blocking"
    );
    assert_eq!(
        reports[0].result.tool_call_id, "a",
        "results still in call order"
    );
    assert_eq!(reports[1].result.tool_call_id, "b");
}

#[tokio::test]
async fn return_generic_hides_the_detail_from_the_model() {
    let tb = toolbox();
    let s = CallSettings {
        on_tool_exception: OnToolException::ReturnGeneric,
        ..CallSettings::default()
    };
    for tool in ["get_order", "get_order_sync"] {
        for (arg, detail) in [
            ("parse", "invalid digit found in string"),
            ("panic", "customer 42"),
        ] {
            let r = run(&tb, &call("c", tool, json!({"order_id": arg})), &s).await;
            assert_eq!(r.result.status, ToolStatus::ToolFailed);
            assert_eq!(text(&r), format!("{tool} failed."));
            let sent = serde_json::to_string(&r.result.content).unwrap();
            assert!(
                !sent.contains(detail),
                "the content a model reads must not hold {detail:?}"
            );
            let artifact = serde_json::to_string(r.result.artifact.as_ref().unwrap()).unwrap();
            assert!(
                artifact.contains(detail),
                "the artifact keeps {detail:?}: {artifact}"
            );
        }
        // ToolErrors and invalid arguments still go back in full.
        let r = run(&tb, &call("c", tool, json!({"order_id": "missing"})), &s).await;
        assert_eq!(text(&r), "no order A-9999");
        assert_eq!(r.result.artifact, None);
    }
}

#[tokio::test]
async fn fail_policy_reports_the_cause() {
    let tb = toolbox();
    let s = CallSettings {
        on_tool_exception: OnToolException::Fail,
        ..CallSettings::default()
    };
    let r = run(
        &tb,
        &call("c", "get_order_sync", json!({"order_id": "panic"})),
        &s,
    )
    .await;
    assert_eq!(r.result.status, ToolStatus::ToolFailed);
    let cause = r.cause.unwrap();
    assert_eq!(cause.tool, "get_order_sync");
    assert_eq!(cause.error_type, "panic");
    assert_eq!(cause.message, "card number missing for customer 42");
}

#[tokio::test(start_paused = true)]
async fn results_come_back_in_call_order_with_random_durations() {
    use rand::{Rng, SeedableRng};
    let mut tb = ToolBox::new();
    tb.add(Tool::new(
        "wait",
        "x",
        |args: Value, ctx: ToolContext| async move {
            let ms = args["ms"].as_u64().unwrap();
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, ToolError>(format!("{} waited {ms} ms", ctx.call_id))
        },
    ))
    .unwrap();
    let mut first: Option<String> = None;
    for seed in 0..20u64 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let calls: Vec<ToolCall> = (0..12)
            .map(|i| {
                call(
                    &format!("call_{i}"),
                    "wait",
                    json!({"ms": rng.random_range(0..50) * 10 * (i % 3 + 1)}),
                )
            })
            .collect();
        // Same calls, different durations per seed would change content;
        // so compare only the ids/status order, and serialise for stability.
        let pairs: Vec<(&ToolCall, &Value)> = calls.iter().map(|c| (c, &c.arguments)).collect();
        let finished = Arc::new(Mutex::new(Vec::new()));
        let f = finished.clone();
        let sink: EventSink = Arc::new(move |e: &ToolEvent| {
            if let ToolEvent::Finished { index, .. } = e {
                f.lock().unwrap().push(*index);
            }
        });
        let reports = tb
            .run_calls(&pairs, &CallSettings::default(), Some(&sink))
            .await;
        let ids: Vec<&str> = reports
            .iter()
            .map(|r| r.result.tool_call_id.as_str())
            .collect();
        let want: Vec<String> = (0..12).map(|i| format!("call_{i}")).collect();
        assert_eq!(ids, want);
        let order = finished.lock().unwrap().clone();
        assert_eq!(order.len(), 12);
        let shape: Vec<String> = reports
            .iter()
            .map(|r| format!("{}:{:?}", r.result.tool_call_id, r.result.status))
            .collect();
        let shape = shape.join(",");
        assert_eq!(first.get_or_insert(shape.clone()), &shape);
    }
    // Identical inputs give byte-identical serialised results whatever the
    // finishing order (concurrency limits change the order, not the bytes).
    let calls: Vec<ToolCall> = (0..8)
        .map(|i| call(&format!("c{i}"), "wait", json!({"ms": (8 - i) * 7})))
        .collect();
    let pairs: Vec<(&ToolCall, &Value)> = calls.iter().map(|c| (c, &c.arguments)).collect();
    let mut outputs = Vec::new();
    for limit in [None, Some(1), Some(3)] {
        let s = CallSettings {
            concurrency: limit,
            ..CallSettings::default()
        };
        let reports = tb.run_calls(&pairs, &s, None).await;
        let results: Vec<_> = reports.into_iter().map(|r| r.result).collect();
        outputs.push(parlance_format::to_json(&results));
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
}

#[tokio::test(start_paused = true)]
async fn calls_run_concurrently_up_to_the_limit() {
    let mut tb = ToolBox::new();
    tb.add(Tool::new(
        "sleep1",
        "x",
        |_: Value, _ctx: ToolContext| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok::<_, ToolError>(())
        },
    ))
    .unwrap();
    let calls: Vec<ToolCall> = (0..6)
        .map(|i| call(&format!("c{i}"), "sleep1", json!({})))
        .collect();
    let pairs: Vec<(&ToolCall, &Value)> = calls.iter().map(|c| (c, &c.arguments)).collect();
    let t0 = tokio::time::Instant::now();
    tb.run_calls(&pairs, &CallSettings::default(), None).await;
    assert_eq!(t0.elapsed(), Duration::from_secs(1), "all six at once");
    let t0 = tokio::time::Instant::now();
    let s = CallSettings {
        concurrency: Some(2),
        ..CallSettings::default()
    };
    tb.run_calls(&pairs, &s, None).await;
    assert_eq!(t0.elapsed(), Duration::from_secs(3), "two at a time");
}

#[tokio::test(start_paused = true)]
async fn the_context_names_the_run_and_call() {
    let mut tb = ToolBox::new();
    tb.add(Tool::new(
        "ctx",
        "x",
        |_: Value, ctx: ToolContext| async move {
            Ok::<_, ToolError>(json!({
                "run": &*ctx.run_id,
                "thread": ctx.thread_id.as_deref(),
                "call": &*ctx.call_id,
                "deadline_in_ms": (ctx.deadline - tokio::time::Instant::now()).as_millis() as u64,
                "cancelled": ctx.cancel.is_cancelled(),
            }))
        },
    ))
    .unwrap();
    let s = CallSettings {
        run_id: Arc::from("run_7"),
        thread_id: Some(Arc::from("thr_1")),
        timeout: Duration::from_secs(10),
        ..CallSettings::default()
    };
    let r = run(&tb, &call("call_3", "ctx", json!({})), &s).await;
    assert_eq!(
        r.result.content,
        vec![Block::json(
            json!({"run": "run_7", "thread": "thr_1", "call": "call_3", "deadline_in_ms": 10000, "cancelled": false})
        )]
    );
}

#[tokio::test]
async fn events_report_start_and_finish_with_timing() {
    let tb = toolbox();
    let events = Arc::new(Mutex::new(Vec::new()));
    let e = events.clone();
    let sink: EventSink = Arc::new(move |ev: &ToolEvent| e.lock().unwrap().push(ev.clone()));
    let a = call("a", "get_order", json!({"order_id": "A-1"}));
    let b = call("b", "get_order", json!({"bad": 1}));
    tb.run_calls(
        &[(&a, &a.arguments), (&b, &b.arguments)],
        &CallSettings::default(),
        Some(&sink),
    )
    .await;
    let events = events.lock().unwrap();
    let starts: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, ToolEvent::Started { .. }))
        .collect();
    assert_eq!(
        starts.len(),
        1,
        "a call with invalid arguments never starts"
    );
    let finished: Vec<(usize, ToolStatus)> = events
        .iter()
        .filter_map(|e| match e {
            ToolEvent::Finished { index, status, .. } => Some((*index, *status)),
            _ => None,
        })
        .collect();
    assert!(finished.contains(&(0, ToolStatus::Ok)));
    assert!(finished.contains(&(1, ToolStatus::InvalidArguments)));
}

#[test]
fn invalid_argument_budget_per_agent_and_per_tool() {
    let mut tb = ToolBox::new();
    tb.add(Tool::new("a", "x", |_: Value, _c: ToolContext| async {
        Ok::<_, ToolError>(())
    }))
    .unwrap();
    tb.add(
        Tool::new("b", "x", |_: Value, _c: ToolContext| async {
            Ok::<_, ToolError>(())
        })
        .max_invalid_arguments(1),
    )
    .unwrap();
    let mut budget = InvalidArgumentsBudget::new(3);
    assert!(budget.record("a", &tb).is_ok());
    assert!(budget.record("b", &tb).is_ok());
    let e = budget.record("b", &tb).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the model sent invalid arguments 2 times to b, more than the 1 allowed"
    );
    let mut budget = InvalidArgumentsBudget::new(2);
    budget.record("a", &tb).unwrap();
    budget.record("a", &tb).unwrap();
    let e = budget.record("a", &tb).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the model sent invalid arguments 3 times, more than the 2 allowed"
    );
}

#[test]
fn registering_checks_schemas_and_names() {
    let mut tb = ToolBox::new();
    let bad = Tool::new("bad", "x", |_: Value, _c: ToolContext| async {
        Ok::<_, ToolError>(())
    })
    .with_schema(json!({"type": "object", "properties": {"a": {"type": "strin"}}}));
    let e = tb.add(bad).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid input schema for tool \"bad\""),
        "{e}"
    );
    tb.add(Tool::new("a", "x", |_: Value, _c: ToolContext| async {
        Ok::<_, ToolError>(())
    }))
    .unwrap();
    let e = tb
        .add(Tool::new("a", "x", |_: Value, _c: ToolContext| async {
            Ok::<_, ToolError>(())
        }))
        .unwrap_err();
    assert_eq!(e.to_string(), "two tools are named \"a\"");
}

/// Output over the limit (the agent's default 1 MiB, or the tool's own)
/// ends the call with a short error the model reads; nothing of it is kept.
#[tokio::test]
async fn tool_output_over_the_limit_is_dropped() {
    let mut tools = ToolBox::new();
    tools
        .add(Tool::new(
            "huge",
            "Answers a lot.",
            |a: Value, _c: ToolContext| async move {
                let n = a["n"].as_u64().unwrap_or(0) as usize;
                Ok::<_, ToolError>("x".repeat(n))
            },
        ))
        .unwrap();
    tools
        .add(
            Tool::new(
                "small",
                "Answers little.",
                |_: Value, _c: ToolContext| async move { Ok::<_, ToolError>("twelve bytes") },
            )
            .max_output(10),
        )
        .unwrap();
    let settings = CallSettings::default();
    let run = |name: &'static str, args: Value| {
        let call = ToolCall::new("c1", name, args.clone());
        let (tools, settings) = (&tools, &settings);
        async move { tools.run_call(0, &call, &args, settings, None).await }
    };
    let big = run("huge", json!({"n": 20 * 1024 * 1024})).await;
    assert_eq!(big.result.status, ToolStatus::Error);
    let text = big.result.content[0].as_text().unwrap().to_string();
    assert_eq!(
        text,
        "huge returned 20.0 MiB, more than its output limit of 1.0 MiB; the output was dropped"
    );
    assert!(serde_json::to_string(&big.result).unwrap().len() < 200);
    let fits = run("huge", json!({"n": 1000})).await;
    assert_eq!(fits.result.status, ToolStatus::Ok);
    let own = run("small", json!({})).await;
    assert_eq!(
        own.result.content[0].as_text(),
        Some(
            "small returned 37 bytes, more than its output limit of 10 bytes; the output was dropped"
        )
    );
}

/// The limit is on the result as JSON, escapes included, and a result of
/// exactly the limit fits: text of control characters (six bytes each in
/// JSON) is measured as written, not by its length.
#[tokio::test]
async fn tool_output_is_measured_as_json() {
    let mut tools = ToolBox::new();
    for (name, text, limit) in [
        ("escaped", "\u{1}".repeat(100), 560),
        ("exact", "x".repeat(100), 125),
        ("one_over", "x".repeat(100), 124),
    ] {
        tools
            .add(
                Tool::new(name, "Answers.", move |_: Value, _c: ToolContext| {
                    let text = text.clone();
                    async move { Ok::<_, ToolError>(text) }
                })
                .max_output(limit),
            )
            .unwrap();
    }
    let settings = CallSettings::default();
    let run = |name: &'static str| {
        let call = ToolCall::new("c1", name, json!({}));
        let (tools, settings) = (&tools, &settings);
        async move { tools.run_call(0, &call, &json!({}), settings, None).await }
    };
    let escaped = run("escaped").await;
    assert_eq!(
        escaped.result.content[0].as_text(),
        Some(
            "escaped returned 625 bytes, more than its output limit of 560 bytes; the output was dropped"
        )
    );
    let exact = run("exact").await;
    assert_eq!(exact.result.status, ToolStatus::Ok);
    assert_eq!(
        exact.result.content[0].as_text(),
        Some("x".repeat(100).as_str())
    );
    let over = run("one_over").await;
    assert_eq!(
        over.result.content[0].as_text(),
        Some(
            "one_over returned 125 bytes, more than its output limit of 124 bytes; the output was dropped"
        )
    );
}

/// A SKU as the tool accepts it: the schema says "a string", the type
/// says more (a `try_from` newtype, the Rust form of a validator).
#[derive(Deserialize, JsonSchema)]
#[serde(try_from = "String")]
#[schemars(with = "String")]
struct Sku(#[allow(dead_code)] String);

impl TryFrom<String> for Sku {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.starts_with("S-") {
            Ok(Sku(s))
        } else {
            Err(format!("must start with S-, got {s:?}"))
        }
    }
}

#[derive(Deserialize, JsonSchema)]
struct Line {
    #[allow(dead_code)]
    sku: Sku,
}

#[derive(Deserialize, JsonSchema)]
struct Basket {
    #[allow(dead_code)]
    items: Vec<Line>,
}

#[tokio::test]
async fn the_argument_types_own_refusal_names_its_path() {
    let mut tb = ToolBox::new();
    tb.add(Tool::new("basket", "x", |_: Basket| async { Ok("ok") }))
        .unwrap();
    let s = CallSettings {
        on_tool_exception: OnToolException::Fail,
        ..CallSettings::default()
    };
    let c = call(
        "c1",
        "basket",
        json!({"items": [{"sku": "S-1"}, {"sku": "X-1"}]}),
    );
    let r = run(&tb, &c, &s).await;
    assert_eq!(r.result.status, ToolStatus::InvalidArguments);
    assert_eq!(
        text(&r),
        "Invalid arguments for basket:\nitems[1].sku: must start with S-, got \"X-1\""
    );
    assert_eq!(
        r.cause, None,
        "a refusal is not a failure, whatever the policy"
    );
}

#[tokio::test]
async fn a_tools_own_check_reports_problems_as_the_schema_does() {
    use parlance_agent::{ArgumentProblem, PathStep};
    let refuse = |args: &Value| {
        let mut problems = vec![ArgumentProblem::new(
            [PathStep::from("items"), 0.into(), "first name".into()],
            "must not be blank\n(a name)",
        )];
        if args["from"].as_str() > args["to"].as_str() {
            problems.push(ArgumentProblem::new(
                Vec::<PathStep>::new(),
                "from must come before to",
            ));
        }
        ToolError::invalid_arguments(problems)
    };
    let mut tb = ToolBox::new();
    tb.add(Tool::new("plan", "x", move |a: Value| async move {
        Err::<(), _>(refuse(&a))
    }))
    .unwrap();
    tb.add(Tool::blocking(
        "plan_sync",
        "x",
        move |a: Value, _c: ToolContext| Err::<(), _>(refuse(&a)),
    ))
    .unwrap();
    let s = CallSettings::default();
    for tool in ["plan", "plan_sync"] {
        let c = call("c1", tool, json!({"from": "b", "to": "a"}));
        let r = run(&tb, &c, &s).await;
        assert_eq!(r.result.status, ToolStatus::InvalidArguments, "{tool}");
        assert_eq!(
            text(&r),
            format!(
                "Invalid arguments for {tool}:\nitems[0][\"first name\"]: must not be blank\\n(a name)\n(arguments): from must come before to"
            )
        );
        assert_eq!(r.cause, None);
    }
}
