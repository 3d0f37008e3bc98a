//! How the next token is chosen: the sampling settings of one generation,
//! layered from Parlance's defaults, the model's own published parameters
//! (an Ollama model's `params`) and the request, then turned into a
//! llama.cpp sampler chain.
//!
//! Small models need sampling: greedy decoding sends SmolLM2-135M into
//! "I'm so sorry. I'm so sorry. …" on the second turn of a chat. The
//! defaults are the ones llama.cpp and Ollama ship (see
//! `docs/local-model.md` for the sources), plus a mild repeat penalty.

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use parlance_model::{ModelError, ModelOptions};
use serde_json::{Map, Value};

/// Parlance's defaults for a local model.
pub const DEFAULT_TEMPERATURE: f32 = 0.8;
/// Keep the 40 most likely tokens (llama.cpp and Ollama).
pub const DEFAULT_TOP_K: i32 = 40;
/// Nucleus sampling at 0.9 (Ollama; llama.cpp uses 0.95).
pub const DEFAULT_TOP_P: f32 = 0.9;
/// Drop tokens under 5% of the most likely one's probability (llama.cpp).
pub const DEFAULT_MIN_P: f32 = 0.05;
/// A mild penalty on tokens already generated: the remedy for small models
/// that repeat themselves (llama.cpp and Ollama now default to 1.0).
pub const DEFAULT_REPEAT_PENALTY: f32 = 1.1;
/// How many recent tokens the repeat penalty looks at.
pub const DEFAULT_REPEAT_LAST_N: i32 = 64;

/// The options a request may give the local model under
/// `options.extra.local` (named as in Ollama's Modelfile parameters).
pub const LOCAL_OPTIONS: [&str; 6] = [
    "min_p",
    "repeat_penalty",
    "repeat_last_n",
    "num_ctx",
    "num_thread",
    "loop_guard",
];

/// The settings of one generation.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// 0 means greedy (always the most likely token).
    pub temperature: f32,
    /// 0 disables top-k.
    pub top_k: i32,
    /// 1 disables top-p.
    pub top_p: f32,
    /// 0 disables min-p.
    pub min_p: f32,
    /// 1 disables the penalty.
    pub repeat_penalty: f32,
    /// Recent tokens the penalty looks at; 0 disables it, -1 means the context.
    pub repeat_last_n: i32,
    /// The seed of the random choice (given, or drawn and reported).
    pub seed: u32,
    /// The context to use instead of the model's own limit.
    pub num_ctx: Option<u32>,
    /// Threads instead of the physical cores.
    pub num_thread: Option<u32>,
    /// Whether a generation caught in a loop is stopped.
    pub loop_guard: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            temperature: DEFAULT_TEMPERATURE,
            top_k: DEFAULT_TOP_K,
            top_p: DEFAULT_TOP_P,
            min_p: DEFAULT_MIN_P,
            repeat_penalty: DEFAULT_REPEAT_PENALTY,
            repeat_last_n: DEFAULT_REPEAT_LAST_N,
            seed: 0,
            num_ctx: None,
            num_thread: None,
            loop_guard: true,
        }
    }
}

fn invalid(message: String) -> ModelError {
    ModelError::InvalidRequest {
        message: format!("local model: {message}"),
    }
}

/// A number from JSON, checked against a range; `what` names it in errors.
fn number(what: &str, v: &Value, ok: impl Fn(f64) -> bool, expected: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(n) if n.is_finite() && ok(n) => Ok(n),
        _ => Err(format!("{what}: expected {expected}, got {v}")),
    }
}

fn integer(what: &str, v: &Value, min: i64, max: i64) -> Result<i64, String> {
    match v.as_i64() {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "{what}: expected an integer from {min} to {max}, got {v}"
        )),
    }
}

impl Settings {
    /// Sets one option by its Ollama name; `what` is where it came from.
    fn set(&mut self, what: &str, key: &str, v: &Value, n_ctx_train: u32) -> Result<bool, String> {
        match key {
            "temperature" => {
                self.temperature =
                    number(what, v, |n| n >= 0.0, "a number of 0 or more (0: greedy)")? as f32
            }
            "top_k" => self.top_k = integer(what, v, 0, i32::MAX as i64)? as i32,
            "top_p" => {
                self.top_p = number(
                    what,
                    v,
                    |n| n > 0.0 && n <= 1.0,
                    "a number above 0, at most 1",
                )? as f32
            }
            "min_p" => {
                self.min_p = number(
                    what,
                    v,
                    |n| (0.0..=1.0).contains(&n),
                    "a number from 0 to 1",
                )? as f32
            }
            "repeat_penalty" => {
                self.repeat_penalty =
                    number(what, v, |n| n > 0.0, "a number above 0 (1: no penalty)")? as f32
            }
            "repeat_last_n" => {
                self.repeat_last_n = integer(what, v, -1, i32::MAX as i64)? as i32;
            }
            "seed" => self.seed = integer(what, v, 0, u32::MAX as i64 - 1)? as u32,
            "num_ctx" => self.num_ctx = Some(integer(what, v, 64, n_ctx_train as i64)? as u32),
            "num_thread" => self.num_thread = Some(integer(what, v, 1, 1024)? as u32),
            "loop_guard" => {
                self.loop_guard = v
                    .as_bool()
                    .ok_or_else(|| format!("{what}: expected true or false, got {v}"))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The settings of one generation: Parlance's defaults, then the
    /// model's published parameters (unknown ones ignored: they are the
    /// model's, in a format that may grow), then the request's canonical
    /// options and its `options.extra.local` (unknown ones refused, so a
    /// typo is not silently ignored). `n_ctx_train` bounds `num_ctx`.
    pub fn resolve(
        model_params: &Map<String, Value>,
        options: &ModelOptions,
        n_ctx_train: u32,
    ) -> Result<Settings, ModelError> {
        let mut s = Settings {
            seed: random_seed(),
            ..Settings::default()
        };
        for (k, v) in model_params {
            // A model's parameter that does not fit (Ollama's `seed: -1`,
            // a context beyond the model's) must not make the model
            // unusable: it is skipped, with a warning for the logs.
            if let Err(e) = s.set(&format!("the model's parameter {k}"), k, v, n_ctx_train) {
                tracing::warn!("local model: {e}: ignored");
            }
        }
        let canonical = [
            ("temperature", options.temperature.map(Value::from)),
            ("top_p", options.top_p.map(Value::from)),
            ("top_k", options.top_k.map(Value::from)),
            ("seed", options.seed.map(Value::from)),
        ];
        for (k, v) in canonical {
            if let Some(v) = v {
                s.set(&format!("options.{k}"), k, &v, n_ctx_train)
                    .map_err(invalid)?;
            }
        }
        match options.extra.get("local") {
            None => {}
            Some(Value::Object(local)) => {
                for (k, v) in local {
                    let what = format!("options.extra.local.{k}");
                    let known = LOCAL_OPTIONS.contains(&k.as_str())
                        && s.set(&what, k, v, n_ctx_train).map_err(invalid)?;
                    if !known {
                        return Err(invalid(format!(
                            "{what}: unknown option (expected one of {}; temperature, top_p, top_k and seed are options of their own)",
                            LOCAL_OPTIONS.join(", ")
                        )));
                    }
                }
            }
            Some(other) => {
                return Err(invalid(format!(
                    "options.extra.local: expected an object, got {other}"
                )));
            }
        }
        Ok(s)
    }

    /// Whether the most likely token is always taken.
    pub fn greedy(&self) -> bool {
        self.temperature <= 0.0
    }

    /// The steps of the sampler chain. With a grammar the reply is a JSON
    /// document whose shape the grammar fixes: it is decoded greedily and
    /// without penalties (a penalty on `"` or `:` would only fight the
    /// grammar). Otherwise: the repeat penalty, then greedy, or top-k,
    /// top-p, min-p, temperature and a seeded draw, in llama.cpp's order;
    /// a step that would change nothing is left out.
    pub fn plan(&self, grammar: bool, n_ctx: u32) -> Vec<Step> {
        if grammar {
            return vec![Step::Grammar, Step::Greedy];
        }
        let mut steps = Vec::new();
        let last_n = if self.repeat_last_n < 0 {
            n_ctx as i32
        } else {
            self.repeat_last_n
        };
        if self.repeat_penalty != 1.0 && last_n > 0 {
            steps.push(Step::Penalty {
                last_n,
                penalty: self.repeat_penalty,
            });
        }
        if self.greedy() {
            steps.push(Step::Greedy);
            return steps;
        }
        if self.top_k > 0 {
            steps.push(Step::TopK(self.top_k));
        }
        if self.top_p < 1.0 {
            steps.push(Step::TopP(self.top_p));
        }
        if self.min_p > 0.0 {
            steps.push(Step::MinP(self.min_p));
        }
        steps.push(Step::Temperature(self.temperature));
        steps.push(Step::Draw(self.seed));
        steps
    }

    /// The llama.cpp sampler chain of [`Settings::plan`].
    pub fn chain(
        &self,
        model: &LlamaModel,
        grammar: Option<LlamaSampler>,
        n_ctx: u32,
    ) -> LlamaSampler {
        let steps = self.plan(grammar.is_some(), n_ctx);
        let mut grammar = grammar;
        let samplers = steps.into_iter().filter_map(|step| {
            Some(match step {
                Step::Grammar => grammar.take()?,
                Step::Greedy => LlamaSampler::greedy(),
                Step::Penalty { last_n, penalty } => {
                    LlamaSampler::penalties(model.n_vocab(), last_n, penalty, 0.0, 0.0)
                }
                Step::TopK(k) => LlamaSampler::top_k(k),
                Step::TopP(p) => LlamaSampler::top_p(p, 1),
                Step::MinP(p) => LlamaSampler::min_p(p, 1),
                Step::Temperature(t) => LlamaSampler::temp(t),
                Step::Draw(seed) => LlamaSampler::dist(seed),
            })
        });
        LlamaSampler::chain_simple(samplers.collect::<Vec<_>>())
    }
}

/// One step of the sampler chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// The grammar's constraint.
    Grammar,
    /// The repeat penalty over the last tokens.
    Penalty {
        /// How many recent tokens.
        last_n: i32,
        /// The penalty.
        penalty: f32,
    },
    /// Keep the k most likely tokens.
    TopK(i32),
    /// Nucleus sampling.
    TopP(f32),
    /// Drop tokens under this share of the most likely one's probability.
    MinP(f32),
    /// Scale the logits.
    Temperature(f32),
    /// The seeded random draw.
    Draw(u32),
    /// The most likely token.
    Greedy,
}

/// A seed for a request that gave none (never llama.cpp's "random" marker
/// 0xFFFFFFFF, so the seed reported is the seed used).
fn random_seed() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    seed_from(h.finish())
}

/// A 64-bit random number as a seed below 0xFFFFFFFF.
fn seed_from(x: u64) -> u32 {
    (x % u32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(extra: Value) -> ModelOptions {
        let mut o = ModelOptions::default();
        if let Value::Object(m) = extra {
            o.extra = m;
        }
        o
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let s = Settings::resolve(&Map::new(), &ModelOptions::default(), 8192).unwrap();
        assert_eq!(
            (
                s.temperature,
                s.top_k,
                s.top_p,
                s.min_p,
                s.repeat_penalty,
                s.repeat_last_n
            ),
            (0.8, 40, 0.9, 0.05, 1.1, 64)
        );
        assert!(s.loop_guard && !s.greedy());
        assert_eq!((s.num_ctx, s.num_thread), (None, None));
        assert_ne!(s.seed, u32::MAX);
    }

    #[test]
    fn the_request_wins_over_the_model_which_wins_over_the_defaults() {
        let model = json!({"temperature": 0.6, "top_k": 20, "stop": ["<|im_end|>"], "repeat_penalty": 1.05});
        let mut o = opts(
            json!({"local": {"repeat_penalty": 1.0, "min_p": 0.1, "num_ctx": 1024, "num_thread": 3, "loop_guard": false, "repeat_last_n": -1}}),
        );
        o.temperature = Some(0.0);
        o.seed = Some(42);
        o.top_p = Some(0.5);
        let s = Settings::resolve(model.as_object().unwrap(), &o, 8192).unwrap();
        assert_eq!(s.temperature, 0.0);
        assert!(s.greedy());
        assert_eq!(s.top_k, 20, "from the model");
        assert_eq!(s.top_p, 0.5);
        assert_eq!(s.min_p, 0.1);
        assert_eq!(s.repeat_penalty, 1.0);
        assert_eq!(s.repeat_last_n, -1);
        assert_eq!(s.seed, 42);
        assert_eq!(
            (s.num_ctx, s.num_thread, s.loop_guard),
            (Some(1024), Some(3), false)
        );
        let only_model =
            Settings::resolve(model.as_object().unwrap(), &ModelOptions::default(), 8192).unwrap();
        assert_eq!(
            (only_model.temperature, only_model.repeat_penalty),
            (0.6, 1.05)
        );
    }

    fn error(o: &ModelOptions) -> String {
        Settings::resolve(&Map::new(), o, 2048)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn bad_values_are_named() {
        let o = ModelOptions {
            temperature: Some(-0.5),
            ..Default::default()
        };
        assert_eq!(
            error(&o),
            "invalid request: local model: options.temperature: expected a number of 0 or more (0: greedy), got -0.5"
        );
        let o = ModelOptions {
            seed: Some(u32::MAX as u64),
            ..Default::default()
        };
        assert!(error(&o).contains("options.seed: expected an integer from 0 to 4294967294"));
        let o = ModelOptions {
            top_p: Some(0.0),
            ..Default::default()
        };
        assert!(error(&o).contains("options.top_p: expected a number above 0, at most 1, got 0.0"));
        assert!(error(&opts(json!({"local": {"num_ctx": 4096}}))).contains(
            "options.extra.local.num_ctx: expected an integer from 64 to 2048, got 4096"
        ));
        assert!(error(&opts(json!({"local": {"min_p": 2}}))).contains("options.extra.local.min_p"));
        assert!(error(&opts(json!({"local": {"repeat_penalty": 0}}))).contains("repeat_penalty"));
        assert!(error(&opts(json!({"local": {"repeat_last_n": -2}}))).contains("from -1 to"));
        assert!(error(&opts(json!({"local": {"num_thread": 0}}))).contains("from 1 to 1024"));
        assert!(
            error(&opts(json!({"local": {"loop_guard": "no"}})))
                .contains("options.extra.local.loop_guard: expected true or false, got \"no\"")
        );
        assert!(
            error(&opts(json!({"local": {"num_thread": 2.5}})))
                .contains("num_thread: expected an integer from 1 to 1024, got 2.5")
        );
    }

    #[test]
    fn unknown_and_misplaced_options_are_refused() {
        let e = error(&opts(json!({"local": {"repeat_penality": 1.2}})));
        assert!(
            e.contains("options.extra.local.repeat_penality: unknown option (expected one of min_p, repeat_penalty"),
            "{e}"
        );
        let e = error(&opts(json!({"local": {"temperature": 0.2}})));
        assert!(
            e.contains("options.extra.local.temperature: unknown option"),
            "{e}"
        );
        let e = error(&opts(json!({"local": 3})));
        assert!(
            e.contains("options.extra.local: expected an object, got 3"),
            "{e}"
        );
        // Another provider's options are not ours to judge.
        assert!(
            Settings::resolve(&Map::new(), &opts(json!({"openai": {"store": true}})), 2048).is_ok()
        );
    }

    #[test]
    fn a_model_parameter_that_does_not_fit_is_skipped() {
        let model = json!({"num_ctx": 131072, "seed": -1, "temperature": 0.3});
        let s =
            Settings::resolve(model.as_object().unwrap(), &ModelOptions::default(), 8192).unwrap();
        assert_eq!((s.num_ctx, s.temperature), (None, 0.3));
        assert_ne!(s.seed, u32::MAX);
    }

    #[test]
    fn the_chain_is_llama_cpp_s_order_without_steps_that_change_nothing() {
        let s = Settings {
            seed: 9,
            ..Settings::default()
        };
        assert_eq!(
            s.plan(false, 2048),
            [
                Step::Penalty {
                    last_n: 64,
                    penalty: 1.1
                },
                Step::TopK(40),
                Step::TopP(0.9),
                Step::MinP(0.05),
                Step::Temperature(0.8),
                Step::Draw(9)
            ]
        );
        assert_eq!(
            s.plan(true, 2048),
            [Step::Grammar, Step::Greedy],
            "a grammar: greedy, no penalty"
        );
        let off = Settings {
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            repeat_penalty: 1.0,
            seed: 9,
            ..Settings::default()
        };
        assert_eq!(
            off.plan(false, 2048),
            [Step::Temperature(0.8), Step::Draw(9)]
        );
        let greedy = Settings {
            temperature: 0.0,
            repeat_last_n: -1,
            ..Settings::default()
        };
        assert_eq!(
            greedy.plan(false, 2048),
            [
                Step::Penalty {
                    last_n: 2048,
                    penalty: 1.1
                },
                Step::Greedy
            ],
            "-1: the whole context"
        );
        let no_window = Settings {
            temperature: 0.0,
            repeat_last_n: 0,
            ..Settings::default()
        };
        assert_eq!(no_window.plan(false, 2048), [Step::Greedy]);
        let tiny = Settings {
            temperature: 0.0,
            repeat_last_n: 1,
            repeat_penalty: 0.9,
            ..Settings::default()
        };
        assert_eq!(
            tiny.plan(false, 2048)[0],
            Step::Penalty {
                last_n: 1,
                penalty: 0.9
            }
        );
    }

    #[test]
    fn seeds_stay_below_the_random_marker() {
        assert_eq!(seed_from(5), 5);
        assert_eq!(seed_from(u32::MAX as u64), 0);
        assert_eq!(seed_from(u32::MAX as u64 + 7), 7);
        assert_ne!(seed_from(u64::MAX), u32::MAX);
    }

    #[test]
    fn seeds_differ_when_none_is_given() {
        let a = Settings::resolve(&Map::new(), &ModelOptions::default(), 2048).unwrap();
        let b = Settings::resolve(&Map::new(), &ModelOptions::default(), 2048).unwrap();
        assert_ne!(a.seed, b.seed);
    }
}
