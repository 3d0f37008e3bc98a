//! Values made from a JSON Schema, for [`TestModel`](super::TestModel)'s
//! tool arguments and structured answers: small, deterministic (the same
//! schema and seed give the same value), and valid against the schema for
//! the keywords tool schemas use: `type` (one or several), `properties`
//! and `required`, `minProperties`, `additionalProperties`, `items` and
//! `prefixItems`, `minItems`/`maxItems`, `uniqueItems`, `enum`, `const`,
//! `examples`, `minLength`/`maxLength`, `format` (`date`, `date-time`,
//! `time`, `email`, `uri`, `uuid`, `ipv4`, `ipv6`, `hostname`,
//! `duration`), `minimum`/`maximum` (exclusive too), `multipleOf`,
//! `$ref` into `$defs`/`definitions`, `allOf`, `anyOf` and `oneOf`.
//!
//! Not generated: a `pattern` (no regular expression is inverted; a value
//! may fail it) and `not`. Give such a tool its arguments with a
//! [`ScriptedModel`](super::ScriptedModel) or a
//! [`FunctionModel`](super::FunctionModel) instead.

use serde_json::{Map, Number, Value, json};

/// How deep a schema is followed (through `$ref` too) before the value is
/// cut short: recursive schemas end.
const MAX_DEPTH: usize = 32;

/// A value valid against `schema`. `seed` varies the choices (which enum
/// value, which `anyOf` branch, which number): 0 gives the simplest value.
///
/// ```
/// use parlance_model::testing::schema_data::value_for;
/// use serde_json::json;
///
/// let schema = json!({"type": "object",
///     "properties": {"n": {"type": "integer", "minimum": 3}, "tag": {"enum": ["a", "b"]}},
///     "required": ["n", "tag"]});
/// assert_eq!(value_for(&schema, 0), json!({"n": 3, "tag": "a"}));
/// assert_eq!(value_for(&schema, 1), json!({"n": 4, "tag": "b"}));
/// ```
pub fn value_for(schema: &Value, seed: u64) -> Value {
    Gen { root: schema, seed }.any(schema, 0)
}

struct Gen<'a> {
    root: &'a Value,
    seed: u64,
}

/// The schema a local `$ref` (`#`, `#/$defs/X`, `#/definitions/X`, any
/// JSON pointer into the root) points at.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

fn pick<T>(items: &[T], seed: u64) -> &T {
    &items[(seed % items.len() as u64) as usize]
}

impl Gen<'_> {
    fn any(&self, schema: &Value, depth: usize) -> Value {
        let s = match schema {
            Value::Bool(true) => return json!("a"),
            Value::Object(s) => s,
            // `false` (nothing is valid) and anything that is not a schema.
            _ => return Value::Null,
        };
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        if let Some(c) = s.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(values)) = s.get("enum")
            && !values.is_empty()
        {
            return pick(values, self.seed).clone();
        }
        if let Some(Value::Array(examples)) = s.get("examples")
            && !examples.is_empty()
        {
            return pick(examples, self.seed).clone();
        }
        if let Some(Value::String(r)) = s.get("$ref") {
            return match resolve(self.root, r) {
                Some(target) => self.any(&self.with_siblings(target, s), depth + 1),
                None => Value::Null,
            };
        }
        if let Some(Value::Array(all)) = s.get("allOf") {
            let mut merged = s.clone();
            merged.remove("allOf");
            let mut merged = Value::Object(merged);
            for part in all {
                merged = merge(&merged, &self.deref(part, depth));
            }
            return self.any(&merged, depth + 1);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = s.get(key)
                && !branches.is_empty()
            {
                // A null branch only when there is nothing else: a value
                // tells a test more.
                let real: Vec<&Value> = branches.iter().filter(|b| !is_null_type(b)).collect();
                let branch = if real.is_empty() {
                    &branches[0]
                } else {
                    *pick(&real, self.seed)
                };
                let mut rest = s.clone();
                rest.remove(key);
                return self.any(&merge(&Value::Object(rest), branch), depth + 1);
            }
        }
        match type_of(s).as_deref() {
            Some("object") => self.object(s, depth),
            Some("array") => self.array(s, depth),
            Some("string") => self.string(s),
            Some("integer") => self.number(s, true),
            Some("number") => self.number(s, false),
            Some("boolean") => Value::Bool(self.seed % 2 == 1),
            Some("null") => Value::Null,
            _ => json!("a"),
        }
    }

    /// A `$ref`'s target with the referring schema's other keywords.
    fn with_siblings(&self, target: &Value, referring: &Map<String, Value>) -> Value {
        let mut rest = referring.clone();
        rest.remove("$ref");
        if rest.is_empty() {
            target.clone()
        } else {
            merge(target, &Value::Object(rest))
        }
    }

    fn deref(&self, schema: &Value, depth: usize) -> Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) if depth < MAX_DEPTH => match resolve(self.root, r) {
                Some(t) => self.deref(
                    &self.with_siblings(t, schema.as_object().expect("has $ref")),
                    depth + 1,
                ),
                None => schema.clone(),
            },
            _ => schema.clone(),
        }
    }

    fn object(&self, s: &Map<String, Value>, depth: usize) -> Value {
        let props = s.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        for name in &required {
            let sub = props
                .and_then(|p| p.get(*name))
                .unwrap_or(&Value::Bool(true));
            let sub = match (sub, s.get("additionalProperties")) {
                // A required key with no schema of its own takes the
                // schema of additional properties.
                (Value::Bool(true), Some(extra))
                    if props.is_none_or(|p| !p.contains_key(*name)) =>
                {
                    extra
                }
                _ => sub,
            };
            out.insert((*name).to_string(), self.any(sub, depth + 1));
        }
        let min = s.get("minProperties").and_then(Value::as_u64).unwrap_or(0) as usize;
        if let Some(props) = props {
            for (name, sub) in props {
                if out.len() >= min {
                    break;
                }
                if !out.contains_key(name) {
                    out.insert(name.clone(), self.any(sub, depth + 1));
                }
            }
        }
        let extra = s.get("additionalProperties").unwrap_or(&Value::Bool(true));
        let mut n = 0;
        while out.len() < min && extra != &Value::Bool(false) {
            let key = format!("additionalProperty{n}");
            n += 1;
            if !out.contains_key(&key) {
                out.insert(key, self.any(extra, depth + 1));
            }
        }
        Value::Object(out)
    }

    fn array(&self, s: &Map<String, Value>, depth: usize) -> Value {
        let prefix = s
            .get("prefixItems")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let items = s.get("items").unwrap_or(&Value::Bool(true));
        let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = s
            .get("maxItems")
            .and_then(Value::as_u64)
            .map(|m| m as usize);
        // One item unless the schema says otherwise: an empty list tests
        // little. Only as many as the prefix when no more are allowed.
        let mut len = min.max(1).max(prefix.len().min(1));
        if items == &Value::Bool(false) {
            len = len.min(prefix.len());
        }
        if let Some(max) = max {
            len = len.min(max);
        }
        let unique = s.get("uniqueItems") == Some(&Value::Bool(true));
        let mut out: Vec<Value> = Vec::with_capacity(len);
        for i in 0..len {
            let sub = prefix.get(i).unwrap_or(items);
            let mut value = Gen {
                root: self.root,
                seed: self.seed + i as u64,
            }
            .any(sub, depth + 1);
            // Unique items: try further seeds until this one is new.
            let mut k = 1;
            while unique && out.contains(&value) && k < 64 {
                value = Gen {
                    root: self.root,
                    seed: self.seed + i as u64 + k * 7,
                }
                .any(sub, depth + 1);
                k += 1;
            }
            out.push(value);
        }
        Value::Array(out)
    }

    fn string(&self, s: &Map<String, Value>) -> Value {
        let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = s
            .get("maxLength")
            .and_then(Value::as_u64)
            .map(|m| m as usize);
        let day = self.seed % 28 + 1;
        let formatted = match s.get("format").and_then(Value::as_str) {
            Some("date") => Some(format!("2024-01-{day:02}")),
            Some("date-time") => Some(format!("2024-01-{day:02}T00:00:00Z")),
            Some("time") => Some("00:00:00Z".to_string()),
            Some("email" | "idn-email") => Some("a@example.com".to_string()),
            Some("uri" | "url" | "iri" | "uri-reference" | "iri-reference") => {
                Some("https://example.com/".to_string())
            }
            Some("uuid") => Some(format!("00000000-0000-4000-8000-{:012x}", self.seed)),
            Some("ipv4") => Some("192.0.2.1".to_string()),
            Some("ipv6") => Some("2001:db8::1".to_string()),
            Some("hostname" | "idn-hostname") => Some("example.com".to_string()),
            Some("duration") => Some("P1D".to_string()),
            _ => None,
        };
        let mut text = formatted.unwrap_or_else(|| {
            let c = (b'a' + (self.seed % 26) as u8) as char;
            c.to_string()
        });
        let len = text.chars().count();
        if len < min {
            let c = text.chars().last().unwrap_or('a');
            text.extend(std::iter::repeat_n(c, min - len));
        }
        if let Some(max) = max {
            text = text.chars().take(max).collect();
        }
        Value::String(text)
    }

    fn number(&self, s: &Map<String, Value>, integer: bool) -> Value {
        let f = |k: &str| s.get(k).and_then(Value::as_f64);
        // The bounds, as an inclusive range (an exclusive bound moves in
        // by 1, or by a hair for a number that is not an integer).
        let step = if integer { 1.0 } else { 0.5 };
        let lo = match (f("minimum"), f("exclusiveMinimum")) {
            (Some(a), Some(b)) => Some(a.max(b + step)),
            (Some(a), None) => Some(a),
            (None, Some(b)) => Some(b + step),
            (None, None) => None,
        };
        let hi = match (f("maximum"), f("exclusiveMaximum")) {
            (Some(a), Some(b)) => Some(a.min(b - step)),
            (Some(a), None) => Some(a),
            (None, Some(b)) => Some(b - step),
            (None, None) => None,
        };
        let (lo, hi) = if integer {
            (lo.map(f64::ceil), hi.map(f64::floor))
        } else {
            (lo, hi)
        };
        let seed = self.seed as f64;
        let mut v = match (lo, hi) {
            (Some(lo), Some(hi)) if hi > lo => {
                lo + seed % (hi - lo + if integer { 1.0 } else { 0.0 })
            }
            (Some(lo), Some(_)) => lo,
            (Some(lo), None) => lo + seed,
            (None, Some(hi)) => hi.min(seed),
            (None, None) => seed,
        };
        if let Some(m) = f("multipleOf").filter(|m| *m > 0.0) {
            let up = (v / m).ceil() * m;
            v = match hi {
                Some(hi) if up > hi => (v / m).floor() * m,
                _ => up,
            };
        }
        if integer {
            return json!(v as i64);
        }
        Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// The schema's type: `type` (the first that is not `null` when there are
/// several), or what its keywords imply.
fn type_of(s: &Map<String, Value>) -> Option<String> {
    match s.get("type") {
        Some(Value::String(t)) => return Some(t.clone()),
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            return names
                .iter()
                .find(|t| **t != "null")
                .or(names.first())
                .map(|t| t.to_string());
        }
        _ => {}
    }
    let has = |keys: &[&str]| keys.iter().any(|k| s.contains_key(*k));
    if has(&[
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
    ]) {
        Some("object".into())
    } else if has(&["items", "prefixItems", "minItems", "maxItems"]) {
        Some("array".into())
    } else if has(&["minLength", "maxLength", "format", "pattern"]) {
        Some("string".into())
    } else if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        Some("number".into())
    } else {
        None
    }
}

fn is_null_type(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// Two schemas as one: keys of both, `properties` merged, `required`
/// joined, bounds the tighter of the two.
fn merge(a: &Value, b: &Value) -> Value {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return if b.is_object() { b.clone() } else { a.clone() };
    };
    let mut out = a.clone();
    for (k, v) in b {
        let merged = match (k.as_str(), out.get(k)) {
            ("properties", Some(Value::Object(mine))) => {
                let mut props = mine.clone();
                if let Value::Object(theirs) = v {
                    for (name, sub) in theirs {
                        let sub = match props.get(name) {
                            Some(existing) => merge(existing, sub),
                            None => sub.clone(),
                        };
                        props.insert(name.clone(), sub);
                    }
                }
                Value::Object(props)
            }
            ("required", Some(Value::Array(mine))) => {
                let mut names = mine.clone();
                for n in v.as_array().into_iter().flatten() {
                    if !names.contains(n) {
                        names.push(n.clone());
                    }
                }
                Value::Array(names)
            }
            (
                "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties",
                Some(x),
            ) => max_of(x, v),
            ("maximum" | "exclusiveMaximum" | "maxLength" | "maxItems", Some(x)) => min_of(x, v),
            _ => v.clone(),
        };
        out.insert(k.clone(), merged);
    }
    Value::Object(out)
}

fn max_of(a: &Value, b: &Value) -> Value {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if x >= y => a.clone(),
        _ => b.clone(),
    }
}

fn min_of(a: &Value, b: &Value) -> Value {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if x <= y => a.clone(),
        _ => b.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_bounds() {
        let s = json!({"type": "integer", "exclusiveMinimum": 0, "maximum": 10, "multipleOf": 4});
        assert_eq!(value_for(&s, 0), json!(4));
        let s = json!({"type": "number", "exclusiveMaximum": 0});
        assert!(value_for(&s, 0).as_f64().unwrap() < 0.0);
    }

    #[test]
    fn a_recursive_schema_ends() {
        let s = json!({"$defs": {"node": {"type": "object",
            "properties": {"next": {"$ref": "#/$defs/node"}}, "required": ["next"]}},
            "$ref": "#/$defs/node"});
        let v = value_for(&s, 0);
        assert!(v.is_object());
    }
}
