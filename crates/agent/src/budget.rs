//! Budgets: how much a run, a thread or a thread's owner may spend, in
//! tokens, cost, model calls and tool calls.
//!
//! A run's own spending is counted by the run (its messages). A thread's,
//! and an owner's per day and per month (UTC), are counted by the store
//! that keeps the thread, in the transaction that commits each step, so
//! they hold across processes and servers and a step is never counted
//! twice; a run on a stored thread reads them through its
//! [`Checkpoint`](crate::Checkpoint) (`parlance_runtime` does).
//!
//! Every limit is checked before each model call. At a limit, by default
//! the model is asked once more, without tools, to answer with what it
//! has (so the user learns where things stand); the run then ends
//! `failed` with code `budget_exhausted`, that answer its last message.
//! With [`OnExhausted::Stop`] it ends at once. A run that finds its
//! budget spent before its first model call ends at once either way: it
//! has nothing to explain.
//!
//! ```
//! use parlance_agent::budget::{Budget, Caps};
//!
//! let budget = Budget::new()
//!     .run(Caps::new().cost(0.50).model_calls(20))
//!     .owner_day(Caps::new().cost(5.0));
//! assert!(budget.check().is_ok());
//! assert!(budget.counts_in_store());
//! ```

use parlance_format::{Spend, ThreadSpend, usd_to_nanos};
use serde_json::{Map, Value, json};

/// One of the four things a budget limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Input plus output tokens.
    Tokens,
    /// Cost in US dollars (priced messages only).
    Cost,
    /// Model calls.
    ModelCalls,
    /// Tool calls the model asked for.
    ToolCalls,
}

impl Measure {
    /// The measure's name in settings (`tokens`, `cost`, `model_calls`,
    /// `tool_calls`).
    pub fn as_str(self) -> &'static str {
        match self {
            Measure::Tokens => "tokens",
            Measure::Cost => "cost",
            Measure::ModelCalls => "model_calls",
            Measure::ToolCalls => "tool_calls",
        }
    }
}

/// Whose spending a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// This run.
    Run,
    /// The run's thread, every run of it.
    Thread,
    /// The thread's owner, every thread of theirs, this day (UTC).
    OwnerDay,
    /// The thread's owner, every thread of theirs, this month (UTC).
    OwnerMonth,
}

impl Scope {
    /// The scope's name in settings (`run`, `thread`, `owner_day`,
    /// `owner_month`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Run => "run",
            Scope::Thread => "thread",
            Scope::OwnerDay => "owner_day",
            Scope::OwnerMonth => "owner_month",
        }
    }

    fn phrase(self) -> &'static str {
        match self {
            Scope::Run => "the run's budget",
            Scope::Thread => "the thread's budget",
            Scope::OwnerDay => "the owner's budget for today (UTC)",
            Scope::OwnerMonth => "the owner's budget for this month (UTC)",
        }
    }
}

/// The limits of one scope; `None`: no limit on that measure.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Caps {
    /// Input plus output tokens.
    pub tokens: Option<u64>,
    /// US dollars (a model the price table does not price costs nothing
    /// here: give such models a token limit).
    pub cost: Option<f64>,
    /// Model calls.
    pub model_calls: Option<u64>,
    /// Tool calls the model asked for.
    pub tool_calls: Option<u64>,
}

impl Caps {
    /// No limit yet.
    pub fn new() -> Caps {
        Caps::default()
    }

    /// At most `n` tokens (input plus output).
    pub fn tokens(mut self, n: u64) -> Caps {
        self.tokens = Some(n);
        self
    }

    /// At most `usd` US dollars.
    pub fn cost(mut self, usd: f64) -> Caps {
        self.cost = Some(usd);
        self
    }

    /// At most `n` model calls.
    pub fn model_calls(mut self, n: u64) -> Caps {
        self.model_calls = Some(n);
        self
    }

    /// At most `n` tool calls.
    pub fn tool_calls(mut self, n: u64) -> Caps {
        self.tool_calls = Some(n);
        self
    }

    /// Whether any measure is limited.
    pub fn is_set(&self) -> bool {
        *self != Caps::default()
    }

    /// The first measure `spent` has reached.
    fn reached(&self, spent: &Spend) -> Option<(Measure, f64, f64)> {
        if let Some(max) = self.tokens
            && spent.tokens >= max
        {
            return Some((Measure::Tokens, max as f64, spent.tokens as f64));
        }
        if let Some(max) = self.cost
            && spent.cost_nanos >= usd_to_nanos(max)
        {
            return Some((Measure::Cost, max, spent.cost_usd()));
        }
        if let Some(max) = self.model_calls
            && spent.model_calls >= max
        {
            return Some((Measure::ModelCalls, max as f64, spent.model_calls as f64));
        }
        if let Some(max) = self.tool_calls
            && spent.tool_calls >= max
        {
            return Some((Measure::ToolCalls, max as f64, spent.tool_calls as f64));
        }
        None
    }

    fn to_json(self) -> Value {
        json!({
            "tokens": self.tokens,
            "cost": self.cost,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
        })
    }
}

/// What a run does once a limit is reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnExhausted {
    /// Ask the model once more, without tools, for an answer with what it
    /// has; then end `budget_exhausted` (the default).
    #[default]
    Answer,
    /// End `budget_exhausted` at once.
    Stop,
}

impl OnExhausted {
    /// Reads `answer` or `stop`; the error says what is expected.
    pub fn parse(s: &str) -> Result<OnExhausted, String> {
        match s {
            "answer" => Ok(OnExhausted::Answer),
            "stop" => Ok(OnExhausted::Stop),
            other => Err(format!("expected \"answer\" or \"stop\", got {other:?}")),
        }
    }

    /// `answer` or `stop`.
    pub fn as_str(self) -> &'static str {
        match self {
            OnExhausted::Answer => "answer",
            OnExhausted::Stop => "stop",
        }
    }
}

/// A limit that was reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exhausted {
    /// Whose spending.
    pub scope: Scope,
    /// Which measure.
    pub measure: Measure,
    /// The limit (US dollars for cost).
    pub limit: f64,
    /// What was spent (US dollars for cost).
    pub spent: f64,
}

impl Exhausted {
    /// The run's error: `budget_exhausted`, naming the scope, the measure
    /// and both figures.
    pub fn error(&self) -> parlance_format::RunError {
        let figures = match self.measure {
            Measure::Cost => format!("{} of {} USD", self.spent, self.limit),
            Measure::Tokens => format!("{} of {} tokens", self.spent, self.limit),
            Measure::ModelCalls => format!("{} of {} model calls", self.spent, self.limit),
            Measure::ToolCalls => format!("{} of {} tool calls", self.spent, self.limit),
        };
        parlance_format::RunError::new(
            "budget_exhausted",
            format!("{} is exhausted: {figures}", self.scope.phrase()),
        )
        .with_cause(json!({
            "scope": self.scope.as_str(),
            "measure": self.measure.as_str(),
            "limit": self.limit,
            "spent": self.spent,
        }))
    }
}

/// A budget setting that cannot be used: the field, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct BudgetError {
    /// The field, as written (`budget.run.cost`).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// Limits per run, per thread and per owner (day and month), and what a
/// run does at one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    /// Each run's.
    pub run: Caps,
    /// Each thread's, over all its runs (a store counts it).
    pub thread: Caps,
    /// Each owner's, over all their threads, per UTC day (a store counts it).
    pub owner_day: Caps,
    /// Each owner's, over all their threads, per UTC month (a store counts it).
    pub owner_month: Caps,
    /// What a run does at a limit.
    pub on_exhausted: OnExhausted,
}

impl Budget {
    /// No limit yet.
    pub fn new() -> Budget {
        Budget::default()
    }

    /// Each run's limits.
    pub fn run(mut self, caps: Caps) -> Budget {
        self.run = caps;
        self
    }

    /// Each thread's limits.
    pub fn thread(mut self, caps: Caps) -> Budget {
        self.thread = caps;
        self
    }

    /// Each owner's limits per UTC day.
    pub fn owner_day(mut self, caps: Caps) -> Budget {
        self.owner_day = caps;
        self
    }

    /// Each owner's limits per UTC month.
    pub fn owner_month(mut self, caps: Caps) -> Budget {
        self.owner_month = caps;
        self
    }

    /// At a limit, end at once (no closing answer).
    pub fn stop(mut self) -> Budget {
        self.on_exhausted = OnExhausted::Stop;
        self
    }

    /// This budget within `other`: the lower of two limits holds, and
    /// `stop` if either says so (a server's budget around an agent's).
    pub fn within(self, other: &Budget) -> Budget {
        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let caps = |a: Caps, b: Caps| Caps {
            tokens: min(a.tokens, b.tokens),
            cost: match (a.cost, b.cost) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            },
            model_calls: min(a.model_calls, b.model_calls),
            tool_calls: min(a.tool_calls, b.tool_calls),
        };
        Budget {
            run: caps(self.run, other.run),
            thread: caps(self.thread, other.thread),
            owner_day: caps(self.owner_day, other.owner_day),
            owner_month: caps(self.owner_month, other.owner_month),
            on_exhausted: if self.on_exhausted == OnExhausted::Stop
                || other.on_exhausted == OnExhausted::Stop
            {
                OnExhausted::Stop
            } else {
                OnExhausted::Answer
            },
        }
    }

    /// Whether a store must count spending for it (a thread or owner
    /// limit is set).
    pub fn counts_in_store(&self) -> bool {
        self.thread.is_set() || self.owner_day.is_set() || self.owner_month.is_set()
    }

    fn scopes(&self) -> [(Scope, &Caps); 4] {
        [
            (Scope::Run, &self.run),
            (Scope::Thread, &self.thread),
            (Scope::OwnerDay, &self.owner_day),
            (Scope::OwnerMonth, &self.owner_month),
        ]
    }

    /// Every cost is a finite number of dollars, not negative; an error
    /// names the field (`budget.run.cost: ...`).
    pub fn check(&self) -> Result<(), BudgetError> {
        for (scope, caps) in self.scopes() {
            if let Some(c) = caps.cost
                && !(c.is_finite() && c >= 0.0)
            {
                return Err(BudgetError {
                    field: format!("budget.{}.cost", scope.as_str()),
                    message: format!("expected a number of US dollars, 0 or more, got {c}"),
                });
            }
        }
        Ok(())
    }

    /// The first limit reached by `run` (this run's spending) or by what
    /// a store counted (`None`: no store, only the run's limits apply).
    pub fn exhausted(&self, run: &Spend, stored: Option<&ThreadSpend>) -> Option<Exhausted> {
        let zero = ThreadSpend::default();
        let s = stored.unwrap_or(&zero);
        let spent = [run, &s.thread, &s.owner_day, &s.owner_month];
        self.scopes()
            .into_iter()
            .zip(spent)
            .filter(|((scope, _), _)| *scope == Scope::Run || stored.is_some())
            .find_map(|((scope, caps), spent)| {
                caps.reached(spent)
                    .map(|(measure, limit, spent)| Exhausted {
                        scope,
                        measure,
                        limit,
                        spent,
                    })
            })
    }

    /// The budget as recorded with each run's settings.
    pub fn settings(&self) -> Value {
        let mut m = Map::new();
        for (scope, caps) in self.scopes() {
            if caps.is_set() {
                m.insert(scope.as_str().into(), caps.to_json());
            }
        }
        m.insert("on_exhausted".into(), self.on_exhausted.as_str().into());
        Value::Object(m)
    }

    /// Reads a budget from JSON: `{run?, thread?, owner_day?, owner_month?,
    /// on_exhausted?}`, each scope `{tokens?, cost?, model_calls?,
    /// tool_calls?}`; camelCase spellings (`ownerDay`, `modelCalls`,
    /// `onExhausted`) too. Errors name the field as written, under
    /// `prefix` (`budget`).
    pub fn from_json(prefix: &str, v: &Value) -> Result<Budget, BudgetError> {
        let err = |field: String, message: String| BudgetError { field, message };
        let Value::Object(m) = v else {
            return Err(err(
                prefix.into(),
                format!(
                    "expected an object of limits by scope (run, thread, owner_day, owner_month), got {v}"
                ),
            ));
        };
        let mut b = Budget::new();
        for (key, value) in m {
            let field = format!("{prefix}.{key}");
            if value.is_null() {
                continue;
            }
            match key.as_str() {
                "run" => b.run = caps_from_json(&field, value)?,
                "thread" => b.thread = caps_from_json(&field, value)?,
                "owner_day" | "ownerDay" => b.owner_day = caps_from_json(&field, value)?,
                "owner_month" | "ownerMonth" => b.owner_month = caps_from_json(&field, value)?,
                "on_exhausted" | "onExhausted" => {
                    b.on_exhausted = match value.as_str() {
                        Some(s) => OnExhausted::parse(s).map_err(|m| err(field, m))?,
                        None => {
                            return Err(err(
                                field,
                                format!("expected \"answer\" or \"stop\", got {value}"),
                            ));
                        }
                    }
                }
                _ => {
                    return Err(err(
                        field,
                        "unknown field (known: run, thread, owner_day, owner_month, on_exhausted)"
                            .into(),
                    ));
                }
            }
        }
        b.check().map_err(|e| BudgetError {
            field: e.field.replacen("budget", prefix, 1),
            ..e
        })?;
        Ok(b)
    }
}

fn caps_from_json(field: &str, v: &Value) -> Result<Caps, BudgetError> {
    let err = |field: String, message: String| BudgetError { field, message };
    let Value::Object(m) = v else {
        return Err(err(
            field.into(),
            format!(
                "expected an object of limits (tokens, cost, model_calls, tool_calls), got {v}"
            ),
        ));
    };
    let mut c = Caps::new();
    for (key, value) in m {
        let f = format!("{field}.{key}");
        if value.is_null() {
            continue;
        }
        let whole = || {
            value.as_u64().ok_or_else(|| {
                err(
                    f.clone(),
                    format!("expected a whole number, 0 or more, got {value}"),
                )
            })
        };
        match key.as_str() {
            "tokens" => c.tokens = Some(whole()?),
            "model_calls" | "modelCalls" => c.model_calls = Some(whole()?),
            "tool_calls" | "toolCalls" => c.tool_calls = Some(whole()?),
            "cost" => match value.as_f64() {
                Some(usd) if usd.is_finite() && usd >= 0.0 => c.cost = Some(usd),
                _ => {
                    return Err(err(
                        f,
                        format!("expected a number of US dollars, 0 or more, got {value}"),
                    ));
                }
            },
            _ => {
                return Err(err(
                    f,
                    "unknown field (known: tokens, cost, model_calls, tool_calls)".into(),
                ));
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spend(tokens: u64, usd: f64, model_calls: u64, tool_calls: u64) -> Spend {
        Spend {
            tokens,
            cost_nanos: usd_to_nanos(usd),
            model_calls,
            tool_calls,
        }
    }

    #[test]
    fn a_limit_is_reached_at_its_value_not_before() {
        let b = Budget::new().run(Caps::new().tokens(100).cost(0.5).tool_calls(3));
        assert_eq!(b.exhausted(&spend(99, 0.49, 9, 2), None), None);
        let e = b.exhausted(&spend(100, 0.0, 0, 0), None).unwrap();
        assert_eq!(
            (e.scope, e.measure, e.limit, e.spent),
            (Scope::Run, Measure::Tokens, 100.0, 100.0)
        );
        let e = b.exhausted(&spend(0, 0.5, 0, 0), None).unwrap();
        assert_eq!(e.measure, Measure::Cost);
        let e = b.exhausted(&spend(0, 0.0, 0, 3), None).unwrap();
        assert_eq!(e.measure, Measure::ToolCalls);
        assert_eq!(
            e.error().message,
            "the run's budget is exhausted: 3 of 3 tool calls"
        );
    }

    #[test]
    fn store_limits_apply_only_with_what_a_store_counted() {
        let b = Budget::new()
            .thread(Caps::new().model_calls(5))
            .owner_month(Caps::new().cost(10.0));
        assert!(b.counts_in_store());
        let run = spend(0, 0.0, 1, 0);
        assert_eq!(b.exhausted(&run, None), None);
        let stored = ThreadSpend {
            owner_month: spend(0, 10.25, 0, 0),
            ..Default::default()
        };
        let e = b.exhausted(&run, Some(&stored)).unwrap();
        assert_eq!((e.scope, e.measure), (Scope::OwnerMonth, Measure::Cost));
        let error = e.error();
        assert_eq!(error.code, "budget_exhausted");
        assert_eq!(
            error.message,
            "the owner's budget for this month (UTC) is exhausted: 10.25 of 10 USD"
        );
        let thread = ThreadSpend {
            thread: spend(0, 0.0, 5, 0),
            ..Default::default()
        };
        assert_eq!(
            b.exhausted(&run, Some(&thread)).unwrap().scope,
            Scope::Thread
        );
        assert!(!Budget::new().run(Caps::new().tokens(1)).counts_in_store());
    }

    #[test]
    fn json_settings_are_read_and_errors_name_the_field() {
        let b = Budget::from_json(
            "budget",
            &json!({"run": {"cost": 0.5, "modelCalls": 4}, "ownerDay": {"tokens": 1000}, "on_exhausted": "stop"}),
        )
        .unwrap();
        assert_eq!(b.run, Caps::new().cost(0.5).model_calls(4));
        assert_eq!(b.owner_day, Caps::new().tokens(1000));
        assert_eq!(b.on_exhausted, OnExhausted::Stop);
        for (v, want) in [
            (json!(5), "budget: expected an object of limits by scope"),
            (
                json!({"day": {}}),
                "budget.day: unknown field (known: run, thread",
            ),
            (
                json!({"run": {"cost": -1}}),
                "budget.run.cost: expected a number of US dollars, 0 or more, got -1",
            ),
            (
                json!({"run": {"cost": "cheap"}}),
                "budget.run.cost: expected a number of US dollars",
            ),
            (
                json!({"thread": {"tokens": 1.5}}),
                "budget.thread.tokens: expected a whole number, 0 or more, got 1.5",
            ),
            (
                json!({"thread": {"tokens": -3}}),
                "budget.thread.tokens: expected a whole number",
            ),
            (
                json!({"run": {"dollars": 1}}),
                "budget.run.dollars: unknown field (known: tokens, cost",
            ),
            (
                json!({"onExhausted": "explain"}),
                "budget.onExhausted: expected \"answer\" or \"stop\", got \"explain\"",
            ),
            (
                json!({"run": 3}),
                "budget.run: expected an object of limits",
            ),
        ] {
            let e = Budget::from_json("budget", &v).unwrap_err().to_string();
            assert!(e.starts_with(want), "{v}: {e}");
        }
        let e = Budget::new()
            .run(Caps::new().cost(f64::NAN))
            .check()
            .unwrap_err();
        assert_eq!(e.field, "budget.run.cost");
    }

    #[test]
    fn within_keeps_the_lower_of_two_limits() {
        let agent = Budget::new().run(Caps::new().cost(1.0).tokens(50));
        let server = Budget::new()
            .run(Caps::new().cost(0.5))
            .owner_day(Caps::new().model_calls(9))
            .stop();
        let b = agent.within(&server);
        assert_eq!(b.run, Caps::new().cost(0.5).tokens(50));
        assert_eq!(b.owner_day, Caps::new().model_calls(9));
        assert_eq!(b.on_exhausted, OnExhausted::Stop);
    }

    #[test]
    fn settings_record_the_scopes_set() {
        let b = Budget::new().thread(Caps::new().tokens(10));
        assert_eq!(
            b.settings(),
            json!({"thread": {"tokens": 10, "cost": null, "model_calls": null, "tool_calls": null}, "on_exhausted": "answer"})
        );
    }
}
