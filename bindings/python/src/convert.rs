//! JSON values between Rust (`serde_json::Value`) and Python (dict, list,
//! str, int, float, bool, None), directly, without a JSON text in between.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// A JSON value as a Python object.
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, item) in map {
                dict.set_item(k, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A Python object as a JSON value; `what` names it in errors
/// (`arguments.items[2]: a set is not JSON`).
pub fn from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    let mut path = what.to_string();
    value(obj, &mut path, true)
}

/// `parlance._json.jsonable`: pydantic's rules for models, dataclasses,
/// enums, dates...
fn jsonable<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static HOOK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    HOOK.import(obj.py(), "parlance._json", "jsonable")?
        .call1((obj,))
}

fn value(obj: &Bound<'_, PyAny>, path: &mut String, fallback: bool) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.to_string()));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Value::from(v));
        }
        if let Ok(v) = i.extract::<u64>() {
            return Ok(Value::from(v));
        }
        return Err(PyTypeError::new_err(format!(
            "{path}: the integer {i} is too large for JSON (at most 64 bits)"
        )));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        return Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| PyTypeError::new_err(format!("{path}: {v} is not a JSON number")));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, item) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "{path}: a key of type {} is not JSON (keys are strings)",
                    type_name(&k)
                )));
            };
            let key = key.to_cow()?.to_string();
            let len = path.len();
            if path.is_empty() {
                path.push_str(&key);
            } else {
                path.push('.');
                path.push_str(&key);
            }
            let v = value(&item, path, fallback)?;
            path.truncate(len);
            map.insert(key, v);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return seq(l.iter(), l.len(), path, fallback);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return seq(t.iter(), t.len(), path, fallback);
    }
    if fallback {
        let at = if path.is_empty() {
            "(root)".to_string()
        } else {
            path.clone()
        };
        let plain = jsonable(obj)
            .map_err(|e| PyTypeError::new_err(format!("{at}: {}", e.value(obj.py()))))?;
        return value(&plain, path, false);
    }
    Err(PyTypeError::new_err(format!(
        "{}: a {} is not JSON (dict, list, str, int, float, bool or None)",
        if path.is_empty() { "(root)" } else { path },
        type_name(obj)
    )))
}

fn seq<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    path: &mut String,
    fallback: bool,
) -> PyResult<Value> {
    let mut out = Vec::with_capacity(len);
    for (i, item) in items.enumerate() {
        let n = path.len();
        path.push_str(&format!("[{i}]"));
        out.push(value(&item, path, fallback)?);
        path.truncate(n);
    }
    Ok(Value::Array(out))
}

/// The name of an object's type, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}
