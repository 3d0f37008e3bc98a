//! The reader's tools: the JSON path of what is being read (rendered only
//! when an error occurs), objects that refuse unknown keys, and short
//! descriptions of values for error messages.

use serde_json::{Map, Value};

use crate::FormatError;

/// A JSON path, as a chain of frames on the stack.
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    pub(crate) fn root() -> Path<'static> {
        Path::Root
    }

    pub(super) fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    pub(super) fn index(&'a self, i: usize) -> Path<'a> {
        Path::Index(self, i)
    }

    pub(super) fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    pub(super) fn write(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Key(parent, key) => {
                parent.write(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Path::Index(parent, i) => {
                parent.write(out);
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }

    pub(super) fn err(&self, message: impl Into<String>) -> FormatError {
        FormatError::new(&self.render(), message)
    }
}

pub(super) type R<T> = Result<T, FormatError>;

/// Parses JSON text, turning a syntax error into a [`FormatError`] worded as
/// every reader words it (`(root): invalid JSON at line 1 column 17: EOF
/// while parsing a value`).
pub fn parse_json(text: &str) -> R<Value> {
    serde_json::from_str(text).map_err(|e| {
        FormatError::new(
            "",
            format!(
                "invalid JSON at line {} column {}: {}",
                e.line(),
                e.column(),
                strip_position(&e.to_string())
            ),
        )
    })
}

pub(super) fn strip_position(msg: &str) -> &str {
    msg.find(" at line ").map_or(msg, |i| &msg[..i])
}

/// A short description of a JSON value for error messages.
pub(super) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.chars().count() > 40 => {
            let short: String = s.chars().take(40).collect();
            format!("string \"{short}…\"")
        }
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// An object being read: checks for unknown keys up front.
pub(super) struct Obj<'v, 'p> {
    map: &'v Map<String, Value>,
    pub(super) path: &'p Path<'p>,
}

impl<'v, 'p> Obj<'v, 'p> {
    pub(super) fn new(v: &'v Value, path: &'p Path<'p>, what: &str) -> R<Self> {
        match v {
            Value::Object(map) => Ok(Obj { map, path }),
            other => Err(path.err(format!(
                "expected {what} (an object), got {}",
                describe(other)
            ))),
        }
    }

    /// Refuses keys outside `allowed`, naming the first one found.
    pub(super) fn only(&self, allowed: &[&str], what: &str) -> R<()> {
        for key in self.map.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(self.path.key(key).err(format!(
                    "unknown field in {what} (expected one of: {})",
                    allowed.join(", ")
                )));
            }
        }
        Ok(())
    }

    pub(super) fn get(&self, key: &str) -> Option<&'v Value> {
        self.map.get(key)
    }

    /// An optional field: missing and `null` both mean absent.
    pub(super) fn opt(&self, key: &str) -> Option<&'v Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub(super) fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    pub(super) fn req(&self, key: &'p str) -> R<&'v Value> {
        self.get(key)
            .ok_or_else(|| self.path.key(key).err("required field missing"))
    }

    /// A required free-form value (depth-checked).
    pub(super) fn req_free(&self, key: &'p str) -> R<Value> {
        free(self.req(key)?, &self.path.key(key)).cloned()
    }

    /// An optional free-form value (depth-checked) where `null` is a value.
    pub(super) fn get_free(&self, key: &'p str) -> R<Option<Value>> {
        self.get(key)
            .map(|v| free(v, &self.path.key(key)).cloned())
            .transpose()
    }

    /// An optional free-form value (depth-checked); `null` means absent.
    pub(super) fn opt_free(&self, key: &'p str) -> R<Option<Value>> {
        self.opt(key)
            .map(|v| free(v, &self.path.key(key)).cloned())
            .transpose()
    }

    pub(super) fn req_str(&self, key: &'p str) -> R<String> {
        let v = self.req(key)?;
        as_string(v, &self.path.key(key))
    }

    pub(super) fn req_id(&self, key: &'p str) -> R<String> {
        let s = self.req_str(key)?;
        if s.is_empty() {
            return Err(self.path.key(key).err("must not be empty"));
        }
        Ok(s)
    }

    pub(super) fn opt_str(&self, key: &'p str) -> R<Option<String>> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => as_string(v, &self.path.key(key)).map(Some),
        }
    }

    /// An optional amount of money (US dollars): a finite, non-negative number.
    pub(super) fn opt_cost(&self, key: &'p str) -> R<Option<f64>> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .map(Some)
                .ok_or_else(|| {
                    self.path.key(key).err(format!(
                        "expected a non-negative number of US dollars, got {}",
                        describe(v)
                    ))
                }),
        }
    }

    pub(super) fn opt_u64(&self, key: &'p str) -> R<Option<u64>> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                self.path.key(key).err(format!(
                    "expected a non-negative integer, got {}",
                    describe(v)
                ))
            }),
        }
    }
}

/// A free-form value (arguments, a JSON block, metadata...), checked
/// against the one depth limit so that what is read can be written and
/// read again (see `crate::depth`).
pub(super) fn free<'v>(v: &'v Value, path: &Path) -> R<&'v Value> {
    if crate::within_depth(v, crate::MAX_VALUE_DEPTH) {
        Ok(v)
    } else {
        crate::check_depth(v, &path.render()).map(|()| v)
    }
}

/// [`free`] for an object held as a map (a message's `metadata`): the map
/// is one level, so its values may nest one less.
pub(super) fn free_map(m: &Map<String, Value>, path: &Path) -> R<()> {
    if m.values()
        .all(|v| crate::within_depth(v, crate::MAX_VALUE_DEPTH - 1))
    {
        Ok(())
    } else {
        // Only on the way to an error: the copy gives it the one wording.
        crate::check_depth(&Value::Object(m.clone()), &path.render())
    }
}

pub(super) fn as_string(v: &Value, path: &Path) -> R<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        other => Err(path.err(format!("expected a string, got {}", describe(other)))),
    }
}

pub(super) fn as_array<'v>(v: &'v Value, path: &Path, what: &str) -> R<&'v Vec<Value>> {
    match v {
        Value::Array(a) => Ok(a),
        other => Err(path.err(format!(
            "expected {what} (an array), got {}",
            describe(other)
        ))),
    }
}
