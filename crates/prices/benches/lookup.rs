//! What pricing costs a process and a model call: reading the built-in
//! table (once per process, on the first priced answer: part of a cold
//! start's first run), and a lookup per model call, for a model the table
//! knows and for one it does not (a local or mock model: every rule of
//! the provider is tried, its patterns included).
//!
//! Run: `cargo bench -p parlance-prices --bench lookup`.

use divan::{Bencher, black_box};
use parlance_format::Usage;
use parlance_prices::{BUILTIN_JSON, PriceTable};

fn main() {
    divan::main();
}

const USAGE: Usage = Usage {
    input_tokens: 120,
    output_tokens: 60,
    cached_tokens: 0,
    cache_write_tokens: None,
    reasoning_tokens: None,
};

/// The built-in table read, and its first lookup: what the first priced
/// answer of a process pays.
#[divan::bench]
fn read_builtin_and_first_lookup(b: Bencher) {
    b.bench(|| PriceTable::read_builtin().cost("openai", "mock-model", &USAGE));
}

/// The same table read as a user's file is (every pattern compiled as it
/// is read, so that a bad one is an error).
#[divan::bench]
fn read_as_a_file_and_first_lookup(b: Bencher) {
    b.bench(|| {
        let t = PriceTable::from_json_str(black_box(BUILTIN_JSON), "prices.json").unwrap();
        t.cost("openai", "mock-model", &USAGE)
    });
}

#[divan::bench]
fn cost_known_model(b: Bencher) {
    let t = PriceTable::builtin();
    assert!(t.cost("openai", "gpt-4o-mini", &USAGE).is_some());
    b.bench(|| t.cost(black_box("openai"), black_box("gpt-4o-mini"), &USAGE));
}

#[divan::bench]
fn cost_unknown_model(b: Bencher) {
    let t = PriceTable::builtin();
    assert!(t.cost("openai", "mock-model", &USAGE).is_none());
    b.bench(|| t.cost(black_box("openai"), black_box("mock-model"), &USAGE));
}
