//! The extra-argument rule: an argument the schema does not declare is a
//! wrong argument, in every language.
//!
//! JSON Schema lets undeclared keys through unless the schema says
//! otherwise, and each language's schema source says otherwise in its own
//! way (pydantic forbids them, zod and a derived Rust schema allow them
//! unless asked). So the engine checks arguments against a *closed* copy
//! of the tool's schema: wherever an object schema declares `properties`
//! and says nothing about other keys (no `additionalProperties`,
//! `patternProperties` or `unevaluatedProperties`), other keys are
//! refused (`extra: unexpected property`). A schema that allows other
//! keys on purpose (`additionalProperties: true` or a schema, zod's
//! `looseObject`, a flattened map in Rust) keeps them. The schema sent to
//! the model is the tool's own, unchanged.
//!
//! Only places that describe a whole value are closed: the root, a
//! property's schema, array items, the alternatives of an `anyOf`/`oneOf`
//! that stand alone, and `$defs` entries that are used whole. A part of a
//! combination (an `allOf` member, `if`/`then`/`else`, a `$ref` beside
//! other keywords) is not: closing it would refuse what its siblings
//! declare. An object that combines parts is closed with
//! `unevaluatedProperties: false`, which sees the keys every part
//! declares (2019-09 and later; an older draft's combinations stay open).

use std::collections::HashSet;

use serde_json::{Map, Value};

/// Keywords that say something about undeclared keys: an object with any
/// of them is left as its author wrote it.
const OPEN_ON_PURPOSE: &[&str] = &[
    "additionalProperties",
    "patternProperties",
    "unevaluatedProperties",
];

/// Keywords beside a `$ref` that make the referenced schema a part of a
/// combination (annotations such as `description` do not).
const SHAPING: &[&str] = &[
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "if",
    "dependentSchemas",
];

/// Keywords that make an object schema a combination of parts.
const COMBINING: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$dynamicRef",
    "if",
    "dependentSchemas",
];

/// The closed copy of `schema`, or `None` when closing changes nothing.
pub(super) fn closed(schema: &Value) -> Option<Value> {
    let modern = !schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| {
            ["draft-04", "draft-06", "draft-07"]
                .iter()
                .any(|d| s.contains(d))
        });
    let partial = partial_refs(schema);
    let mut copy = schema.clone();
    let mut changed = false;
    let mut closer = Closer {
        modern,
        partial: &partial,
        changed: &mut changed,
    };
    closer.walk(&mut copy, "#", true);
    changed.then_some(copy)
}

struct Closer<'a> {
    modern: bool,
    /// `$defs` entries used as a part of a combination somewhere.
    partial: &'a HashSet<String>,
    changed: &'a mut bool,
}

impl Closer<'_> {
    /// Closes `node` if it describes a whole value (`whole`), then goes
    /// on into its subschemas. `at` is its JSON pointer (as a `$ref`
    /// names it).
    fn walk(&mut self, node: &mut Value, at: &str, whole: bool) {
        let Value::Object(map) = node else {
            return;
        };
        if whole {
            self.close(map);
        }
        // A node that declares its own properties makes its anyOf/oneOf
        // alternatives partial: each adds to what the node declares.
        let declares = OPEN_ON_PURPOSE
            .iter()
            .chain(["properties"].iter())
            .any(|k| map.contains_key(*k));
        for (key, child) in map.iter_mut() {
            let here = format!("{at}/{}", escape(key));
            match key.as_str() {
                "properties" | "patternProperties" | "$defs" | "definitions" => {
                    if let Value::Object(children) = child {
                        for (name, sub) in children.iter_mut() {
                            let path = format!("{here}/{}", escape(name));
                            let whole = !matches!(key.as_str(), "$defs" | "definitions")
                                || !self.partial.contains(&path);
                            self.walk(sub, &path, whole);
                        }
                    }
                }
                "anyOf" | "oneOf" => self.walk_list(child, &here, !declares),
                "allOf" => self.walk_list(child, &here, false),
                "prefixItems" => self.walk_list(child, &here, true),
                // `items` as a list is the tuple form of older drafts.
                "items" if child.is_array() => self.walk_list(child, &here, true),
                "items" | "additionalProperties" | "additionalItems" | "unevaluatedItems" => {
                    self.walk(child, &here, true)
                }
                "if" | "then" | "else" | "dependentSchemas" => {
                    self.walk_parts(child, &here, key == "dependentSchemas")
                }
                // `not` and `contains` say what a value must not be or must
                // include: closing them would change their meaning.
                _ => {}
            }
        }
    }

    fn walk_list(&mut self, list: &mut Value, at: &str, whole: bool) {
        if let Value::Array(items) = list {
            for (i, item) in items.iter_mut().enumerate() {
                self.walk(item, &format!("{at}/{i}"), whole);
            }
        }
    }

    /// Parts of a combination: not closed themselves, but what they hold
    /// under `properties` is whole again.
    fn walk_parts(&mut self, node: &mut Value, at: &str, is_map: bool) {
        if is_map {
            if let Value::Object(map) = node {
                for (name, sub) in map.iter_mut() {
                    self.walk(sub, &format!("{at}/{}", escape(name)), false);
                }
            }
        } else {
            self.walk(node, at, false);
        }
    }

    fn close(&mut self, map: &mut Map<String, Value>) {
        if !map.contains_key("properties") || OPEN_ON_PURPOSE.iter().any(|k| map.contains_key(*k)) {
            return;
        }
        let combines = COMBINING.iter().any(|k| map.contains_key(*k));
        let keyword = match (combines, self.modern) {
            (false, _) => "additionalProperties",
            (true, true) => "unevaluatedProperties",
            (true, false) => return,
        };
        map.insert(keyword.to_string(), Value::Bool(false));
        *self.changed = true;
    }
}

/// The local `$ref`s used as a part of a combination: an `allOf` member,
/// `if`/`then`/`else`, or a `$ref` beside keywords that shape the object
/// (a `description` beside it does not). Their targets are not closed.
fn partial_refs(schema: &Value) -> HashSet<String> {
    fn visit(node: &Value, part: bool, out: &mut HashSet<String>) {
        match node {
            Value::Object(map) => {
                if let Some(r) = map.get("$ref").and_then(Value::as_str)
                    && (part || SHAPING.iter().any(|k| map.contains_key(*k)))
                {
                    out.insert(r.to_string());
                }
                for (key, child) in map {
                    let part = matches!(key.as_str(), "allOf" | "if" | "then" | "else");
                    match child {
                        Value::Array(items) => items.iter().for_each(|i| visit(i, part, out)),
                        other => visit(other, part, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| visit(i, false, out)),
            _ => {}
        }
    }
    let mut out = HashSet::new();
    visit(schema, false, &mut out);
    out
}

/// A JSON pointer segment (`~` and `/` escaped).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plain_object_is_closed_and_an_open_one_kept() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(
            closed(&s).unwrap()["additionalProperties"],
            Value::Bool(false)
        );
        let open = json!({"type": "object", "properties": {}, "additionalProperties": true});
        assert_eq!(closed(&open), None);
        let free = json!({"type": "object"});
        assert_eq!(closed(&free), None);
    }

    #[test]
    fn an_all_of_member_stays_open_and_its_whole_is_closed_by_unevaluated() {
        let s = json!({
            "$defs": {"Base": {"type": "object", "properties": {"id": {}}}},
            "allOf": [{"$ref": "#/$defs/Base"}],
            "properties": {"extra": {}}
        });
        let c = closed(&s).unwrap();
        assert_eq!(c["unevaluatedProperties"], Value::Bool(false));
        assert!(c["$defs"]["Base"].get("additionalProperties").is_none());
    }

    #[test]
    fn defs_used_whole_are_closed() {
        let s = json!({
            "type": "object",
            "properties": {"addr": {"$ref": "#/$defs/Addr"}},
            "$defs": {"Addr": {"type": "object", "properties": {"city": {}}}}
        });
        let c = closed(&s).unwrap();
        assert_eq!(
            c["$defs"]["Addr"]["additionalProperties"],
            Value::Bool(false)
        );
        assert_eq!(c["additionalProperties"], Value::Bool(false));
    }

    #[test]
    fn older_drafts_leave_combinations_open() {
        let s = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "allOf": [{"properties": {"a": {}}}],
            "properties": {"b": {}}
        });
        assert_eq!(closed(&s), None);
    }
}
