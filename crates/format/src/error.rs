use std::fmt;

/// A canonical-format reading error: where (a JSON path such as
/// `messages[3].content[1].type`) and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct FormatError {
    /// JSON path of the offending value; empty for the document root.
    pub path: String,
    /// What was expected or what is wrong, for a person to read.
    pub message: String,
}

impl FormatError {
    pub(crate) fn new(path: &str, message: impl Into<String>) -> Self {
        FormatError {
            path: path.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "(root): {}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
