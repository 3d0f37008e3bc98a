//! The edit form of a call, generated from its tool's JSON Schema, and the
//! way back: the posted fields assembled into arguments, and the engine's
//! messages about them put at the fields they name.
//!
//! A field is named `call.N.f.KIND.POINTER` (`KIND` ends with `!` when the
//! schema requires it; `POINTER` is the JSON pointer of the value), so the
//! arguments can be assembled from a post alone, without the schema.
//! Kinds: `s` text, `n` number, `b` true/false, `e` one of the schema's
//! values (JSON), `j` any JSON (arrays, choices of shapes: whatever a plain
//! field cannot hold), `o` an object's fieldset, `x` fields the schema does
//! not name (JSON, merged into their object). An empty optional field is
//! left out; an empty required text is the empty string; a number that is
//! not one is sent as text, so that the engine says what is wrong with it.

use std::collections::HashMap;

use maud::{Markup, html};
use parlance_format::MAX_VALUE_DEPTH;
use serde_json::{Map, Value};

use super::args::pretty;

/// Nesting deeper than this is edited as JSON.
const MAX_DEPTH: usize = 4;
/// Fields read from one post, at most.
const MAX_FIELDS: usize = 1000;

/// Values posted earlier (a form drawn again keeps what was typed).
#[derive(Default)]
pub struct Prefill(pub HashMap<String, String>);

impl Prefill {
    /// From posted pairs (the last of a name wins).
    pub fn from_pairs(pairs: &[(String, String)]) -> Prefill {
        Prefill(pairs.iter().cloned().collect())
    }

    /// The posted value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// Messages by JSON pointer ("" for the whole arguments).
pub type Errors = HashMap<String, Vec<String>>;

/// What is wrong with a posted form, by call (its index in the turn).
#[derive(Default, Debug)]
pub struct Problems {
    /// Per call: messages by slot (a field's JSON pointer, `""` for the
    /// arguments as a whole, `#decision`, `#answer`).
    pub calls: HashMap<usize, Errors>,
    /// Calls decided elsewhere meanwhile, and how.
    pub conflicts: HashMap<usize, String>,
    /// About the form as a whole.
    pub general: Vec<String>,
}

impl Problems {
    /// Nothing is wrong.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty() && self.conflicts.is_empty() && self.general.is_empty()
    }

    /// Adds `msg` at `slot` of call `n`.
    pub fn at(&mut self, n: usize, slot: &str, msg: impl Into<String>) {
        self.calls
            .entry(n)
            .or_default()
            .entry(slot.to_string())
            .or_default()
            .push(msg.into());
    }
}

/// One field of the form.
struct Field {
    ptr: String,
    key: String,
    description: Option<String>,
    required: bool,
    node: Node,
}

enum Node {
    Text {
        multiline: bool,
    },
    Number {
        integer: bool,
    },
    Choice {
        options: Vec<Value>,
        code: &'static str,
    },
    Object(Vec<Field>),
    Json,
    Extra,
}

fn resolve<'a>(mut s: &'a Value, root: &'a Value) -> &'a Value {
    for _ in 0..16 {
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            match r.strip_prefix('#').and_then(|p| root.pointer(p)) {
                Some(target) => {
                    s = target;
                    continue;
                }
                None => return s,
            }
        }
        match s.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => s = &all[0],
            _ => return s,
        }
    }
    s
}

/// The one non-null type of `s`, seeing through `["T", "null"]` and
/// `anyOf: [T, {"type": "null"}]`.
fn shape<'a>(s: &'a Value, root: &'a Value) -> (&'a Value, Option<&'a str>) {
    let s = resolve(s, root);
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array) {
            let real: Vec<&Value> = alts
                .iter()
                .filter(|a| resolve(a, root).get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            if real.len() == 1 && alts.len() == 2 {
                return shape(real[0], root);
            }
            return (s, None);
        }
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => {
            let real: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            (real.len() == 1).then(|| real[0])
        }
        _ => None,
    };
    (s, ty)
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn node(s: &Value, root: &Value, value: Option<&Value>, ptr: &str, depth: usize) -> Node {
    let (s, ty) = shape(s, root);
    if let Some(options) = s.get("enum").and_then(Value::as_array) {
        return Node::Choice {
            options: options.clone(),
            code: "e",
        };
    }
    if let Some(c) = s.get("const") {
        return Node::Choice {
            options: vec![c.clone()],
            code: "e",
        };
    }
    match ty {
        Some("string") => {
            let long = value
                .and_then(Value::as_str)
                .is_some_and(|v| v.contains('\n') || v.chars().count() > 80)
                || s.get("maxLength")
                    .and_then(Value::as_u64)
                    .is_some_and(|n| n > 200);
            Node::Text { multiline: long }
        }
        Some("integer") => Node::Number { integer: true },
        Some("number") => Node::Number { integer: false },
        Some("boolean") => Node::Choice {
            options: vec![Value::Bool(true), Value::Bool(false)],
            code: "b",
        },
        Some("object")
            if depth < MAX_DEPTH && s.get("properties").is_some_and(Value::is_object) =>
        {
            Node::Object(object_fields(s, root, value, ptr, depth + 1))
        }
        _ => Node::Json,
    }
}

fn object_fields(
    s: &Value,
    root: &Value,
    value: Option<&Value>,
    ptr: &str,
    depth: usize,
) -> Vec<Field> {
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props = s
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut fields: Vec<Field> = props
        .iter()
        .map(|(key, sub)| {
            let p = format!("{ptr}/{}", escape(key));
            let v = value.and_then(|v| v.get(key));
            Field {
                description: resolve(sub, root)
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                node: node(sub, root, v, &p, depth),
                ptr: p,
                key: key.clone(),
                required: required.contains(&key.as_str()),
            }
        })
        .collect();
    let extra: Map<String, Value> = value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(k, _)| !props.contains_key(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    if !extra.is_empty() {
        fields.push(Field {
            ptr: ptr.to_string(),
            key: "other fields".into(),
            description: Some("Fields the schema does not name, as a JSON object.".into()),
            required: false,
            node: Node::Extra,
        });
    }
    fields
}

/// The form's fields for `schema` filled with `args`, or `None` when the
/// schema is not an object with properties (then the arguments are edited
/// as JSON only).
fn fields(schema: &Value, args: &Value) -> Option<Vec<Field>> {
    let (s, ty) = shape(schema, schema);
    let has_props = s.get("properties").is_some_and(Value::is_object);
    (has_props && matches!(ty, Some("object") | None))
        .then(|| object_fields(s, schema, Some(args), "", 0))
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Draws call `n`'s edit fields (`None`: the schema has no fields to draw).
pub fn render(
    n: usize,
    schema: &Value,
    args: &Value,
    prefill: &Prefill,
    errors: &Errors,
) -> Option<Markup> {
    let fields = fields(schema, args)?;
    let ctx = Ctx {
        n,
        args,
        prefill,
        errors,
    };
    Some(html! { div .form-fields { @for f in &fields { (ctx.field(f)) } } })
}

struct Ctx<'a> {
    n: usize,
    args: &'a Value,
    prefill: &'a Prefill,
    errors: &'a Errors,
}

impl Ctx<'_> {
    fn error_slot(&self, ptr: &str, id: &str) -> Markup {
        let msgs = self.errors.get(ptr);
        html! {
            p .error .field-error id=(id) data-ptr=(ptr) role="alert" {
                @if let Some(m) = msgs { @for (i, line) in m.iter().enumerate() { @if i > 0 { br; } (line) } }
            }
        }
    }

    fn field(&self, f: &Field) -> Markup {
        let req = if f.required { "!" } else { "" };
        let id = format!("c{}-f{}", self.n, f.ptr.replace(['/', '~', ' '], "_"));
        let err_id = format!("{id}-err");
        let current = self.args.pointer(&f.ptr);
        let invalid = self.errors.contains_key(&f.ptr).then_some("true");
        let hint = f.description.as_deref();
        let label = html! {
            label for=(id) { code { (f.key) } @if f.required { " " span .req title="required" { "(required)" } } }
            @if let Some(h) = hint { p .hint { (h) } }
        };
        match &f.node {
            Node::Object(children) => {
                let name = format!("call.{}.f.o{req}.{}", self.n, f.ptr);
                html! {
                    fieldset .object data-ptr=(f.ptr) {
                        legend { code { (f.key) } @if f.required { " " span .req { "(required)" } } }
                        @if let Some(h) = hint { p .hint { (h) } }
                        input type="hidden" name=(name) value="";
                        (self.error_slot(&f.ptr, &err_id))
                        @for c in children { (self.field(c)) }
                    }
                }
            }
            Node::Text { multiline } => {
                let name = format!("call.{}.f.s{req}.{}", self.n, f.ptr);
                let value = self
                    .prefill
                    .get(&name)
                    .map(str::to_string)
                    .unwrap_or_else(|| text_of(current));
                html! {
                    div .field data-ptr=(f.ptr) {
                        (label)
                        @if *multiline {
                            textarea id=(id) name=(name) rows="4" aria-invalid=[invalid] aria-describedby=(err_id) { (value) }
                        } @else {
                            input id=(id) type="text" name=(name) value=(value) aria-invalid=[invalid] aria-describedby=(err_id);
                        }
                        (self.error_slot(&f.ptr, &err_id))
                    }
                }
            }
            Node::Number { integer } => {
                let name = format!("call.{}.f.n{req}.{}", self.n, f.ptr);
                let value = self
                    .prefill
                    .get(&name)
                    .map(str::to_string)
                    .unwrap_or_else(|| text_of(current));
                html! {
                    div .field data-ptr=(f.ptr) {
                        (label)
                        input id=(id) type="text" inputmode=(if *integer { "numeric" } else { "decimal" })
                            name=(name) value=(value) aria-invalid=[invalid] aria-describedby=(err_id);
                        (self.error_slot(&f.ptr, &err_id))
                    }
                }
            }
            Node::Choice { options, code } => {
                let name = format!("call.{}.f.{code}{req}.{}", self.n, f.ptr);
                let chosen = self
                    .prefill
                    .get(&name)
                    .map(str::to_string)
                    .unwrap_or_else(|| current.map(Value::to_string).unwrap_or_default());
                html! {
                    div .field data-ptr=(f.ptr) {
                        (label)
                        select id=(id) name=(name) aria-invalid=[invalid] aria-describedby=(err_id) {
                            @if !f.required || current.is_none() { option value="" selected[chosen.is_empty()] { "(not set)" } }
                            @for o in options {
                                @let enc = o.to_string();
                                option value=(enc) selected[enc == chosen] { (text_of(Some(o))) }
                            }
                        }
                        (self.error_slot(&f.ptr, &err_id))
                    }
                }
            }
            Node::Json | Node::Extra => {
                let code = if matches!(f.node, Node::Extra) {
                    "x"
                } else {
                    "j"
                };
                let name = format!("call.{}.f.{code}{req}.{}", self.n, f.ptr);
                let value = match (&f.node, self.prefill.get(&name)) {
                    (_, Some(p)) => p.to_string(),
                    (Node::Extra, None) => {
                        let props: Map<String, Value> = current
                            .and_then(Value::as_object)
                            .cloned()
                            .unwrap_or_default();
                        pretty(&Value::Object(props))
                    }
                    (_, None) => current.map(pretty).unwrap_or_default(),
                };
                html! {
                    div .field .json data-ptr=(f.ptr) {
                        (label)
                        textarea id=(id) name=(name) rows="4" spellcheck="false" aria-invalid=[invalid] aria-describedby=(err_id) { (value) }
                        (self.error_slot(&f.ptr, &err_id))
                    }
                }
            }
        }
    }
}

/// Why a posted field's pointer is not one of this form's.
enum BadPointer {
    /// Not a JSON pointer.
    Syntax,
    /// More levels than the format allows a value (counted before
    /// anything is built: a post can name a million levels).
    TooDeep,
}

fn parse_pointer(ptr: &str) -> Result<Vec<String>, BadPointer> {
    if ptr.is_empty() {
        return Ok(Vec::new());
    }
    let rest = ptr.strip_prefix('/').ok_or(BadPointer::Syntax)?;
    if ptr.bytes().filter(|&b| b == b'/').count() > MAX_VALUE_DEPTH {
        return Err(BadPointer::TooDeep);
    }
    Ok(rest
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect())
}

/// A posted name as a message shows it (a name can be megabytes long).
fn shown(name: &str) -> String {
    match name.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &name[..i]),
        None => name.to_string(),
    }
}

/// The object at `path` in `root`, made on the way when missing.
fn object_at<'a>(root: &'a mut Value, path: &[String]) -> Option<&'a mut Map<String, Value>> {
    let mut at = root;
    for seg in path {
        let m = at.as_object_mut()?;
        at = m
            .entry(seg.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    at.as_object_mut()
}

/// Call `n`'s arguments from the posted form fields, and the fields that
/// could not be read (by pointer).
pub fn assemble(pairs: &[(String, String)], n: usize) -> (Value, Errors) {
    let prefix = format!("call.{n}.f.");
    let mut args = Value::Object(Map::new());
    let mut errors = Errors::new();
    let mut add = |ptr: &str, msg: String| errors.entry(ptr.to_string()).or_default().push(msg);
    for (name, text) in pairs
        .iter()
        .filter(|(k, _)| k.starts_with(&prefix))
        .take(MAX_FIELDS)
    {
        let rest = &name[prefix.len()..];
        let name = shown(name);
        let Some((code, ptr)) = rest.split_once('.') else {
            add("", format!("{name}: not a field of this form"));
            continue;
        };
        let required = code.ends_with('!');
        let path = match parse_pointer(ptr) {
            Ok(path) => path,
            Err(BadPointer::Syntax) => {
                add("", format!("{name}: not a field of this form"));
                continue;
            }
            Err(BadPointer::TooDeep) => {
                add(
                    "",
                    format!(
                        "{name}: nested deeper than {MAX_VALUE_DEPTH} levels (the format's limit)"
                    ),
                );
                continue;
            }
        };
        let (parent, key) = match path.split_last() {
            Some((k, p)) => (p, Some(k.clone())),
            None => (&path[..], None),
        };
        let t = text.trim();
        let value = match (code.trim_end_matches('!'), key.is_some()) {
            ("o", _) => {
                if required && object_at(&mut args, &path).is_none() {
                    add(ptr, "is not an object here".into());
                }
                continue;
            }
            ("x", _) => {
                match serde_json::from_str::<Value>(t) {
                    Ok(Value::Object(extra)) => match object_at(&mut args, &path) {
                        Some(obj) => {
                            for (k, v) in extra {
                                obj.entry(k).or_insert(v);
                            }
                        }
                        None => add(ptr, "is not an object here".into()),
                    },
                    _ if t.is_empty() => {}
                    _ => add(ptr, "other fields: not a JSON object".into()),
                }
                continue;
            }
            (_, false) => {
                add("", format!("{name}: not a field of this form"));
                continue;
            }
            ("s", _) if text.is_empty() && !required => continue,
            ("s", _) => Value::String(text.clone()),
            (_, _) if t.is_empty() => continue,
            ("n", _) => match serde_json::from_str::<Value>(t) {
                Ok(v @ Value::Number(_)) => v,
                _ => Value::String(t.to_string()),
            },
            ("b", _) => match t {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                other => Value::String(other.to_string()),
            },
            ("e", _) => match serde_json::from_str::<Value>(t) {
                Ok(v) => v,
                Err(_) => {
                    add(ptr, "not one of the choices".into());
                    continue;
                }
            },
            ("j", _) => match serde_json::from_str::<Value>(t) {
                Ok(v) => v,
                Err(e) => {
                    add(ptr, format!("not valid JSON: {e}"));
                    continue;
                }
            },
            _ => {
                add("", format!("{name}: not a field of this form"));
                continue;
            }
        };
        match object_at(&mut args, parent) {
            Some(obj) => {
                obj.insert(key.expect("a field has a key"), value);
            }
            None => add(ptr, "is not inside an object".into()),
        }
    }
    if errors.is_empty()
        && let Err(e) = parlance_format::check_depth(&args, "(arguments)")
    {
        // A JSON field's value, deep itself, placed deep in the form.
        errors.insert(String::new(), vec![e.to_string()]);
    }
    (args, errors)
}

/// The pointers call `n`'s posted fields stand for.
pub fn pointers(pairs: &[(String, String)], n: usize) -> Vec<String> {
    let prefix = format!("call.{n}.f.");
    pairs
        .iter()
        .filter_map(|(k, _)| k.strip_prefix(&prefix))
        .filter_map(|rest| rest.split_once('.').map(|(_, p)| p.to_string()))
        .take(MAX_FIELDS)
        .collect()
}

/// Puts each of the engine's lines (`amount: must be at most 500, got
/// 900`) at the field it names: the field whose path (as the engine writes
/// paths) is the longest that starts the line. Lines naming no field go
/// under `""` (the whole arguments).
pub fn place(problems: &[String], pointers: &[String], args: &Value) -> Errors {
    let paths: Vec<(String, &String)> = pointers
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| (parlance_agent::validate::message_path(p, args), p))
        .collect();
    let mut out = Errors::new();
    for line in problems {
        let best = paths
            .iter()
            .filter(|(path, _)| {
                line.strip_prefix(path.as_str()).is_some_and(|rest| {
                    rest.starts_with(": ") || rest.starts_with('.') || rest.starts_with('[')
                })
            })
            .max_by_key(|(path, _)| path.len());
        let ptr = best.map_or(String::new(), |(_, p)| (*p).clone());
        out.entry(ptr).or_default().push(line.clone());
    }
    out
}

#[cfg(test)]
#[path = "form_tests.rs"]
mod tests;
