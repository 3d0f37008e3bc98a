//! Bounding the work of describing problems.
//!
//! Validating is cheap, but describing why arguments fail an `anyOf` or a
//! `oneOf` means collecting the errors of every alternative, recursively.
//! A schema whose `$defs` form a DAG of such pairs unfolds into 2^depth
//! alternatives: a 1.5 KB schema took 30 s and 1.5 GB. So, once, when the
//! tool is added: the schema is unfolded (following local `$ref`s, counting
//! subschemas, with a ceiling); when it unfolds into more than
//! [`MAX_UNFOLDED`] subschemas, messages come from a copy in which every
//! `anyOf`/`oneOf` that alone unfolds into more than [`MAX_PER_CHOICE`] is
//! accepted as is. The copy names every other problem; a failure inside a
//! pruned choice gets one line saying so. Validation itself always uses
//! the whole schema.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// More unfolded subschemas than this, and messages use the pruned copy.
pub(super) const MAX_UNFOLDED: u64 = 20_000;

/// A schema unfolding into more than this is refused: even checking
/// arguments against it could take minutes.
pub(super) const MAX_SCHEMA: u64 = 1_000_000;

/// A choice unfolding into more than this is not described.
pub(super) const MAX_PER_CHOICE: u64 = 1_000;

const CHILD_MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];
const CHILD_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];
const CHILD: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "items",
    "additionalItems",
    "contains",
    "propertyNames",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
];

struct Unfold<'a> {
    root: &'a Value,
    memo: HashMap<String, u64>,
    open: HashSet<String>,
}

impl Unfold<'_> {
    /// How many subschemas `node` unfolds into (saturating).
    fn cost(&mut self, node: &Value) -> u64 {
        let Value::Object(map) = node else {
            return 1;
        };
        let mut total: u64 = 1;
        for (k, v) in map {
            let add = match k.as_str() {
                "$ref" => v.as_str().map_or(1, |r| self.cost_ref(r)),
                k if CHILD_MAPS.contains(&k) => v.as_object().map_or(0, |m| {
                    m.values()
                        .map(|s| self.cost(s))
                        .fold(0, u64::saturating_add)
                }),
                k if CHILD_LISTS.contains(&k) && v.is_array() => v.as_array().map_or(0, |a| {
                    a.iter().map(|s| self.cost(s)).fold(0, u64::saturating_add)
                }),
                k if CHILD.contains(&k) => self.cost(v),
                _ => 0,
            };
            total = total.saturating_add(add);
        }
        total
    }

    fn cost_ref(&mut self, reference: &str) -> u64 {
        let Some(pointer) = reference.strip_prefix('#') else {
            return 1;
        };
        if let Some(&c) = self.memo.get(reference) {
            return c;
        }
        // A cycle unfolds only as deep as the arguments go: count it once.
        if !self.open.insert(reference.to_string()) {
            return 1;
        }
        let root = self.root;
        let c = root.pointer(pointer).map_or(1, |target| self.cost(target));
        self.open.remove(reference);
        self.memo.insert(reference.to_string(), c);
        c
    }
}

/// The copy of `schema` that messages are built from (`Ok(None)` when the
/// schema is small enough to describe as it is); an error when the schema
/// is too large to validate at all.
pub(super) fn pruned(schema: &Value) -> Result<Option<Value>, String> {
    let mut u = Unfold {
        root: schema,
        memo: HashMap::new(),
        open: HashSet::new(),
    };
    let size = u.cost(schema);
    if size > MAX_SCHEMA {
        return Err(format!(
            "it unfolds into more than {MAX_SCHEMA} subschemas (anyOf/oneOf alternatives through $ref): too costly to check arguments against"
        ));
    }
    if size <= MAX_UNFOLDED {
        return Ok(None);
    }
    let mut copy = schema.clone();
    prune(&mut copy, &mut u);
    Ok(Some(copy))
}

/// Replaces every too-large choice by `true`, everywhere in the document
/// (definitions included, since `$ref`s lead there).
fn prune(node: &mut Value, u: &mut Unfold) {
    match node {
        Value::Object(map) => {
            let choice = map.contains_key("anyOf") || map.contains_key("oneOf");
            if choice && u.cost(&Value::Object(map.clone())) > MAX_PER_CHOICE {
                *node = Value::Bool(true);
                return;
            }
            for v in map.values_mut() {
                prune(v, u);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| prune(v, u)),
        _ => {}
    }
}
