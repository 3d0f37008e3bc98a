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

/// The wait a response asks for: `retry-after-ms`, or `retry-after` in
/// seconds (HTTP-date values are not used).
pub fn retry_after_from_headers(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    get("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s >= 0.0 && s.is_finite())
        .map(Duration::from_secs_f64)
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
}
