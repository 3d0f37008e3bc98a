//! The local model's speed on this machine: load time, prefill and decode
//! tokens per second (greedy, all cores).
//!
//! Run: `cargo bench -p parlance-local --bench local` (after `parlance model pull`).

use std::time::Instant;

use parlance_format::Message;
use parlance_local::{LocalModel, default_model_path};
use parlance_model::{Model, ModelRequest};

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
    let long =
        "Summarise: ".to_string() + &"The quick brown fox jumps over the lazy dog. ".repeat(30);
    let mut req = ModelRequest {
        messages: vec![Message::user(long)],
        ..Default::default()
    };
    // Prefill: the prompt and one token.
    req.options.max_tokens = Some(1);
    let t = Instant::now();
    let m = rt.block_on(model.generate(&req)).unwrap();
    let prefill = t.elapsed();
    let prompt_tokens = m.usage.unwrap().input_tokens;
    // Decode: a short prompt and many tokens.
    let mut req = ModelRequest {
        messages: vec![Message::user(
            "Tell me a long story about a lighthouse keeper.",
        )],
        ..Default::default()
    };
    req.options.max_tokens = Some(128);
    let t = Instant::now();
    let m = rt.block_on(model.generate(&req)).unwrap();
    let decode = t.elapsed();
    let u = m.usage.unwrap();
    println!(
        "local model {} ({} threads)",
        path.display(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("  load     {:.3} s", load.as_secs_f64());
    println!(
        "  prefill  {:.0} tokens/s ({prompt_tokens} tokens)",
        prompt_tokens as f64 / prefill.as_secs_f64()
    );
    println!(
        "  decode   {:.0} tokens/s ({} tokens, prompt {} included in the time)",
        u.output_tokens as f64 / decode.as_secs_f64(),
        u.output_tokens,
        u.input_tokens
    );
}
