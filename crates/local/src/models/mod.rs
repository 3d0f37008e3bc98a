//! The models a user has: Parlance's own cache, and the GGUF files Ollama
//! and LM Studio already downloaded, run in place (nothing is copied).
//! `local:NAME` finds a model here by the name `parlance model list` shows.

mod cache;
mod lmstudio;
mod ollama;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use cache::{
    DEFAULT_MODEL_FILE, DEFAULT_MODEL_PACKAGE, cache_dir, default_model_path, pull_default,
    pull_path,
};

use crate::LocalError;

/// Where a model was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// Parlance's cache (`parlance model pull`).
    Parlance,
    /// Ollama's model store (`ollama pull`).
    Ollama,
    /// LM Studio's models folder.
    LmStudio,
}

impl Source {
    /// The name shown in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Parlance => "parlance",
            Source::Ollama => "ollama",
            Source::LmStudio => "lm-studio",
        }
    }
}

/// A model file found on this machine.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntry {
    /// The name for `--model local:NAME`.
    pub name: String,
    /// Where it was found.
    pub source: Source,
    /// The GGUF file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The parameters its publisher ships with it (an Ollama model's
    /// `params` layer: temperature, stop, ...); they are the model's
    /// sampling defaults, under what a request sets.
    pub params: Map<String, Value>,
}

/// Whether a file starts with the GGUF magic bytes.
pub(crate) fn is_gguf(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"GGUF"
}

/// The folders searched, for messages: Parlance's cache, Ollama's stores,
/// LM Studio's folder.
pub fn searched_folders() -> Vec<(Source, PathBuf)> {
    let mut out = vec![(Source::Parlance, cache_dir())];
    out.extend(ollama::roots().into_iter().map(|r| (Source::Ollama, r)));
    out.extend(lmstudio::models_dir().map(|d| (Source::LmStudio, d)));
    out
}

/// Every model found: Parlance's cache, then Ollama's, then LM Studio's,
/// each sorted by name. Unreadable or foreign files are skipped, never an
/// error: another tool's folder is not ours to judge.
pub fn list_models() -> Vec<ModelEntry> {
    let mut out: Vec<ModelEntry> = cache::cached()
        .into_iter()
        .map(|(path, size)| ModelEntry {
            name: path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().to_string()),
            source: Source::Parlance,
            path,
            size,
            params: Map::new(),
        })
        .collect();
    for root in ollama::roots() {
        out.extend(ollama::list(&root));
    }
    if let Some(dir) = lmstudio::models_dir() {
        out.extend(lmstudio::list(&dir));
    }
    out
}

/// The model `local:NAME` means: a GGUF file at that path, else the model
/// listed under that name (an Ollama name without a tag means `:latest`;
/// an LM Studio model may be named by its file name alone when that is
/// unique).
pub fn resolve(name: &str) -> Result<ModelEntry, LocalError> {
    let as_path = Path::new(name);
    if as_path.is_file() {
        let size = std::fs::metadata(as_path).map_or(0, |m| m.len());
        return Ok(ModelEntry {
            name: name.to_string(),
            source: Source::Parlance,
            path: as_path.to_path_buf(),
            size,
            params: Map::new(),
        });
    }
    let all = list_models();
    let matches: Vec<&ModelEntry> = all.iter().filter(|m| m.name == name).collect();
    let matches = if matches.is_empty() {
        all.iter().filter(|m| also_named(m, name)).collect()
    } else {
        matches
    };
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] if looks_like_path(name) => Err(LocalError::Missing(as_path.to_path_buf())),
        [] => Err(LocalError::Unknown {
            name: name.to_string(),
            searched: searched_folders()
                .into_iter()
                .map(|(s, p)| format!("{} {}", s.as_str(), p.display()))
                .collect::<Vec<_>>()
                .join(", "),
        }),
        several => Err(LocalError::Ambiguous {
            name: name.to_string(),
            candidates: several
                .iter()
                .map(|m| format!("{} ({})", m.name, m.source.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Other names a model answers to.
fn also_named(m: &ModelEntry, name: &str) -> bool {
    match m.source {
        Source::Ollama => !name.contains(':') && m.name == format!("{name}:latest"),
        Source::LmStudio => {
            m.path.file_stem().is_some_and(|s| s == name)
                || m.path.file_name().is_some_and(|s| s == name)
        }
        Source::Parlance => m.path.file_name().is_some_and(|s| s == name),
    }
}

fn looks_like_path(name: &str) -> bool {
    name.starts_with('/') || name.starts_with('.') || name.ends_with(".gguf") || name.contains('\\')
}
