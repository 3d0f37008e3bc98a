//! One store URL for every process (docs/guide/deploying.md): a SQLite
//! file on one machine, one PostgreSQL database for many servers
//! (`PARLANCE_STORE_URL`, as `parlance serve` reads it). Opening the store
//! creates and migrates its schema.
//! `cargo run -p parlance-ai --features store --example guide_deploying`

#[cfg(feature = "store")]
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    use parlance::store::Store;
    use serde_json::json;

    let url = std::env::var("PARLANCE_STORE_URL").unwrap_or("sqlite://parlance.db".into());
    let store = Store::open(&url).await?;
    let thread = store
        .create_thread(None, json!({"customer": "ada"}))
        .await?
        .id;
    println!(
        "{} {} {}",
        url.split(':').next().unwrap_or_default(),
        store.thread(&thread).await?.metadata,
        store.messages(&thread, 0, 1000).await?.len()
    );
    store.delete_thread(&thread).await?;
    Ok(())
}

#[cfg(not(feature = "store"))]
fn main() {
    eprintln!("this example needs the `store` feature: --features store");
    std::process::exit(2);
}
