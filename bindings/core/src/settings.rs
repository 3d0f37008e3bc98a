//! An agent's settings as each package spells them: Python's keyword
//! arguments (`tool_timeout=2.5`, seconds) and JavaScript's options
//! (`toolTimeout: 2500`, milliseconds) are one reader with two
//! [`Dialect`]s, so every check and every error is written once and names
//! the setting as its user wrote it.

use std::sync::Arc;
use std::time::Duration;

use parlance::{
    Agent, AgentBuilder, ContextPolicy, ContextStrategy, Fallback, FallbackOn, IntoModel, Limits,
    Model, ModelOptions, OnToolException,
};
use serde_json::{Map, Value};

use crate::BindError;

/// How a package spells settings and durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// snake_case names, durations in seconds, `dict`s.
    Python,
    /// camelCase names, durations in milliseconds, objects.
    Node,
}

impl Dialect {
    /// A setting's name (given in snake_case) as this dialect spells it.
    pub fn name(self, snake: &str) -> String {
        match self {
            Dialect::Python => snake.to_string(),
            Dialect::Node => {
                let mut out = String::with_capacity(snake.len());
                let mut upper = false;
                for c in snake.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.extend(c.to_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }

    /// A duration as this dialect gives it (a positive number of seconds
    /// or of milliseconds); `what` names the setting in errors.
    pub fn duration(self, what: &str, v: &Value) -> Result<Duration, BindError> {
        let (unit, scale) = match self {
            Dialect::Python => ("seconds", 1.0),
            Dialect::Node => ("milliseconds", 1000.0),
        };
        match v.as_f64() {
            Some(n) if n.is_finite() && n > 0.0 && n / scale < 1e12 => {
                Ok(Duration::from_secs_f64(n / scale))
            }
            _ => Err(BindError::config(format!(
                "{what}: expected a positive number of {unit}, got {v}"
            ))),
        }
    }

    /// A description of an object for errors (`dict` or `object`).
    pub(crate) fn object(self) -> &'static str {
        match self {
            Dialect::Python => "a dict",
            Dialect::Node => "an object",
        }
    }
}

/// The model a package's user gave an agent.
pub enum GivenModel {
    /// One model.
    One(Arc<dyn Model>),
    /// A list, tried in order (a fallback).
    List(Vec<Arc<dyn Model>>),
}

/// What an agent is built with, besides its model and tools.
#[derive(Default)]
pub struct AgentSettings {
    /// Its name.
    pub name: Option<String>,
    /// Its instructions (the system prompt).
    pub instructions: Option<String>,
    /// What it does, for the agents that hand conversations to it.
    pub description: Option<String>,
    /// Its limits.
    pub limits: Limits,
    /// The model settings sent with each request.
    pub options: ModelOptions,
    /// A structured output: its name and JSON Schema.
    pub output_schema: Option<(String, Value)>,
    /// The key that signs approval digests (see `AgentBuilder::approval_key`).
    pub approval_key: Option<Arc<[u8]>>,
    /// Keys retired from signing that still verify digests signed before
    /// a rotation (see `AgentBuilder::previous_approval_key`).
    pub previous_approval_keys: Vec<Arc<[u8]>>,
    /// With a list of models: the kinds of error that move on to the next.
    pub fallback_on: Option<FallbackOn>,
    /// The price table of its messages' costs: a file's, then the
    /// built-in one (see [`price_table`]).
    pub prices: Option<Arc<parlance::PriceTable>>,
    /// How runs keep their context inside the model's window (its
    /// summaries' model is given apart: [`Self::context_model`]).
    pub context: Option<ContextPolicy>,
    /// What runs, threads and owners may spend.
    pub budget: Option<parlance::Budget>,
    /// Where a list of models shares its cooldowns (a store's board:
    /// [`Self::share_cooldowns`]); given apart from the JSON settings.
    pub cooldowns: Option<Arc<dyn parlance::SharedCooldowns>>,
}

/// A JSON price table file (genai-prices' format), consulted before the
/// built-in table; its errors name the file and the path in it.
pub fn price_table(what: &str, path: &std::path::Path) -> Result<parlance::PriceTable, BindError> {
    Ok(parlance::PriceTable::from_file(path)
        .map_err(|e| BindError::config(format!("{what}: {e}")))?
        .then(parlance::PriceTable::builtin().clone()))
}

impl std::fmt::Debug for AgentSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSettings")
            .field("name", &self.name)
            .field("limits", &self.limits)
            .field("output_schema", &self.output_schema.as_ref().map(|o| &o.0))
            // Never the key itself.
            .field("approval_key", &self.approval_key.as_ref().map(|_| "(set)"))
            .field("previous_approval_keys", &self.previous_approval_keys.len())
            .finish_non_exhaustive()
    }
}

/// Every setting, in snake_case, in the order documented.
pub const NAMES: [&str; 19] = [
    "name",
    "instructions",
    "description",
    "on_tool_exception",
    "tool_timeout",
    "max_model_calls",
    "max_invalid_arguments",
    "tool_concurrency",
    "max_tool_output",
    "output_retries",
    "output_hold",
    "model_settings",
    "output_schema",
    "approval_key",
    "previous_approval_keys",
    "fallback_on",
    "prices",
    "context",
    "budget",
];

fn string(what: &str, v: &Value) -> Result<String, BindError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| BindError::config(format!("{what}: expected a string, got {v}")))
}

/// A signing secret: a string of at least 16 bytes.
fn secret(what: &str, v: &Value) -> Result<Arc<[u8]>, BindError> {
    let key = string(what, v)?;
    if key.len() < 16 {
        return Err(BindError::config(format!(
            "{what}: expected a secret of at least 16 bytes, got {}",
            key.len()
        )));
    }
    Ok(Arc::from(key.into_bytes()))
}

fn count(what: &str, v: &Value, min: u64, max: u64) -> Result<u64, BindError> {
    match v.as_u64() {
        Some(n) if n >= min && n <= max => Ok(n),
        _ => Err(BindError::config(format!(
            "{what}: expected a whole number of at least {min}, got {v}"
        ))),
    }
}

/// `on_tool_exception`: `return_to_model`, `return_generic` or `fail`
/// (JavaScript also takes `returnToModel`, `returnGeneric`).
pub fn policy(what: &str, v: &Value, d: Dialect) -> Result<OnToolException, BindError> {
    match v.as_str() {
        Some("return_to_model" | "returnToModel") => Ok(OnToolException::ReturnToModel),
        Some("return_generic" | "returnGeneric") => Ok(OnToolException::ReturnGeneric),
        Some("fail") => Ok(OnToolException::Fail),
        _ => Err(BindError::config(match d {
            Dialect::Python => {
                format!("{what}: expected one of return_to_model, return_generic, fail, got {v}")
            }
            Dialect::Node => format!(
                "{what}: expected one of \"returnToModel\", \"returnGeneric\", \"fail\" (or their snake_case spellings), got {v}"
            ),
        })),
    }
}

impl AgentSettings {
    /// Reads settings from an object in dialect `d`; a null value is an
    /// unset setting. An unknown name is refused (a typo must not pass).
    pub fn read(v: &Value, d: Dialect) -> Result<AgentSettings, BindError> {
        let Value::Object(map) = v else {
            return Err(BindError::config(format!(
                "agent settings: expected {}",
                d.object()
            )));
        };
        AgentSettings::read_map(map, d)
    }

    fn read_map(map: &Map<String, Value>, d: Dialect) -> Result<AgentSettings, BindError> {
        let mut s = AgentSettings::default();
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            let Some(snake) = NAMES.iter().find(|n| d.name(n) == *key) else {
                let known: Vec<String> = NAMES.iter().map(|n| d.name(n)).collect();
                return Err(BindError::config(format!(
                    "agent settings: unknown setting {key:?} (known: {})",
                    known.join(", ")
                )));
            };
            let what = key.as_str();
            match *snake {
                "name" => s.name = Some(string(what, v)?),
                "description" => s.description = Some(string(what, v)?),
                "instructions" => s.instructions = Some(string(what, v)?),
                "on_tool_exception" => s.limits.on_tool_exception = policy(what, v, d)?,
                "tool_timeout" => s.limits.tool_timeout = d.duration(what, v)?,
                "max_model_calls" => {
                    s.limits.max_model_calls = count(what, v, 1, u32::MAX.into())? as u32
                }
                "max_invalid_arguments" => {
                    s.limits.max_invalid_arguments = count(what, v, 0, u32::MAX.into())? as u32
                }
                "tool_concurrency" => {
                    s.limits.tool_concurrency = Some(count(what, v, 1, u32::MAX.into())? as usize)
                }
                "max_tool_output" => {
                    s.limits.max_tool_output = count(what, v, 1, u64::MAX)? as usize
                }
                "output_retries" => {
                    s.limits.output_retries = count(what, v, 0, u32::MAX.into())? as u32
                }
                "output_hold" => {
                    s.limits.output_hold = parlance::OutputHold::parse(&string(what, v)?)
                        .map_err(|e| BindError::config(format!("{what}: {e}")))?
                }
                "model_settings" => {
                    s.options = serde_json::from_value(v.clone())
                        .map_err(|e| BindError::config(format!("{what}: {e}")))?
                }
                "output_schema" => {
                    let name = match v.get("name") {
                        None | Some(Value::Null) => "output".to_string(),
                        Some(n) => string(&format!("{what}.name"), n)?,
                    };
                    let Some(schema) = v.get("schema").filter(|s| s.is_object()) else {
                        return Err(BindError::config(format!(
                            "{what}: expected {{name?, schema}} with a JSON Schema object"
                        )));
                    };
                    s.output_schema = Some((name, schema.clone()));
                }
                "approval_key" => s.approval_key = Some(secret(what, v)?),
                "prices" => {
                    let path = string(what, v)?;
                    s.prices = Some(Arc::new(price_table(what, std::path::Path::new(&path))?));
                }
                "previous_approval_keys" => {
                    let Value::Array(keys) = v else {
                        return Err(BindError::config(format!(
                            "{what}: expected a list of secrets, got {v}"
                        )));
                    };
                    s.previous_approval_keys = keys
                        .iter()
                        .enumerate()
                        .map(|(i, k)| secret(&format!("{what}[{i}]"), k))
                        .collect::<Result<_, _>>()?;
                }
                "fallback_on" => {
                    let Value::Array(kinds) = v else {
                        return Err(BindError::config(format!(
                            "{what}: expected a list of error kinds (\"rate_limited\", \"server\"...), got {v}"
                        )));
                    };
                    let names = kinds
                        .iter()
                        .enumerate()
                        .map(|(i, k)| string(&format!("{what}[{i}]"), k))
                        .collect::<Result<Vec<_>, _>>()?;
                    s.fallback_on = Some(
                        FallbackOn::kinds(&names)
                            .map_err(|e| BindError::config(format!("{what}{e}")))?,
                    );
                }
                "context" => s.context = Some(context(what, v, d)?),
                "budget" => {
                    s.budget = Some(
                        parlance::Budget::from_json(what, v)
                            .map_err(|e| BindError::config(e.to_string()))?,
                    )
                }
                _ => unreachable!("every name of NAMES has its arm"),
            }
        }
        Ok(s)
    }

    /// The agent's model from what the package's user gave: one model, or
    /// a list tried in order (a [`Fallback`], moving on by `fallback_on`).
    /// An empty list, or `fallback_on` with one model, is an error naming
    /// the setting.
    pub fn model(&mut self, given: GivenModel, d: Dialect) -> Result<Arc<dyn Model>, BindError> {
        let on = self.fallback_on.take();
        let board = self.cooldowns.take();
        match given {
            GivenModel::One(m) if on.is_none() && board.is_none() => Ok(m),
            GivenModel::One(_) => Err(BindError::config(format!(
                "{}: applies to a list of models (model=[...]), not to one",
                d.name(if on.is_some() {
                    "fallback_on"
                } else {
                    "shared_cooldowns"
                })
            ))),
            GivenModel::List(models) => {
                let mut f =
                    Fallback::new(models).map_err(|e| BindError::config(format!("model: {e}")))?;
                if let Some(board) = board {
                    f = f.shared_cooldowns(board);
                }
                Ok(Arc::new(match on {
                    Some(on) => f.on(on),
                    None => f,
                }))
            }
        }
    }

    /// Shares a list of models' cooldowns through `store`: a model one
    /// process of the store saw rate limited is skipped by all of them.
    pub fn share_cooldowns(&mut self, store: parlance::store::Store) {
        self.cooldowns = Some(Arc::new(parlance::store::StoreCooldowns::new(store)));
    }

    /// Gives the context policy the model that writes its summaries (a
    /// package passes it apart from the settings: it may be an object).
    pub fn context_model(&mut self, model: Arc<dyn Model>) -> Result<(), BindError> {
        self.takes_context_model()?;
        if let Some(p) = &mut self.context {
            p.model = Some(model);
        }
        Ok(())
    }

    /// Whether the context policy takes a model (a compact one does):
    /// checked before the package makes the model.
    pub fn takes_context_model(&self) -> Result<(), BindError> {
        let what = "context.model";
        match &self.context {
            Some(p) if p.strategy == ContextStrategy::Compact => Ok(()),
            Some(p) => Err(BindError::config(format!(
                "{what}: only a compact strategy writes summaries, not {}",
                p.strategy.as_str()
            ))),
            None => Err(BindError::config(format!("{what}: no context policy"))),
        }
    }

    /// The agent's builder for `model`, with these settings (tools are
    /// the package's to add).
    pub fn builder(self, model: impl IntoModel) -> AgentBuilder {
        let mut b = Agent::builder(model)
            .limits(self.limits)
            .options(self.options);
        if let Some(i) = self.instructions {
            b = b.instructions(i);
        }
        if let Some(n) = self.name {
            b = b.name(n);
        }
        if let Some(d) = self.description {
            b = b.description(d);
        }
        if let Some((name, schema)) = self.output_schema {
            b = b.output_schema(name, schema);
        }
        if let Some(k) = self.approval_key {
            b = b.approval_key(k);
        }
        for k in self.previous_approval_keys {
            b = b.previous_approval_key(k);
        }
        if let Some(p) = self.prices {
            b = b.prices(p);
        }
        if let Some(c) = self.context {
            b = b.context(c);
        }
        if let Some(budget) = self.budget {
            b = b.budget(budget);
        }
        b
    }
}

/// `context`: `{strategy, window?, trigger?, keep?, instructions?}` (the
/// model apart); ranges are checked here, each error naming its field.
fn context(what: &str, v: &Value, d: Dialect) -> Result<ContextPolicy, BindError> {
    let Value::Object(m) = v else {
        return Err(BindError::config(format!(
            "{what}: expected {} with a strategy (\"fail\", \"drop_oldest\" or \"compact\"), got {v}",
            d.object()
        )));
    };
    const FIELDS: [&str; 5] = ["strategy", "window", "trigger", "keep", "instructions"];
    if let Some(k) = m.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(BindError::config(format!(
            "{what}.{k}: unknown field (known: {}, and model)",
            FIELDS.join(", ")
        )));
    }
    let strategy = match m.get("strategy") {
        Some(Value::String(s)) => ContextStrategy::parse(s)
            .map_err(|e| BindError::config(format!("{what}.strategy: {e}")))?,
        _ => {
            return Err(BindError::config(format!(
                "{what}.strategy: required: \"fail\", \"drop_oldest\" or \"compact\""
            )));
        }
    };
    let mut p = match strategy {
        ContextStrategy::Fail => ContextPolicy::fail(),
        ContextStrategy::DropOldest => ContextPolicy::drop_oldest(),
        ContextStrategy::Compact => ContextPolicy::compact(),
    };
    let share = |k: &str| -> Result<Option<f64>, BindError> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => x.as_f64().map(Some).ok_or_else(|| {
                BindError::config(format!("{what}.{k}: expected a number, got {x}"))
            }),
        }
    };
    if let Some(t) = share("trigger")? {
        p.trigger = t;
    }
    if let Some(k) = share("keep")? {
        p.keep = k;
    }
    match m.get("window") {
        None | Some(Value::Null) => {}
        Some(w) => p.window = Some(count(&format!("{what}.window"), w, 1, u64::MAX)?),
    }
    match m.get("instructions") {
        None | Some(Value::Null) => {}
        Some(i) => p.instructions = Some(string(&format!("{what}.instructions"), i)?),
    }
    p.check()
        .map_err(|e| BindError::config(format!("{what}.{}: {}", e.field, e.message)))?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_durations_follow_the_dialect() {
        assert_eq!(
            Dialect::Node.name("max_invalid_arguments"),
            "maxInvalidArguments"
        );
        assert_eq!(
            Dialect::Python.name("max_invalid_arguments"),
            "max_invalid_arguments"
        );
        let py = AgentSettings::read(&json!({"tool_timeout": 2.5}), Dialect::Python).unwrap();
        let js = AgentSettings::read(&json!({"toolTimeout": 2500}), Dialect::Node).unwrap();
        assert_eq!(py.limits.tool_timeout, Duration::from_millis(2500));
        assert_eq!(js.limits.tool_timeout, Duration::from_millis(2500));
    }

    #[test]
    fn errors_name_the_setting_as_written() {
        let e = AgentSettings::read(&json!({"toolTimeout": -1}), Dialect::Node).unwrap_err();
        assert_eq!(
            e.text,
            "toolTimeout: expected a positive number of milliseconds, got -1"
        );
        let e = AgentSettings::read(&json!({"tool_timeout": "x"}), Dialect::Python).unwrap_err();
        assert_eq!(
            e.text,
            "tool_timeout: expected a positive number of seconds, got \"x\""
        );
        let e = AgentSettings::read(&json!({"tool_concurrency": 0}), Dialect::Python).unwrap_err();
        assert_eq!(
            e.text,
            "tool_concurrency: expected a whole number of at least 1, got 0"
        );
        let e = AgentSettings::read(&json!({"maxModelCall": 3}), Dialect::Node).unwrap_err();
        assert!(e.text.starts_with("agent settings: unknown setting \"maxModelCall\" (known: name, instructions, description, onToolException"), "{e}");
        let e =
            AgentSettings::read(&json!({"approval_key": "short"}), Dialect::Python).unwrap_err();
        assert_eq!(
            e.text,
            "approval_key: expected a secret of at least 16 bytes, got 5"
        );
        let e = AgentSettings::read(
            &json!({"previousApprovalKeys": ["0123456789abcdef", "short"]}),
            Dialect::Node,
        )
        .unwrap_err();
        assert_eq!(
            e.text,
            "previousApprovalKeys[1]: expected a secret of at least 16 bytes, got 5"
        );
        let e = AgentSettings::read(
            &json!({"previous_approval_keys": "0123456789abcdef"}),
            Dialect::Python,
        )
        .unwrap_err();
        assert_eq!(
            e.text,
            "previous_approval_keys: expected a list of secrets, got \"0123456789abcdef\""
        );
    }

    #[test]
    fn a_budget_is_read_in_either_dialect_and_its_errors_name_the_field() {
        let py = AgentSettings::read(
            &json!({"budget": {"run": {"cost": 0.5}, "owner_day": {"tokens": 10}, "on_exhausted": "stop"}}),
            Dialect::Python,
        )
        .unwrap();
        let js = AgentSettings::read(
            &json!({"budget": {"run": {"cost": 0.5}, "ownerDay": {"tokens": 10}, "onExhausted": "stop"}}),
            Dialect::Node,
        )
        .unwrap();
        assert_eq!(py.budget, js.budget);
        assert_eq!(py.budget.unwrap().run.cost, Some(0.5));
        let e = AgentSettings::read(
            &json!({"budget": {"thread": {"cost": -1}}}),
            Dialect::Python,
        )
        .unwrap_err();
        assert_eq!(
            e.text,
            "budget.thread.cost: expected a number of US dollars, 0 or more, got -1"
        );
    }

    #[test]
    fn a_context_policy_is_read_and_its_errors_name_the_field() {
        let s = AgentSettings::read(
            &json!({"context": {"strategy": "compact", "window": 1000, "keep": 0.3}}),
            Dialect::Python,
        )
        .unwrap();
        let c = s.context.unwrap();
        assert_eq!(
            (c.strategy, c.window, c.trigger, c.keep),
            (ContextStrategy::Compact, Some(1000), 0.8, 0.3)
        );
        for (v, expected) in [
            (json!("compact"), "context: expected a dict with a strategy"),
            (json!({}), "context.strategy: required"),
            (
                json!({"strategy": "shrink"}),
                "context.strategy: expected one of fail, drop_oldest, compact",
            ),
            (
                json!({"strategy": "fail", "keep": 0.9}),
                "context.keep: expected a share of the window above 0 and below the trigger (0.8), got 0.9",
            ),
            (
                json!({"strategy": "fail", "trigger": "high"}),
                "context.trigger: expected a number, got \"high\"",
            ),
            (
                json!({"strategy": "fail", "window": 0}),
                "context.window: expected a whole number of at least 1, got 0",
            ),
            (
                json!({"strategy": "fail", "windows": 5}),
                "context.windows: unknown field",
            ),
        ] {
            let e = AgentSettings::read(&json!({"context": v}), Dialect::Python).unwrap_err();
            assert!(e.text.starts_with(expected), "{expected:?}: {}", e.text);
        }
        let mut s = AgentSettings::read(
            &json!({"context": {"strategy": "drop_oldest"}}),
            Dialect::Node,
        )
        .unwrap();
        let m: Arc<dyn Model> = Arc::new(parlance::testing::FunctionModel::new(|_| {
            Ok(parlance::Message::assistant("x"))
        }));
        let e = s.context_model(Arc::clone(&m)).unwrap_err();
        assert_eq!(
            e.text,
            "context.model: only a compact strategy writes summaries, not drop_oldest"
        );
        let mut none = AgentSettings::default();
        assert!(none.context_model(m).is_err());
    }

    #[test]
    fn a_list_of_models_is_a_fallback_and_its_kinds_are_checked() {
        use parlance::testing::FunctionModel;
        let m = |p: &str| {
            FunctionModel::new(|_| Ok(parlance::Message::assistant("x")))
                .named(p, "m")
                .into_model()
        };
        let mut s = AgentSettings::read(
            &json!({"fallbackOn": ["rate_limited", "server"]}),
            Dialect::Node,
        )
        .unwrap();
        assert_eq!(
            s.fallback_on.as_ref().unwrap().names(),
            ["rate_limited", "server"]
        );
        let f = s
            .model(GivenModel::List(vec![m("a"), m("b")]), Dialect::Node)
            .unwrap();
        assert_eq!((f.provider(), f.model_id()), ("fallback", "a:m,b:m"));
        let e = AgentSettings::read(
            &json!({"fallback_on": ["server", "rate_limit"]}),
            Dialect::Python,
        )
        .unwrap_err();
        assert!(
            e.text
                .starts_with("fallback_on[1]: unknown error kind \"rate_limit\" (known: "),
            "{e}"
        );
        let e = AgentSettings::read(&json!({"fallbackOn": ["invalid_request"]}), Dialect::Node)
            .unwrap_err();
        assert!(
            e.text
                .starts_with("fallbackOn[0]: \"invalid_request\" never falls back"),
            "{e}"
        );
        let e = AgentSettings::read(&json!({"fallbackOn": "server"}), Dialect::Node).unwrap_err();
        assert!(
            e.text
                .starts_with("fallbackOn: expected a list of error kinds"),
            "{e}"
        );
        let e = AgentSettings::default()
            .model(GivenModel::List(vec![]), Dialect::Python)
            .err()
            .unwrap();
        assert_eq!(
            e.text,
            "model: expected at least one model, got an empty list"
        );
        let mut s =
            AgentSettings::read(&json!({"fallback_on": ["server"]}), Dialect::Python).unwrap();
        let e = s
            .model(GivenModel::One(m("a")), Dialect::Python)
            .err()
            .unwrap();
        assert_eq!(
            e.text,
            "fallback_on: applies to a list of models (model=[...]), not to one"
        );
    }

    #[test]
    fn every_setting_is_read() {
        let s = AgentSettings::read(
            &json!({
                "name": "n", "instructions": "i", "on_tool_exception": "fail",
                "max_model_calls": 3, "max_invalid_arguments": 0, "tool_concurrency": 2,
                "max_tool_output": 100, "model_settings": {"temperature": 0.5},
                "output_schema": {"schema": {"type": "object"}}, "output_retries": 4,
                "approval_key": "0123456789abcdef",
                "previous_approval_keys": ["fedcba9876543210"],
            }),
            Dialect::Python,
        )
        .unwrap();
        assert_eq!(
            (s.name.as_deref(), s.instructions.as_deref()),
            (Some("n"), Some("i"))
        );
        assert_eq!(s.limits.on_tool_exception, OnToolException::Fail);
        assert_eq!(
            (
                s.limits.max_model_calls,
                s.limits.max_invalid_arguments,
                s.limits.tool_concurrency,
                s.limits.max_tool_output
            ),
            (3, 0, Some(2), 100)
        );
        assert_eq!(s.options.temperature, Some(0.5));
        assert_eq!(s.limits.output_retries, 4);
        assert_eq!(
            s.output_schema.as_ref().map(|o| o.0.as_str()),
            Some("output")
        );
        assert_eq!(s.approval_key.as_deref(), Some(&b"0123456789abcdef"[..]));
        assert_eq!(s.previous_approval_keys.len(), 1);
        assert_eq!(&*s.previous_approval_keys[0], b"fedcba9876543210");
        // Never a key in a debug print.
        let shown = format!("{s:?}");
        assert!(
            !shown.contains("0123456789abcdef") && !shown.contains("fedcba"),
            "{shown}"
        );
    }
}
