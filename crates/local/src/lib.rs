//! An embedded local model: Parlance runs offline, with real tool calls.
//!
//! The engine is llama.cpp (through `llama-cpp-2`): it reads GGUF files
//! directly, applies the chat template stored in the model, and turns a
//! JSON Schema into a grammar that constrains decoding. Small models do not
//! emit tool calls on their own; constrained, even a 135M-parameter model
//! produces a call whose arguments match the tool's schema. Why llama.cpp
//! rather than candle: see `docs/local-model.md`.

mod engine;
mod models;
mod prompt;

pub use engine::{LocalError, LocalModel};
pub use models::{
    DEFAULT_MODEL_FILE, DEFAULT_MODEL_PACKAGE, cache_dir, default_model_path, list_models,
    pull_default, pull_path,
};
