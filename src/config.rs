//! Settings: built-in defaults, then the committed team file `lynx.toml` at the repository
//! root, then the local `.lynx/config.toml` (local wins), then environment variables and
//! command-line flags (applied by the caller).

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub index: IndexConfig,
    pub model: ModelConfig,
    pub search: SearchConfig,
    pub tools: ToolsConfig,
    pub watch: WatchConfig,
    #[serde(rename = "sources")]
    pub sources: Vec<SourceConfig>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// Files larger than this many bytes are skipped.
    pub max_file_size: u64,
    /// Extra glob patterns (gitignore-like, matched against repository paths) to leave out.
    pub exclude: Vec<String>,
    /// Extract code-graph facts (calls, bases, imports) while indexing.
    pub graph: bool,
    /// Source megabytes processed before their segments are written.
    pub batch_mb: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// Embedding model: a HuggingFace repo id or a local folder.
    pub name: String,
    /// Turns the dense layer off entirely.
    pub dense: bool,
    /// Path to ONNX Runtime's shared library (else ORT_DYLIB_PATH, then a probe).
    pub ort_dylib: Option<String>,
    /// Cross-encoder used by `--rerank`.
    pub reranker: String,
    /// Threads for ONNX Runtime (0 = all cores).
    pub threads: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    pub mode: String,
    pub k: usize,
    /// Candidates taken from each retriever before fusion.
    pub pool: usize,
    /// The dense list's weight in the fusion (the BM25 list's is 1).
    pub dense_weight: f32,
    /// Share of a file's other best hit added to each of its hits (0 = off).
    pub file_evidence: f32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    pub profile: String,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WatchConfig {
    pub debounce_ms: u64,
}

/// An extra source beside the repository: another folder or repository.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SourceConfig {
    pub name: String,
    pub path: String,
    /// Only files with these extensions (empty: all).
    pub extensions: Vec<String>,
    /// Glob patterns to leave out.
    pub ignore: Vec<String>,
    pub graph: bool,
    pub description: String,
}

impl Default for SourceConfig {
    fn default() -> Self {
        SourceConfig { name: String::new(), path: String::new(), extensions: Vec::new(), ignore: Vec::new(), graph: true, description: String::new() }
    }
}

/// The default model for real users: a static code embedding model (no ONNX Runtime needed).
pub const DEFAULT_MODEL: &str = "minishlab/potion-code-16M";
/// Measured best on the evaluation sets with the models at hand (docs/EVALUATION.md).
pub const DEFAULT_DENSE_WEIGHT: f32 = 0.3;
/// Measured on a plateau from 0.15 to 0.4 on the evaluation sets (docs/EVALUATION.md).
pub const DEFAULT_FILE_EVIDENCE: f32 = 0.25;
pub const DEFAULT_RERANKER: &str = "cross-encoder/ms-marco-MiniLM-L-6-v2";

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig { max_file_size: 1024 * 1024, exclude: Vec::new(), graph: true, batch_mb: 32 }
    }
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig { name: DEFAULT_MODEL.into(), dense: true, ort_dylib: None, reranker: DEFAULT_RERANKER.into(), threads: 0 }
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig { mode: "hybrid".into(), k: 10, pool: 30, dense_weight: DEFAULT_DENSE_WEIGHT, file_evidence: DEFAULT_FILE_EVIDENCE }
    }
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig { profile: "standard".into(), include: Vec::new(), exclude: Vec::new() }
    }
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig { debounce_ms: 500 }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            index: IndexConfig::default(),
            model: ModelConfig::default(),
            search: SearchConfig::default(),
            tools: ToolsConfig::default(),
            watch: WatchConfig::default(),
            sources: Vec::new(),
        }
    }
}

pub const TEAM_FILE: &str = "lynx.toml";
pub const LOCAL_FILE: &str = "config.toml";

impl Config {
    /// Loads `lynx.toml` (at `repo_root`) and `.lynx/config.toml` (in `lynx_dir`), local wins
    /// key by key.
    pub fn load(repo_root: Option<&Path>, lynx_dir: &Path) -> Result<Config> {
        let mut merged = toml::Table::new();
        if let Some(root) = repo_root {
            merge_file(&mut merged, &root.join(TEAM_FILE))?;
        }
        merge_file(&mut merged, &lynx_dir.join(LOCAL_FILE))?;
        let cfg: Config = toml::Value::Table(merged)
            .try_into()
            .context("invalid Lynx configuration (see docs/CONFIG.md for the keys)")?;
        let w = cfg.search.dense_weight;
        if !(w.is_finite() && w >= 0.0) {
            return Err(crate::error::usage(format!("search.dense_weight must be a number ≥ 0 (got {w}); 0 turns the dense list's vote off")));
        }
        if cfg.index.batch_mb == 0 {
            return Err(crate::error::usage("index.batch_mb must be at least 1 (megabytes of source per write)"));
        }
        let e = cfg.search.file_evidence;
        if !(e.is_finite() && (0.0..=1.0).contains(&e)) {
            return Err(crate::error::usage(format!(
                "search.file_evidence must be a number from 0 to 1 (got {e}); 0 ranks every hit on its own"
            )));
        }
        Ok(cfg)
    }
}

fn merge_file(into: &mut toml::Table, path: &Path) -> Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let table: toml::Table = text.parse().with_context(|| format!("{} is not valid TOML", path.display()))?;
    merge_tables(into, table);
    Ok(())
}

fn merge_tables(into: &mut toml::Table, from: toml::Table) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge_tables(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_overrides_team_key_by_key() {
        let root = tempfile::tempdir().unwrap();
        let lynx = root.path().join(".lynx");
        std::fs::create_dir_all(&lynx).unwrap();
        std::fs::write(root.path().join(TEAM_FILE), "[index]\nmax_file_size = 10\nexclude = ['a/**']\n[search]\nk = 3\n").unwrap();
        std::fs::write(lynx.join(LOCAL_FILE), "[index]\nmax_file_size = 20\n").unwrap();
        let c = Config::load(Some(root.path()), &lynx).unwrap();
        assert_eq!(c.index.max_file_size, 20);
        assert_eq!(c.index.exclude, ["a/**"]);
        assert_eq!(c.search.k, 3);
        assert_eq!(c.search.mode, "hybrid");
        std::fs::write(lynx.join(LOCAL_FILE), "[index]\nmax_size = 20\n").unwrap();
        let err = format!("{:#}", Config::load(Some(root.path()), &lynx).unwrap_err());
        assert!(err.contains("max_size"), "{err}");
    }
}
