//! Settings: built-in defaults, then the user's own file (`~/.config/lynx/config.toml`), then
//! the committed team file `lynx.toml` at the repository root, then the local
//! `.lynx/config.toml` (local wins), then environment variables and command-line flags
//! (applied by the caller).
//!
//! The team file arrives with the repository, so it is untrusted input (docs/SECURITY.md): it
//! may tune ranking, exclusions and tools, but the keys that load native code, reach outside
//! the repository or choose what is downloaded are dropped from it with a warning.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

crate::error::errors! {
    /// What is wrong with a configuration file, a setting's value or a name given for one.
    pub enum ConfigError: Usage {
        /// A file that does not parse as TOML.
        NotToml { path: String, why: String } => "{path} is not valid TOML: {why}",
        /// Keys or values the settings do not have.
        Invalid { why: String } => "invalid Lynx configuration: {why} (see docs/CONFIG.md for the keys)",
        /// A value outside its setting's range: `rule` says the range and what was given.
        Setting { key: String, rule: String } => "{key} must be {rule}",
        ConvexWeight { got: f32 } =>
            "search.dense_weight is the dense share of a convex combination and must be from 0 to 1 (got {got}); use search.fusion = \"rrf\" for a rank-fusion weight",
        UnknownProfile { given: String } => "unknown tool profile `{given}`: use core, standard or full",
        UnknownMode { given: String } => "unknown search mode `{given}`: use hybrid, dense or sparse",
        SourceName { name: String } => "invalid source name `{name}`: use 1-64 letters, digits, `-`, `_` or `.`",
    }
}

fn setting(key: impl Into<String>, rule: impl Into<String>) -> anyhow::Error {
    ConfigError::Setting { key: key.into(), rule: rule.into() }.into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[derive(Default)]
pub struct Config {
    pub index: IndexConfig,
    pub model: ModelConfig,
    pub search: SearchConfig,
    pub tools: ToolsConfig,
    pub watch: WatchConfig,
    pub serve: ServeConfig,
    pub store: StoreConfig,
    pub docs: DocsConfig,
    #[serde(rename = "sources")]
    pub sources: Vec<SourceConfig>,
    /// What the committed team file asked for and was refused (shown once, and by `doctor`).
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// Where the settings that decide what may be downloaded came from.
    #[serde(skip)]
    pub origin: Origin,
}

/// Which settings came from the committed team file: a model named only there is used when it
/// is already on this machine, and never downloaded on the repository's say-so.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    pub model_from_team: bool,
    /// Some configuration file names the model (else the default applies).
    pub model_configured: bool,
    pub reranker_from_team: bool,
    /// The tool settings of the user's own files alone (no committed file): a tool that writes
    /// is listed only when these, or a flag, would list it.
    pub trusted_tools: ToolsConfig,
    /// The file each set key came from (dotted path, e.g. `search.k`; the last file that sets
    /// it wins); a key no file sets has its default.
    pub keys: std::collections::BTreeMap<String, Layer>,
}

/// A configuration file, in the order they apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// `~/.config/lynx/config.toml` (see `user_file`).
    User,
    /// The committed `lynx.toml`.
    Team,
    /// `.lynx/config.toml`.
    Local,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::User => "user file",
            Layer::Team => TEAM_FILE,
            Layer::Local => ".lynx/config.toml",
        }
    }
}

/// One effective setting and where its value came from.
#[derive(Debug, Clone, Serialize)]
pub struct Setting {
    pub key: String,
    pub value: serde_json::Value,
    /// `default`, or the file that set it (`Layer::name`).
    pub from: &'static str,
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

/// How hybrid search combines its two candidate lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// Normalised scores, combined (`dense_weight` is the dense share).
    Convex,
    /// Reciprocal Rank Fusion (`dense_weight` weighs the dense list against BM25's 1).
    Rrf,
}

impl Fusion {
    pub fn name(self) -> &'static str {
        match self {
            Fusion::Convex => "convex",
            Fusion::Rrf => "rrf",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    pub mode: SearchMode,
    pub k: usize,
    /// Candidates taken from each retriever before fusion.
    pub pool: usize,
    /// The dense side's share of the fused score (convex), or the dense list's weight against
    /// the BM25 list's 1 (rrf).
    pub dense_weight: f32,
    /// Share of a file's other best hit added to each of its hits (0 = off).
    pub file_evidence: f32,
    /// Weight of the history field (subjects of the commits that changed a file) in BM25; 0 = off.
    pub history: f32,
    /// Prior for files changed recently (before the view's revision): a hit's score is
    /// multiplied by 1 + recency × 2^(−commits since its file changed / recency_half_life).
    pub recency: f32,
    pub recency_half_life: f32,
    /// Commits reachable from the view's revision looked at for the history field.
    pub history_commits: usize,
    /// Subjects kept per file (the most recent).
    pub history_per_file: usize,
    /// Reciprocal Rank Fusion constant.
    pub rrf_k: f32,
    /// Candidates the dense retriever contributes (0: as many as `pool`).
    pub dense_pool: usize,
    pub fusion: Fusion,
    /// Score multipliers of test files, prose and data, and secondary code (build output,
    /// examples, benchmarks) when the query is not about them.
    pub test_factor: f32,
    pub prose_factor: f32,
    pub secondary_factor: f32,
    /// Vendored and third-party trees (`vendor/`, `third_party/`, `node_modules/`…) unless the
    /// query is about dependencies.
    pub vendor_factor: f32,
    /// A chunk of a file whose name (without extension) is a word of the query.
    pub stem_factor: f32,
    /// A chunk of a file under the scope a commit-subject-style query names (`io: …`,
    /// `fix(router): …`).
    pub scope_factor: f32,
    /// Each further chunk of a file already listed is multiplied by this once more (1 = off).
    pub chunk_decay: f32,
    /// Shares of the best candidate's score added to a chunk defining a symbol the query names,
    /// to chunks of files whose path holds the query's words, and to a file's best chunk for
    /// the weight of its other candidates (0 = off; `search::rank::Boosts`).
    pub definition_boost: f32,
    pub path_boost: f32,
    pub coherence: f32,
    /// Drop the words questions are phrased with ("what happens when…") from questions.
    pub question_words: bool,
    /// Weight of English inflections of query words (`retries` → `retry`); 0 = off.
    pub variants: f32,
    /// A file of synonym groups, relative to the repository root (default
    /// `.lynx/synonyms.txt` when it exists).
    pub synonyms: String,
    /// Rerank every search with the cross-encoder (`model.reranker`) unless asked otherwise.
    pub rerank: bool,
    /// Strong hits a deep_search variant needs to be accepted.
    pub deep_min_results: usize,
    /// What makes a deep_search hit strong: BM25 per distinct query term, or cosine (static
    /// models run higher than transformers).
    pub deep_sparse_per_term: f32,
    pub deep_dense_static: f32,
    pub deep_dense_transformer: f32,
}

/// deep_search strength bars, calibrated in docs/EVALUATION.md: a hit is strong when one
/// retriever is confident about it on its own scale. BM25 adds up over the query's terms, so the
/// bar is per distinct term (on commit-subject questions of four repositories, hit@1 0.65 above
/// 3.5 against 0.27 below); static models' cosines run higher than transformers'.
pub const DEFAULT_DEEP_SPARSE_PER_TERM: f32 = 3.5;
pub const DEFAULT_DEEP_DENSE_STATIC: f32 = 0.62;
pub const DEFAULT_DEEP_DENSE_TRANSFORMER: f32 = 0.45;

/// Which MCP tools a server lists: each profile includes the smaller ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ToolProfile {
    Core,
    Standard,
    #[serde(alias = "all")]
    #[value(alias = "all")]
    Full,
}

impl ToolProfile {
    pub fn parse(s: &str) -> Result<ToolProfile> {
        <ToolProfile as clap::ValueEnum>::from_str(s.trim(), true)
            .map_err(|_| ConfigError::UnknownProfile { given: s.to_string() }.into())
    }

    pub fn name(self) -> &'static str {
        match self {
            ToolProfile::Core => "core",
            ToolProfile::Standard => "standard",
            ToolProfile::Full => "full",
        }
    }
}

impl std::fmt::Display for ToolProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    pub profile: ToolProfile,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

/// Which extra object directories (alternates) are trusted: their objects are used as they are.
/// Objects of any other alternate are checked against their blobs and copied into the local
/// store before use (docs/SECURITY.md). Only the user's own configuration may set this.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    pub trusted: Vec<String>,
    /// A shared object store (`s3://bucket/prefix`, `file:///dir`, `https://…` read-only) that
    /// `index` downloads segments from and `push --objects` uploads to (`store::remote`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objects_url: Option<String>,
}

/// What reading one documentation file may use. Only the user's own configuration may set
/// these: a committed file could otherwise raise them for the files it brings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DocsConfig {
    /// Memory (MiB of address space) the extraction of one PDF may add.
    pub pdf_memory_mb: u64,
    /// Seconds the extraction of one PDF may take before it is stopped.
    pub pdf_timeout_seconds: f64,
}

pub const DEFAULT_PDF_MEMORY_MB: u64 = 1024;
pub const DEFAULT_PDF_TIMEOUT_SECONDS: f64 = 120.0;

impl Default for DocsConfig {
    fn default() -> Self {
        DocsConfig { pdf_memory_mb: DEFAULT_PDF_MEMORY_MB, pdf_timeout_seconds: DEFAULT_PDF_TIMEOUT_SECONDS }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WatchConfig {
    pub debounce_ms: u64,
    /// Most folders a file watcher watches (one inotify watch each): a larger working tree is
    /// not watched, and every question lists it itself.
    pub max_dirs: usize,
}

/// What `serve` reads of one request and what a workspace server holds. Only the user's own
/// configuration may set it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// Largest request line (MiB) `serve` reads; a longer one is refused unread (env
    /// `LYNX_MAX_REQUEST_MB` wins).
    pub max_request_mb: u64,
    /// Resident memory (MiB) above which a server answering from several repositories (a
    /// workspace) lets go of the least recently asked ones' views; 0: no bound.
    pub max_memory_mb: u64,
    /// Seconds after which a repository nobody asked about has its views let go (they are
    /// opened again from the store by the next question about it); 0: never.
    pub release_idle_s: u64,
}

pub const DEFAULT_MAX_REQUEST_MB: u64 = 16;
pub const DEFAULT_RELEASE_IDLE_S: u64 = 600;
pub const MAX_REQUEST_MB: u64 = 1024;

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig { max_request_mb: DEFAULT_MAX_REQUEST_MB, max_memory_mb: 0, release_idle_s: DEFAULT_RELEASE_IDLE_S }
    }
}

/// A string or a list of strings.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

/// What a source is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceType {
    /// Another folder or git repository on this machine.
    #[default]
    #[serde(alias = "codebase")]
    Folder,
    /// A documentation site, crawled into snapshots (`update-source-index` re-crawls).
    Webdoc,
    /// PDF files (one file or a folder), extracted page by page into snapshots.
    Pdf,
}

impl SourceType {
    pub fn name(self) -> &'static str {
        match self {
            SourceType::Folder => "folder",
            SourceType::Webdoc => "webdoc",
            SourceType::Pdf => "pdf",
        }
    }

    fn is_folder(&self) -> bool {
        *self == SourceType::Folder
    }
}

/// An extra source beside the repository: another folder or repository, a documentation site,
/// or PDFs. The crawl settings keep LynxMCP's names.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SourceConfig {
    pub name: String,
    #[serde(rename = "type", skip_serializing_if = "SourceType::is_folder")]
    pub kind: SourceType,
    /// A folder or repository; for `pdf`, a PDF file or a folder of them.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// Only files with these extensions (empty: all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Glob patterns to leave out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
    pub graph: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Named by the committed `lynx.toml`: its description is the repository's words, shown
    /// only as quoted data, never as the tool's own.
    #[serde(skip)]
    pub committed: bool,
    /// `webdoc`: the start URL(s); the crawl stays on their host, under their folder.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "one_or_many")]
    pub url: Vec<String>,
    /// `webdoc`: the path prefix the crawl stays under (default: the start URL's folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_pages: Option<usize>,
    /// `webdoc`: a URL must contain one of these (empty: any).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include_url_patterns: Vec<String>,
    /// `webdoc`: URLs containing any of these are not fetched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude_url_patterns: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_delay_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// `webdoc`: a request that has not finished by then fails (default 20 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_timeout_seconds: Option<f64>,
    /// `webdoc`: follow URLs with a query string (off: they are where crawl traps live).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keep_query: bool,
    /// `webdoc`: render each page in headless Chromium first (JavaScript-built sites).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub render_js: bool,
    /// `pdf`: files larger than this are skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_file_mb: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_pages_per_file: Option<usize>,
}

impl Default for SourceConfig {
    fn default() -> Self {
        SourceConfig {
            name: String::new(),
            kind: SourceType::Folder,
            path: String::new(),
            extensions: Vec::new(),
            ignore: Vec::new(),
            graph: true,
            description: String::new(),
            committed: false,
            url: Vec::new(),
            url_prefix: None,
            max_depth: None,
            max_pages: None,
            include_url_patterns: Vec::new(),
            exclude_url_patterns: Vec::new(),
            request_delay_seconds: None,
            user_agent: None,
            request_timeout_seconds: None,
            keep_query: false,
            render_js: false,
            max_file_mb: None,
            max_pages_per_file: None,
        }
    }
}

/// The default model for real users: a static code embedding model (no ONNX Runtime needed).
pub const DEFAULT_MODEL: &str = "minishlab/potion-code-16M";
/// Measured best on the evaluation sets with the models at hand (docs/EVALUATION.md).
pub const DEFAULT_DENSE_WEIGHT: f32 = 0.4;
/// Reciprocal Rank Fusion constant (LynxMCP's and the literature's default).
pub const DEFAULT_RRF_K: f32 = 60.0;
/// Measured on a plateau from 0.15 to 0.4 on the evaluation sets (docs/EVALUATION.md).
pub const DEFAULT_FILE_EVIDENCE: f32 = 0.25;
/// Ranking priors (docs/EVALUATION.md): test files, prose and data, secondary code.
pub const DEFAULT_TEST_FACTOR: f32 = 0.5;
pub const DEFAULT_PROSE_FACTOR: f32 = 0.3;
pub const DEFAULT_SECONDARY_FACTOR: f32 = 0.5;
/// Measured on repositories held out from tuning (docs/EVALUATION.md, round 3).
pub const DEFAULT_VENDOR_FACTOR: f32 = 0.5;
pub const DEFAULT_STEM_FACTOR: f32 = 1.1;
pub const DEFAULT_SCOPE_FACTOR: f32 = 1.5;
pub const DEFAULT_CHUNK_DECAY: f32 = 0.5;
pub const DEFAULT_DEFINITION_BOOST: f32 = 0.0;
pub const DEFAULT_PATH_BOOST: f32 = 0.0;
pub const DEFAULT_COHERENCE: f32 = 0.2;

/// How search retrieves: BM25 and dense fused, dense alone, or BM25 alone. Parsed once, where
/// it is read (configuration, `--mode`, an MCP argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    Hybrid,
    Dense,
    #[serde(alias = "bm25", alias = "lexical")]
    #[value(alias = "bm25", alias = "lexical")]
    Sparse,
}

impl SearchMode {
    pub fn parse(s: &str) -> Result<SearchMode> {
        match s {
            "hybrid" => Ok(SearchMode::Hybrid),
            "dense" => Ok(SearchMode::Dense),
            "sparse" | "bm25" | "lexical" => Ok(SearchMode::Sparse),
            other => Err(ConfigError::UnknownMode { given: other.to_string() }.into()),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SearchMode::Hybrid => "hybrid",
            SearchMode::Dense => "dense",
            SearchMode::Sparse => "sparse",
        }
    }
}

pub const DEFAULT_DENSE_POOL: usize = 100;
/// Weight of English inflections of query words.
pub const DEFAULT_VARIANTS: f32 = 0.6;
/// Weight of the history field in BM25.
pub const DEFAULT_HISTORY: f32 = 0.5;
/// Weight of the recent-change prior.
pub const DEFAULT_RECENCY: f32 = 0.0;
pub const DEFAULT_RERANKER: &str = "cross-encoder/ms-marco-MiniLM-L-6-v2";

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig { max_file_size: 1024 * 1024, exclude: Vec::new(), graph: true, batch_mb: 32 }
    }
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            name: DEFAULT_MODEL.into(),
            dense: true,
            ort_dylib: None,
            reranker: DEFAULT_RERANKER.into(),
            threads: 0,
        }
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            mode: SearchMode::Hybrid,
            k: 10,
            pool: 30,
            dense_weight: DEFAULT_DENSE_WEIGHT,
            file_evidence: DEFAULT_FILE_EVIDENCE,
            history: DEFAULT_HISTORY,
            recency: DEFAULT_RECENCY,
            recency_half_life: 50.0,
            history_commits: 1000,
            history_per_file: 10,
            rrf_k: DEFAULT_RRF_K,
            dense_pool: DEFAULT_DENSE_POOL,
            fusion: Fusion::Convex,
            question_words: false,
            variants: DEFAULT_VARIANTS,
            synonyms: String::new(),
            test_factor: DEFAULT_TEST_FACTOR,
            prose_factor: DEFAULT_PROSE_FACTOR,
            secondary_factor: DEFAULT_SECONDARY_FACTOR,
            vendor_factor: DEFAULT_VENDOR_FACTOR,
            stem_factor: DEFAULT_STEM_FACTOR,
            scope_factor: DEFAULT_SCOPE_FACTOR,
            chunk_decay: DEFAULT_CHUNK_DECAY,
            definition_boost: DEFAULT_DEFINITION_BOOST,
            path_boost: DEFAULT_PATH_BOOST,
            coherence: DEFAULT_COHERENCE,
            rerank: false,
            deep_min_results: 2,
            deep_sparse_per_term: DEFAULT_DEEP_SPARSE_PER_TERM,
            deep_dense_static: DEFAULT_DEEP_DENSE_STATIC,
            deep_dense_transformer: DEFAULT_DEEP_DENSE_TRANSFORMER,
        }
    }
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig { profile: ToolProfile::Standard, include: Vec::new(), exclude: Vec::new() }
    }
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig { debounce_ms: 500, max_dirs: DEFAULT_WATCH_DIRS }
    }
}

pub const TEAM_FILE: &str = "lynx.toml";
pub const LOCAL_FILE: &str = "config.toml";

/// The user's own configuration file, trusted like the local one: `LYNX_CONFIG_HOME`, else
/// `XDG_CONFIG_HOME/lynx`, else `~/.config/lynx`.
pub fn user_file() -> Option<PathBuf> {
    use crate::env;
    let dir = env::path(env::LYNX_CONFIG_HOME)
        .or_else(|| env::path(env::XDG_CONFIG_HOME).map(|x| x.join("lynx")))
        .or_else(|| env::home().map(|h| h.join(".config").join("lynx")))?;
    Some(dir.join("config.toml"))
}

/// Largest accepted `search.k` and `search.pool`: beyond this an answer is no longer a reading
/// list, and a huge value must not become a huge allocation.
pub const MAX_K: usize = 1000;
pub const MAX_POOL: usize = 10_000;
/// Largest accepted `index.max_file_size` (bytes) and `index.batch_mb`, wherever they come
/// from: indexing memory grows with both.
pub const MAX_FILE_SIZE: u64 = 16 * 1024 * 1024;
pub const MAX_BATCH_MB: u64 = 512;
/// Folders a file watcher watches by default, and the most `watch.max_dirs` may allow (each
/// watch is kernel memory, and the system's own limit is shared by every process).
pub const DEFAULT_WATCH_DIRS: usize = 50_000;
pub const MAX_WATCH_DIRS: usize = 1_000_000;

impl Config {
    /// Loads the user's file, `lynx.toml` (at `repo_root`, with its user-only keys dropped) and
    /// `.lynx/config.toml` (in `lynx_dir`), later files winning key by key.
    pub fn load(repo_root: Option<&Path>, lynx_dir: &Path) -> Result<Config> {
        let user = match user_file() {
            Some(p) => read_table(&p)?,
            None => None,
        };
        let local = read_table(&lynx_dir.join(LOCAL_FILE))?;
        let mut warnings = Vec::new();
        let mut team = match repo_root {
            Some(root) => read_table(&root.join(TEAM_FILE))?,
            None => None,
        };
        if let (Some(t), Some(root)) = (team.as_mut(), repo_root) {
            warnings = restrict_team_table(t, root);
        }
        // A committed value that is not valid is dropped, never an error: the repository may
        // tune Lynx but not switch it off. The same value in a trusted file stays an error.
        let mut ignored = match team.as_mut() {
            Some(t) => drop_invalid_team_keys(t),
            None => Vec::new(),
        };
        loop {
            let cfg = assemble(&user, &team, &local)?;
            let Err(bad) = validate(&cfg) else {
                return Ok(finish(cfg, warnings, ignored));
            };
            let from_team: Vec<&str> =
                bad.keys.iter().copied().filter(|k| cfg.origin.keys.get(*k) == Some(&Layer::Team)).collect();
            let Some(t) = team.as_mut().filter(|_| !from_team.is_empty()) else {
                return Err(bad.error);
            };
            for key in from_team {
                let path: Vec<String> = key.split('.').map(str::to_string).collect();
                if let Some(v) = remove_path(t, &path) {
                    ignored.push(Ignored { path, value: v, why: one_line(&bad.error) });
                }
            }
        }
    }
}

/// A committed value dropped because it is not valid, and why.
struct Ignored {
    path: Vec<String>,
    value: toml::Value,
    why: String,
}

/// A failed check: the message and the settings that together make it fail.
struct Invalid {
    keys: Vec<&'static str>,
    error: anyhow::Error,
}

/// Merges the files (user, team, local; later wins key by key) into settings and records where
/// each came from. Values are not checked here (`validate`).
fn assemble(user: &Option<toml::Table>, team: &Option<toml::Table>, local: &Option<toml::Table>) -> Result<Config> {
    let sets = |t: &Option<toml::Table>, key: &str| {
        t.as_ref().and_then(|t| t.get("model")).and_then(|m| m.as_table()).is_some_and(|m| m.contains_key(key))
    };
    let mut keys = std::collections::BTreeMap::new();
    for (layer, t) in [(Layer::User, user), (Layer::Team, team), (Layer::Local, local)] {
        if let Some(t) = t {
            set_keys(t, "", layer, &mut keys);
        }
    }
    let origin = Origin {
        keys,
        model_from_team: sets(team, "name") && !sets(user, "name") && !sets(local, "name"),
        model_configured: sets(team, "name") || sets(user, "name") || sets(local, "name"),
        reranker_from_team: sets(team, "reranker") && !sets(user, "reranker") && !sets(local, "reranker"),
        trusted_tools: trusted_tools(user, local)?,
    };
    let sources_from_team = team.as_ref().is_some_and(|t| t.contains_key("sources"))
        && !local.as_ref().is_some_and(|t| t.contains_key("sources"));
    let mut merged = toml::Table::new();
    for t in [user, team, local].into_iter().flatten() {
        merge_tables(&mut merged, t.clone());
    }
    let mut cfg: Config =
        toml::Value::Table(merged).try_into().map_err(|e| ConfigError::Invalid { why: e.to_string() })?;
    cfg.origin = origin;
    for s in &mut cfg.sources {
        s.committed = sources_from_team;
    }
    Ok(cfg)
}

/// Logs and records the team file's warnings, each ignored value naming the value used instead.
fn finish(mut cfg: Config, mut warnings: Vec<String>, ignored: Vec<Ignored>) -> Config {
    let effective = serde_json::to_value(&cfg).unwrap_or_default();
    for i in ignored {
        let key = i.path.join(".");
        let mut shown = i.value.to_string();
        if shown.chars().count() > 60 {
            shown = format!("{}…", shown.chars().take(60).collect::<String>());
        }
        let used = match i.path.iter().try_fold(&effective, |v, k| v.get(k)) {
            Some(v) => {
                let from = cfg.origin.keys.get(&key).map_or("the default", |l| l.name());
                // Settings that are f32 show as such (0.4, not 0.4000000059604645).
                let v = match v.as_f64() {
                    Some(f) if v.is_f64() && (f as f32) as f64 == f => (f as f32).to_string(),
                    _ => v.to_string(),
                };
                format!("; using {v} ({from})")
            }
            None => String::new(),
        };
        warnings.push(format!("{TEAM_FILE}: `{key} = {shown}` is ignored: {}{used}", i.why));
    }
    for w in &warnings {
        warn_once(w);
    }
    cfg.warnings = warnings;
    cfg
}

/// An error's message on one line (a warning is one line).
fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Drops each value of the committed file that is not valid on its own (wrong type, unknown
/// key, out of range), checking it alone over the defaults.
fn drop_invalid_team_keys(team: &mut toml::Table) -> Vec<Ignored> {
    let mut leaves = Vec::new();
    leaf_paths(team, &mut Vec::new(), &mut leaves);
    let mut ignored = Vec::new();
    for path in leaves {
        let Some(value) = get_path(team, &path).cloned() else { continue };
        let mut alone = toml::Table::new();
        insert_path(&mut alone, &path, value);
        let checked = toml::Value::Table(alone)
            .try_into::<Config>()
            .map_err(|e| ConfigError::Invalid { why: e.to_string() }.into())
            .and_then(|c| validate(&c).map_err(|bad| bad.error));
        if let Err(e) = checked
            && let Some(value) = remove_path(team, &path)
        {
            ignored.push(Ignored { path, value, why: one_line(&e) });
        }
    }
    ignored
}

/// The path of every value in `t` that is not a table, and of every empty table.
fn leaf_paths(t: &toml::Table, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if t.is_empty() && !prefix.is_empty() {
        out.push(prefix.clone());
    }
    for (k, v) in t {
        prefix.push(k.clone());
        match v {
            toml::Value::Table(inner) => leaf_paths(inner, prefix, out),
            _ => out.push(prefix.clone()),
        }
        prefix.pop();
    }
}

fn get_path<'a>(t: &'a toml::Table, path: &[String]) -> Option<&'a toml::Value> {
    let (last, parents) = path.split_last()?;
    let mut t = t;
    for k in parents {
        t = t.get(k)?.as_table()?;
    }
    t.get(last)
}

fn insert_path(t: &mut toml::Table, path: &[String], value: toml::Value) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut t = t;
    for k in parents {
        let entry = t.entry(k.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let toml::Value::Table(inner) = entry else { return };
        t = inner;
    }
    t.insert(last.clone(), value);
}

/// Removes the value at `path`, and the tables it leaves empty (an empty unknown table would
/// still be an unknown key).
fn remove_path(t: &mut toml::Table, path: &[String]) -> Option<toml::Value> {
    let (first, rest) = path.split_first()?;
    if rest.is_empty() {
        return t.remove(first);
    }
    let inner = t.get_mut(first)?.as_table_mut()?;
    let v = remove_path(inner, rest);
    if inner.is_empty() {
        t.remove(first);
    }
    v
}

/// Checks every value against its range, wherever it came from.
fn validate(cfg: &Config) -> std::result::Result<(), Invalid> {
    let fail = |keys: &[&'static str], error: anyhow::Error| Err(Invalid { keys: keys.to_vec(), error });
    let w = cfg.search.dense_weight;
    if !(w.is_finite() && w >= 0.0) {
        return fail(
            &["search.dense_weight"],
            setting("search.dense_weight", format!("a number ≥ 0 (got {w}); 0 turns the dense list's vote off")),
        );
    }
    if !(1..=MAX_BATCH_MB).contains(&cfg.index.batch_mb) {
        return fail(
            &["index.batch_mb"],
            setting(
                "index.batch_mb",
                format!("from 1 to {MAX_BATCH_MB} (megabytes of source per write; got {})", cfg.index.batch_mb),
            ),
        );
    }
    if cfg.index.max_file_size > MAX_FILE_SIZE {
        return fail(
            &["index.max_file_size"],
            setting(
                "index.max_file_size",
                format!(
                    "at most {MAX_FILE_SIZE} bytes (16 MiB; got {}): larger files are data, not code, and one would take gigabytes to index",
                    cfg.index.max_file_size
                ),
            ),
        );
    }
    let e = cfg.search.file_evidence;
    if !(e.is_finite() && (0.0..=1.0).contains(&e)) {
        return fail(
            &["search.file_evidence"],
            setting("search.file_evidence", format!("a number from 0 to 1 (got {e}); 0 ranks every hit on its own")),
        );
    }
    if cfg.search.fusion == Fusion::Convex && w > 1.0 {
        return fail(&["search.dense_weight", "search.fusion"], ConfigError::ConvexWeight { got: w }.into());
    }
    for (key, v) in [
        ("search.definition_boost", cfg.search.definition_boost),
        ("search.path_boost", cfg.search.path_boost),
        ("search.coherence", cfg.search.coherence),
    ] {
        if !(v.is_finite() && (0.0..=10.0).contains(&v)) {
            return fail(
                &[key],
                setting(
                    key,
                    format!("a number from 0 to 10 (a share of the best candidate's score; got {v}); 0 turns it off"),
                ),
            );
        }
    }
    for (key, v) in [
        ("search.deep_sparse_per_term", cfg.search.deep_sparse_per_term),
        ("search.deep_dense_static", cfg.search.deep_dense_static),
        ("search.deep_dense_transformer", cfg.search.deep_dense_transformer),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return fail(&[key], setting(key, format!("a number ≥ 0 (got {v})")));
        }
    }
    if !(cfg.search.rrf_k.is_finite() && cfg.search.rrf_k > 0.0) {
        return fail(&["search.rrf_k"], setting("search.rrf_k", "a number above 0"));
    }
    if cfg.search.dense_pool > MAX_POOL {
        return fail(&["search.dense_pool"], setting("search.dense_pool", format!("at most {MAX_POOL}")));
    }
    let h = cfg.search.history;
    if !(h.is_finite() && (0.0..=10.0).contains(&h)) {
        return fail(
            &["search.history"],
            setting("search.history", format!("a number from 0 to 10 (got {h}); 0 turns the history field off")),
        );
    }
    let r = cfg.search.recency;
    let half_life = cfg.search.recency_half_life;
    let recency_ok = r.is_finite() && (0.0..=10.0).contains(&r);
    if !(recency_ok && half_life.is_finite() && half_life >= 1.0) {
        return fail(
            &["search.recency", "search.recency_half_life"],
            setting(
                "search.recency",
                format!("from 0 to 10 (got {r}; 0 turns it off) and search.recency_half_life at least 1 commit"),
            ),
        );
    }
    if cfg.search.history_commits > 100_000 || cfg.search.history_per_file > 1000 {
        return fail(
            &["search.history_commits", "search.history_per_file"],
            setting("search.history_commits", "at most 100000 and search.history_per_file at most 1000"),
        );
    }
    if cfg.search.k == 0 || cfg.search.k > MAX_K {
        return fail(&["search.k"], setting("search.k", format!("from 1 to {MAX_K} (got {})", cfg.search.k)));
    }
    if cfg.search.pool == 0 || cfg.search.pool > MAX_POOL {
        return fail(
            &["search.pool"],
            setting("search.pool", format!("from 1 to {MAX_POOL} (got {})", cfg.search.pool)),
        );
    }
    if !(1..=MAX_WATCH_DIRS).contains(&cfg.watch.max_dirs) {
        return fail(
            &["watch.max_dirs"],
            setting("watch.max_dirs", format!("from 1 to {MAX_WATCH_DIRS} (got {})", cfg.watch.max_dirs)),
        );
    }
    if !(1..=MAX_REQUEST_MB).contains(&cfg.serve.max_request_mb) {
        return fail(
            &["serve.max_request_mb"],
            setting("serve.max_request_mb", format!("from 1 to {MAX_REQUEST_MB} (got {})", cfg.serve.max_request_mb)),
        );
    }
    for s in &cfg.sources {
        if let Err(error) = check_source_name(&s.name) {
            return fail(&["sources"], error);
        }
    }
    Ok(())
}

impl Config {
    /// Every setting's effective value, by dotted key, with where it came from. A table of
    /// tables (`sources`) is one setting.
    pub fn settings(&self) -> Vec<Setting> {
        let mut out = Vec::new();
        let value = serde_json::to_value(self).unwrap_or_default();
        flatten_settings(&value, "", &self.origin.keys, &mut out);
        out
    }
}

fn flatten_settings(
    v: &serde_json::Value,
    prefix: &str,
    keys: &std::collections::BTreeMap<String, Layer>,
    out: &mut Vec<Setting>,
) {
    match v {
        serde_json::Value::Object(m) if prefix.is_empty() || !keys.contains_key(prefix) => {
            for (k, v) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten_settings(v, &key, keys, out);
            }
        }
        _ => out.push(Setting {
            key: prefix.to_string(),
            value: v.clone(),
            from: keys.get(prefix).map_or("default", |l| l.name()),
        }),
    }
}

/// Records the dotted path of every value a file sets (a table's keys, not the table).
fn set_keys(t: &toml::Table, prefix: &str, layer: Layer, keys: &mut std::collections::BTreeMap<String, Layer>) {
    for (k, v) in t {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            toml::Value::Table(inner) => set_keys(inner, &key, layer, keys),
            _ => {
                keys.insert(key, layer);
            }
        }
    }
}

/// Source names appear in every hit they produce: plain words only.
pub fn check_source_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !ok {
        return Err(ConfigError::SourceName { name: name.chars().take(80).collect() }.into());
    }
    Ok(())
}

/// Drops from the committed team file what only the user may set, returning one warning per
/// dropped key: native libraries, model names that are paths, sources outside the repository.
/// A model repo id stays (it is used only when already downloaded; see `Origin`).
pub fn restrict_team_table(team: &mut toml::Table, root: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut refuse = |key: &str, why: &str| {
        warnings.push(format!("{TEAM_FILE}: `{key}` is ignored: {why}"));
    };
    if let Some(toml::Value::Table(model)) = team.get_mut("model") {
        if model.remove("ort_dylib").is_some() {
            refuse(
                "model.ort_dylib",
                "a committed file may not load native code; set it in .lynx/config.toml or ORT_DYLIB_PATH",
            );
        }
        for key in ["name", "reranker"] {
            let bad = match model.get(key) {
                // `none` turns the dense layer off, which any file may ask for.
                Some(toml::Value::String(v)) => {
                    !(is_model_id(v) || (key == "name" && v.trim().eq_ignore_ascii_case("none")))
                }
                Some(_) => true,
                None => false,
            };
            if bad {
                model.remove(key);
                refuse(
                    &format!("model.{key}"),
                    "a committed file may name a HuggingFace model (owner/name), not a path; set a local model in .lynx/config.toml",
                );
            }
        }
    }
    if let Some(toml::Value::Array(sources)) = team.get_mut("sources") {
        sources.retain(|s| {
            let path = s.get("path").and_then(|p| p.as_str()).unwrap_or("");
            let name = s.get("name").and_then(|p| p.as_str()).unwrap_or("?");
            if check_source_name(name).is_err() {
                refuse("sources", "a source name must be 1-64 letters, digits, `-`, `_` or `.`");
                return false;
            }
            if s.get("type").and_then(|t| t.as_str()) == Some("webdoc") {
                refuse(
                    &format!("sources `{name}`"),
                    "a committed file may not make Lynx reach the network; add the site yourself with `git lynx source add NAME URL --type webdoc`",
                );
                return false;
            }
            if s.get("render_js").is_some_and(|v| v.as_bool() != Some(false)) {
                refuse(&format!("sources `{name}`"), "a committed file may not start a browser (render_js)");
                return false;
            }
            match inside(root, path) {
                true => true,
                false => {
                    refuse(
                        &format!("sources `{name}`"),
                        &format!("its path `{path}` is outside the repository; a committed file may only add folders inside it (add it yourself with `git lynx source add`)"),
                    );
                    false
                }
            }
        });
    }
    if team.remove("docs").is_some() {
        refuse("docs", "limits on reading documentation files are the user's choice; set them in .lynx/config.toml");
    }
    if team.remove("serve").is_some() {
        refuse("serve", "how much a server reads and holds is the user's choice; set it in .lynx/config.toml");
    }
    if let Some(toml::Value::Table(store)) = team.get_mut("store")
        && !store.is_empty()
    {
        store.clear();
        refuse(
            "store",
            "which object directories are trusted and which object store segments are downloaded from are the user's choice; to accept it, set it in .lynx/config.toml or LYNX_OBJECTS_URL",
        );
    }
    warnings
}

/// A HuggingFace repo id (`owner/name`), not a path.
pub fn is_model_id(v: &str) -> bool {
    let parts: Vec<&str> = v.split('/').collect();
    parts.len() == 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && !p.starts_with('.')
                && p.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        })
}

/// Whether relative `path` stays inside `root` (lexically, and through symlinks when it exists).
pub fn inside(root: &Path, path: &str) -> bool {
    let p = Path::new(path);
    if path.is_empty() || p.is_absolute() || path.starts_with('~') {
        return false;
    }
    let mut depth = 0i32;
    for c in p.components() {
        match c {
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => return false,
        }
    }
    let joined = root.join(p);
    match (joined.canonicalize(), root.canonicalize()) {
        (Ok(real), Ok(root)) => real.starts_with(&root),
        // Not there yet: the lexical check above is all there is to check.
        _ => true,
    }
}

/// Logs a configuration warning once per process (several sources share one file).
pub fn warn_once(msg: &str) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.iter().any(|s| s == msg) {
        tracing::warn!("{msg}");
        seen.push(msg.to_string());
    }
}

fn read_table(path: &Path) -> Result<Option<toml::Table>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let table: toml::Table = text
        .parse::<toml::Table>()
        .map_err(|e| ConfigError::NotToml { path: path.display().to_string(), why: e.to_string() })?;
    Ok(Some(table))
}

/// The `[tools]` settings of the user's and the local file only.
fn trusted_tools(user: &Option<toml::Table>, local: &Option<toml::Table>) -> Result<ToolsConfig> {
    let mut merged = toml::Table::new();
    for t in [user, local].into_iter().flatten() {
        if let Some(tools) = t.get("tools") {
            merge_tables(&mut merged, toml::Table::from_iter([("tools".to_string(), tools.clone())]));
        }
    }
    match merged.remove("tools") {
        Some(v) => v.try_into().map_err(|e| ConfigError::Invalid { why: e.to_string() }.into()),
        None => Ok(ToolsConfig::default()),
    }
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
    fn an_invalid_committed_value_is_dropped_and_a_trusted_one_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        let lynx = root.path().join(".lynx");
        std::fs::create_dir_all(&lynx).unwrap();
        // Valid alone, invalid with the local file's fusion: the committed half is dropped.
        std::fs::write(
            root.path().join(TEAM_FILE),
            "[index]\nbatch_mb = 100000\n[search]\nfusion = 'rrf'\ndense_weight = 3.0\nk = 7\n",
        )
        .unwrap();
        std::fs::write(lynx.join(LOCAL_FILE), "[search]\nfusion = 'convex'\n").unwrap();
        let c = Config::load(Some(root.path()), &lynx).unwrap();
        assert_eq!((c.index.batch_mb, c.search.dense_weight, c.search.k), (32, DEFAULT_DENSE_WEIGHT, 7));
        let w = c.warnings.join("\n");
        assert!(w.contains("`index.batch_mb = 100000` is ignored") && w.contains("using 32 (the default)"), "{w}");
        assert!(w.contains("`search.dense_weight = 3.0` is ignored") && w.contains("using 0.4 (the default)"), "{w}");
        std::fs::write(lynx.join(LOCAL_FILE), "[index]\nbatch_mb = 100000\n").unwrap();
        let err = format!("{:#}", Config::load(Some(root.path()), &lynx).unwrap_err());
        assert!(err.contains("index.batch_mb must be from 1 to 512"), "{err}");
    }

    #[test]
    fn local_overrides_team_key_by_key() {
        let root = tempfile::tempdir().unwrap();
        let lynx = root.path().join(".lynx");
        std::fs::create_dir_all(&lynx).unwrap();
        std::fs::write(
            root.path().join(TEAM_FILE),
            "[index]\nmax_file_size = 10\nexclude = ['a/**']\n[search]\nk = 3\n",
        )
        .unwrap();
        std::fs::write(lynx.join(LOCAL_FILE), "[index]\nmax_file_size = 20\n").unwrap();
        let c = Config::load(Some(root.path()), &lynx).unwrap();
        assert_eq!(c.index.max_file_size, 20);
        assert_eq!(c.index.exclude, ["a/**"]);
        assert_eq!(c.search.k, 3);
        assert_eq!(c.search.mode, SearchMode::Hybrid);
        // Each setting says where its value came from.
        let from = |key: &str| c.settings().into_iter().find(|s| s.key == key).map(|s| (s.value, s.from)).unwrap();
        assert_eq!(from("index.max_file_size"), (serde_json::json!(20), ".lynx/config.toml"));
        assert_eq!(from("index.exclude"), (serde_json::json!(["a/**"]), "lynx.toml"));
        assert_eq!(from("search.k"), (serde_json::json!(3), "lynx.toml"));
        assert_eq!(from("search.mode").1, "default");
        std::fs::write(lynx.join(LOCAL_FILE), "[index]\nmax_size = 20\n").unwrap();
        let err = format!("{:#}", Config::load(Some(root.path()), &lynx).unwrap_err());
        assert!(err.contains("max_size"), "{err}");
    }
}
