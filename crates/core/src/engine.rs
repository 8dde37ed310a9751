//! The engine: a workspace plus what is opened from it and kept warm for the life of the
//! process — assembled views, their dense sides and graphs, and the embedding model. The CLI
//! makes one per command; the MCP server keeps one.

use crate::embed::{self, Embedder};
use crate::error::Unavailable;
use crate::index;
use crate::progress::Progress;
use crate::view::ViewData;
use crate::view::dense::DenseView;
use crate::view::{View, ViewSpec};
use crate::workspace::Workspace;
use anyhow::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

crate::error::errors! {
    /// A question the engine cannot answer as asked.
    pub enum EngineError: Usage {
        /// Dense retrieval asked for by name, without a model.
        NoDense { reason: Unavailable } =>
            "dense retrieval is not available: {reason}; use `--mode hybrid` or `sparse`, or name a model with --model",
    }
}

/// What `Engine::model_status` says.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelStatus {
    pub name: Option<String>,
    pub origin: &'static str,
    /// `off`, `not loaded yet`, `loaded` or `unavailable`.
    pub state: &'static str,
    pub detail: Option<String>,
}

impl ModelStatus {
    /// One line: `embedding model: NAME (ORIGIN), STATE: DETAIL`, or why dense retrieval is off.
    pub fn line(&self) -> String {
        let detail = self.detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
        match &self.name {
            None => format!("embedding model: none, dense retrieval is off{detail}"),
            Some(n) => format!("embedding model: {n} ({}), {}{detail}", self.origin, self.state),
        }
    }
}

/// Which embedding model this process uses (flag > `LYNX_MODEL` > config), or none.
#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub name: Option<String>,
    /// Why there is no model, when `name` is None.
    pub off_reason: Option<String>,
    /// May fetch a missing model from the hub (index, model pull); queries never wait on it.
    pub allow_download: bool,
    /// Named only by the committed team file: used when already on this machine, never
    /// downloaded on the repository's say-so.
    pub from_team: bool,
    /// Named on the command line (`--model`) or by `LYNX_MODEL`: `index` records it for the
    /// store, so later commands and `serve` use it without the flag.
    pub from_flag: bool,
    /// Where the choice came from, as `status` says it: `--model`, `LYNX_MODEL`, a configuration
    /// file, the model recorded for this store, or the default.
    pub origin: &'static str,
}

impl ModelChoice {
    /// The model to use: `--model`, else `LYNX_MODEL`, else a configuration file's, else the one
    /// `recorded` for the store by an earlier `index --model`, else the default.
    pub fn from(
        flag: Option<&str>,
        no_dense: bool,
        config: &crate::config::Config,
        allow_download: bool,
        recorded: Option<String>,
    ) -> ModelChoice {
        let off = |why: &str, origin: &'static str| ModelChoice {
            name: None,
            off_reason: Some(why.to_string()),
            allow_download,
            from_team: false,
            from_flag: false,
            origin,
        };
        if no_dense {
            return off("turned off with --no-dense", "--no-dense");
        }
        let (name, origin) = match flag {
            Some(f) => (Some(f.to_string()), "--model"),
            None => (crate::env::get(crate::env::LYNX_MODEL), crate::env::LYNX_MODEL),
        };
        match name {
            Some(n) if matches!(n.as_str(), "none" | "off") => off("turned off (model set to `none`)", origin),
            Some(n) => ModelChoice {
                name: Some(n),
                off_reason: None,
                allow_download,
                from_team: false,
                from_flag: true,
                origin,
            },
            None if !config.model.dense => {
                off("turned off in the configuration (model.dense = false)", "configuration")
            }
            None if !config.origin.model_configured && recorded.is_some() => ModelChoice {
                name: recorded,
                off_reason: None,
                allow_download,
                from_team: false,
                from_flag: false,
                origin: "recorded for this store by an earlier --model",
            },
            None => {
                let from_team = config.origin.model_from_team;
                let origin = if from_team {
                    "lynx.toml (used only when already downloaded)"
                } else if config.origin.model_configured {
                    "configuration"
                } else {
                    "default"
                };
                ModelChoice {
                    name: Some(config.model.name.clone()),
                    off_reason: None,
                    allow_download: allow_download && !from_team,
                    from_team,
                    from_flag: false,
                    origin,
                }
            }
        }
    }

    /// Where a store keeps the model its vectors were made with (local state, never shared).
    fn record_path(store_root: &std::path::Path) -> std::path::PathBuf {
        store_root.join("model")
    }

    /// The model recorded for the store at `store_root`, if any.
    pub fn recorded(store_root: &std::path::Path) -> Option<String> {
        let text = std::fs::read_to_string(Self::record_path(store_root)).ok()?;
        let name = text.trim();
        (!name.is_empty() && name.len() < 4096 && !name.contains('\n')).then(|| name.to_string())
    }

    /// Records `name` for the store at `store_root`.
    pub fn record(store_root: &std::path::Path, name: &str) -> Result<()> {
        crate::fsutil::write_atomic(&Self::record_path(store_root), format!("{name}\n").as_bytes())
    }
}

pub struct Engine {
    pub ws: Workspace,
    /// Set for a plain-folder source: every view of this engine is that folder.
    pub folder: Option<ViewSpec>,
    /// The revision a workspace file pins this repository at: the view of a question that names
    /// none (else the working tree).
    pub pinned: Option<String>,
    pub progress: Progress,
    pub model: ModelChoice,
    /// Blobs processed because a question named a view that lacked them (what a read-only
    /// surface reports having written to the local index).
    pub indexed_on_demand: std::sync::atomic::AtomicUsize,
    /// The commit facts of the most recent tips asked about: a new view at the same commit (the
    /// working tree after an edit, in `serve`) builds its history field without walking again.
    recent: Mutex<Vec<(String, Arc<crate::view::history::Recent>)>>,
    /// Assembled views, most recently used last.
    views: Mutex<Vec<(String, Arc<ViewData>)>>,
    dense: Mutex<HashMap<(String, String), Arc<DenseView>>>,
    graphs: Mutex<HashMap<String, Arc<crate::graph::model::CodeGraph>>>,
    graph_build: Mutex<()>,
    dense_build: Mutex<()>,
    /// Embedded file paths per (view, model).
    embedder: OnceLock<std::result::Result<Arc<dyn Embedder>, Unavailable>>,
    /// Why the built-in model stands in for the chosen one, when it does.
    builtin_because: OnceLock<String>,
    reranker: Mutex<Option<(String, std::result::Result<Arc<embed::rerank::CrossEncoder>, Unavailable>)>>,
    /// Bumped on every working-tree change a file watcher sees; while one watches, the
    /// working-tree listing is reused until it moves.
    pub worktree_gen: Arc<std::sync::atomic::AtomicU64>,
    pub watching: Arc<std::sync::atomic::AtomicBool>,
    /// Installed by the file watcher: returns once every change saved before the call has
    /// reached it (false when it cannot tell), so the reused listing is never older than a save.
    pub fence: OnceLock<Box<dyn Fn() -> bool + Send + Sync>>,
    /// Whether an answer already said why dense retrieval is unavailable.
    pub dense_note_said: std::sync::atomic::AtomicBool,
    synonyms: OnceLock<Option<Arc<crate::search::Synonyms>>>,
    worktree: Mutex<Option<(u64, Arc<View>)>>,
    /// Listings of commits asked about, most recently used last: a commit's tree never
    /// changes, so a second question there (or at another name for it) lists nothing.
    commits: Mutex<Vec<(gix::ObjectId, Arc<View>)>>,
    /// When a question last opened one of this engine's views (a workspace lets go of the
    /// views of the repositories asked about least recently).
    used: Mutex<Option<std::time::Instant>>,
    /// Questions in flight: background warm-up waits for a pause instead of taking the cores
    /// from the first questions of a session.
    pub activity: Activity,
}

/// Questions in flight and when the last one ended.
#[derive(Default)]
pub struct Activity(Mutex<(usize, Option<std::time::Instant>)>);

/// Held while a question is answered (see [`Activity::answering`]).
pub struct Answering<'a>(&'a Activity);

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        let mut a = self.0.0.lock().unwrap_or_else(|e| e.into_inner());
        a.0 = a.0.saturating_sub(1);
        a.1 = Some(std::time::Instant::now());
    }
}

impl Activity {
    /// Marks a question as being answered until the guard is dropped.
    pub fn answering(&self) -> Answering<'_> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).0 += 1;
        Answering(self)
    }

    /// Waits before warming caches no question needs yet: for 300 ms without questions, or
    /// 10 s under a steady stream of them.
    pub fn before_warm_up(&self) {
        self.wait_for_pause(std::time::Duration::from_millis(300), std::time::Duration::from_secs(10));
    }

    /// Counts as the end of a question: a server's first questions come just after it starts.
    pub fn touch(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(std::time::Instant::now());
    }

    /// Gives freed memory back to the system each time no question has been in flight for
    /// `idle` after some activity, for the life of the process (run on a thread of its own).
    /// Meanwhile the allocator holds it (`crate::memory::hold`, from the server's start), so
    /// the questions of a session never pay for returning it and faulting it in again.
    pub fn release_memory_when_idle(&self, idle: std::time::Duration) {
        let mut released = None;
        loop {
            let last = match *self.0.lock().unwrap_or_else(|e| e.into_inner()) {
                (0, last) => last,
                _ => None,
            };
            match last {
                Some(ended) if ended.elapsed() >= idle && released != Some(ended) => {
                    if !crate::memory::release() {
                        return;
                    }
                    released = Some(ended);
                }
                _ => {}
            }
            let wait = last.map_or(idle, |ended| idle.saturating_sub(ended.elapsed()));
            std::thread::sleep(wait.max(std::time::Duration::from_millis(100)));
        }
    }

    /// Waits until no question has been in flight for `pause`, or `at_most` has passed.
    /// Returns at once in a process that has answered no question.
    pub fn wait_for_pause(&self, pause: std::time::Duration, at_most: std::time::Duration) {
        let start = std::time::Instant::now();
        loop {
            let wait = match *self.0.lock().unwrap_or_else(|e| e.into_inner()) {
                (0, None) => return,
                (0, Some(ended)) => pause.saturating_sub(ended.elapsed()),
                _ => pause,
            };
            let left = at_most.saturating_sub(start.elapsed());
            if wait.is_zero() || left.is_zero() {
                return;
            }
            std::thread::sleep(wait.min(left).max(std::time::Duration::from_millis(1)));
        }
    }
}

/// A view ready to query, with what opening it took.
pub struct Opened {
    pub data: Arc<ViewData>,
    /// Set when blobs had to be processed first (how many).
    pub indexed: Option<usize>,
}

/// Views a process keeps assembled: up to `MAX_VIEWS` while they hold at most `VIEW_CHUNKS`
/// chunks in all, and never fewer than `MIN_KEPT`. A view is a list of row locations (quick to
/// assemble again), but it keeps the shards it reads mapped: this bounds the memory of a
/// server that answers at many revisions (a monorepo's view holds 650,000 chunks).
const MAX_VIEWS: usize = 12;
const VIEW_CHUNKS: usize = 2_000_000;
/// Commit listings a process keeps: up to `MAX_VIEWS` while they hold at most `LISTED_FILES`
/// files in all (a monorepo's listing is tens of megabytes).
const LISTED_FILES: usize = 400_000;
const MIN_KEPT: usize = 4;
/// Kept views a server reads before they are asked: the most recently written, within a
/// share of what it keeps in memory.
const PRELOAD: usize = 8;
const PRELOAD_BYTES: u64 = 64 << 20;

/// Drops the oldest entries of a most-recently-used-last list until `add` more fits: at most
/// `MAX_VIEWS - 1` entries, and `weight` of them at most `budget - add` unless only `MIN_KEPT
/// - 1` are left.
fn make_room<T>(list: &mut Vec<T>, weight: impl Fn(&T) -> usize, add: usize, budget: usize) -> Vec<T> {
    let mut dropped = Vec::new();
    let mut total: usize = list.iter().map(&weight).sum();
    while !list.is_empty() && (list.len() >= MAX_VIEWS || (list.len() >= MIN_KEPT && total + add > budget)) {
        let old = list.remove(0);
        total -= weight(&old);
        dropped.push(old);
    }
    dropped
}

/// The name of an assembled view in memory: its content key plus what the view was asked as
/// (the same content can be several views — a clean worktree and its commit — and each answer
/// names the view that was asked for).
fn mem_key(view: &View, key: &str) -> String {
    format!("{key}/{}/{}", view.id.label, view.id.commit.as_deref().unwrap_or(""))
}

/// Chunks a query may embed before answering; beyond that it answers with partial coverage.
const QUERY_EMBED_BUDGET_STATIC: usize = 50_000;
const QUERY_EMBED_BUDGET_TRANSFORMER: usize = 256;

impl Engine {
    /// How queries become terms here: the search settings and the repository's synonyms.
    pub fn query_analysis(&self) -> crate::search::QueryAnalysis {
        let s = &self.ws.config.search;
        crate::search::QueryAnalysis {
            question_words: s.question_words,
            variants: s.variants,
            synonyms: self.synonyms(),
        }
    }

    /// The synonyms file (`search.synonyms`, default `.lynx/synonyms.txt`), read once. A path
    /// outside the repository is refused (a committed setting must not reach out of it).
    pub fn synonyms(&self) -> Option<Arc<crate::search::Synonyms>> {
        self.synonyms
            .get_or_init(|| {
                let root = self.ws.repo.workdir.clone()?;
                let setting = self.ws.config.search.synonyms.trim();
                let path =
                    if setting.is_empty() { root.join(".lynx").join("synonyms.txt") } else { root.join(setting) };
                let real = path.canonicalize().ok()?;
                let root = root.canonicalize().ok()?;
                if !real.starts_with(&root) {
                    tracing::warn!("search.synonyms `{setting}` is outside the repository; ignored");
                    return None;
                }
                let text = std::fs::read(&real).ok()?;
                let syn = crate::search::Synonyms::parse(&crate::encoding::text(&text));
                (!syn.is_empty()).then(|| Arc::new(syn))
            })
            .clone()
    }

    pub fn new(ws: Workspace, progress: Progress, model: ModelChoice) -> Engine {
        Engine {
            ws,
            folder: None,
            pinned: None,
            progress,
            model,
            indexed_on_demand: Default::default(),
            recent: Mutex::new(Vec::new()),
            views: Mutex::new(Vec::new()),
            dense: Mutex::new(HashMap::new()),
            graphs: Mutex::new(HashMap::new()),
            graph_build: Mutex::new(()),
            dense_build: Mutex::new(()),
            embedder: OnceLock::new(),
            builtin_because: OnceLock::new(),
            reranker: Mutex::new(None),
            worktree_gen: Arc::new(std::sync::atomic::AtomicU64::new(0)),
            watching: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            fence: OnceLock::new(),
            dense_note_said: Default::default(),
            synonyms: OnceLock::new(),
            worktree: Mutex::new(None),
            commits: Mutex::new(Vec::new()),
            used: Mutex::new(None),
            activity: Activity::default(),
        }
    }

    /// The view a request means: the folder for folder sources, else the revision (default:
    /// the working tree).
    pub fn spec(&self, rev: Option<&str>) -> ViewSpec {
        match (&self.folder, rev) {
            // A documentation source's revisions are its snapshots; any other revision names
            // code, and the source answers at its current snapshot (`rev_note` says so).
            (Some(ViewSpec::Snapshot { source, .. }), Some(id)) if self.is_snapshot(source, id) => {
                ViewSpec::Snapshot { source: source.clone(), id: Some(id.to_string()) }
            }
            (Some(f), _) => f.clone(),
            (None, None) => ViewSpec::from_option(self.pinned.as_deref()),
            (None, _) => ViewSpec::from_option(rev),
        }
    }

    /// A snapshot of `source`, or a name shaped like one (`1796083200-1a2b3c4d`): asking for a
    /// snapshot `gc` removed is an error, not the current snapshot.
    fn is_snapshot(&self, source: &str, id: &str) -> bool {
        let shaped = id.split_once('-').is_some_and(|(t, h)| {
            t.len() == 10
                && t.bytes().all(|b| b.is_ascii_digit())
                && h.len() == 8
                && h.bytes().all(|b| b.is_ascii_hexdigit())
        });
        shaped
            || (!id.is_empty()
                && id != "worktree"
                && crate::docsource::snapshot_ids(&self.ws, source).iter().any(|s| s == id))
    }

    /// What an answer should say when `rev` does not apply to this source: a documentation
    /// source asked at a code revision answers at its current snapshot, a folder as it is.
    pub fn rev_note(&self, rev: Option<&str>) -> Option<String> {
        let rev = rev.filter(|r| !r.is_empty() && *r != "worktree")?;
        match &self.folder {
            Some(ViewSpec::Snapshot { source, .. }) if !self.is_snapshot(source, rev) => Some(format!(
                "documentation source `{source}` has no revision `{rev}`: it answered at its current snapshot"
            )),
            Some(ViewSpec::Folder { .. }) => {
                Some(format!("folder sources have no revisions: answered from the folder as it is (not at `{rev}`)"))
            }
            _ => None,
        }
    }

    /// The cross-encoder `name` (a HuggingFace repo id or a local folder), loaded once. Queries
    /// never download: a missing reranker is an error naming `model pull`.
    pub fn reranker(&self, name: &str) -> std::result::Result<Arc<embed::rerank::CrossEncoder>, Unavailable> {
        let mut slot = self.reranker.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((n, r)) = slot.as_ref()
            && n == name
        {
            return r.clone();
        }
        // The configured reranker, when only the committed file names it, is a hub id and
        // nothing else: never a folder the repository ships.
        let config = &self.ws.config;
        let lookup = if config.origin.reranker_from_team && name == config.model.reranker {
            embed::resolve::Lookup::HubOnly
        } else {
            embed::resolve::Lookup::PathOrHub
        };
        let load = || -> Result<Arc<embed::rerank::CrossEncoder>> {
            let files = embed::resolve::resolve_as(name, lookup, false, false)?;
            if files.kind != embed::resolve::ModelKind::CrossEncoder {
                anyhow::bail!("{name} is not a cross-encoder (its config.json has no sequence-classification head)");
            }
            let onnx = files.onnx.as_ref().ok_or_else(|| anyhow::anyhow!("{name} has no ONNX file"))?;
            let ce = embed::rerank::CrossEncoder::load(
                name,
                &files.dir,
                onnx,
                self.ws.config.model.threads,
                self.ws.config.model.ort_dylib.as_deref(),
            )?;
            Ok(Arc::new(ce))
        };
        let r = load().map_err(|e| Unavailable::Model(format!("reranker `{name}` unavailable: {e:#}")));
        *slot = Some((name.to_string(), r.clone()));
        r
    }

    /// The embedding model as this process has it, which may differ from the configuration's
    /// `model.name` (`--model`, `LYNX_MODEL`, the store's record, `--no-dense`): its name, where
    /// that choice came from, and whether it is loaded. Never loads it.
    pub fn model_status(&self) -> ModelStatus {
        let (state, detail) = match (&self.model.name, self.embedder.get()) {
            (None, _) => ("off", self.model.off_reason.clone()),
            (Some(_), None) => ("not loaded yet", Some("it loads at the first question that needs it".into())),
            (Some(_), Some(Ok(m))) => match self.builtin_because() {
                Some(why) => ("loaded", Some(format!("built-in model {} stands in: {why}", m.name()))),
                None => ("loaded", None),
            },
            (Some(_), Some(Err(e))) => ("unavailable", Some(e.to_string())),
        };
        ModelStatus { name: self.model.name.clone(), origin: self.model.origin, state, detail }
    }

    /// Why the built-in model is used instead of the chosen one (which is not on this
    /// machine), once `embedder` has found that; None while the chosen model is used.
    pub fn builtin_because(&self) -> Option<&str> {
        self.builtin_because.get().map(String::as_str)
    }

    /// The embedding model, loaded once; `Err` says why dense retrieval is off. When the chosen
    /// model cannot be had (not downloaded, offline) the built-in model stands in, unless the
    /// model was named on the command line or in `LYNX_MODEL`: that choice fails loudly.
    pub fn embedder(&self) -> std::result::Result<Arc<dyn Embedder>, Unavailable> {
        self.embedder
            .get_or_init(|| {
                let name = match &self.model.name {
                    Some(n) => n.clone(),
                    None => {
                        return Err(Unavailable::Off(self.model.off_reason.clone().unwrap_or_else(|| "no model".into())));
                    }
                };
                let lookup = if self.model.from_team { embed::resolve::Lookup::HubOnly } else { embed::resolve::Lookup::PathOrHub };
                let load = || -> Result<Arc<dyn Embedder>> {
                    let files = embed::resolve::resolve_as(&name, lookup, self.model.allow_download, self.progress.visible())?;
                    let cache = self.ws.store.root.join("cache");
                    let t = std::time::Instant::now();
                    let model = embed::load_files(&files, self.ws.config.model.threads, self.ws.config.model.ort_dylib.as_deref(), Some(&cache))?;
                    tracing::debug!("loaded model {name} in {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
                    Ok(model)
                };
                let loaded = load();
                let loaded = match loaded {
                    Err(e) if !self.model.from_flag && embed::builtin::enabled() => {
                        match embed::builtin::load(Some(&self.ws.store.root.join("cache"))) {
                            Ok(m) => {
                                let e = format!("{e:#}");
                                // Resolution errors already name the model; say it once.
                                let why = if e.contains(&format!("`{name}`")) {
                                    e
                                } else {
                                    format!("model `{name}` is not available: {e}")
                                };
                                let _ = self.builtin_because.set(why);
                                Ok(m)
                            }
                            Err(b) => {
                                tracing::warn!("the built-in model could not be loaded: {b:#}");
                                Err(e)
                            }
                        }
                    }
                    other => other,
                };
                loaded.map_err(|e| {
                    let why = if self.model.from_team {
                        format!(" ({} names it, and a committed file cannot make Lynx download a model: `git lynx model pull {name}` accepts it)", crate::config::TEAM_FILE)
                    } else {
                        String::new()
                    };
                    let e = format!("{e:#}");
                    // Resolution errors already name the model; say it once.
                    Unavailable::Model(if e.contains(&format!("`{name}`")) {
                        format!("{e}{why}")
                    } else {
                        format!("model `{name}` unavailable: {e}{why}")
                    })
                })
            })
            .clone()
    }

    /// When a question last opened one of this engine's views, if one has since it last let
    /// them go.
    pub fn last_used(&self) -> Option<std::time::Instant> {
        *self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lets go of every view, graph and dense side this engine holds (a question in flight
    /// keeps what it uses); the next question opens them again from the store. Whether it
    /// held any.
    pub fn forget(&self) -> bool {
        let held = !self.views.lock().unwrap().is_empty();
        self.views.lock().unwrap().clear();
        self.dense.lock().unwrap().clear();
        self.graphs.lock().unwrap().clear();
        self.recent.lock().unwrap().clear();
        *self.worktree.lock().unwrap() = None;
        self.commits.lock().unwrap().clear();
        *self.used.lock().unwrap_or_else(|e| e.into_inner()) = None;
        held
    }

    /// Lists the files of a view. The working tree's listing is reused while a watcher sees
    /// no change (the MCP server's warm path); everything else is listed fresh.
    pub fn view(&self, spec: &ViewSpec) -> Result<Arc<View>> {
        use std::sync::atomic::Ordering;
        if let ViewSpec::Rev(rev) = spec {
            return self.commit_view(rev);
        }
        if *spec != ViewSpec::Worktree
            || !self.watching.load(Ordering::Acquire)
            || !self.fence.get().is_some_and(|pass| pass())
        {
            let t = std::time::Instant::now();
            let v = View::open(&self.ws, spec)?;
            tracing::debug!("listed {} files in {:.1} ms", v.files.len(), t.elapsed().as_secs_f64() * 1000.0);
            return Ok(Arc::new(v));
        }
        let generation = self.worktree_gen.load(Ordering::Acquire);
        if let Some((g, v)) = &*self.worktree.lock().unwrap()
            && *g == generation
        {
            return Ok(v.clone());
        }
        let v = Arc::new(View::open(&self.ws, spec)?);
        *self.worktree.lock().unwrap() = Some((generation, v.clone()));
        Ok(v)
    }

    /// A commit's listing, from the process's few most recent ones when it was listed before
    /// (the configuration that filters it is fixed for the life of the engine).
    fn commit_view(&self, rev: &str) -> Result<Arc<View>> {
        let commit = self.ws.repo.resolve(rev)?.commit;
        if let Some(v) = self.listed(commit) {
            return Ok(v);
        }
        let hex = crate::repo::hex(&commit);
        // A kept view brings its assembled table along: the view is ready before it is asked.
        if let Some((view, data)) = crate::view::kept::load(&self.ws, &hex) {
            let view = Arc::new(view);
            self.remember_view(mem_key(&view, &data.key), Arc::new(data));
            self.remember_listing(commit, view.clone());
            return Ok(view);
        }
        let t = std::time::Instant::now();
        let v = Arc::new(View::open(&self.ws, &ViewSpec::Rev(hex))?);
        tracing::debug!("listed {} files in {:.1} ms", v.files.len(), t.elapsed().as_secs_f64() * 1000.0);
        self.remember_listing(commit, v.clone());
        Ok(v)
    }

    /// A commit's listing when it is among the kept ones, then the most recently used.
    fn listed(&self, commit: gix::ObjectId) -> Option<Arc<View>> {
        let mut kept = self.commits.lock().unwrap();
        let i = kept.iter().position(|(c, _)| *c == commit)?;
        let hit = kept.remove(i);
        let v = hit.1.clone();
        kept.push(hit);
        Some(v)
    }

    /// Keeps a commit's listing as the most recently used.
    fn remember_listing(&self, commit: gix::ObjectId, view: Arc<View>) {
        let mut kept = self.commits.lock().unwrap();
        kept.retain(|(c, _)| *c != commit);
        make_room(&mut kept, |(_, v)| v.files.len(), view.files.len(), LISTED_FILES);
        kept.push((commit, view));
    }

    /// Opens an already listed view: indexes the blobs it lacks, then assembles it from the
    /// shards (kept in memory for the life of the process, a few views at a time).
    pub fn open_listed(&self, view: &View) -> Result<Opened> {
        *self.used.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
        let content_key = crate::view::content_key(view, self.ws.config.index.max_file_size);
        let mem_key = mem_key(view, &content_key);
        {
            let mut views = self.views.lock().unwrap();
            if let Some(i) = views.iter().position(|(k, _)| *k == mem_key) {
                let hit = views.remove(i);
                // A view over a shard found damaged is assembled again (over the rebuilt one).
                if !hit.1.table.is_damaged() {
                    let data = hit.1.clone();
                    views.push(hit);
                    return Ok(Opened { data, indexed: None });
                }
            }
        }
        // A process that does not watch the tree (the CLI) keeps the working tree's view on
        // disk, and any process over the same content reads it instead of assembling it again
        // (a server writes none: it keeps its views in memory, and every save is a new state).
        let worktree = view.id.kind == "worktree" && view.id.commit.is_some();
        let keep_worktree = worktree && !self.watching.load(std::sync::atomic::Ordering::Acquire);
        if worktree
            && let Some(data) = crate::view::kept::load_worktree(&self.ws, view, &content_key)
            && !data.table.is_damaged()
        {
            let data = Arc::new(data);
            self.remember_view(mem_key, data.clone());
            return Ok(Opened { data, indexed: None });
        }
        // What is missing first (catalog lookups), so that a view with blobs to index is
        // assembled once, after them.
        let t = std::time::Instant::now();
        let mut indexed = None;
        let missing = crate::view::table::ChunkTable::missing(&self.ws.store, view.files.iter().map(|f| f.key))?;
        if self.needs_indexing(view, &missing) {
            // The store's manifest for this commit first, with the vectors of the model this
            // server answers with (it is needed for the answer anyway).
            if self.ws.store.remote.is_some() {
                let model = self.embedder().ok();
                index::prefetch(&self.ws, view, model.as_ref().map(|m| m.fingerprint()));
            }
            let new = index::ensure(&self.ws, view, &self.progress)?;
            if new > 0 {
                indexed = Some(new);
                self.indexed_on_demand.fetch_add(new, std::sync::atomic::Ordering::Relaxed);
            }
        }
        // The commits a history field draws on are read, and their subjects analysed, on the
        // other core meanwhile: they depend on the revision only, not on the assembled table.
        let (data, _) = rayon::join(|| ViewData::assemble(&self.ws, view), || self.prefetch_history(view));
        let data = data?;
        tracing::debug!(
            "assembled {} files, {} chunks in {:.1} ms",
            data.table.file_count(),
            data.table.len(),
            t.elapsed().as_secs_f64() * 1000.0
        );
        if worktree
            && let Some(head) = view.id.commit.as_deref()
            && let Some(field) = crate::view::kept::worktree_history(&self.ws, head, &data.table)
        {
            let _ = data.history.set(Some(Arc::new(field)));
        }
        let data = Arc::new(data);
        if keep_worktree && !self.needs_indexing(view, &data.assembly.missing_keys) {
            let history = self.history(&data);
            if let Err(e) = crate::view::kept::write_worktree(&self.ws, view, &data, history.as_deref()) {
                tracing::debug!("the working tree's view was not kept: {e:#}");
            }
        }
        // Likewise a revision's view, when `index --rev` did not keep it: the next process
        // reads it instead of assembling it again.
        if view.id.kind == "commit"
            && !self.watching.load(std::sync::atomic::Ordering::Acquire)
            && let Some(commit) = view.id.commit.as_deref()
            && !crate::view::kept::exists(&self.ws, commit)
            && !self.needs_indexing(view, &data.assembly.missing_keys)
        {
            let history = self.history(&data);
            if let Err(e) = crate::view::kept::write(&self.ws, view, &data, history.as_deref()) {
                tracing::debug!("the view of {} was not kept: {e:#}", view.id.label);
            }
        }
        self.remember_view(mem_key, data.clone());
        Ok(Opened { data, indexed })
    }

    /// Keeps an assembled view in memory, dropping the least recently used beyond what
    /// `make_room` allows, with their dense sides and graphs unless a view still kept has the
    /// same content (a clean working tree and its HEAD).
    fn remember_view(&self, mem_key: String, data: Arc<ViewData>) {
        let mut views = self.views.lock().unwrap();
        views.retain(|(k, _)| *k != mem_key);
        for (_, old) in make_room(&mut views, |(_, d)| d.table.len(), data.table.len(), VIEW_CHUNKS) {
            if old.key == data.key || views.iter().any(|(_, d)| d.key == old.key) {
                continue;
            }
            self.dense.lock().unwrap().retain(|(k, _), _| *k != old.key);
            self.graphs.lock().unwrap().remove(&old.key);
        }
        views.push((mem_key, data));
    }

    /// Reads the most recently kept views (`view::kept`) into memory before any question
    /// names them, so that a server's first answer at an indexed revision costs what a second
    /// one does: their listings, tables, history fields and the shards they name (a record is
    /// a few milliseconds of reading). Returns the views read; their dense sides are an
    /// assembly over the vector catalogs, left to [`Engine::warm_kept_dense`].
    pub fn preload_kept(&self) -> Vec<(Arc<View>, Arc<ViewData>)> {
        if self.folder.is_some() {
            return Vec::new();
        }
        let mut read = Vec::new();
        // Oldest first, so that the newest ends up the most recently used.
        for hex in crate::view::kept::recent(&self.ws, PRELOAD, PRELOAD_BYTES).into_iter().rev() {
            let Ok(commit) = gix::ObjectId::from_hex(hex.as_bytes()) else { continue };
            if self.commits.lock().unwrap().iter().any(|(c, _)| *c == commit) {
                continue;
            }
            // Also opens the object database's indexes a question's revision is looked up in.
            if self.ws.repo.resolve(&hex).is_err() {
                continue;
            }
            // A record that does not hold is removed and left for a question to assemble: no
            // listing or indexing nobody asked for.
            let Some((view, data)) = crate::view::kept::load(&self.ws, &hex) else { continue };
            data.table.prepare();
            // What a question finds the view by, hashed now rather than on its first question.
            crate::view::content_key(&view, self.ws.config.index.max_file_size);
            let (view, data) = (Arc::new(view), Arc::new(data));
            self.remember_view(mem_key(&view, &data.key), data.clone());
            self.remember_listing(commit, view.clone());
            read.push((view, data));
        }
        read
    }

    /// The dense sides of views read by [`Engine::preload_kept`], each after a pause in the
    /// questions.
    pub fn warm_kept_dense(&self, read: &[(Arc<View>, Arc<ViewData>)]) {
        if self.model.name.is_some() {
            for (view, data) in read {
                self.activity.before_warm_up();
                let _ = self.dense_for(view, data);
            }
        }
    }

    /// Writes the assembled view of a revision (with its history field) where the first
    /// question there in any process reads it back (`view::kept`). False when there is
    /// nothing to keep: not a commit's view, or one whose blobs are not all indexed yet.
    pub fn keep_view(&self, view: &View) -> Result<bool> {
        let Some(commit) = view.id.commit.as_deref().filter(|_| view.id.kind == "commit") else { return Ok(false) };
        let opened = self.open_listed(view)?;
        if self.needs_indexing(view, &opened.data.assembly.missing_keys) {
            return Ok(false);
        }
        // Assembling it may just have kept it.
        if !crate::view::kept::exists(&self.ws, commit) {
            let history = self.history(&opened.data);
            crate::view::kept::write(&self.ws, view, &opened.data, history.as_deref())?;
        }
        // Its dense side too, when a model is set: assembling it keeps it. What indexing freed
        // goes back to the system first, so this step does not add to the run's peak.
        if self.model.name.is_some() {
            crate::memory::release();
            let _ = self.dense_for(view, &opened.data);
        }
        Ok(true)
    }

    /// Whether any of `missing` (keys of `view` without objects) can be processed: blobs over
    /// the size cap and unreadable ones are never stored, so they are missing for good.
    fn needs_indexing(&self, view: &View, missing: &[crate::store::Key]) -> bool {
        if missing.is_empty() {
            return false;
        }
        let wanted: std::collections::HashSet<crate::store::Key> = missing.iter().copied().collect();
        index::never_stored(&self.ws, view, &wanted).len() < wanted.len()
    }

    /// The ranking of an opened view: its dense side when `requested` uses one and a model
    /// covers the view (a missing model is a usage error for `dense`, a note otherwise), its
    /// history field, this repository's query analysis and search settings.
    pub fn searcher<'a>(
        &'a self,
        view: &View,
        data: &'a ViewData,
        requested: crate::search::Mode,
    ) -> Result<crate::search::searcher::Searcher<'a>> {
        use crate::search::Mode;
        let mut notes = Vec::new();
        let dense = if requested == Mode::Sparse {
            None
        } else {
            match self.dense_for(view, data) {
                Ok(m) => {
                    if m.covered < m.live {
                        notes.push(format!(
                            "dense coverage {:.0}% ({} of {} chunks embedded); run `git lynx index` to complete it",
                            100.0 * m.covered as f64 / m.live.max(1) as f64,
                            m.covered,
                            m.live
                        ));
                    }
                    Some((m, self.embedder()?))
                }
                // Asked for by name, dense retrieval without a model is an error, not a quiet
                // lexical answer.
                Err(reason) if requested == Mode::Dense => {
                    return Err(EngineError::NoDense { reason }.into());
                }
                Err(reason) => {
                    // A missing model is explained once per session (a server answers many
                    // questions); a model turned off on purpose says so every time, briefly.
                    let first = !self.dense_note_said.swap(true, std::sync::atomic::Ordering::AcqRel);
                    if first || reason.is_off() {
                        notes.push(format!(
                            "results are lexical only: {}{}",
                            reason.brief(),
                            if reason.is_off() { "" } else { " (`git lynx doctor` says more)" }
                        ));
                    } else {
                        notes.push("results are lexical only (no model; get_rag_status says why)".into());
                    }
                    None
                }
            }
        };
        Ok(crate::search::searcher::Searcher::new(
            data,
            dense,
            self.history(data),
            self.query_analysis(),
            &self.ws.config.search,
            notes,
        ))
    }

    /// The dense side of an opened view for the current model, embedding what is missing when
    /// that is quick. `Err` says why dense retrieval is unavailable.
    pub fn dense_for(&self, view: &View, data: &ViewData) -> std::result::Result<Arc<DenseView>, Unavailable> {
        let model = self.embedder()?;
        let fp = model.fingerprint().to_string();
        let cache_key = (data.key.clone(), fp.clone());
        // A partly covered side is reused while no vector was added since (at monorepo scale
        // assembling costs a catalog lookup per chunk).
        let cached = || {
            self.dense
                .lock()
                .unwrap()
                .get(&cache_key)
                .cloned()
                .filter(|m| m.covered == m.live || m.is_current(&self.ws.store))
        };
        if let Some(m) = cached() {
            return Ok(m);
        }
        // One assembly at a time, as for graphs: warm-up and watcher ask for the same side.
        let _building = self.dense_build.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = cached() {
            return Ok(m);
        }
        let build = || -> Result<Arc<DenseView>> {
            if let Some(kept) = crate::view::kept::load_dense(&self.ws, data, &fp, model.dim()) {
                return Ok(Arc::new(kept));
            }
            let t = std::time::Instant::now();
            let mut d = DenseView::assemble(&self.ws.store, &self.ws.shards, &data.table, &fp, model.dim())?;
            tracing::debug!(
                "dense side: {} of {} chunks in {:.1} ms",
                d.covered,
                d.live,
                t.elapsed().as_secs_f64() * 1000.0
            );
            let budget =
                if model.kind() == "static" { QUERY_EMBED_BUDGET_STATIC } else { QUERY_EMBED_BUDGET_TRANSFORMER };
            let missing = d.live - d.covered;
            if missing > 0 && missing <= budget {
                index::embed::embed_view(&self.ws.store, view, model.as_ref(), &self.progress)?;
                d = DenseView::assemble(&self.ws.store, &self.ws.shards, &data.table, &fp, model.dim())?;
            }
            // A revision's complete side is kept for the next process (never fails the answer).
            if let Err(e) = crate::view::kept::write_dense(&self.ws, data, &d) {
                tracing::debug!("the dense side of {} could not be kept: {e:#}", data.id.label);
            }
            Ok(Arc::new(d))
        };
        let m = build().map_err(|e| Unavailable::Failed(format!("{e:#}")))?;
        self.dense.lock().unwrap().insert(cache_key, m.clone());
        Ok(m)
    }

    /// The history field of an opened view (commits reachable from its revision), built once
    /// per view; None when the view has no revision or the history field and the recency prior are off.
    pub fn history(&self, data: &ViewData) -> Option<Arc<crate::view::history::HistoryField>> {
        data.history
            .get_or_init(|| {
                let s = &self.ws.config.search;
                let commit = data.id.commit.as_deref()?;
                if (s.history <= 0.0 && s.recency <= 0.0) || s.history_commits == 0 {
                    return None;
                }
                let t = std::time::Instant::now();
                match self.recent_commits(commit, s.history_commits) {
                    Ok(commits) => {
                        let read = t.elapsed();
                        let field =
                            crate::view::history::HistoryField::build(&data.table, &commits, s.history_per_file);
                        tracing::debug!(
                            "history field: {} commits read in {:.1} ms, built in {:.1} ms",
                            commits.commits.len(),
                            read.as_secs_f64() * 1000.0,
                            (t.elapsed() - read).as_secs_f64() * 1000.0
                        );
                        Some(Arc::new(field))
                    }
                    Err(e) => {
                        tracing::warn!("history field unavailable: {e:#}");
                        None
                    }
                }
            })
            .clone()
    }

    /// Reads the commits the history field of `view` will draw on, when it has one and the
    /// field is on (errors are said when the field is built).
    fn prefetch_history(&self, view: &View) {
        let s = &self.ws.config.search;
        if let Some(commit) = view.id.commit.as_deref()
            && (s.history > 0.0 || s.recency > 0.0)
            && s.history_commits > 0
        {
            let _ = self.recent_commits(commit, s.history_commits);
        }
    }

    /// The facts of the commits a history field at `commit` draws on, kept for a few tips.
    fn recent_commits(&self, commit: &str, max: usize) -> Result<Arc<crate::view::history::Recent>> {
        let key = format!("{commit}/{max}");
        if let Some((_, c)) = self.recent.lock().unwrap().iter().find(|(k, _)| *k == key) {
            return Ok(c.clone());
        }
        let commits = Arc::new(crate::view::history::Recent::new(index::history::recent(&self.ws, commit, max)?));
        let mut cache = self.recent.lock().unwrap();
        if cache.len() >= 4 {
            cache.remove(0);
        }
        cache.push((key, commits.clone()));
        Ok(commits)
    }

    /// Drops views, dense sides, graphs and shards kept in memory (after files were removed).
    pub fn forget_views(&self) {
        self.views.lock().unwrap().clear();
        self.dense.lock().unwrap().clear();
        self.graphs.lock().unwrap().clear();
        self.ws.shards.clear();
    }

    /// The resolved code graph of an opened view (built once per process and view). Blobs
    /// whose graph facts are missing (the extractor changed since they were indexed, or the
    /// graph was off) are processed first, so the graph is never silently partial.
    pub fn graph(&self, view: &View, data: &ViewData) -> Result<Arc<crate::graph::model::CodeGraph>> {
        if let Some(g) = self.graphs.lock().unwrap().get(&data.key) {
            return Ok(g.clone());
        }
        // One build at a time: a server's warm-up and its watcher's first update ask for the
        // same graph at start, and a monorepo's takes seconds and gigabytes to build.
        let _building = self.graph_build.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = self.graphs.lock().unwrap().get(&data.key) {
            return Ok(g.clone());
        }
        let t = std::time::Instant::now();
        if self.ws.config.index.graph {
            let cat = self.ws.store.catalogs(crate::layer::GRAPH, &crate::layer::graph_fingerprint())?;
            if data.table.live_files().any(|f| !cat.contains(&data.table.file_key(f))) {
                index::ensure(&self.ws, view, &self.progress)?;
            }
        }
        let g = Arc::new(crate::graph::load::build_for_table(&self.ws.store, &data.table)?);
        tracing::info!(
            "graph of {} files built in {:.0} ms",
            data.table.file_count(),
            t.elapsed().as_secs_f64() * 1000.0
        );
        let mut graphs = self.graphs.lock().unwrap();
        if graphs.len() > 4 {
            graphs.clear();
        }
        graphs.insert(data.key.clone(), g.clone());
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::{Activity, MAX_VIEWS, MIN_KEPT, make_room};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    #[test]
    fn concurrent_askers_share_one_graph_build() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgsign=false"])
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        };
        git(&["init", "-q"]);
        for i in 0..40 {
            let text =
                format!("def step_{i}(x):\n    return helper_{i}(x) + {i}\n\n\ndef helper_{i}(x):\n    return x\n");
            std::fs::write(dir.path().join(format!("m{i}.py")), text).unwrap();
        }
        git(&["add", "-A"]);
        git(&["commit", "-qm", "start"]);
        let ws = crate::workspace::Workspace::open_from_env(dir.path()).unwrap();
        let model = super::ModelChoice::from(None, true, &ws.config, false, None);
        let engine = super::Engine::new(ws, crate::progress::Progress::hidden(), model);
        let view = crate::view::View::open(&engine.ws, &engine.spec(None)).unwrap();
        let opened = engine.open_listed(&view).unwrap();
        let barrier = std::sync::Barrier::new(2);
        let graphs: Vec<_> = std::thread::scope(|s| {
            let ask = || {
                barrier.wait();
                engine.graph(&view, &opened.data).unwrap()
            };
            let (a, b) = (s.spawn(ask), s.spawn(ask));
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        assert!(graphs[0].defs.len() >= 80, "{} definitions", graphs[0].defs.len());
        assert!(std::sync::Arc::ptr_eq(&graphs[0], &graphs[1]), "two graphs were built for one view");
    }

    #[test]
    fn caches_keep_many_small_views_and_few_large_ones() {
        // Small entries: only the count bounds them, oldest dropped first.
        let mut small: Vec<usize> = (0..MAX_VIEWS).collect();
        let dropped = make_room(&mut small, |w| *w, 1, 1_000);
        assert_eq!(dropped, vec![0]);
        assert_eq!(small.len(), MAX_VIEWS - 1);
        // Large entries: dropped until the new one fits the budget, but never below MIN_KEPT - 1.
        let mut large = vec![400, 400, 400, 400, 400];
        let dropped = make_room(&mut large, |w| *w, 400, 1_000);
        assert_eq!(dropped.len(), 5 - (MIN_KEPT - 1));
        assert_eq!(large.len(), MIN_KEPT - 1);
        let mut mixed = vec![10, 900, 10];
        assert!(make_room(&mut mixed, |w| *w, 500, 1_000).is_empty(), "room below MIN_KEPT is never made");
    }

    #[test]
    fn freed_memory_is_given_back_once_after_each_pause_in_the_questions() {
        static RELEASED: std::sync::Mutex<Vec<Instant>> = std::sync::Mutex::new(Vec::new());
        crate::memory::install(crate::memory::Allocator {
            hold: |_| {},
            release: || RELEASED.lock().unwrap().push(Instant::now()),
        });
        let released = || RELEASED.lock().unwrap().clone();
        let activity: &'static Activity = Box::leak(Box::default());
        let idle = Duration::from_millis(200);
        let question = activity.answering();
        std::thread::spawn(move || activity.release_memory_when_idle(idle));
        std::thread::sleep(Duration::from_millis(500));
        assert!(released().is_empty(), "memory was given back while a question was in flight");

        let ended = Instant::now();
        drop(question);
        std::thread::sleep(Duration::from_millis(800));
        let after_first = released();
        assert_eq!(after_first.len(), 1, "one release after the pause");
        assert!(after_first[0].duration_since(ended) >= idle, "released before the pause was over");

        // Nothing asked since: nothing more to give back.
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(released().len(), 1);
        // The next question's pause gives back what it freed.
        drop(activity.answering());
        std::thread::sleep(Duration::from_millis(800));
        assert_eq!(released().len(), 2);
    }

    #[test]
    fn warm_up_waits_for_a_pause_in_the_questions() {
        let activity = Activity::default();
        // Nothing asked yet: no wait at all, whatever the pause.
        let t = Instant::now();
        activity.wait_for_pause(Duration::from_secs(60), Duration::from_secs(60));
        assert!(t.elapsed() < Duration::from_secs(30));

        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            let question = activity.answering();
            let waiter = s.spawn(|| {
                activity.wait_for_pause(Duration::from_millis(100), Duration::from_secs(60));
                done.store(true, Ordering::SeqCst);
                Instant::now()
            });
            std::thread::sleep(Duration::from_millis(300));
            assert!(!done.load(Ordering::SeqCst), "the warm-up ran while a question was in flight");
            let ended = Instant::now();
            drop(question);
            let resumed = waiter.join().unwrap();
            assert!(resumed.duration_since(ended) >= Duration::from_millis(100), "it did not wait for the pause");
        });

        // A steady stream of questions holds it back no longer than `at_most`.
        let _busy = activity.answering();
        let t = Instant::now();
        activity.wait_for_pause(Duration::from_secs(60), Duration::from_millis(200));
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(200) && took < Duration::from_secs(30));
    }
}
