use std::time::Duration;

/// A model call failed. The variants are the ones a caller acts on
/// differently (retry, fix the request, fix the key, shorten the context).
/// Messages are the provider's own words; API keys never appear.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The API key is missing or wrong (401).
    #[error("authentication failed: {message}")]
    Authentication {
        /// The provider's message.
        message: String,
    },
    /// The key may not use this model or feature (403).
    #[error("permission denied: {message}")]
    Permission {
        /// The provider's message.
        message: String,
    },
    /// Too many requests (429); retried after `retry_after` when known.
    #[error("rate limited: {message}")]
    RateLimited {
        /// The provider's message.
        message: String,
        /// How long the provider asked to wait.
        retry_after: Option<Duration>,
    },
    /// The account's quota or billing limit is exhausted: retrying won't help.
    #[error("quota exceeded: {message}")]
    QuotaExceeded {
        /// The provider's message.
        message: String,
    },
    /// The provider is overloaded (Anthropic 529, 503).
    #[error("provider overloaded: {message}")]
    Overloaded {
        /// The provider's message.
        message: String,
        /// How long the provider asked to wait.
        retry_after: Option<Duration>,
    },
    /// The request was refused as invalid (400, 404, 422).
    #[error("invalid request: {message}")]
    InvalidRequest {
        /// The provider's message.
        message: String,
    },
    /// The conversation does not fit the model's context window.
    #[error("context too long: {message}")]
    ContextTooLong {
        /// The provider's message.
        message: String,
    },
    /// The provider failed (5xx).
    #[error("provider error (HTTP {status}): {message}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The connection failed or was cut.
    #[error("network error: {message}")]
    Network {
        /// What happened.
        message: String,
    },
    /// No answer in time (connect, first byte, or between stream events).
    #[error("timed out: {message}")]
    Timeout {
        /// Which wait ran out.
        message: String,
    },
    /// The provider's answer could not be read.
    #[error("malformed response: {message}")]
    MalformedResponse {
        /// What was wrong.
        message: String,
    },
    /// A provider request body given to be read (`parlance convert`) is
    /// not one: a missing or wrong field, named by its path.
    #[error("malformed request: {message}")]
    MalformedRequest {
        /// What was wrong, and where.
        message: String,
    },
    /// The conversation holds something this provider cannot take; found
    /// before any request was sent.
    #[error("unsupported by this provider: {message}")]
    Unsupported {
        /// What, and where.
        message: String,
    },
}

impl ModelError {
    /// The error's message (without its kind).
    pub fn message(&self) -> &str {
        match self {
            ModelError::Authentication { message }
            | ModelError::Permission { message }
            | ModelError::RateLimited { message, .. }
            | ModelError::QuotaExceeded { message }
            | ModelError::Overloaded { message, .. }
            | ModelError::InvalidRequest { message }
            | ModelError::ContextTooLong { message }
            | ModelError::Server { message, .. }
            | ModelError::Network { message }
            | ModelError::Timeout { message }
            | ModelError::MalformedResponse { message }
            | ModelError::MalformedRequest { message }
            | ModelError::Unsupported { message } => message,
        }
    }

    /// The error's message, to add to it (a fallback names the model).
    pub fn message_mut(&mut self) -> &mut String {
        match self {
            ModelError::Authentication { message }
            | ModelError::Permission { message }
            | ModelError::RateLimited { message, .. }
            | ModelError::QuotaExceeded { message }
            | ModelError::Overloaded { message, .. }
            | ModelError::InvalidRequest { message }
            | ModelError::ContextTooLong { message }
            | ModelError::Server { message, .. }
            | ModelError::Network { message }
            | ModelError::Timeout { message }
            | ModelError::MalformedResponse { message }
            | ModelError::MalformedRequest { message }
            | ModelError::Unsupported { message } => message,
        }
    }

    /// A stable name for the kind of error (`rate_limited`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::Authentication { .. } => "authentication",
            ModelError::Permission { .. } => "permission",
            ModelError::RateLimited { .. } => "rate_limited",
            ModelError::QuotaExceeded { .. } => "quota_exceeded",
            ModelError::Overloaded { .. } => "overloaded",
            ModelError::InvalidRequest { .. } => "invalid_request",
            ModelError::ContextTooLong { .. } => "context_too_long",
            ModelError::Server { .. } => "server",
            ModelError::Network { .. } => "network",
            ModelError::Timeout { .. } => "timeout",
            ModelError::MalformedResponse { .. } => "malformed_response",
            ModelError::MalformedRequest { .. } => "malformed_request",
            ModelError::Unsupported { .. } => "unsupported",
        }
    }

    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ModelError::RateLimited { .. }
                | ModelError::Overloaded { .. }
                | ModelError::Server { .. }
                | ModelError::Network { .. }
                | ModelError::Timeout { .. }
        )
    }

    /// The wait the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::RateLimited { retry_after, .. }
            | ModelError::Overloaded { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
