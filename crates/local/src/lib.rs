//! An embedded local model: Parlance runs offline, with real tool calls.
//!
//! The engine is llama.cpp (through `llama-cpp-2`): it reads GGUF files
//! directly, applies the chat template stored in the model, and turns a
//! JSON Schema into a grammar that constrains decoding. Small models do not
//! emit tool calls on their own; constrained, even a 135M-parameter model
//! produces a call whose arguments match the tool's schema. Why llama.cpp
//! rather than candle, the sampling defaults, the loop guard and how long
//! conversations are fitted: see `docs/local-model.md`.

mod engine;
mod fit;
mod generate;
mod models;
mod prompt;
mod repetition;
mod salvage;
mod sampling;
mod stops;
mod threads;

pub use engine::{LocalError, LocalModel};
pub use generate::DEFAULT_MAX_TOKENS;
pub use models::{
    DEFAULT_MODEL_FILE, DEFAULT_MODEL_PACKAGE, ModelEntry, Source, cache_dir, default_model_path,
    list_models, pull_default, pull_path, resolve, searched_folders,
};
pub use sampling::{
    DEFAULT_MIN_P, DEFAULT_REPEAT_LAST_N, DEFAULT_REPEAT_PENALTY, DEFAULT_TEMPERATURE,
    DEFAULT_TOP_K, DEFAULT_TOP_P, LOCAL_OPTIONS,
};
pub use threads::default_threads;
