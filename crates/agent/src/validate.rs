//! Argument validation: a tool's JSON Schema compiled once, and errors
//! worded for a model — one short line per problem, naming the field path,
//! the rule and the value given (`amount: must be at most 500, got 900`).

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

mod budget;
mod closed;

/// At most this many problems are reported for one call.
const MAX_PROBLEMS: usize = 8;

/// A compiled argument schema.
pub struct ArgValidator {
    validator: Validator,
    /// For a schema too large to describe whole: the pruned copy messages
    /// are built from (see `budget`).
    messages: Option<Validator>,
}

impl std::fmt::Debug for ArgValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgValidator")
    }
}

/// The schema itself is not a valid JSON Schema.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid input schema for tool {tool:?}: {message}")]
pub struct SchemaError {
    /// The tool whose schema it is.
    pub tool: String,
    /// What the schema compiler said.
    pub message: String,
}

impl ArgValidator {
    /// Compiles a JSON Schema (2020-12 unless the schema names another
    /// draft), with `format` checked. Arguments the schema does not
    /// declare are refused unless it allows them on purpose (the
    /// extra-argument rule: see `closed`).
    pub fn new(tool: &str, schema: &Value) -> Result<Self, SchemaError> {
        let closed = closed::closed(schema);
        Self::as_written(tool, closed.as_ref().unwrap_or(schema))
    }

    /// Compiles a JSON Schema exactly as written: undeclared keys pass
    /// when the schema does not refuse them (the agent's output schema).
    pub fn as_written(tool: &str, schema: &Value) -> Result<Self, SchemaError> {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .map_err(|e| SchemaError {
                tool: tool.to_string(),
                message: e.to_string(),
            })?;
        let copy = budget::pruned(schema).map_err(|message| SchemaError {
            tool: tool.to_string(),
            message,
        })?;
        let messages = copy.and_then(|copy| {
            jsonschema::options()
                .should_validate_formats(true)
                .build(&copy)
                .ok()
        });
        Ok(ArgValidator {
            validator,
            messages,
        })
    }

    /// Whether the arguments satisfy the schema (fast path, no messages).
    pub fn is_valid(&self, args: &Value) -> bool {
        self.validator.is_valid(args)
    }

    /// The problems with `args`, one line each; empty when valid.
    pub fn problems(&self, args: &Value) -> Vec<String> {
        if self.validator.is_valid(args) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let describer = self.messages.as_ref().unwrap_or(&self.validator);
        for error in describer.iter_errors(args) {
            for line in describe(&error, args) {
                if !out.contains(&line) {
                    out.push(line);
                }
            }
            if cap(&mut out) {
                break;
            }
        }
        if out.is_empty() {
            // Only a pruned choice failed.
            out.push(
                "(arguments): does not match any of the allowed shapes (the schema's anyOf/oneOf alternatives are too many to say which)"
                    .into(),
            );
        }
        out
    }
}

/// At most [`MAX_PROBLEMS`] lines, and one saying so when there were more;
/// true when some were cut.
fn cap(lines: &mut Vec<String>) -> bool {
    if lines.len() <= MAX_PROBLEMS {
        return false;
    }
    lines.truncate(MAX_PROBLEMS);
    lines.push("(more problems not shown)".into());
    true
}

/// How the messages name the place a JSON pointer points to in `root`:
/// `items[2].sku`, `customer["first name"]`, `(arguments)` for the root.
/// A form that edits arguments names its fields the same way, so that each
/// message can be shown at its field.
pub fn message_path(pointer: &str, root: &Value) -> String {
    shown(&field_path(pointer, root)).to_string()
}

/// One step of a path into the arguments: a property or an array item.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathStep {
    /// A property, by name.
    Key(String),
    /// An array item, by position.
    Index(usize),
}

impl PathStep {
    /// A step as a language's validator names it, in JSON: a whole number
    /// is an array index, a string a key (anything else, its JSON text).
    pub fn from_json(step: &Value) -> PathStep {
        match step {
            Value::Number(n) => n
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .map_or_else(|| PathStep::Key(n.to_string()), PathStep::Index),
            Value::String(s) => PathStep::Key(s.clone()),
            other => PathStep::Key(other.to_string()),
        }
    }
}

impl From<&str> for PathStep {
    fn from(key: &str) -> Self {
        PathStep::Key(key.to_string())
    }
}

impl From<String> for PathStep {
    fn from(key: String) -> Self {
        PathStep::Key(key)
    }
}

impl From<usize> for PathStep {
    fn from(index: usize) -> Self {
        PathStep::Index(index)
    }
}

/// One thing wrong with a call's arguments that the schema let through,
/// found by the tool's own check (the typed argument's deserializer, a
/// pydantic validator, a zod refinement): where, and what. It reads as
/// the schema's problems do: `items[2].sku: must start with S-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentProblem {
    /// Where in the arguments (empty: the arguments as a whole).
    pub path: Vec<PathStep>,
    /// What is wrong, for the model.
    pub message: String,
}

impl ArgumentProblem {
    /// A problem at `path` (`["amount"]`, `[PathStep::from("items"), 2.into()]`,
    /// or no steps for the arguments as a whole).
    pub fn new<S: Into<PathStep>>(
        path: impl IntoIterator<Item = S>,
        message: impl Into<String>,
    ) -> Self {
        ArgumentProblem {
            path: path.into_iter().map(Into::into).collect(),
            message: message.into(),
        }
    }

    /// The problem's line, as the model reads it.
    pub fn line(&self) -> String {
        format!(
            "{}: {}",
            shown(&steps_text(&self.path)),
            one_line(&self.message)
        )
    }
}

impl std::fmt::Display for ArgumentProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line())
    }
}

/// The lines the model reads for a tool's own problems, capped as the
/// schema's are.
pub(crate) fn problem_lines(problems: &[ArgumentProblem]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in problems.iter().map(ArgumentProblem::line) {
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    if lines.is_empty() {
        lines.push("(arguments): refused by the tool's own check".into());
    }
    cap(&mut lines);
    lines
}

fn steps_text(steps: &[PathStep]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            PathStep::Index(i) => out.push_str(&format!("[{i}]")),
            PathStep::Key(k) => out = join(&out, k),
        }
    }
    out
}

/// Turns a JSON pointer into `items[2].sku`, using the instance to tell
/// array indexes from object keys.
fn field_path(pointer: &str, root: &Value) -> String {
    let mut steps = Vec::new();
    let mut at = Some(root);
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        match (at, seg.parse::<usize>()) {
            (Some(Value::Array(items)), Ok(i)) => {
                at = items.get(i);
                steps.push(PathStep::Index(i));
            }
            _ => {
                at = at.and_then(|v| v.get(&seg));
                steps.push(PathStep::Key(seg));
            }
        }
    }
    steps_text(&steps)
}

/// Whether a property name can be written bare in a path (`a.b`): not
/// empty, no separator, quote, space or control character.
fn bare(key: &str) -> bool {
    !key.is_empty()
        && key.chars().count() <= SHOWN_CHARS
        && !key.chars().any(|c| {
            matches!(c, '.' | '[' | ']' | '"' | '\\') || c.is_whitespace() || c.is_control()
        })
}

/// `path` and one more property: `a.b`, or `a["x.y"]` when the name needs
/// quoting (JSON string rules: newlines and quotes escaped).
fn join(path: &str, key: &str) -> String {
    if !bare(key) {
        let quoted = serde_json::to_string(key).expect("a string");
        return format!("{path}[{}]", cut(&quoted));
    }
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// At most this many characters of a value or a name are shown.
const SHOWN_CHARS: usize = 40;

/// A quoted string cut to [`SHOWN_CHARS`] characters inside its quotes,
/// with `…` where it was cut.
fn cut(quoted: &str) -> String {
    let inner = &quoted[1..quoted.len() - 1];
    if inner.chars().count() <= SHOWN_CHARS {
        return quoted.to_string();
    }
    let short: String = inner.chars().take(SHOWN_CHARS).collect();
    format!("\"{short}…\"")
}

/// Text from a schema or a library on one line (newlines escaped).
fn one_line(text: &str) -> String {
    text.replace('\r', "\\r").replace('\n', "\\n")
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "(arguments)" } else { path }
}

/// A short rendering of a value: never a dump of a whole object.
pub(crate) fn brief(v: &Value) -> String {
    match v {
        // JSON's own escaping (newlines as \n), cut to 40 characters.
        Value::String(s) if s.chars().count() > SHOWN_CHARS => {
            let inner: String = s.chars().take(SHOWN_CHARS).collect();
            let q = serde_json::to_string(&inner).expect("a string");
            format!("{}…\"", &q[..q.len() - 1])
        }
        Value::String(s) => serde_json::to_string(s).expect("a string"),
        Value::Array(a) => format!(
            "an array of {} item{}",
            a.len(),
            if a.len() == 1 { "" } else { "s" }
        ),
        Value::Object(_) => "an object".into(),
        other => other.to_string(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn an(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

fn describe(error: &ValidationError<'_>, root: &Value) -> Vec<String> {
    let path = field_path(&error.instance_path().to_string(), root);
    let value = error.instance();
    let got = brief(value);
    let p = shown(&path);
    let line = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            return vec![format!("{}: required property missing", join(&path, &name))];
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            return unexpected
                .iter()
                .map(|k| format!("{}: unexpected property", join(&path, k)))
                .collect();
        }
        ValidationErrorKind::Type { kind } => {
            let mut want: Vec<String> = match kind {
                TypeKind::Single(t) => vec![t.to_string()],
                TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
            };
            // "a boolean or null" reads better than "a null or boolean".
            want.sort_by_key(|t| t == "null");
            let want = want.join(" or ");
            format!(
                "{p}: must be {} {want}, got {}",
                an(&want),
                typed(value, &got)
            )
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("{p}: must be at least {limit}, got {got}")
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("{p}: must be at most {limit}, got {got}")
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{p}: must be greater than {limit}, got {got}")
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{p}: must be less than {limit}, got {got}")
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("{p}: must be a multiple of {multiple_of}, got {got}")
        }
        ValidationErrorKind::MinLength { limit } => format!(
            "{p}: must be at least {limit} character{} long, got {got}",
            plural(*limit)
        ),
        ValidationErrorKind::MaxLength { limit } => format!(
            "{p}: must be at most {limit} character{} long, got {got}",
            plural(*limit)
        ),
        ValidationErrorKind::Pattern { pattern } => {
            format!("{p}: must match pattern {}, got {got}", one_line(pattern))
        }
        ValidationErrorKind::Format { format } => {
            format!("{p}: must be a valid {format}, got {got}")
        }
        ValidationErrorKind::Enum { options } => {
            let opts: Vec<String> = options
                .as_array()
                .map(|a| a.iter().map(brief).collect())
                .unwrap_or_else(|| vec![options.to_string()]);
            format!("{p}: must be one of {}, got {got}", opts.join(", "))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{p}: must be {}, got {got}", brief(expected_value))
        }
        ValidationErrorKind::MinItems { limit } => format!(
            "{p}: must have at least {limit} item{}, got {}",
            plural(*limit),
            count(value)
        ),
        ValidationErrorKind::MaxItems { limit } => format!(
            "{p}: must have at most {limit} item{}, got {}",
            plural(*limit),
            count(value)
        ),
        ValidationErrorKind::AdditionalItems { limit } => format!(
            "{p}: must have at most {limit} item{}, got {}",
            plural(*limit as u64),
            count(value)
        ),
        ValidationErrorKind::UnevaluatedItems { unexpected } => format!(
            "{p}: has {} item{} the schema does not allow",
            unexpected.len(),
            plural(unexpected.len() as u64)
        ),
        ValidationErrorKind::UniqueItems => format!("{p}: items must be unique"),
        ValidationErrorKind::MinProperties { limit } => format!(
            "{p}: must have at least {limit} propert{}, got {}",
            if *limit == 1 { "y" } else { "ies" },
            value.as_object().map_or(0, |o| o.len())
        ),
        ValidationErrorKind::MaxProperties { limit } => format!(
            "{p}: must have at most {limit} propert{}, got {}",
            if *limit == 1 { "y" } else { "ies" },
            value.as_object().map_or(0, |o| o.len())
        ),
        ValidationErrorKind::Contains => format!("{p}: must contain at least one matching item"),
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            return one_of(p, &got, context, root);
        }
        ValidationErrorKind::OneOfMultipleValid { context } => {
            let valid: Vec<String> = context
                .iter()
                .enumerate()
                .filter(|(_, errs)| errs.is_empty())
                .map(|(i, _)| format!("#{i}"))
                .collect();
            // Several branches matched, so there are at least two names.
            let names = match valid.split_last() {
                Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                None => String::new(),
            };
            format!(
                "{p}: must match exactly one of the {} allowed shapes, but matches several: {names}",
                context.len()
            )
        }
        ValidationErrorKind::Not { .. } => format!("{p}: is not allowed here, got {got}"),
        ValidationErrorKind::FalseSchema => {
            // `additionalProperties: false` with no properties at all: the
            // validator points at the object; every key is unexpected.
            let object = error
                .schema_path()
                .as_str()
                .ends_with("/additionalProperties")
                .then(|| root.pointer(error.instance_path().as_str()))
                .flatten()
                .and_then(Value::as_object);
            if let Some(object) = object {
                return object
                    .keys()
                    .map(|k| format!("{}: unexpected property", join(&path, k)))
                    .collect();
            }
            format!("{p}: is not allowed")
        }
        ValidationErrorKind::PropertyNames { error } => {
            format!("{p}: property name {}", error.kind_message())
        }
        _ => format!("{p}: {}", one_line(&error.to_string())),
    };
    vec![line]
}

/// anyOf / oneOf with no matching branch: name the branch that came
/// closest (fewest problems), so the model learns what to fix.
fn one_of(
    p: &str,
    got: &str,
    context: &[Vec<ValidationError<'static>>],
    root: &Value,
) -> Vec<String> {
    let best = context.iter().min_by_key(|errs| errs.len());
    match best {
        Some(errs) if !errs.is_empty() && errs.len() <= 3 => {
            let mut lines = Vec::new();
            for e in errs {
                lines.extend(describe(e, root));
            }
            lines
        }
        _ => vec![format!(
            "{p}: must match one of the allowed shapes, got {got}"
        )],
    }
}

trait KindMessage {
    fn kind_message(&self) -> String;
}

impl KindMessage for ValidationError<'_> {
    fn kind_message(&self) -> String {
        let full = describe(self, &Value::Null).join("; ");
        full.split_once(": ")
            .map_or(full.clone(), |(_, m)| m.to_string())
    }
}

fn typed(value: &Value, got: &str) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Array(_) | Value::Object(_) => got.to_string(),
        _ => format!("{} {got}", type_name(value)),
    }
}

fn count(v: &Value) -> usize {
    v.as_array().map_or(0, Vec::len)
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(schema: Value, args: Value) -> Vec<String> {
        ArgValidator::new("t", &schema).unwrap().problems(&args)
    }

    #[test]
    fn the_seed_example() {
        let schema =
            json!({"type": "object", "properties": {"amount": {"type": "number", "maximum": 500}}});
        assert_eq!(
            problems(schema, json!({"amount": 900})),
            ["amount: must be at most 500, got 900"]
        );
    }

    #[test]
    fn message_paths_name_fields_as_the_messages_do() {
        let root = json!({"items": [{"sku": 1}], "a.b": {"c": 1}});
        assert_eq!(message_path("/items/0/sku", &root), "items[0].sku");
        assert_eq!(message_path("/a.b/c", &root), "[\"a.b\"].c");
        assert_eq!(message_path("", &root), "(arguments)");
    }

    #[test]
    fn nested_required_and_indexes() {
        let schema = json!({"type": "object", "properties": {"items": {"type": "array", "items": {
            "type": "object", "required": ["sku"], "properties": {"sku": {"type": "string"}}}}}});
        let args = json!({"items": [{"sku": "a"}, {"sku": "b"}, {"qty": 1}]});
        // `qty` is not declared: an undeclared argument is a wrong one.
        assert_eq!(
            problems(schema, args),
            [
                "items[2].qty: unexpected property",
                "items[2].sku: required property missing"
            ]
        );
    }

    #[test]
    fn each_rule_has_a_short_line() {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["id"],
            "properties": {
                "id": {"type": "string", "pattern": "^[A-Z]-[0-9]{4}$"},
                "n": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
                "x": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
                "mode": {"enum": ["fast", "slow"]},
                "kind": {"const": "order"},
                "name": {"type": "string", "minLength": 2, "maxLength": 5},
                "email": {"type": "string", "format": "email"},
                "tags": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true},
                "flag": {"type": ["boolean", "null"]}
            }
        });
        let cases = [
            (json!({}), "id: required property missing"),
            (
                json!({"id": "A-1001", "extra": 1}),
                "extra: unexpected property",
            ),
            (
                json!({"id": "nope"}),
                "id: must match pattern ^[A-Z]-[0-9]{4}$, got \"nope\"",
            ),
            (json!({"id": 7}), "id: must be a string, got integer 7"),
            (
                json!({"id": "A-1001", "n": 0}),
                "n: must be at least 1, got 0",
            ),
            (
                json!({"id": "A-1001", "n": 10}),
                "n: must be less than 10, got 10",
            ),
            (
                json!({"id": "A-1001", "n": 1.5}),
                "n: must be an integer, got number 1.5",
            ),
            (
                json!({"id": "A-1001", "x": 0}),
                "x: must be greater than 0, got 0",
            ),
            (
                json!({"id": "A-1001", "x": 0.3}),
                "x: must be a multiple of 0.5, got 0.3",
            ),
            (
                json!({"id": "A-1001", "mode": "medium"}),
                "mode: must be one of \"fast\", \"slow\", got \"medium\"",
            ),
            (
                json!({"id": "A-1001", "kind": "refund"}),
                "kind: must be \"order\", got \"refund\"",
            ),
            (
                json!({"id": "A-1001", "name": "a"}),
                "name: must be at least 2 characters long, got \"a\"",
            ),
            (
                json!({"id": "A-1001", "name": "abcdef"}),
                "name: must be at most 5 characters long, got \"abcdef\"",
            ),
            (
                json!({"id": "A-1001", "email": "not-an-email"}),
                "email: must be a valid email, got \"not-an-email\"",
            ),
            (
                json!({"id": "A-1001", "tags": []}),
                "tags: must have at least 1 item, got 0",
            ),
            (
                json!({"id": "A-1001", "tags": [1, 2, 3]}),
                "tags: must have at most 2 items, got 3",
            ),
            (
                json!({"id": "A-1001", "tags": [1, 1]}),
                "tags: items must be unique",
            ),
            (
                json!({"id": "A-1001", "flag": "yes"}),
                "flag: must be a boolean or null, got string \"yes\"",
            ),
            (
                json!([1]),
                "(arguments): must be an object, got an array of 1 item",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(problems(schema.clone(), args.clone()), [want], "for {args}");
        }
    }

    #[test]
    fn one_of_names_the_closest_branch() {
        let schema = json!({"type": "object", "properties": {"pay": {"oneOf": [
            {"type": "object", "required": ["card"], "properties": {"card": {"type": "string"}}},
            {"type": "object", "required": ["iban", "bic"], "properties": {"iban": {"type": "string"}, "bic": {"type": "string"}}}
        ]}}});
        assert_eq!(
            problems(schema.clone(), json!({"pay": {"card": 5}})),
            ["pay.card: must be a string, got integer 5"]
        );
        let schema2 = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(
            problems(schema2, json!(true)),
            ["(arguments): must be a string, got boolean true"]
        );
    }

    #[test]
    fn long_values_are_cut_and_objects_not_dumped() {
        let schema = json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}, "o": {"type": "string"}}});
        let long = "x".repeat(100);
        let p = problems(schema, json!({"s": long, "o": {"secret": "do not echo"}}));
        assert!(
            p.contains(&format!(
                "s: must be at most 3 characters long, got \"{}…\"",
                "x".repeat(40)
            )),
            "{p:?}"
        );
        assert!(
            p.contains(&"o: must be a string, got an object".to_string()),
            "{p:?}"
        );
    }

    #[test]
    fn a_tools_own_problems_are_capped_like_the_schemas() {
        let many: Vec<ArgumentProblem> = (0..10)
            .map(|i| ArgumentProblem::new([PathStep::from("tags"), i.into()], "is taken"))
            .collect();
        let lines = problem_lines(&many);
        assert_eq!(lines.len(), MAX_PROBLEMS + 1);
        assert_eq!(lines[0], "tags[0]: is taken");
        assert_eq!(lines[MAX_PROBLEMS], "(more problems not shown)");
        assert_eq!(
            problem_lines(&many[..MAX_PROBLEMS]).len(),
            MAX_PROBLEMS,
            "exactly the most: no line about more"
        );
        assert_eq!(
            problem_lines(&[]),
            ["(arguments): refused by the tool's own check"]
        );
    }

    #[test]
    fn a_bad_schema_is_an_error() {
        let e = ArgValidator::new("f", &json!({"type": "nope"})).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid input schema for tool \"f\": "),
            "{e}"
        );
    }
}
