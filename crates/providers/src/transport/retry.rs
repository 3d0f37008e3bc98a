use std::time::Duration;

use parlance_model::ModelError;
use reqwest::header::HeaderMap;

/// When and how long to wait before trying again.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; it doubles each time.
    pub initial_backoff: Duration,
    /// The longest backoff.
    pub max_backoff: Duration,
    /// The longest wait a provider's `retry-after` may impose; a longer
    /// one is not waited for (the error goes to the caller).
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// What follows failed attempt `attempt` (0 = the first): the wait
    /// before trying again, or the error for the caller. A provider asking
    /// for a longer wait than `max_retry_after` gets its error back,
    /// saying how long it asked for (a provider asking for a day is a
    /// failure to report, not a wait).
    pub fn next(
        &self,
        attempt: u32,
        err: ModelError,
        hint: Option<bool>,
    ) -> Result<Duration, ModelError> {
        if let Some(asked) = err.retry_after().filter(|d| *d > self.max_retry_after) {
            return Err(note_long_wait(err, asked, self.max_retry_after));
        }
        if !self.should_retry(attempt, &err, hint) {
            return Err(err);
        }
        Ok(self.delay(attempt, err.retry_after()))
    }

    /// Whether attempt `attempt` (0 = the first) may be followed by another.
    /// `hint` is the provider's own `x-should-retry`, when it sent one.
    pub fn should_retry(&self, attempt: u32, err: &ModelError, hint: Option<bool>) -> bool {
        if attempt >= self.max_retries {
            return false;
        }
        if err.retry_after().is_some_and(|d| d > self.max_retry_after) {
            return false;
        }
        // Quota, auth and invalid requests are never retried, whatever a
        // header says.
        match err {
            ModelError::QuotaExceeded { .. }
            | ModelError::Authentication { .. }
            | ModelError::Permission { .. }
            | ModelError::InvalidRequest { .. }
            | ModelError::ContextTooLong { .. }
            | ModelError::Unsupported { .. } => false,
            _ => hint.unwrap_or_else(|| err.is_retryable()),
        }
    }

    /// The wait before retry `attempt + 1`: the provider's hint when given,
    /// else exponential backoff with jitter (50–100 % of the step).
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(d) = retry_after {
            return d.min(self.max_retry_after);
        }
        let step = self
            .initial_backoff
            .saturating_mul(1u32 << attempt.min(16))
            .min(self.max_backoff);
        step.mul_f64(0.5 + rand::random::<f64>() * 0.5)
    }
}

/// The error for a wait the policy will not take, naming the wait (the
/// longest `Duration` stands for any wait longer than that).
fn note_long_wait(mut err: ModelError, asked: Duration, max: Duration) -> ModelError {
    let asked = if asked == Duration::MAX {
        format!("more than {}s", u64::MAX)
    } else {
        format!("{asked:?}")
    };
    if let ModelError::RateLimited { message, .. } | ModelError::Overloaded { message, .. } =
        &mut err
    {
        message.push_str(&format!(
            " (the provider asked to wait {asked}, longer than the longest wait retried, {max:?})"
        ));
    }
    err
}

/// A wait read from the wire, in seconds, checked where it is read
/// (`what` names the field and its text for the warning): a negative or
/// NaN one is no wait; one too long for a `Duration` (`inf` included) is
/// the longest `Duration`, which no retry policy waits for.
pub fn wait_from_secs(secs: f64, what: &str) -> Option<Duration> {
    match Duration::try_from_secs_f64(secs) {
        Ok(d) => Some(d),
        Err(_) if secs > 0.0 => {
            tracing::warn!("{what}: a wait longer than any this client takes");
            Some(Duration::MAX)
        }
        Err(_) => {
            tracing::warn!("{what}: not a wait (ignored)");
            None
        }
    }
}

/// Whether a response says to try again (`x-should-retry`, OpenAI's and
/// Anthropic's): `true` is a yes, any other value a no.
pub fn should_retry_from_headers(headers: &HeaderMap) -> Option<bool> {
    headers
        .get("x-should-retry")
        .and_then(|v| v.to_str().ok())
        .map(|v| v == "true")
}

/// The wait a response asks for: `retry-after-ms`, or `retry-after` in
/// seconds (HTTP-date values are not used).
pub fn retry_after_from_headers(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .and_then(|v| Some((v, v.parse::<f64>().ok()?)))
    };
    if let Some((text, ms)) = get("retry-after-ms")
        && let Some(d) = wait_from_secs(ms / 1000.0, &format!("retry-after-ms: {text}"))
    {
        return Some(d);
    }
    get("retry-after").and_then(|(text, s)| wait_from_secs(s, &format!("retry-after: {text}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_honours_hints() {
        let p = RetryPolicy::default();
        for attempt in 0..4 {
            let step = Duration::from_millis(500) * (1 << attempt);
            let d = p.delay(attempt, None);
            assert!(d >= step / 2 && d <= step, "attempt {attempt}: {d:?}");
        }
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert!(p.delay(9, None) <= Duration::from_secs(20));
    }

    #[test]
    fn what_is_retried() {
        let p = RetryPolicy::default();
        let rl = ModelError::RateLimited {
            message: String::new(),
            retry_after: None,
        };
        assert!(p.should_retry(0, &rl, None));
        assert!(!p.should_retry(2, &rl, None), "only max_retries times");
        assert!(
            !p.should_retry(0, &rl, Some(false)),
            "x-should-retry: false"
        );
        let quota = ModelError::QuotaExceeded {
            message: String::new(),
        };
        assert!(!p.should_retry(0, &quota, Some(true)));
        let bad = ModelError::InvalidRequest {
            message: String::new(),
        };
        assert!(!p.should_retry(0, &bad, None));
        let long = ModelError::RateLimited {
            message: String::new(),
            retry_after: Some(Duration::from_secs(3600)),
        };
        assert!(
            !p.should_retry(0, &long, None),
            "a wait longer than we accept goes to the caller"
        );
    }

    #[test]
    fn retry_after_headers() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after_from_headers(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(
            retry_after_from_headers(&h),
            Some(Duration::from_millis(1500))
        );
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after_from_headers(&h), None);
    }

    fn header_wait(name: &'static str, value: &str) -> Option<Duration> {
        let mut h = HeaderMap::new();
        h.insert(name, value.parse().unwrap());
        retry_after_from_headers(&h)
    }

    /// Issue 39: any number a header holds is read without a panic; a wait
    /// too long for a `Duration` is the longest one, not a crash.
    #[test]
    fn retry_after_headers_beyond_a_duration() {
        assert_eq!(header_wait("retry-after", "1e30"), Some(Duration::MAX));
        assert_eq!(header_wait("retry-after", "inf"), Some(Duration::MAX));
        assert_eq!(header_wait("retry-after-ms", "inf"), Some(Duration::MAX));
        assert_eq!(header_wait("retry-after-ms", "1e300"), Some(Duration::MAX));
        for nothing in ["NaN", "-1", "-inf", "-0.5"] {
            assert_eq!(header_wait("retry-after", nothing), None, "{nothing}");
            assert_eq!(header_wait("retry-after-ms", nothing), None, "{nothing}");
        }
        // A retry-after-ms that is not a wait leaves retry-after to be read.
        let mut h = HeaderMap::new();
        h.insert("retry-after-ms", "NaN".parse().unwrap());
        h.insert("retry-after", "3".parse().unwrap());
        assert_eq!(retry_after_from_headers(&h), Some(Duration::from_secs(3)));
    }

    #[test]
    fn a_wait_past_the_longest_is_the_callers_error_naming_it() {
        let p = RetryPolicy::default();
        let asked = ModelError::RateLimited {
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(86_400)),
        };
        let e = p.next(0, asked, None).unwrap_err();
        assert_eq!(e.kind(), "rate_limited");
        assert_eq!(
            e.to_string(),
            "rate limited: slow down (the provider asked to wait 86400s, longer than the longest wait retried, 60s)"
        );
        let huge = ModelError::Overloaded {
            message: "busy".into(),
            retry_after: Some(Duration::MAX),
        };
        let e = p.next(0, huge, None).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("asked to wait more than 18446744073709551615s, longer than the longest wait retried, 60s)"),
            "{e}"
        );
        let short = ModelError::RateLimited {
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(2)),
        };
        assert_eq!(p.next(0, short.clone(), None), Ok(Duration::from_secs(2)));
        assert_eq!(
            p.next(2, short.clone(), None),
            Err(short),
            "no retries left"
        );
    }
}
