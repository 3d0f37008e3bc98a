//! Every error of the core as one classified value: its class (the
//! exception each package raises: `FormatError`, `DecisionError`,
//! `ConfigError`, `StoreError`, `InternalError`), its text — exactly the
//! Rust error's — and, where there are some, the JSON path, the detail
//! and the store's kind.

use parlance::format::FormatError;
use parlance::providers::convert::ConvertError;
use parlance::store::{ResumeError, StoreError};
use parlance::{BuildError, DecisionError};

/// Which exception class a [`BindError`] is raised as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A document that is not canonical (or not JSON).
    Format,
    /// A refused decision (the run still waits).
    Decision,
    /// Something that cannot be built or called as given.
    Config,
    /// The thread store refused or failed.
    Store,
    /// A bug in the Rust core (a panic), reported instead of a crash.
    Internal,
}

impl ErrorKind {
    /// The exception class's name in both packages.
    pub fn class_name(self) -> &'static str {
        match self {
            ErrorKind::Format => "FormatError",
            ErrorKind::Decision => "DecisionError",
            ErrorKind::Config => "ConfigError",
            ErrorKind::Store => "StoreError",
            ErrorKind::Internal => "InternalError",
        }
    }
}

/// An error of the core, classified for the packages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindError {
    /// Its class.
    pub kind: ErrorKind,
    /// The whole message (`path: detail` for format and decision errors).
    pub text: String,
    /// The JSON path of the problem (format and decision errors).
    pub path: Option<String>,
    /// The message without the path.
    pub detail: Option<String>,
    /// The store's kind of error (`busy`, `not_found`...; store errors).
    pub store_kind: Option<&'static str>,
}

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for BindError {}

impl BindError {
    fn plain(kind: ErrorKind, text: impl Into<String>) -> BindError {
        BindError {
            kind,
            text: text.into(),
            path: None,
            detail: None,
            store_kind: None,
        }
    }

    /// A `ConfigError` with a message (any error's text).
    pub fn config(text: impl ToString) -> BindError {
        BindError::plain(ErrorKind::Config, text.to_string())
    }

    /// An `InternalError`: the core broke a promise of its own (a bug, not
    /// the caller's input).
    pub fn internal(text: impl Into<String>) -> BindError {
        BindError::plain(ErrorKind::Internal, text)
    }

    /// A `FormatError` from a message alone.
    pub fn format(text: impl Into<String>) -> BindError {
        BindError::plain(ErrorKind::Format, text)
    }

    /// A panic's payload, as the error that replaces it.
    pub fn panic(payload: &(dyn std::any::Any + Send)) -> BindError {
        BindError::internal(format!(
            "a bug in parlance's Rust core: {}",
            parlance::panic_message(payload)
        ))
    }
}

impl From<FormatError> for BindError {
    fn from(e: FormatError) -> Self {
        BindError {
            kind: ErrorKind::Format,
            text: e.to_string(),
            path: Some(e.path),
            detail: Some(e.message),
            store_kind: None,
        }
    }
}

impl From<DecisionError> for BindError {
    fn from(e: DecisionError) -> Self {
        BindError {
            kind: ErrorKind::Decision,
            text: e.to_string(),
            path: Some(e.path),
            detail: Some(e.message),
            store_kind: None,
        }
    }
}

impl From<StoreError> for BindError {
    fn from(e: StoreError) -> Self {
        BindError {
            kind: ErrorKind::Store,
            text: e.to_string(),
            path: None,
            detail: None,
            store_kind: Some(e.kind()),
        }
    }
}

impl From<ResumeError> for BindError {
    fn from(e: ResumeError) -> Self {
        match e {
            ResumeError::Store(e) => e.into(),
            ResumeError::Decision(e) => e.into(),
        }
    }
}

impl From<BuildError> for BindError {
    fn from(e: BuildError) -> Self {
        BindError::config(e)
    }
}

impl From<ConvertError> for BindError {
    fn from(e: ConvertError) -> Self {
        match e {
            ConvertError::Usage(m) => BindError::config(m),
            ConvertError::Format(e) => e.into(),
            ConvertError::Wire(m) => BindError::format(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_error_keeps_its_path_and_detail() {
        let bad = serde_json::json!({"role": "robot", "content": []});
        let e: BindError = parlance::Message::from_value(&bad).unwrap_err().into();
        assert_eq!(e.kind.class_name(), "FormatError");
        assert_eq!(e.path.as_deref(), Some("role"));
        let detail = e.detail.clone().unwrap();
        assert_eq!(e.text, format!("role: {detail}"));
    }

    #[test]
    fn a_store_error_carries_its_kind() {
        let e: BindError = StoreError::NotFound("thread t".into()).into();
        assert_eq!(
            (e.kind, e.store_kind),
            (ErrorKind::Store, Some("not_found"))
        );
        assert_eq!(e.to_string(), "thread t not found");
    }

    #[test]
    fn a_panic_names_its_message() {
        let e = BindError::panic(&"boom");
        assert_eq!(e.kind, ErrorKind::Internal);
        assert_eq!(e.text, "a bug in parlance's Rust core: boom");
    }
}
