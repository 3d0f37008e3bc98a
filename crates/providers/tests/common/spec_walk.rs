//! Walking an official request schema: every field it defines (through
//! `$ref`, `allOf` and each branch of `anyOf`/`oneOf`), a request that sets
//! it, and a check that a body uses no field the schema does not define.
//! Generic over the schema: nothing here knows a provider.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// One step from a schema to a field: a property, the first item of an
/// array, or one branch of a union (the branch's schema).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    /// An array item: built as the only item (index 0); the index moves
    /// when context is put before it.
    Item(usize),
    Branch(Value),
}

/// A field to set: where, and the value.
#[derive(Debug, Clone)]
pub struct Target {
    pub steps: Vec<Step>,
    pub value: Value,
}

impl Target {
    /// The JSON path of the field (`messages[0].content[0].citations`).
    pub fn path(&self) -> String {
        render(&self.steps)
    }
}

pub fn render(steps: &[Step]) -> String {
    let mut out = String::new();
    for s in steps {
        match s {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Item(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
            Step::Branch(_) => {}
        }
    }
    out
}

/// An OpenAPI-style document's schemas (`#/components/schemas/...`).
pub struct Spec {
    pub schemas: Map<String, Value>,
    /// How deep the walk goes (fields nested deeper are not enumerated).
    pub max_depth: usize,
}

impl Spec {
    pub fn new(doc: &Value) -> Spec {
        Spec {
            schemas: doc["components"]["schemas"].as_object().unwrap().clone(),
            max_depth: 12,
        }
    }

    pub fn component(&self, name: &str) -> Value {
        json!({"$ref": format!("#/components/schemas/{name}")})
    }

    fn deref<'a>(&'a self, s: &'a Value) -> &'a Value {
        let mut s = s;
        for _ in 0..32 {
            match s.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    let name = r.rsplit('/').next().unwrap();
                    s = self
                        .schemas
                        .get(name)
                        .unwrap_or_else(|| panic!("unknown $ref {r}"));
                }
                None => return s,
            }
        }
        panic!("a $ref loop")
    }

    fn ref_name(s: &Value) -> Option<&str> {
        s.get("$ref").and_then(Value::as_str)
    }

    /// The branches of a union (`anyOf`/`oneOf`), without the `null` one.
    fn branches<'a>(&'a self, s: &'a Value) -> Vec<&'a Value> {
        let s = self.deref(s);
        let mut out = Vec::new();
        for k in ["anyOf", "oneOf"] {
            for b in s.get(k).and_then(Value::as_array).into_iter().flatten() {
                if self.deref(b).get("type") != Some(&json!("null")) {
                    out.push(b);
                }
            }
        }
        out
    }

    /// The properties an object schema defines (through `allOf` and `$ref`).
    pub fn properties(&self, s: &Value) -> Map<String, Value> {
        let s = self.deref(s);
        let mut out = Map::new();
        if let Some(p) = s.get("properties").and_then(Value::as_object) {
            out.extend(p.clone());
        }
        for m in s
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(self.properties(m));
        }
        out
    }

    fn required(&self, s: &Value) -> Vec<String> {
        let s = self.deref(s);
        let mut out: Vec<String> = s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        for m in s
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(self.required(m));
        }
        out
    }

    fn is_object(&self, s: &Value) -> bool {
        let s = self.deref(s);
        s.get("type") == Some(&json!("object"))
            || s.get("properties").is_some()
            || s.get("allOf")
                .is_some_and(|a| a.as_array().unwrap().iter().any(|m| self.is_object(m)))
    }

    fn type_of(&self, s: &Value) -> Option<String> {
        let s = self.deref(s);
        match s.get("type") {
            Some(Value::String(t)) => Some(t.clone()),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null")
                .map(str::to_string),
            _ if self.is_object(s) => Some("object".into()),
            _ => None,
        }
    }

    /// A small valid instance: required fields only, the first branch of
    /// a union, the first enum value.
    pub fn minimal(&self, s: &Value, depth: usize) -> Value {
        let s = self.deref(s);
        if let Some(c) = s.get("const") {
            return c.clone();
        }
        if let Some(e) = s.get("enum").and_then(Value::as_array)
            && let Some(first) = e.iter().find(|v| !v.is_null())
        {
            return first.clone();
        }
        if depth > self.max_depth + 6 {
            return Value::Null;
        }
        if let Some(b) = self.branches(s).first() {
            // Prefer a branch that is not recursive-looking: the first.
            return self.minimal(b, depth + 1);
        }
        match self.type_of(s).as_deref() {
            Some("object") => {
                let mut m = Map::new();
                let props = self.properties(s);
                for r in self.required(s) {
                    let ps = props.get(&r).cloned().unwrap_or(json!({}));
                    m.insert(r, self.minimal(&ps, depth + 1));
                }
                Value::Object(m)
            }
            Some("array") => {
                let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                if min > 0 {
                    json!([self.minimal(s.get("items").unwrap_or(&json!({})), depth + 1)])
                } else {
                    json!([])
                }
            }
            Some("string") => json!(self.string(s)),
            Some("integer") => json!(self.integer(s)),
            Some("number") => json!(self.number(s)),
            Some("boolean") => json!(false),
            _ => json!({}),
        }
    }

    fn string(&self, s: &Value) -> String {
        match s.get("format").and_then(Value::as_str) {
            Some("byte") => "aGVsbG8=".into(),
            Some("uri") => "https://example.com/x".into(),
            Some("date-time") => "2026-01-01T00:00:00Z".into(),
            Some("google-duration") => "3.5s".into(),
            _ => "x1".into(),
        }
    }

    fn integer(&self, s: &Value) -> i64 {
        let min = s.get("minimum").and_then(Value::as_i64).unwrap_or(1);
        let max = s.get("maximum").and_then(Value::as_i64).unwrap_or(i64::MAX);
        7.clamp(min, max.max(min))
    }

    fn number(&self, s: &Value) -> f64 {
        let min = s.get("minimum").and_then(Value::as_f64).unwrap_or(0.0);
        let max = s.get("maximum").and_then(Value::as_f64).unwrap_or(f64::MAX);
        0.5f64.clamp(min, max)
    }

    /// The values a field is set to: each enum value, both booleans, one
    /// sample of anything else (a union: one per branch, as its own step).
    fn samples(&self, s: &Value) -> Vec<Value> {
        let d = self.deref(s);
        if let Some(c) = d.get("const") {
            return vec![c.clone()];
        }
        if let Some(e) = d.get("enum").and_then(Value::as_array) {
            return e.iter().filter(|v| !v.is_null()).cloned().collect();
        }
        match self.type_of(d).as_deref() {
            Some("boolean") => vec![json!(true), json!(false)],
            Some("array") => {
                let items = d.get("items").cloned().unwrap_or(json!({}));
                let item_branches = self.branches(&items);
                if item_branches.is_empty() {
                    vec![json!([self.sample(&items)])]
                } else {
                    // Each kind of item is a target of its own (below).
                    vec![json!([self.minimal(item_branches[0], 0)])]
                }
            }
            _ => vec![self.sample(d)],
        }
    }

    fn sample(&self, s: &Value) -> Value {
        let d = self.deref(s);
        match self.type_of(d).as_deref() {
            Some("string") => json!(self.string(d)),
            Some("integer") => json!(self.integer(d)),
            Some("number") => json!(self.number(d)),
            Some("boolean") => json!(true),
            None if d.as_object().is_some_and(|m| {
                m.is_empty() || m.keys().all(|k| k == "description" || k == "title")
            }) =>
            {
                json!({"any": "value"})
            }
            _ => self.minimal(d, 0),
        }
    }

    /// Every field under `schema`, each with the values it is set to.
    pub fn targets(&self, schema: &Value) -> Vec<Target> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        self.walk(
            schema,
            &mut Vec::new(),
            &mut Vec::new(),
            &mut out,
            &mut seen,
        );
        out
    }

    fn walk(
        &self,
        s: &Value,
        steps: &mut Vec<Step>,
        refs: &mut Vec<String>,
        out: &mut Vec<Target>,
        seen: &mut BTreeSet<String>,
    ) {
        let field_depth = steps
            .iter()
            .filter(|s| !matches!(s, Step::Branch(_)))
            .count();
        if field_depth > self.max_depth {
            return;
        }
        if let Some(r) = Spec::ref_name(s) {
            if refs.iter().any(|x| x == r) {
                return; // a cycle: its fields were enumerated higher up
            }
            refs.push(r.to_string());
            let d = self.deref(s).clone();
            self.walk(&d, steps, refs, out, seen);
            refs.pop();
            return;
        }
        let branches: Vec<Value> = self.branches(s).into_iter().cloned().collect();
        if !branches.is_empty() {
            for b in branches {
                steps.push(Step::Branch(b.clone()));
                // The branch itself, as a value (a string form, an object...).
                let key = format!("{}#{}", render(steps), b);
                if seen.insert(key) {
                    for v in self.samples(&b) {
                        out.push(Target {
                            steps: steps.clone(),
                            value: v,
                        });
                    }
                }
                self.walk(&b, steps, refs, out, seen);
                steps.pop();
            }
            return;
        }
        for m in s
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.walk(m, steps, refs, out, seen);
        }
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (k, ps) in props {
                steps.push(Step::Key(k.clone()));
                if self.branches(ps).is_empty() {
                    for v in self.samples(ps) {
                        out.push(Target {
                            steps: steps.clone(),
                            value: v,
                        });
                    }
                }
                self.walk(ps, steps, refs, out, seen);
                steps.pop();
            }
        }
        if s.get("type") == Some(&json!("array"))
            && let Some(items) = s.get("items")
        {
            steps.push(Step::Item(0));
            self.walk(items, steps, refs, out, seen);
            steps.pop();
        }
    }

    /// A request that sets `target` (and only what the schema requires
    /// around it) under `root`.
    pub fn build(&self, root: &Value, target: &Target) -> Value {
        self.build_at(root, &target.steps, &target.value, 0)
    }

    fn build_at(&self, s: &Value, steps: &[Step], leaf: &Value, depth: usize) -> Value {
        let Some((first, rest)) = steps.split_first() else {
            return leaf.clone();
        };
        match first {
            Step::Branch(b) => self.build_at(b, rest, leaf, depth + 1),
            Step::Item(_) => {
                let d = self.deref(s);
                let items = d.get("items").cloned().unwrap_or(json!({}));
                json!([self.build_at(&items, rest, leaf, depth + 1)])
            }
            Step::Key(k) => {
                let mut base = self.minimal(s, depth);
                if !base.is_object() {
                    base = json!({});
                }
                let ps = self.properties(s).get(k).cloned().unwrap_or(json!({}));
                base[k.as_str()] = self.build_at(&ps, rest, leaf, depth + 1);
                base
            }
        }
    }

    /// The fields of `v` that `s` does not define (paths), following the
    /// union branch that fits best.
    pub fn undefined_fields(&self, s: &Value, v: &Value, path: &str) -> Vec<String> {
        let d = self.deref(s);
        let branches = self.branches(d);
        if !branches.is_empty() {
            if v.is_null() {
                return Vec::new();
            }
            let mut best: Option<Vec<String>> = None;
            for b in branches {
                if !self.fits(b, v) {
                    continue;
                }
                let e = self.undefined_fields(b, v, path);
                if best.as_ref().is_none_or(|x| e.len() < x.len()) {
                    best = Some(e);
                }
            }
            return best.unwrap_or_default();
        }
        match v {
            Value::Object(m) => {
                let props = self.properties(d);
                let open = d
                    .get("additionalProperties")
                    .is_some_and(|a| a != &json!(false))
                    || d.get("patternProperties").is_some()
                    || (props.is_empty() && d.get("additionalProperties").is_none());
                let mut out = Vec::new();
                for (k, x) in m {
                    let at = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    match props.get(k) {
                        Some(ps) => out.extend(self.undefined_fields(ps, x, &at)),
                        None if open => {
                            if let Some(ap) =
                                d.get("additionalProperties").filter(|a| a.is_object())
                            {
                                out.extend(self.undefined_fields(ap, x, &at));
                            }
                        }
                        None => out.push(at),
                    }
                }
                out
            }
            Value::Array(a) => {
                let items = d.get("items").cloned().unwrap_or(json!({}));
                a.iter()
                    .enumerate()
                    .flat_map(|(i, x)| self.undefined_fields(&items, x, &format!("{path}[{i}]")))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// Whether a union branch may be the one `v` is: its type, and the
    /// constants and required fields an object branch names.
    fn fits(&self, b: &Value, v: &Value) -> bool {
        let d = self.deref(b);
        if !self.branches(d).is_empty() {
            return self.branches(d).iter().any(|x| self.fits(x, v));
        }
        let ty = self.type_of(d);
        let ok_type = match (ty.as_deref(), v) {
            (None, _) => true,
            (Some("object"), Value::Object(_)) => true,
            (Some("array"), Value::Array(_)) => true,
            (Some("string"), Value::String(_)) => true,
            (Some("integer"), Value::Number(n)) => n.is_i64() || n.is_u64(),
            (Some("number"), Value::Number(_)) => true,
            (Some("boolean"), Value::Bool(_)) => true,
            _ => false,
        };
        if !ok_type {
            return false;
        }
        if let Some(e) = d.get("enum").and_then(Value::as_array) {
            return e.contains(v);
        }
        if let Some(c) = d.get("const") {
            return c == v;
        }
        let Value::Object(m) = v else { return true };
        let props = self.properties(d);
        for (k, ps) in &props {
            let pd = self.deref(ps);
            if let Some(x) = m.get(k) {
                if let Some(c) = pd.get("const")
                    && c != x
                {
                    return false;
                }
                if let Some(e) = pd.get("enum").and_then(Value::as_array)
                    && (pd.get("type") == Some(&json!("string")) && e.len() == 1)
                    && !e.contains(x)
                {
                    return false;
                }
            }
        }
        self.required(d).iter().all(|r| m.contains_key(r))
    }
}

/// The value at a walked path in a body.
pub fn value_at<'a>(v: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    let mut cur = v;
    for s in steps {
        match s {
            Step::Key(k) => cur = cur.get(k)?,
            Step::Item(i) => cur = cur.get(i)?,
            Step::Branch(_) => {}
        }
    }
    Some(cur)
}

impl Target {
    /// Moves the index of the item under top-level `key` by `by` (context
    /// was put before it).
    pub fn shift(&mut self, key: &str, by: usize) {
        if let [Step::Key(k), Step::Item(i), ..] = self.steps.as_mut_slice()
            && k == key
        {
            *i += by;
        }
    }
}
