//! What a model call cost: a price table per provider and model, and the
//! cost of a [`Usage`] under it; and each model's context window
//! ([`PriceTable::context_window`]), which the same data carries.
//!
//! A crate of its own because the table is data with its own origin,
//! license and refresh cycle (`scripts/refresh-prices`), and because the
//! agent, the server and the bindings all price usage the same way
//! without the canonical format depending on a 350 KB table.
//!
//! The built-in table is pydantic's [genai-prices] (MIT), trimmed to token
//! prices (see `data/SOURCE.md` and `data/LICENSE` in this crate); it is
//! embedded at build time and parsed once, on first use. A deployment can
//! load a newer or its own table from a file without a release, ahead of the
//! built-in one:
//!
//! ```
//! use parlance_format::Usage;
//! use parlance_prices::PriceTable;
//!
//! let usage = Usage {
//!     input_tokens: 1_000,
//!     output_tokens: 100,
//!     cached_tokens: 800,
//!     cache_write_tokens: Some(100),
//!     reasoning_tokens: None,
//! };
//! // claude-sonnet-4-5: $3 input, $0.30 cache read, $3.75 cache write, $15 output per million.
//! let cost = PriceTable::builtin().cost("anthropic", "claude-sonnet-4-5", &usage);
//! // (1000 - 800 - 100) * 3 + 800 * 0.3 + 100 * 3.75 + 100 * 15 = 2415 millionths.
//! assert_eq!(cost, Some(0.002_415));
//!
//! let mine = PriceTable::from_json_str(
//!     r#"{"providers": [{"id": "acme", "models": [
//!         {"id": "m1", "match": {"equals": "m1"}, "input": "1", "output": "2"}]}]}"#,
//!     "prices.json",
//! )
//! .unwrap()
//! .then(PriceTable::builtin().clone());
//! assert_eq!(mine.cost("acme", "m1", &Usage { input_tokens: 1_000_000, ..Usage::default() }), Some(1.0));
//! assert_eq!(mine.cost("acme", "unknown", &usage), None);
//! ```
//!
//! A model the table does not know has no cost (`None`), never a guessed
//! one.
//!
//! [genai-prices]: https://github.com/pydantic/genai-prices

#![warn(missing_docs)]

use std::path::Path;
use std::sync::OnceLock;

use fancy_regex::Regex;
use parlance_format::Usage;
pub use parlance_format::total_cost;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The built-in table's text (`data/prices.json`).
pub const BUILTIN_JSON: &str = include_str!("../data/prices.json");

/// A price table that could not be read: which file, where in it, what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("price table {file}: {path}: {message}")]
pub struct PriceError {
    /// The file (or the name the text was given).
    pub file: String,
    /// The JSON path of the bad value (`$.providers[2].models[0].input`).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

/// Where a table comes from (the `origin` object of its file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The package it was taken from (`genai-prices`).
    pub package: Option<String>,
    /// Its version.
    pub version: Option<String>,
    /// Where it is published.
    pub url: Option<String>,
    /// Its license.
    pub license: Option<String>,
    /// The date it was refreshed (`YYYY-MM-DD`).
    pub refreshed: Option<String>,
}

/// One price in US dollars per token, kept exactly: femto-dollars
/// (1e-15 $) per token, which is the per-million price with nine decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(u128);

impl Rate {
    /// The price per million tokens, in dollars.
    pub fn per_million(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

/// A price per token: flat, or tiered by the call's input size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Price {
    /// One rate for every call.
    Flat(Rate),
    /// `base` up to the first tier; past a tier's `start` input tokens
    /// (the call's whole input), that tier's rate applies to all its tokens.
    Tiered {
        /// The rate below every tier.
        base: Rate,
        /// `(start, rate)`, ascending by `start`.
        tiers: Vec<(u64, Rate)>,
    },
}

impl Price {
    fn rate(&self, input_tokens: u64) -> Rate {
        match self {
            Price::Flat(r) => *r,
            Price::Tiered { base, tiers } => tiers
                .iter()
                .rev()
                .find(|(start, _)| input_tokens > *start)
                .map_or(*base, |(_, r)| *r),
        }
    }
}

/// A model's token prices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelPrices {
    /// Input tokens neither read from nor written to a cache.
    pub input: Option<Price>,
    /// Input tokens read from the cache (the input price when absent).
    pub cache_read: Option<Price>,
    /// Input tokens written to the cache, 5-minute TTL (the input price
    /// when absent).
    pub cache_write: Option<Price>,
    /// Input tokens written to the cache with a 1-hour TTL, when the
    /// provider prices it apart. Usage does not say the TTL; kept for
    /// reference.
    pub cache_write_1h: Option<Price>,
    /// Output tokens, reasoning included.
    pub output: Option<Price>,
}

impl ModelPrices {
    /// The cost of `usage` in US dollars: uncached input at the input
    /// price, cache reads at theirs, cache writes at theirs, output at the
    /// output price. `usage.cached_tokens` and `cache_write_tokens` are
    /// parts of `input_tokens` and reasoning is part of `output_tokens`, so
    /// no token is counted twice. `None` when tokens of a kind have no
    /// price (never a cost that leaves them out).
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        self.cost_femto(usage).map(|f| f as f64 / 1e15)
    }

    /// [`cost`](Self::cost) in femto-dollars, exact.
    pub fn cost_femto(&self, usage: &Usage) -> Option<u128> {
        let n = usage.input_tokens;
        let cached = usage.cached_tokens.min(n);
        let written = usage.cache_write_tokens.unwrap_or(0).min(n - cached);
        let plain = n - cached - written;
        let part = |tokens: u64, price: Option<&Price>| -> Option<u128> {
            if tokens == 0 {
                return Some(0);
            }
            Some(u128::from(tokens) * price?.rate(n).0)
        };
        let input = self.input.as_ref();
        Some(
            part(plain, input)?
                + part(cached, self.cache_read.as_ref().or(input))?
                + part(written, self.cache_write.as_ref().or(input))?
                + part(usage.output_tokens, self.output.as_ref())?,
        )
    }
}

#[derive(Debug, Clone)]
enum Match {
    Equals(String),
    StartsWith(String),
    EndsWith(String),
    Contains(String),
    Regex(Pattern),
    Or(Vec<Match>),
    And(Vec<Match>),
}

impl Match {
    /// `model` is lowercase; the clauses' text was lowered when read.
    fn is_match(&self, model: &str) -> bool {
        match self {
            Match::Equals(s) => model == s,
            Match::StartsWith(s) => model.starts_with(s.as_str()),
            Match::EndsWith(s) => model.ends_with(s.as_str()),
            Match::Contains(s) => model.contains(s.as_str()),
            // A pattern that gives up (its backtracking limit) does not match.
            Match::Regex(p) => p.is_match(model),
            Match::Or(v) => v.iter().any(|m| m.is_match(model)),
            Match::And(v) => v.iter().all(|m| m.is_match(model)),
        }
    }
}

/// A model-name pattern. In a table read from a file it is compiled as
/// it is read, so that a bad one is an error naming it; in the built-in
/// table (whose patterns a test compiles) on its first use: compiling its
/// 62 patterns, most of which a process never tries, was most of the 25 ms
/// its first priced answer paid (`benches/lookup.rs`).
#[derive(Debug, Clone)]
struct Pattern {
    source: String,
    compiled: OnceLock<Option<Regex>>,
}

impl Pattern {
    fn is_match(&self, model: &str) -> bool {
        self.compiled
            .get_or_init(|| Regex::new(&self.source).ok())
            .as_ref()
            // A pattern that gives up (its backtracking limit) does not match.
            .is_some_and(|r| r.is_match(model).unwrap_or(false))
    }
}

#[derive(Debug, Clone)]
struct ModelEntry {
    id: String,
    matcher: Match,
    prices: ModelPrices,
    context_window: Option<u64>,
}

#[derive(Debug, Clone)]
struct ProviderEntry {
    id: String,
    fallback: Vec<String>,
    models: OnceLock<Vec<ModelEntry>>,
    /// In the built-in table, the models' JSON and the provider's place,
    /// read on the provider's first lookup: most of the table's 1,300
    /// models belong to providers a process never asks for.
    unread: Option<(&'static RawValue, usize)>,
}

impl ProviderEntry {
    /// The first model whose rule matches `model` (lowercase).
    fn find(&self, model: &str) -> Option<&ModelEntry> {
        self.models().iter().find(|m| m.matcher.is_match(model))
    }

    fn models(&self) -> &[ModelEntry] {
        self.models.get_or_init(|| {
            let Some((raw, i)) = self.unread else {
                return Vec::new();
            };
            let v: Value = serde_json::from_str(raw.get()).expect("the built-in table is JSON");
            Reader::BUILTIN
                .models(&v, &format!("$.providers[{i}].models"))
                .expect("the built-in table reads (tested)")
        })
    }
}

/// Prices per provider and model. Lookups go through the tables in order
/// (a user's table, then the one it was put [`then`](Self::then)); within
/// a table, a provider's first model whose rule matches wins, as in
/// genai-prices.
#[derive(Debug, Clone, Default)]
pub struct PriceTable {
    origin: Origin,
    providers: Vec<ProviderEntry>,
    next: Option<Box<PriceTable>>,
}

/// A model's price as found: the table's model id and its prices.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The provider's id in the table.
    pub provider: &'a str,
    /// The model's id in the table.
    pub model: &'a str,
    /// Its prices.
    pub prices: &'a ModelPrices,
    /// Its context window in tokens, when the table has it.
    pub context_window: Option<u64>,
}

/// Parlance's provider names (on messages and in model strings) that the
/// table spells differently.
fn table_provider(name: &str) -> &str {
    match name {
        "gemini" | "google" | "vertex" => "google",
        "xai" => "x-ai",
        "bedrock" => "aws",
        "azure-responses" | "azure-openai" => "azure",
        "openai-responses" | "openai-chat" => "openai",
        other => other,
    }
}

impl PriceTable {
    /// The built-in table (genai-prices, see the crate docs), parsed on
    /// first use.
    pub fn builtin() -> &'static PriceTable {
        static TABLE: OnceLock<PriceTable> = OnceLock::new();
        TABLE.get_or_init(PriceTable::read_builtin)
    }

    /// The built-in table read afresh: what [`builtin`](Self::builtin)
    /// does once per process. Only its outline is read here; a provider's
    /// models are read on its first lookup, a pattern compiled on its
    /// first use (read whole, as a user's file is, it cost a process's
    /// first priced answer 23 ms: `benches/lookup.rs`).
    pub fn read_builtin() -> PriceTable {
        #[derive(serde::Deserialize)]
        struct Outline<'a> {
            #[serde(borrow)]
            origin: &'a RawValue,
            #[serde(borrow)]
            providers: Vec<ProviderOutline<'a>>,
        }
        #[derive(serde::Deserialize)]
        struct ProviderOutline<'a> {
            id: String,
            #[serde(default)]
            fallback: Vec<String>,
            #[serde(borrow)]
            models: &'a RawValue,
        }
        let outline: Outline<'static> =
            serde_json::from_str(BUILTIN_JSON).expect("the built-in table is JSON (tested)");
        let origin: Value =
            serde_json::from_str(outline.origin.get()).expect("the built-in table is JSON");
        let providers = outline.providers.into_iter().enumerate();
        PriceTable {
            origin: Reader::BUILTIN
                .origin(&origin)
                .expect("the built-in table reads (tested)"),
            providers: providers
                .map(|(i, p)| ProviderEntry {
                    id: p.id.to_lowercase(),
                    fallback: p.fallback.iter().map(|f| f.to_lowercase()).collect(),
                    models: OnceLock::new(),
                    unread: Some((p.models, i)),
                })
                .collect(),
            next: None,
        }
    }

    /// Reads a table from JSON text; `file` names it in errors.
    pub fn from_json_str(text: &str, file: &str) -> Result<PriceTable, PriceError> {
        let value: Value = serde_json::from_str(text).map_err(|e| PriceError {
            file: file.to_string(),
            path: format!("line {}, column {}", e.line(), e.column()),
            message: format!("not JSON: {e}"),
        })?;
        Reader { file, lazy: false }.table(&value)
    }

    /// Reads a table from a file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<PriceTable, PriceError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| PriceError {
            file: file.clone(),
            path: "$".into(),
            message: format!("cannot read it: {e}"),
        })?;
        PriceTable::from_json_str(&text, &file)
    }

    /// This table, then `fallback` for what this one does not price (a
    /// user's table over the built-in one).
    pub fn then(mut self, fallback: PriceTable) -> PriceTable {
        let next = match self.next.take() {
            Some(n) => n.then(fallback),
            None => fallback,
        };
        self.next = Some(Box::new(next));
        self
    }

    /// Where this table comes from.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The prices of `model` at `provider` (Parlance's provider names,
    /// `anthropic`, `openai`, `gemini`...; a model string's provider or a
    /// message's). Case does not matter.
    pub fn find(&self, provider: &str, model: &str) -> Option<Found<'_>> {
        let provider = table_provider(&provider.to_lowercase()).to_string();
        let model = model.to_lowercase();
        self.find_where(&provider, &model, |_| true)
    }

    /// The context window of `model` at `provider`, in tokens: from the
    /// first table whose entry for the model has one (a user's table that
    /// only prices a model leaves the built-in window in force).
    ///
    /// ```
    /// use parlance_prices::PriceTable;
    /// assert_eq!(PriceTable::builtin().context_window("anthropic", "claude-sonnet-4-5"), Some(200_000));
    /// assert_eq!(PriceTable::builtin().context_window("anthropic", "no-such-model"), None);
    /// ```
    pub fn context_window(&self, provider: &str, model: &str) -> Option<u64> {
        let provider = table_provider(&provider.to_lowercase()).to_string();
        let model = model.to_lowercase();
        self.find_where(&provider, &model, |m| m.context_window.is_some())?
            .context_window
    }

    /// The first entry for `model` at `provider` that `wanted` accepts,
    /// through the tables in order.
    fn find_where(
        &self,
        provider: &str,
        model: &str,
        wanted: impl Fn(&ModelEntry) -> bool,
    ) -> Option<Found<'_>> {
        let mut table = Some(self);
        while let Some(t) = table {
            if let Some(found) = t.find_here(provider, model, &wanted) {
                return Some(found);
            }
            table = t.next.as_deref();
        }
        None
    }

    fn find_here(
        &self,
        provider: &str,
        model: &str,
        wanted: &impl Fn(&ModelEntry) -> bool,
    ) -> Option<Found<'_>> {
        fn found<'t>(
            p: &'t ProviderEntry,
            model: &str,
            wanted: &impl Fn(&ModelEntry) -> bool,
        ) -> Option<Found<'t>> {
            let m = p.find(model).filter(|m| wanted(m))?;
            Some(Found {
                provider: &p.id,
                model: &m.id,
                prices: &m.prices,
                context_window: m.context_window,
            })
        }
        let p = self.providers.iter().find(|p| p.id == provider)?;
        // Then one step of fallback (azure to openai...), as genai-prices does.
        found(p, model, wanted).or_else(|| {
            p.fallback.iter().find_map(|id| {
                let fp = self.providers.iter().find(|x| &x.id == id)?;
                found(fp, model, wanted)
            })
        })
    }

    /// The cost in US dollars of `usage` on `model` at `provider`; `None`
    /// when the table does not price it.
    pub fn cost(&self, provider: &str, model: &str, usage: &Usage) -> Option<f64> {
        self.find(provider, model)?.prices.cost(usage)
    }

    /// The cost of an assistant message from its `provider`, `model` and
    /// `usage`; `None` when one is missing or the model is not priced.
    pub fn message_cost(&self, message: &parlance_format::Message) -> Option<f64> {
        let (p, m, u) = (
            message.provider.as_deref()?,
            message.model.as_deref()?,
            message.usage.as_ref()?,
        );
        self.cost(p, m, u)
    }
}

struct Reader<'a> {
    file: &'a str,
    /// Patterns compiled on first use rather than as they are read.
    lazy: bool,
}

impl Reader<'_> {
    const BUILTIN: Reader<'static> = Reader {
        file: "crates/prices/data/prices.json",
        lazy: true,
    };

    fn err(&self, path: &str, message: impl Into<String>) -> PriceError {
        PriceError {
            file: self.file.to_string(),
            path: path.to_string(),
            message: message.into(),
        }
    }

    fn object<'v>(
        &self,
        v: &'v Value,
        path: &str,
        what: &str,
        allowed: &[&str],
    ) -> Result<&'v Map<String, Value>, PriceError> {
        let obj = v
            .as_object()
            .ok_or_else(|| self.err(path, format!("expected {what} (an object)")))?;
        if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(self.err(
                &format!("{path}.{k}"),
                format!("unknown field (expected one of: {})", allowed.join(", ")),
            ));
        }
        Ok(obj)
    }

    fn string(&self, v: &Value, path: &str) -> Result<String, PriceError> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| self.err(path, "expected a string"))
    }

    fn array<'v>(&self, v: &'v Value, path: &str) -> Result<&'v Vec<Value>, PriceError> {
        v.as_array()
            .ok_or_else(|| self.err(path, "expected a list"))
    }

    fn table(&self, v: &Value) -> Result<PriceTable, PriceError> {
        let obj = self.object(v, "$", "a price table", &["origin", "unit", "providers"])?;
        if let Some(u) = obj.get("unit") {
            let u = self.string(u, "$.unit")?;
            if u != "USD per million tokens" {
                return Err(self.err(
                    "$.unit",
                    format!("unknown unit {u:?} (expected \"USD per million tokens\")"),
                ));
            }
        }
        let origin = match obj.get("origin") {
            None => Origin::default(),
            Some(o) => self.origin(o)?,
        };
        let list = obj
            .get("providers")
            .ok_or_else(|| self.err("$.providers", "required field missing"))?;
        let mut providers = Vec::new();
        for (i, p) in self.array(list, "$.providers")?.iter().enumerate() {
            providers.push(self.provider(p, &format!("$.providers[{i}]"))?);
        }
        Ok(PriceTable {
            origin,
            providers,
            next: None,
        })
    }

    fn origin(&self, o: &Value) -> Result<Origin, PriceError> {
        let keys = ["package", "version", "url", "license", "refreshed"];
        let m = self.object(o, "$.origin", "the table's origin", &keys)?;
        let get = |k: &str| -> Result<Option<String>, PriceError> {
            m.get(k)
                .map(|v| self.string(v, &format!("$.origin.{k}")))
                .transpose()
        };
        Ok(Origin {
            package: get("package")?,
            version: get("version")?,
            url: get("url")?,
            license: get("license")?,
            refreshed: get("refreshed")?,
        })
    }

    fn provider(&self, v: &Value, path: &str) -> Result<ProviderEntry, PriceError> {
        let obj = self.object(v, path, "a provider", &["id", "fallback", "models"])?;
        let id = self
            .string(
                obj.get("id")
                    .ok_or_else(|| self.err(&format!("{path}.id"), "required field missing"))?,
                &format!("{path}.id"),
            )?
            .to_lowercase();
        let mut fallback = Vec::new();
        if let Some(f) = obj.get("fallback") {
            let fp = format!("{path}.fallback");
            for (i, x) in self.array(f, &fp)?.iter().enumerate() {
                fallback.push(self.string(x, &format!("{fp}[{i}]"))?.to_lowercase());
            }
        }
        let mp = format!("{path}.models");
        let list = obj
            .get("models")
            .ok_or_else(|| self.err(&mp, "required field missing"))?;
        Ok(ProviderEntry {
            id,
            fallback,
            models: OnceLock::from(self.models(list, &mp)?),
            unread: None,
        })
    }

    fn models(&self, list: &Value, path: &str) -> Result<Vec<ModelEntry>, PriceError> {
        let mut models = Vec::new();
        for (i, m) in self.array(list, path)?.iter().enumerate() {
            models.push(self.model(m, &format!("{path}[{i}]"))?);
        }
        Ok(models)
    }

    fn model(&self, v: &Value, path: &str) -> Result<ModelEntry, PriceError> {
        let keys = [
            "id",
            "match",
            "input",
            "cache_read",
            "cache_write",
            "cache_write_1h",
            "output",
            "context_window",
        ];
        let obj = self.object(v, path, "a model", &keys)?;
        let id_path = format!("{path}.id");
        let id = self.string(
            obj.get("id")
                .ok_or_else(|| self.err(&id_path, "required field missing"))?,
            &id_path,
        )?;
        let matcher = match obj.get("match") {
            Some(m) => self.matcher(m, &format!("{path}.match"))?,
            None => Match::Equals(id.to_lowercase()),
        };
        let price = |k: &str| -> Result<Option<Price>, PriceError> {
            obj.get(k)
                .map(|p| self.price(p, &format!("{path}.{k}")))
                .transpose()
        };
        let prices = ModelPrices {
            input: price("input")?,
            cache_read: price("cache_read")?,
            cache_write: price("cache_write")?,
            cache_write_1h: price("cache_write_1h")?,
            output: price("output")?,
        };
        let context_window = match obj.get("context_window") {
            None => None,
            Some(w) => match w.as_u64() {
                Some(n) if n > 0 => Some(n),
                _ => {
                    return Err(self.err(
                        &format!("{path}.context_window"),
                        format!("expected a positive whole number of tokens, got {w}"),
                    ));
                }
            },
        };
        Ok(ModelEntry {
            id,
            matcher,
            prices,
            context_window,
        })
    }

    fn matcher(&self, v: &Value, path: &str) -> Result<Match, PriceError> {
        let keys = [
            "equals",
            "starts_with",
            "ends_with",
            "contains",
            "regex",
            "or",
            "and",
        ];
        let obj = self.object(v, path, "a match rule", &keys)?;
        let mut it = obj.iter();
        let (Some((k, x)), None) = (it.next(), it.next()) else {
            return Err(self.err(
                path,
                format!("expected exactly one of: {}", keys.join(", ")),
            ));
        };
        let p = format!("{path}.{k}");
        Ok(match k.as_str() {
            "or" | "and" => {
                let mut v = Vec::new();
                for (i, c) in self.array(x, &p)?.iter().enumerate() {
                    v.push(self.matcher(c, &format!("{p}[{i}]"))?);
                }
                if k == "or" {
                    Match::Or(v)
                } else {
                    Match::And(v)
                }
            }
            "regex" => {
                let source = self.string(x, &p)?;
                let compiled = OnceLock::new();
                if !self.lazy {
                    let r = Regex::new(&source)
                        .map_err(|e| self.err(&p, format!("not a regular expression: {e}")))?;
                    let _ = compiled.set(Some(r));
                }
                Match::Regex(Pattern { source, compiled })
            }
            _ => {
                let s = self.string(x, &p)?.to_lowercase();
                match k.as_str() {
                    "equals" => Match::Equals(s),
                    "starts_with" => Match::StartsWith(s),
                    "ends_with" => Match::EndsWith(s),
                    _ => Match::Contains(s),
                }
            }
        })
    }

    fn price(&self, v: &Value, path: &str) -> Result<Price, PriceError> {
        match v {
            Value::Object(_) => {
                let obj = self.object(v, path, "a tiered price", &["base", "tiers"])?;
                let bp = format!("{path}.base");
                let base = self.rate(
                    obj.get("base")
                        .ok_or_else(|| self.err(&bp, "required field missing"))?,
                    &bp,
                )?;
                let tp = format!("{path}.tiers");
                let list = obj
                    .get("tiers")
                    .ok_or_else(|| self.err(&tp, "required field missing"))?;
                let mut tiers = Vec::new();
                for (i, t) in self.array(list, &tp)?.iter().enumerate() {
                    let ip = format!("{tp}[{i}]");
                    let o = self.object(t, &ip, "a tier", &["start", "price"])?;
                    let start = o.get("start").and_then(Value::as_u64).ok_or_else(|| {
                        self.err(
                            &format!("{ip}.start"),
                            "expected a whole number of input tokens",
                        )
                    })?;
                    let pp = format!("{ip}.price");
                    let rate = self.rate(
                        o.get("price")
                            .ok_or_else(|| self.err(&pp, "required field missing"))?,
                        &pp,
                    )?;
                    tiers.push((start, rate));
                }
                tiers.sort_by_key(|(s, _)| *s);
                Ok(Price::Tiered { base, tiers })
            }
            _ => Ok(Price::Flat(self.rate(v, path)?)),
        }
    }

    /// A price per million tokens (a decimal string or a JSON number).
    fn rate(&self, v: &Value, path: &str) -> Result<Rate, PriceError> {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => match (n.as_u64(), n.as_f64()) {
                (Some(u), _) => u.to_string(),
                // Rust prints a float without an exponent.
                (None, Some(f)) => f.to_string(),
                (None, None) => n.to_string(),
            },
            _ => {
                return Err(self.err(
                    path,
                    "expected a price in dollars per million tokens (a number or a decimal string)",
                ));
            }
        };
        parse_rate(&text).ok_or_else(|| {
            self.err(
                path,
                format!("{text:?} is not a price (a non-negative decimal number)"),
            )
        })
    }
}

/// `"0.3"` (dollars per million tokens) as femto-dollars per token: exact
/// to nine decimals, rounded (half up) past them (`0.18000000000000002`,
/// a float written out, is 0.18).
fn parse_rate(text: &str) -> Option<Rate> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if (whole.is_empty() && frac.is_empty())
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || whole.len() > 20
    {
        return None;
    }
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let (kept, rest) = frac.split_at(frac.len().min(9));
    let mut f = kept.to_string();
    while f.len() < 9 {
        f.push('0');
    }
    let up = u128::from(rest.bytes().next().is_some_and(|b| b >= b'5'));
    let frac: u128 = f.parse().ok()?;
    Some(Rate(whole * 1_000_000_000 + frac + up))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_exact() {
        assert_eq!(parse_rate("0.3"), Some(Rate(300_000_000)));
        assert_eq!(parse_rate("15"), Some(Rate(15_000_000_000)));
        assert_eq!(parse_rate(".5"), Some(Rate(500_000_000)));
        assert_eq!(parse_rate("0.000000001"), Some(Rate(1)));
        assert_eq!(parse_rate("0.0000000001"), Some(Rate(0)));
        assert_eq!(parse_rate("0.18000000000000002"), Some(Rate(180_000_000)));
        assert_eq!(parse_rate("0.0000000015"), Some(Rate(2)));
        assert_eq!(parse_rate("-1"), None);
        assert_eq!(parse_rate("1e-6"), None);
        assert_eq!(parse_rate(""), None);
        assert_eq!(parse_rate("."), None);
    }
}
