//! The local model's speed on this machine: load time, prefill and decode
//! tokens per second, greedy and sampled (Parlance's defaults), with the
//! default threads (the physical cores) and with one thread, and what
//! fitting a long conversation into the context costs.
//!
//! Run: `cargo bench -p parlance-local --bench local` (after `parlance model pull`).

use std::time::Instant;

use parlance_format::Message;
use parlance_local::{LocalModel, default_model_path};
use parlance_model::{Model, ModelRequest};
use serde_json::json;

fn main() {
    let path = std::env::var("PARLANCE_TEST_MODEL")
        .map(Into::into)
        .unwrap_or_else(|_| default_model_path());
    if !path.exists() {
        println!("no model at {} (run `parlance model pull`)", path.display());
        return;
    }
    let t0 = Instant::now();
    let model = LocalModel::load(&path).unwrap();
    let load = t0.elapsed();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let run = |req: &ModelRequest| {
        let m = rt.block_on(model.generate(req)).unwrap();
        let u = m.usage.unwrap();
        let l = m.metadata.as_ref().unwrap()["parlance_local"].clone();
        (u, l)
    };
    println!(
        "local model {} (load {:.3} s; {} threads by default: the physical cores)",
        path.display(),
        load.as_secs_f64(),
        model.threads()
    );
    let long =
        "Summarise: ".to_string() + &"The quick brown fox jumps over the lazy dog. ".repeat(30);
    for threads in [model.threads(), 1] {
        let local = |extra: serde_json::Value| {
            let mut o = json!({"num_thread": threads});
            o.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            o
        };
        // Prefill: a long prompt and one token.
        let mut req = ModelRequest {
            messages: vec![Message::user(long.clone())],
            ..Default::default()
        };
        req.options.max_tokens = Some(1);
        req.options.extra.insert("local".into(), local(json!({})));
        let (u, l) = run(&req);
        println!(
            "  {threads} thread(s)  prefill         {:>4.0} tokens/s ({} tokens)",
            u.input_tokens as f64 / (l["prompt_ms"].as_f64().unwrap() / 1000.0),
            u.input_tokens
        );
        // Decode: a short prompt and up to 128 tokens; greedy without the
        // penalty (the old path), then Parlance's sampled defaults.
        for (what, temperature, extra) in [
            (
                "decode greedy  ",
                0.0,
                json!({"repeat_penalty": 1.0, "loop_guard": false}),
            ),
            ("decode sampled ", 0.8, json!({})),
        ] {
            let mut req = ModelRequest {
                messages: vec![Message::user(
                    "Tell me a long story about a lighthouse keeper.",
                )],
                ..Default::default()
            };
            req.options.max_tokens = Some(128);
            req.options.temperature = Some(temperature);
            req.options.seed = Some(1);
            req.options.extra.insert("local".into(), local(extra));
            let (u, l) = run(&req);
            println!(
                "  {threads} thread(s)  {what} {:>4.0} tokens/s ({} tokens)",
                u.output_tokens as f64 / (l["decode_ms"].as_f64().unwrap() / 1000.0),
                u.output_tokens
            );
        }
    }
    // Fitting: 200 turns (about 9,000 tokens) into a 2,048-token context.
    let mut messages = Vec::new();
    for i in 0..200 {
        messages.push(Message::user(format!(
            "Question {i}: what is {i} times two?"
        )));
        messages.push(Message::assistant(format!(
            "{i} times two is {}; ask me anything else about numbers.",
            i * 2
        )));
    }
    messages.push(Message::user("Thanks!"));
    let mut req = ModelRequest {
        messages,
        ..Default::default()
    };
    req.options.max_tokens = Some(1);
    req.options
        .extra
        .insert("local".into(), json!({"num_ctx": 2048}));
    let t = Instant::now();
    let (u, l) = run(&req);
    let total = t.elapsed().as_secs_f64() * 1000.0;
    println!(
        "  fitting 401 messages into 2,048 tokens: {:.0} ms besides prefill ({} prompt tokens kept)",
        total - l["prompt_ms"].as_f64().unwrap() - l["decode_ms"].as_f64().unwrap(),
        u.input_tokens
    );
}
