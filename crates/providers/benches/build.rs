//! What building a model costs: from a model string or the builder, with
//! the process's shared HTTP client (TLS set up once), against building a
//! client of its own (what every model paid before).
//!
//! Run: `cargo bench -p parlance-providers --bench build`

use divan::black_box;
use parlance_providers::{ModelBuilder, Provider};

fn main() {
    divan::main();
}

fn env(var: &str) -> Option<String> {
    (var == "ANTHROPIC_API_KEY").then(|| "sk-ant-bench".to_string())
}

#[divan::bench]
fn from_a_string_shared_client() {
    let m = ModelBuilder::from_spec(black_box("anthropic:claude-sonnet-4-5"))
        .unwrap()
        .build_with_env(env)
        .unwrap();
    black_box(m);
}

#[divan::bench]
fn builder_with_a_client_of_its_own() {
    parlance_providers::transport::install_crypto();
    let client = reqwest::Client::builder().build().unwrap();
    let m = Provider::ANTHROPIC
        .model("claude-sonnet-4-5")
        .api_key("sk-ant-bench")
        .http_client(client)
        .build()
        .unwrap();
    black_box(m);
}
