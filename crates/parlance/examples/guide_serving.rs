//! The server of `parlance serve`, embedded in a program of yours
//! (docs/guide/serving.md): the same configuration, the same API.
//! `cargo run -p parlance-ai --features server --example guide_serving -- parlance.toml`

#[cfg(feature = "server")]
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let path = std::env::args().nth(1);
    // Every setting can also come from the environment (PARLANCE__...,
    // PARLANCE_LISTEN, PARLANCE_STORE_URL...), which wins. A bad one is a
    // `ConfigError` naming the file, the setting or the variable; a server
    // that cannot start, a `StartError` naming the store, agent or address.
    let config = parlance::server::Config::load(path.as_deref())?;
    parlance::server::serve(config).await?;
    Ok(())
}

#[cfg(not(feature = "server"))]
fn main() {
    eprintln!("this example needs the `server` feature: --features server");
    std::process::exit(2);
}
