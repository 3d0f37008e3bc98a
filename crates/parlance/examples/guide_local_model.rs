//! The embedded local model (docs/guide/get-started.md): no key, no
//! server, no network once it is fetched (`parlance model pull`).
//! `cargo run -p parlance-ai --features local --example guide_local_model`

#[cfg(feature = "local")]
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    use parlance::{Agent, ModelOptions};

    println!(
        "model file: {}",
        parlance::local::default_model_path().display()
    );
    let agent = Agent::builder(parlance::model("local")?)
        .instructions("Answer in one short sentence.")
        .options(ModelOptions {
            max_tokens: Some(32),
            ..Default::default()
        })
        .build()?;
    let r = agent
        .run("What is the capital of France?")
        .await
        .into_result()?;
    let provider = r.messages.last().and_then(|m| m.provider.clone());
    println!(
        "{} {} {}",
        r.status.as_str(),
        provider.unwrap_or_default(),
        r.usage.output_tokens > 0
    );
    println!("{}", r.text());
    Ok(())
}

#[cfg(not(feature = "local"))]
fn main() {
    eprintln!("this example needs the `local` feature: --features local");
    std::process::exit(2);
}
