//! LM Studio's models folder. LM Studio keeps downloads as plain GGUF
//! files in Hugging Face's layout, `models/PUBLISHER/MODEL/FILE.gguf`
//! (lmstudio-ai/docs, "Import Models"). Its home is the folder named in
//! `~/.lmstudio-home-pointer` when that exists, else `~/.lmstudio` (older
//! versions: `~/.cache/lm-studio`); the models folder is the home's
//! `settings.json` `downloadsFolder` when the user moved it, else
//! `HOME/models`.

use std::path::{Path, PathBuf};

use serde_json::Map;

use super::{ModelEntry, Source, is_gguf};

/// LM Studio's home, from `home` (the user's home directory).
pub fn lmstudio_home(home: &Path) -> Option<PathBuf> {
    let pointed = std::fs::read_to_string(home.join(".lmstudio-home-pointer"))
        .ok()
        .map(|s| PathBuf::from(s.trim()))
        .filter(|p| p.is_dir());
    pointed.or_else(|| {
        [home.join(".lmstudio"), home.join(".cache/lm-studio")]
            .into_iter()
            .find(|p| p.is_dir())
    })
}

/// The models folder, when LM Studio is installed for this user.
pub fn models_dir() -> Option<PathBuf> {
    models_dir_in(&PathBuf::from(std::env::var_os("HOME")?))
}

/// [`models_dir`] for the user's home directory `home`.
fn models_dir_in(home: &Path) -> Option<PathBuf> {
    let lms = lmstudio_home(home)?;
    let moved = std::fs::read_to_string(lms.join("settings.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("downloadsFolder")?.as_str().map(PathBuf::from))
        .filter(|p| p.is_dir());
    moved.or_else(|| Some(lms.join("models")).filter(|p| p.is_dir()))
}

/// Whether a file is a model to list: GGUF, not a vision projector
/// (`mmproj-…`), and not a later part of a split model (llama.cpp loads
/// the parts from the first, `…-00001-of-000NN.gguf`).
fn listable(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if !name.to_ascii_lowercase().ends_with(".gguf") || name.starts_with("mmproj") {
        return false;
    }
    let stem = &name[..name.len() - 5];
    if let Some((_, of)) = stem.rsplit_once("-of-")
        && of.len() == 5
        && of.bytes().all(|b| b.is_ascii_digit())
    {
        let part = &stem[..stem.len() - 9];
        if !part.ends_with("-00001") {
            return false;
        }
    }
    true
}

/// The models under `dir` (two folder levels, as LM Studio keeps them,
/// and any deeper), named by their path without `.gguf`.
pub fn list(dir: &Path) -> Vec<ModelEntry> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() && depth < 4 {
                stack.push((p, depth + 1));
            } else if p.is_file() && listable(&p) && is_gguf(&p) {
                let rel = p.strip_prefix(dir).unwrap_or(&p).with_extension("");
                let name = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                let size = std::fs::metadata(&p).map_or(0, |m| m.len());
                out.push(ModelEntry {
                    name,
                    source: Source::LmStudio,
                    path: p,
                    size,
                    params: Map::new(),
                });
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("parlance-lms-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_home_is_found_by_pointer_then_by_name() {
        let home = temp("home");
        assert_eq!(lmstudio_home(&home), None);
        std::fs::create_dir_all(home.join(".cache/lm-studio")).unwrap();
        assert_eq!(lmstudio_home(&home), Some(home.join(".cache/lm-studio")));
        std::fs::create_dir_all(home.join(".lmstudio")).unwrap();
        assert_eq!(lmstudio_home(&home), Some(home.join(".lmstudio")));
        let elsewhere = home.join("big-disk/lms");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(
            home.join(".lmstudio-home-pointer"),
            format!("{}\n", elsewhere.display()),
        )
        .unwrap();
        assert_eq!(lmstudio_home(&home), Some(elsewhere));
        std::fs::write(home.join(".lmstudio-home-pointer"), "/nowhere/at/all").unwrap();
        assert_eq!(
            lmstudio_home(&home),
            Some(home.join(".lmstudio")),
            "a stale pointer is ignored"
        );
    }

    #[test]
    fn the_models_folder_is_the_home_s_unless_moved() {
        let home = temp("dirs");
        assert_eq!(models_dir_in(&home), None, "no LM Studio");
        let lms = home.join(".lmstudio");
        std::fs::create_dir_all(&lms).unwrap();
        assert_eq!(models_dir_in(&home), None, "no models folder yet");
        std::fs::create_dir_all(lms.join("models")).unwrap();
        assert_eq!(models_dir_in(&home), Some(lms.join("models")));
        let moved = home.join("disk/models");
        std::fs::create_dir_all(&moved).unwrap();
        std::fs::write(
            lms.join("settings.json"),
            serde_json::json!({"downloadsFolder": moved}).to_string(),
        )
        .unwrap();
        assert_eq!(models_dir_in(&home), Some(moved));
        std::fs::write(
            lms.join("settings.json"),
            r#"{"downloadsFolder": "/gone/away"}"#,
        )
        .unwrap();
        assert_eq!(
            models_dir_in(&home),
            Some(lms.join("models")),
            "a moved folder that is gone"
        );
    }

    #[test]
    fn folders_are_searched_four_levels_deep() {
        let dir = temp("deep");
        for rel in ["a/b/c/d/four.gguf", "a/b/c/d/e/five.gguf", "top.gguf"] {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"GGUF....").unwrap();
        }
        let names: Vec<String> = list(&dir).into_iter().map(|m| m.name).collect();
        assert_eq!(names, ["a/b/c/d/four", "top"]);
    }

    #[test]
    fn models_are_listed_by_their_path() {
        let dir = temp("models");
        let put = |rel: &str, bytes: &[u8]| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        };
        put("lmstudio-community/Tiny-GGUF/Tiny-Q4_K_M.gguf", b"GGUF....");
        put(
            "lmstudio-community/Tiny-GGUF/mmproj-Tiny-F16.gguf",
            b"GGUF....",
        );
        put(
            "bartowski/Big-GGUF/Big-Q8_0-00001-of-00002.gguf",
            b"GGUF....",
        );
        put(
            "bartowski/Big-GGUF/Big-Q8_0-00002-of-00002.gguf",
            b"GGUF....",
        );
        put("someone/Fake-GGUF/fake.gguf", b"not gguf");
        put(
            "someone/Fake-GGUF/README.md",
            b"GGUF but not a model file name",
        );
        let found = list(&dir);
        let names: Vec<&str> = found.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bartowski/Big-GGUF/Big-Q8_0-00001-of-00002",
                "lmstudio-community/Tiny-GGUF/Tiny-Q4_K_M"
            ]
        );
        assert_eq!(found[1].size, 8);
        assert_eq!(found[1].source, Source::LmStudio);
    }
}
