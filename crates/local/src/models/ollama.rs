//! Ollama's model store, read as Ollama lays it out (`manifest/paths.go`,
//! `manifest/manifest.go` and `types/model/name.go` in ollama/ollama):
//!
//! - the store is `$OLLAMA_MODELS`, else `~/.ollama/models`; the Linux
//!   service keeps it in `/usr/share/ollama/.ollama/models`;
//! - `manifests/HOST/NAMESPACE/MODEL/TAG` is an OCI-style JSON manifest
//!   whose `layers` name blobs by digest and media type;
//! - the blob of digest `sha256:HEX` is the file `blobs/sha256-HEX`;
//! - the weights are the layer `application/vnd.ollama.image.model` (a GGUF
//!   file), the model's default options the JSON layer
//!   `application/vnd.ollama.image.params`;
//! - a model is shown as `MODEL:TAG`, with `NAMESPACE/` in front when it is
//!   not `library` and `HOST/NAMESPACE/` when the host is not
//!   `registry.ollama.ai`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ModelEntry, Source, is_gguf};

const MODEL_LAYER: &str = "application/vnd.ollama.image.model";
const PARAMS_LAYER: &str = "application/vnd.ollama.image.params";
const DEFAULT_HOST: &str = "registry.ollama.ai";
const DEFAULT_NAMESPACE: &str = "library";

/// The stores to read: `$OLLAMA_MODELS` alone when set, else the user's
/// and the Linux service's, those that exist.
pub fn roots() -> Vec<PathBuf> {
    roots_from(
        std::env::var_os("OLLAMA_MODELS").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
        cfg!(target_os = "linux"),
    )
}

/// [`roots`] from `$OLLAMA_MODELS`, `$HOME` and whether this is Linux.
fn roots_from(ollama_models: Option<PathBuf>, home: Option<PathBuf>, linux: bool) -> Vec<PathBuf> {
    if let Some(d) = ollama_models.filter(|d| !d.as_os_str().is_empty()) {
        return vec![d];
    }
    let mut out = Vec::new();
    if let Some(home) = home {
        out.push(home.join(".ollama/models"));
    }
    if linux {
        out.push(PathBuf::from("/usr/share/ollama/.ollama/models"));
    }
    out.retain(|d| d.join("manifests").is_dir());
    out
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// The name Ollama shows for a manifest's path parts.
pub fn display_name(host: &str, namespace: &str, model: &str, tag: &str) -> String {
    if !host.eq_ignore_ascii_case(DEFAULT_HOST) {
        format!("{host}/{namespace}/{model}:{tag}")
    } else if !namespace.eq_ignore_ascii_case(DEFAULT_NAMESPACE) {
        format!("{namespace}/{model}:{tag}")
    } else {
        format!("{model}:{tag}")
    }
}

/// The blob file of a `sha256:HEX` digest (anything else is refused, as
/// Ollama does, so a manifest cannot point outside the store).
pub fn blob_path(root: &Path, digest: &str) -> Option<PathBuf> {
    let hex = digest
        .strip_prefix("sha256:")
        .or_else(|| digest.strip_prefix("sha256-"))?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| root.join("blobs").join(format!("sha256-{hex}")))
}

/// The models of one store whose weights are a GGUF file.
pub fn list(root: &Path) -> Vec<ModelEntry> {
    let mut out = Vec::new();
    for host in subdirs(&root.join("manifests")) {
        for namespace in subdirs(&host) {
            for model in subdirs(&namespace) {
                for tag in subdirs(&model) {
                    let part = |p: &Path| {
                        p.file_name()
                            .map_or_else(String::new, |s| s.to_string_lossy().to_string())
                    };
                    let name =
                        display_name(&part(&host), &part(&namespace), &part(&model), &part(&tag));
                    if let Some(entry) = entry(root, &tag, name) {
                        out.push(entry);
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// One manifest → its GGUF weights and parameters; `None` (with a debug
/// log) for anything unreadable or not GGUF.
fn entry(root: &Path, manifest: &Path, name: String) -> Option<ModelEntry> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let v: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            tracing::debug!("ollama manifest {}: {e}", manifest.display());
            return None;
        }
    };
    let layers = v.get("layers")?.as_array()?;
    let layer = |media: &str| {
        layers
            .iter()
            .find(|l| l.get("mediaType").and_then(Value::as_str) == Some(media))
            .and_then(|l| l.get("digest").and_then(Value::as_str))
            .and_then(|d| blob_path(root, d))
    };
    let path = layer(MODEL_LAYER)?;
    if !is_gguf(&path) {
        tracing::debug!("ollama model {name}: {} is not GGUF", path.display());
        return None;
    }
    let params = layer(PARAMS_LAYER)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Map<String, Value>>(&t).ok())
        .unwrap_or_default();
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    Some(ModelEntry {
        name,
        source: Source::Ollama,
        path,
        size,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_shown_as_ollama_shows_them() {
        assert_eq!(
            display_name("registry.ollama.ai", "library", "smollm2", "135m"),
            "smollm2:135m"
        );
        assert_eq!(
            display_name("registry.ollama.ai", "jane", "tiny", "latest"),
            "jane/tiny:latest"
        );
        assert_eq!(
            display_name("hf.co", "bartowski", "x-GGUF", "Q4_K_M"),
            "hf.co/bartowski/x-GGUF:Q4_K_M"
        );
    }

    #[test]
    fn the_store_is_ollama_models_else_the_home_s() {
        let home =
            std::env::temp_dir().join(format!("parlance-ollama-home-{}", std::process::id()));
        let store = home.join(".ollama/models");
        assert_eq!(
            roots_from(None, Some(home.clone()), false),
            Vec::<PathBuf>::new(),
            "none yet"
        );
        std::fs::create_dir_all(store.join("manifests")).unwrap();
        assert_eq!(
            roots_from(None, Some(home.clone()), false),
            vec![store.clone()]
        );
        let set = PathBuf::from("/elsewhere");
        assert_eq!(
            roots_from(Some(set.clone()), Some(home.clone()), true),
            [set],
            "even if missing"
        );
        assert_eq!(
            roots_from(Some(PathBuf::new()), Some(home), false),
            [store],
            "empty: unset"
        );
        // The Linux service's store counts only when it exists.
        let linux = roots_from(None, None, true);
        assert_eq!(
            linux.is_empty(),
            !Path::new("/usr/share/ollama/.ollama/models/manifests").is_dir()
        );
    }

    #[test]
    fn only_sha256_digests_name_blobs() {
        let root = Path::new("/store");
        let hex = "ab".repeat(32);
        assert_eq!(
            blob_path(root, &format!("sha256:{hex}")),
            Some(root.join(format!("blobs/sha256-{hex}")))
        );
        assert_eq!(blob_path(root, "sha256:../../etc/passwd"), None);
        assert_eq!(blob_path(root, &format!("md5:{hex}")), None);
        assert_eq!(blob_path(root, "sha256:abc"), None);
    }

    #[test]
    fn a_store_lists_its_gguf_models_with_their_params() {
        let root =
            std::env::temp_dir().join(format!("parlance-ollama-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let blob = |hex: &str, bytes: &[u8]| {
            std::fs::create_dir_all(root.join("blobs")).unwrap();
            std::fs::write(root.join(format!("blobs/sha256-{hex}")), bytes).unwrap();
            format!("sha256:{hex}")
        };
        let weights = blob(&"1".repeat(64), b"GGUF\x03\x00\x00\x00rest");
        let params = blob(
            &"2".repeat(64),
            br#"{"temperature": 0.2, "stop": ["<|end|>"]}"#,
        );
        let not_gguf = blob(&"3".repeat(64), b"safetensors");
        let manifest = |path: &str, layers: Value| {
            let p = root.join("manifests").join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, json!({"schemaVersion": 2, "layers": layers}).to_string()).unwrap();
        };
        manifest(
            "registry.ollama.ai/library/smollm2/135m",
            json!([{"mediaType": MODEL_LAYER, "digest": weights, "size": 12},
                   {"mediaType": PARAMS_LAYER, "digest": params, "size": 40}]),
        );
        manifest(
            "registry.ollama.ai/jane/plain/latest",
            json!([{"mediaType": MODEL_LAYER, "digest": weights}]),
        );
        manifest(
            "registry.ollama.ai/library/vision/latest",
            json!([{"mediaType": MODEL_LAYER, "digest": not_gguf}]),
        );
        manifest(
            "registry.ollama.ai/library/gone/latest",
            json!([{"mediaType": MODEL_LAYER, "digest": format!("sha256:{}", "4".repeat(64))}]),
        );
        let broken = root.join("manifests/registry.ollama.ai/library/broken/latest");
        std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
        std::fs::write(&broken, "{not json").unwrap();
        let found = list(&root);
        let names: Vec<&str> = found.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["jane/plain:latest", "smollm2:135m"]);
        let smol = &found[1];
        assert_eq!(
            smol.path,
            root.join(format!("blobs/sha256-{}", "1".repeat(64)))
        );
        assert_eq!(smol.size, 12);
        assert_eq!(smol.source, Source::Ollama);
        assert_eq!(smol.params["temperature"], 0.2);
        assert!(found[0].params.is_empty());
    }
}
