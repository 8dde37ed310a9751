//! Finding a model's files, offline first: a local folder (or an `.onnx` file inside one), then
//! the HuggingFace cache (`HF_HUB_CACHE`, `HF_HOME/hub`, `~/.cache/huggingface/hub`, so models
//! other tools downloaded are reused), then a download from `HF_ENDPOINT` (default
//! huggingface.co) unless `HF_HUB_OFFLINE` is set.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Which embedder a model folder is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    /// model2vec: `model.safetensors` with an `embeddings` table.
    Static,
    /// A transformer exported to ONNX (HF repo layout).
    Transformer,
    /// A cross-encoder (sequence classification) exported to ONNX.
    CrossEncoder,
}

/// A model's files on disk.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    /// What the user asked for (repo id or path).
    pub name: String,
    pub dir: PathBuf,
    pub kind: ModelKind,
    /// The ONNX file for transformer kinds.
    pub onnx: Option<PathBuf>,
}

crate::error::errors! {
    /// Why a model cannot be found, read or downloaded.
    pub enum ModelError: Failure {
        NoTokenizer { dir: String } => "model folder {dir} has no tokenizer.json (expected a HuggingFace model layout)",
        NoOnnx { dir: String, t: String } =>
            "model folder {dir} holds a `{t}` transformer without an ONNX export (onnx/model.onnx); Lynx runs transformers through ONNX Runtime: use a repository that ships one, or pass the path of an .onnx file",
        NoWeights { dir: String } =>
            "model folder {dir} has neither model.safetensors (static) nor onnx/model.onnx (transformer)",
        CommittedPath { name: String } =>
            "model `{name}` is not a HuggingFace repo id (owner/name); a committed file may only name one",
        RelativeCache { name: String, cache: String } =>
            "model `{name}` would be looked up in a relative cache folder ({cache}); set HF_HOME or HF_HUB_CACHE to an absolute path",
        NotAModel { name: String } => "model `{name}` is neither an existing folder nor a HuggingFace repo id (owner/name)",
        NotCached { name: String, cache: String } =>
            "model `{name}` is not in the HuggingFace cache ({cache}); run `git lynx model pull {name}` (or `git lynx model import` on an air-gapped machine)",
        Offline { name: String } =>
            "model `{name}` is not cached and HF_HUB_OFFLINE is set; import it with `git lynx model import PATH`",
        #[cfg_attr(not(feature = "download"), allow(dead_code))]
        RecentlyUnreachable { ago: u64, reason: String, wait: u64, advice: String } =>
            "the model host was not reachable {ago} s ago ({reason}); not trying again for {wait} s. {advice}",
        #[cfg_attr(not(feature = "download"), allow(dead_code))]
        HostAnswered { endpoint: String, status: String, repo_id: String } =>
            "the model host {endpoint} answered {status} for {repo_id}",
        #[cfg_attr(not(feature = "download"), allow(dead_code))]
        Download { repo_id: String, reason: String, advice: String } => "could not download {repo_id}: {reason}. {advice}",
        #[cfg_attr(not(feature = "download"), allow(dead_code))]
        Timeout { repo_id: String, seconds: u64 } =>
            "downloading {repo_id} did not finish within {seconds} s (LYNX_DOWNLOAD_TIMEOUT); dense retrieval stays off until it does",
    }
}

pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// The HuggingFace hub cache directory.
pub fn hf_cache_dir() -> PathBuf {
    use crate::env;
    if let Some(p) = env::path(env::HF_HUB_CACHE) {
        return p;
    }
    if let Some(p) = env::path(env::HF_HOME) {
        return p.join("hub");
    }
    let base = env::path(env::XDG_CACHE_HOME)
        .unwrap_or_else(|| env::home().unwrap_or_else(|| PathBuf::from(".")).join(".cache"));
    base.join("huggingface").join("hub")
}

pub fn offline() -> bool {
    crate::env::flag(crate::env::HF_HUB_OFFLINE)
}

fn looks_like_repo_id(name: &str) -> bool {
    let parts: Vec<&str> = name.split('/').collect();
    parts.len() == 2 && parts.iter().all(|p| !p.is_empty() && !p.starts_with('.')) && !name.starts_with('/')
}

/// Classifies a local folder (and picks the ONNX file).
pub fn inspect_dir(name: &str, dir: &Path, onnx_file: Option<PathBuf>) -> Result<ModelFiles> {
    if !dir.join("tokenizer.json").exists() {
        return Err(ModelError::NoTokenizer { dir: dir.display().to_string() }.into());
    }
    let config: serde_json::Value = std::fs::read_to_string(dir.join("config.json"))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(serde_json::Value::Null);
    let onnx = onnx_file.or_else(|| ["onnx/model.onnx", "model.onnx"].iter().map(|f| dir.join(f)).find(|p| p.exists()));
    let is_cross = config["architectures"]
        .as_array()
        .is_some_and(|a| a.iter().any(|x| x.as_str().is_some_and(|s| s.ends_with("ForSequenceClassification"))));
    let kind = if is_static_config(&config) && dir.join("model.safetensors").exists() {
        ModelKind::Static
    } else if onnx.is_some() {
        if is_cross { ModelKind::CrossEncoder } else { ModelKind::Transformer }
    } else if let Some(t) = config["model_type"].as_str() {
        return Err(ModelError::NoOnnx { dir: dir.display().to_string(), t: t.to_string() }.into());
    } else {
        return Err(ModelError::NoWeights { dir: dir.display().to_string() }.into());
    };
    Ok(ModelFiles { name: name.to_string(), dir: dir.to_path_buf(), kind, onnx })
}

/// A model2vec (static) model's config: `model_type: model2vec`, or — as model2vec ≥ 0.6 writes
/// it (`{"normalize": …, "embedding_dtype": …}`) — no transformer `model_type` at all.
fn is_static_config(config: &serde_json::Value) -> bool {
    config["model_type"] == "model2vec" || (config.get("model_type").is_none() && config.get("architectures").is_none())
}

/// Resolves a model name or path to its files. `download` allows fetching missing files.
pub fn resolve(name: &str, download: bool, progress: bool) -> Result<ModelFiles> {
    resolve_as(name, Lookup::PathOrHub, download, progress)
}

/// What a model name may mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// A local folder or `.onnx` file when one exists there, else a hub id (the user's own
    /// choice: a flag, the environment, a trusted file).
    PathOrHub,
    /// Only a hub id, resolved in the user's cache: a name from a committed file, which must
    /// never select a folder the repository ships (whatever the current directory).
    HubOnly,
}

/// Resolves `name` as `lookup` allows.
pub fn resolve_as(name: &str, lookup: Lookup, download: bool, progress: bool) -> Result<ModelFiles> {
    if lookup == Lookup::HubOnly {
        if !crate::config::is_model_id(name) {
            return Err(ModelError::CommittedPath { name: name.to_string() }.into());
        }
        if hf_cache_dir().is_relative() {
            return Err(ModelError::RelativeCache {
                name: name.to_string(),
                cache: hf_cache_dir().display().to_string(),
            }
            .into());
        }
    }
    let p = Path::new(name);
    if lookup == Lookup::PathOrHub && p.exists() {
        if p.is_file() {
            // An .onnx file: its model folder is the parent (or grandparent for onnx/…).
            let parent = p.parent().context("model file has no folder")?;
            let dir = if parent.join("tokenizer.json").exists() { parent } else { parent.parent().unwrap_or(parent) };
            return inspect_dir(name, dir, Some(p.to_path_buf()));
        }
        return inspect_dir(name, p, None);
    }
    if !looks_like_repo_id(name) {
        return Err(ModelError::NotAModel { name: name.to_string() }.into());
    }
    if let Some(dir) = cached_snapshot(name)
        && let Ok(m) = inspect_dir(name, &dir, None)
        && complete(&m)
    {
        return Ok(m);
    }
    if !download {
        return Err(
            ModelError::NotCached { name: name.to_string(), cache: hf_cache_dir().display().to_string() }.into()
        );
    }
    if offline() {
        return Err(ModelError::Offline { name: name.to_string() }.into());
    }
    download_model(name, progress)
}

fn complete(m: &ModelFiles) -> bool {
    match m.kind {
        ModelKind::Static => m.dir.join("model.safetensors").exists(),
        _ => m.onnx.as_ref().is_some_and(|p| p.exists()),
    }
}

/// `models--owner--name/snapshots/<commit>` per `refs/main`, or the newest snapshot.
pub fn cached_snapshot(repo_id: &str) -> Option<PathBuf> {
    let base = hf_cache_dir().join(format!("models--{}", repo_id.replace('/', "--")));
    let snaps = base.join("snapshots");
    if let Ok(commit) = std::fs::read_to_string(base.join("refs").join("main")) {
        let d = snaps.join(commit.trim());
        if d.is_dir() {
            return Some(d);
        }
    }
    let rd = std::fs::read_dir(&snaps).ok()?;
    rd.flatten()
        .filter(|e| e.path().is_dir())
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
}

/// Downloads from the model host (`HF_ENDPOINT`), in builds with the `download` feature.
#[cfg(feature = "download")]
mod download {
    use super::*;

    /// How long the model host may take to accept a connection and to answer the first request
    /// (`LYNX_NET_TIMEOUT` seconds, default 30).
    const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

    fn answer_timeout() -> std::time::Duration {
        let secs = crate::env::number::<u64>(crate::env::LYNX_NET_TIMEOUT).filter(|&s| s > 0).unwrap_or(30);
        std::time::Duration::from_secs(secs)
    }

    fn download_timeout() -> std::time::Duration {
        let secs = crate::env::number::<u64>(crate::env::LYNX_DOWNLOAD_TIMEOUT).filter(|&s| s > 0).unwrap_or(900);
        std::time::Duration::from_secs(secs)
    }

    /// What went wrong reaching the model host, in a user's words.
    fn describe_failure(e: &ureq::Error, endpoint: &str) -> String {
        let host = endpoint.split("://").nth(1).unwrap_or(endpoint).split(['/', ':']).next().unwrap_or(endpoint);
        match e {
            ureq::Error::HostNotFound => format!("the name {host} could not be resolved (no network or no DNS)"),
            ureq::Error::ConnectionFailed => format!("the connection to {host} failed"),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                format!("{host} refused the connection")
            }
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                format!("{host} did not answer within {} s", answer_timeout().as_secs())
            }
            ureq::Error::Timeout(_) => format!("{host} did not answer within {} s", answer_timeout().as_secs()),
            other => format!("{host} could not be reached ({other})"),
        }
    }

    /// How long a failed attempt to reach a model host is remembered: `index` does not wait for
    /// the network again in the meantime.
    const FAILURE_MEMORY: std::time::Duration = std::time::Duration::from_secs(600);

    /// Where the last failure to reach each model host is remembered.
    fn failure_file(endpoint: &str) -> PathBuf {
        let key: String = endpoint.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        hf_cache_dir().join(".lynx-unreachable").join(key)
    }

    fn remembered_failure(endpoint: &str) -> Option<(String, u64)> {
        let path = failure_file(endpoint);
        let age = std::fs::metadata(&path).ok()?.modified().ok()?.elapsed().ok()?;
        if age >= FAILURE_MEMORY {
            return None;
        }
        let reason = std::fs::read_to_string(&path).ok()?;
        Some((reason.trim().to_string(), age.as_secs()))
    }

    /// The advice every failure to reach the host ends with.
    fn offline_advice(endpoint: &str) -> String {
        format!(
            "to work offline, import a model you have (`git lynx model import PATH`) or set `[model] name` in your own config to a local folder; to use a mirror, set HF_ENDPOINT (now {endpoint}); `--no-dense` indexes without a model"
        )
    }

    /// One small request with connect and answer timeouts, so a host that accepts connections but
    /// never answers fails in seconds instead of hanging `index`. A failure is remembered for
    /// FAILURE_MEMORY, so that the next commands fail at once, saying so.
    fn preflight(endpoint: &str, repo_id: &str) -> Result<()> {
        if let Some((reason, ago)) = remembered_failure(endpoint) {
            return Err(ModelError::RecentlyUnreachable {
                ago,
                reason: reason.to_string(),
                wait: FAILURE_MEMORY.as_secs().saturating_sub(ago),
                advice: offline_advice(endpoint),
            }
            .into());
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_connect(Some(CONNECT_TIMEOUT.min(answer_timeout())))
            .timeout_global(Some(answer_timeout()))
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}/{repo_id}/resolve/main/config.json", endpoint.trim_end_matches('/'));
        let mut req = agent.head(&url);
        if let Some(t) = crate::env::get(crate::env::HF_TOKEN) {
            req = req.header("Authorization", &format!("Bearer {t}"));
        }
        match req.call() {
            Ok(r) if r.status().as_u16() < 500 => {
                let _ = std::fs::remove_file(failure_file(endpoint));
                Ok(())
            }
            Ok(r) => Err(ModelError::HostAnswered {
                endpoint: endpoint.to_string(),
                status: r.status().to_string(),
                repo_id: repo_id.to_string(),
            }
            .into()),
            Err(e) => {
                let reason = describe_failure(&e, endpoint);
                let path = failure_file(endpoint);
                if path.parent().is_some_and(|d| std::fs::create_dir_all(d).is_ok()) {
                    let _ = crate::fsutil::write_atomic(&path, reason.as_bytes());
                }
                Err(ModelError::Download { repo_id: repo_id.to_string(), reason, advice: offline_advice(endpoint) }
                    .into())
            }
        }
    }

    /// Downloads the files an embedder needs into the HuggingFace cache, within bounded time:
    /// the host must answer a first request within seconds, and the whole download must finish
    /// within `LYNX_DOWNLOAD_TIMEOUT` (default 900 s).
    pub fn download_model(repo_id: &str, progress: bool) -> Result<ModelFiles> {
        let endpoint = crate::env::get(crate::env::HF_ENDPOINT).unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        preflight(&endpoint, repo_id)?;
        let (tx, rx) = std::sync::mpsc::channel();
        let id = repo_id.to_string();
        std::thread::spawn(move || {
            let _ = tx.send(download_files(&id, &endpoint, progress));
        });
        let limit = download_timeout();
        match rx.recv_timeout(limit) {
            Ok(r) => r,
            Err(_) => Err(ModelError::Timeout { repo_id: repo_id.to_string(), seconds: limit.as_secs() }.into()),
        }
    }

    fn download_files(repo_id: &str, endpoint: &str, progress: bool) -> Result<ModelFiles> {
        let endpoint = endpoint.to_string();
        let api = hf_hub::api::sync::ApiBuilder::from_cache(hf_hub::Cache::new(hf_cache_dir()))
            .with_endpoint(endpoint.clone())
            .with_progress(progress)
            .with_token(crate::env::get(crate::env::HF_TOKEN))
            .build()
            .context("setting up the HuggingFace client")?;
        let repo = api.model(repo_id.to_string());
        let fetch = |f: &str| repo.get(f);
        let config =
            fetch("config.json").with_context(|| format!("downloading {repo_id}/config.json from {endpoint}"))?;
        fetch("tokenizer.json").with_context(|| format!("downloading {repo_id}/tokenizer.json from {endpoint}"))?;
        let dir = config.parent().context("cache path")?.to_path_buf();
        let cfg: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config)?).unwrap_or_default();
        if is_static_config(&cfg) {
            fetch("model.safetensors").with_context(|| format!("downloading {repo_id}/model.safetensors"))?;
        } else {
            // Optional files first, then the ONNX export (onnx/model.onnx or model.onnx).
            for f in [
                "1_Pooling/config.json",
                "sentence_bert_config.json",
                "config_sentence_transformers.json",
                "special_tokens_map.json",
            ] {
                let _ = fetch(f);
            }
            if fetch("onnx/model.onnx").is_err() {
                fetch("model.onnx")
                    .with_context(|| format!("{repo_id} has no onnx/model.onnx or model.onnx to download"))?;
            }
        }
        inspect_dir(repo_id, &dir, None)
    }
}
#[cfg(feature = "download")]
pub use download::download_model;

/// Without the `download` feature a model comes from a folder or the HuggingFace cache only.
#[cfg(not(feature = "download"))]
pub fn download_model(_repo_id: &str, _progress: bool) -> Result<ModelFiles> {
    Err(crate::error::without("download", "model downloads (`git lynx model import` brings one in offline)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_ids_and_cache_layout() {
        assert!(looks_like_repo_id("BAAI/bge-small-en-v1.5"));
        assert!(!looks_like_repo_id("/abs/path"));
        assert!(!looks_like_repo_id("just-a-name"));
    }
}
