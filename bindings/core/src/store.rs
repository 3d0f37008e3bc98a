//! The thread store for the packages: opening one with its settings, and
//! every operation on it as one query (`{"op": "thread", "threadId":
//! ...}`) answered with JSON — so a new store capability is one arm here
//! and one method in each package's `Store`.

use std::time::Duration;

use parlance::store::{Redactor, Store};
use serde_json::Value;

use crate::{BindError, Dialect, input};

/// How a store is opened, besides its URL.
#[derive(Debug, Default, Clone)]
pub struct StoreOptions {
    /// How long a run holds its thread without renewing (default 30 s).
    pub lease: Option<Duration>,
    /// Secrets scrubbed from everything stored.
    pub redact: Vec<String>,
}

impl StoreOptions {
    /// Reads `{"lease": ..., "redact": [...]}` in dialect `d` (a lease in
    /// seconds or milliseconds).
    pub fn read(v: Option<&Value>, d: Dialect) -> Result<StoreOptions, BindError> {
        let mut o = StoreOptions::default();
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return Ok(o);
        };
        let Value::Object(map) = v else {
            return Err(BindError::config("store options: expected an object"));
        };
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            match key.as_str() {
                "lease" => o.lease = Some(d.duration("lease", v)?),
                "redact" => {
                    let items = v.as_array().ok_or_else(|| {
                        BindError::config("redact: expected a list of secrets (strings)")
                    })?;
                    for (i, s) in items.iter().enumerate() {
                        let s = s.as_str().ok_or_else(|| {
                            BindError::config(format!("redact[{i}]: expected a string, got {s}"))
                        })?;
                        o.redact.push(s.to_string());
                    }
                }
                other => {
                    return Err(BindError::config(format!(
                        "store options: unknown option {other:?} (known: lease, redact)"
                    )));
                }
            }
        }
        Ok(o)
    }
}

/// Opens (and migrates) the store at `url` with `options`.
pub async fn open(url: &str, options: StoreOptions) -> Result<Store, BindError> {
    let mut store = Store::open(url).await?;
    if let Some(l) = options.lease {
        store = store.with_lease(l);
    }
    if !options.redact.is_empty() {
        store = store.with_redactor(Redactor::new(options.redact));
    }
    Ok(store)
}

fn string(q: &Value, key: &str) -> Result<String, BindError> {
    q.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| BindError::config(format!("{key}: expected a string")))
}

fn optional_string(q: &Value, key: &str) -> Result<Option<String>, BindError> {
    match q.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(BindError::config(format!(
            "{key}: expected a string, got {v}"
        ))),
    }
}

fn number(q: &Value, key: &str, default: u64, max: u64) -> Result<u64, BindError> {
    match q.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) if n <= max => Ok(n),
            _ => Err(BindError::config(format!(
                "{key}: expected a whole number from 0 to {max}, got {v}"
            ))),
        },
    }
}

fn limit(q: &Value) -> Result<u32, BindError> {
    match number(q, "limit", 100, 1000)? {
        0 => Err(BindError::config(
            "limit: expected a whole number from 1 to 1000, got 0",
        )),
        n => Ok(n as u32),
    }
}

fn to_value<T: parlance::serde::Serialize>(v: T) -> Value {
    serde_json::to_value(v).expect("store records serialise")
}

/// Answers one query on `store`. Names of fields are in dialect `d`
/// (`thread_id` / `threadId`); answers keep the store's own names (as
/// the HTTP API returns them).
///
/// | op | takes | answers |
/// |---|---|---|
/// | `create_thread` | `metadata`?, `owner`? | the thread |
/// | `spent` | `thread_id` | what the ledger counted: `{thread, owner_day, owner_month}`, each `{tokens, cost, model_calls, tool_calls}` (budgets) |
/// | `thread` | `thread_id` | the thread (id, owner, metadata, times) |
/// | `threads` | `after`?, `limit`? | `{items, next}`, oldest first |
/// | `messages` | `thread_id` | its messages, in order (canonical) |
/// | `message_page` | `thread_id`, `start`?, `limit`? | `[{seq, run_id, message}]` |
/// | `runs` | `thread_id` | its runs, oldest first |
/// | `run` | `run_id` | the run's record |
/// | `artifacts` | `thread_id` | `[{seq, tool_call_id, artifact}]` |
/// | `waiting` | `limit`? | the runs waiting for decisions, latest first |
/// | `delete_thread` | `thread_id`, `force`? | null (`force`: also with a run waiting) |
/// | `dead_runs` | | runs whose process died (lease run out): `[{run_id, thread_id, agent, settings}]`, oldest first (carried on with a `carry_on` work) |
pub async fn query(store: &Store, q: &Value, d: Dialect) -> Result<Value, BindError> {
    let op = q.get("op").and_then(Value::as_str).unwrap_or("");
    let thread_id = || string(q, &d.name("thread_id"));
    Ok(match op {
        "create_thread" => {
            let metadata = input::metadata(q.get("metadata"))?;
            let owner = optional_string(q, "owner")?;
            to_value(store.create_thread(owner.as_deref(), metadata).await?)
        }
        "spent" => {
            let s = store.spent(&thread_id()?).await?;
            let one = |s: parlance::Spend| {
                serde_json::json!({
                    "tokens": s.tokens,
                    "cost": s.cost_usd(),
                    d.name("model_calls"): s.model_calls,
                    d.name("tool_calls"): s.tool_calls,
                })
            };
            serde_json::json!({
                "thread": one(s.thread),
                d.name("owner_day"): one(s.owner_day),
                d.name("owner_month"): one(s.owner_month),
            })
        }
        "thread" => to_value(store.thread(&thread_id()?).await?),
        "threads" => {
            let after = optional_string(q, "after")?;
            to_value(
                store
                    .list_threads(None, after.as_deref(), limit(q)?)
                    .await?,
            )
        }
        "messages" => to_value(store.history(&thread_id()?).await?),
        "message_page" => {
            let start = number(q, "start", 0, i64::MAX as u64)? as i64;
            to_value(store.messages(&thread_id()?, start, limit(q)?).await?)
        }
        "runs" => to_value(store.runs(&thread_id()?).await?),
        "run" => to_value(store.run(&string(q, &d.name("run_id"))?).await?),
        "artifacts" => to_value(store.artifacts(&thread_id()?).await?),
        "waiting" => {
            let runs = store.waiting_runs(None, limit(q)?).await?;
            Value::Array(runs.into_iter().map(|w| to_value(w.run)).collect())
        }
        "dead_runs" => Value::Array(
            store
                .dead_runs(false)
                .await?
                .into_iter()
                .map(|r| {
                    serde_json::json!({
                        d.name("run_id"): r.id,
                        d.name("thread_id"): r.thread_id,
                        "agent": r.settings.get("name").cloned().unwrap_or(Value::Null),
                        "settings": r.settings,
                    })
                })
                .collect(),
        ),
        "delete_thread" => {
            let id = thread_id()?;
            if q.get("force").and_then(Value::as_bool).unwrap_or(false) {
                store.delete_thread_waiting(&id).await?;
            } else {
                store.delete_thread(&id).await?;
            }
            Value::Null
        }
        other => {
            return Err(BindError::config(format!(
                "store: unknown operation {other:?}"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn every_query_answers_on_a_real_sqlite_file() {
        let dir = std::env::temp_dir().join(format!("parlance-bindings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("q.db").display());
        let options = StoreOptions::read(
            Some(&json!({"lease": 5000, "redact": ["sk-123"]})),
            Dialect::Node,
        )
        .unwrap();
        assert_eq!(options.lease, Some(Duration::from_secs(5)));
        let store = open(&url, options).await.unwrap();
        let d = Dialect::Node;
        let t = query(
            &store,
            &json!({"op": "create_thread", "metadata": {"user": "ann"}}),
            d,
        )
        .await
        .unwrap();
        let id = t["id"].as_str().unwrap().to_string();
        let got = query(&store, &json!({"op": "thread", "threadId": id}), d)
            .await
            .unwrap();
        assert_eq!(got["metadata"], json!({"user": "ann"}));
        let page = query(&store, &json!({"op": "threads", "limit": 10}), d)
            .await
            .unwrap();
        assert_eq!(page["items"].as_array().unwrap().len(), 1);
        assert!(page["next"].is_null());
        for op in ["messages", "message_page", "runs", "artifacts"] {
            let v = query(&store, &json!({"op": op, "threadId": id}), d)
                .await
                .unwrap();
            assert_eq!(v, json!([]), "{op}");
        }
        assert_eq!(
            query(&store, &json!({"op": "waiting"}), d).await.unwrap(),
            json!([])
        );
        let e = query(&store, &json!({"op": "run", "runId": "nope"}), d)
            .await
            .unwrap_err();
        assert_eq!(e.store_kind, Some("not_found"));
        let e = query(&store, &json!({"op": "threads", "limit": 0}), d)
            .await
            .unwrap_err();
        assert_eq!(
            e.text,
            "limit: expected a whole number from 1 to 1000, got 0"
        );
        let e = query(&store, &json!({"op": "thread"}), Dialect::Python)
            .await
            .unwrap_err();
        assert_eq!(e.text, "thread_id: expected a string");
        query(&store, &json!({"op": "delete_thread", "threadId": id}), d)
            .await
            .unwrap();
        let e = query(&store, &json!({"op": "thread", "threadId": id}), d)
            .await
            .unwrap_err();
        assert_eq!(e.store_kind, Some("not_found"));
        let e = StoreOptions::read(Some(&json!({"leese": 1})), d).unwrap_err();
        assert_eq!(
            e.text,
            "store options: unknown option \"leese\" (known: lease, redact)"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
