//! A model against the replay server: the HTTP settings the tests build
//! models with, an environment of the test's own, a stream read to its end.

use std::time::Duration;

use futures::StreamExt;
use parlance_format::Message;
use parlance_model::{Model, ModelError, ModelRequest, StreamEvent};
use parlance_providers::{HttpConfig, RetryPolicy};

/// Two retries with backoffs of a few milliseconds (so that no test waits
/// long), a `Retry-After` of up to 5 s honoured, a stream idle for 5 s cut.
pub fn quick_retries() -> HttpConfig {
    HttpConfig {
        retry: RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
            max_retry_after: Duration::from_secs(5),
        },
        idle_timeout: Duration::from_secs(5),
        ..HttpConfig::default()
    }
}

/// An environment holding only `vars` (the process's is never read).
pub fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

/// `model`'s stream for `req` read to its end: the events before the final
/// message, then the final message or the error that ended the stream (or
/// kept it from starting); a stream that ends without a final message is a
/// network error, "no Done".
pub async fn collect(
    model: &dyn Model,
    req: &ModelRequest,
) -> (Vec<StreamEvent>, Result<Message, ModelError>) {
    let mut events = Vec::new();
    let mut stream = match model.stream(req).await {
        Ok(s) => s,
        Err(e) => return (events, Err(e)),
    };
    while let Some(e) = stream.next().await {
        match e {
            Ok(StreamEvent::Done(m)) => return (events, Ok(m)),
            Ok(ev) => events.push(ev),
            Err(e) => return (events, Err(e)),
        }
    }
    (
        events,
        Err(ModelError::Network {
            message: "no Done".into(),
        }),
    )
}
