//! Serving agents over HTTP: the same server as `parlance serve`, from a
//! TOML configuration (agents, tools, providers, the store, tokens).
//!
//! `cargo run -p parlance-ai --features server --example serving -- parlance.toml`
//! then `curl -d '{"agent": "support", "input": "Hi"}' 127.0.0.1:8080/v1/runs`

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let path = std::env::args().nth(1);
    // Every setting can also come from the environment (PARLANCE__...).
    // Errors are typed: `ConfigError` names the file, setting or variable,
    // `StartError` the store, agent or address at fault.
    let config = parlance::server::Config::load(path.as_deref())?;
    parlance::server::serve(config).await?;
    Ok(())
}
