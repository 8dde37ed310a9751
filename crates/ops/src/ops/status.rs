//! `status` (CLI) and `get_rag_status` / `list_sources` / `update_source_index` (MCP): is the
//! index fresh, stale, degraded or missing; coverage per layer; which model made the vectors
//! and how much of the view each model covers; who writes the store right now.

use super::{Answer, view_line};
use crate::engine::Engine;
use crate::layer;
use crate::sources::Sources;
use crate::store::lock::StoreLock;
use crate::store::{Key, list_segments};
use crate::view::{View, ViewId, ViewSpec};
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LayerState {
    pub fingerprint: String,
    pub blobs_indexed: usize,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct VectorCoverage {
    pub fingerprint: String,
    pub model: String,
    pub chunks_covered: usize,
    pub coverage: f64,
    pub configured: bool,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Dense {
    /// ready | partial | off
    pub state: String,
    pub model: Option<String>,
    /// Where the model choice came from (`--model`, `LYNX_MODEL`, configuration, the model
    /// recorded for this store, the default).
    pub model_from: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Set when the built-in model stands in for the chosen one (`model` names the built-in
    /// model then): the chosen model and why it is not available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builtin_because: Option<String>,
    pub coverage: f64,
    /// Every model with vectors for this view (a changed model selects other vectors).
    pub models: Vec<VectorCoverage>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Health {
    pub source: String,
    /// fresh | stale | degraded | not indexed
    pub state: &'static str,
    pub reasons: Vec<String>,
    pub view: ViewId,
    /// Files of the view that are indexed or waiting (path-level skips left out).
    pub files: usize,
    /// Every file the view lists, path-level skips included: `index`'s "N files".
    pub files_seen: usize,
    /// Files whose content is indexed or waiting (content-level skips left out): `index`'s
    /// "(M indexed)".
    pub files_indexed: usize,
    pub blobs: usize,
    pub layers: BTreeMap<&'static str, LayerState>,
    pub head_indexed: Option<bool>,
    pub dense: Dense,
    pub skipped: BTreeMap<String, usize>,
    pub last_update: Option<u64>,
    pub writer: Option<String>,
    pub watcher: Option<String>,
    pub store: StoreInfo,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct StoreInfo {
    pub path: String,
    pub bytes: u64,
    pub segments: usize,
    pub missing_segments: usize,
    pub alternates: Vec<String>,
}

/// Lock names: the store's write lock and the worktree watcher's.
pub const WATCH_LOCK: &str = "watch.lock";

/// Health of one engine's default view (working tree, or folder).
pub fn health(engine: &Engine, source: &str, with_dense: bool) -> Result<Health> {
    let ws = &engine.ws;
    // The engine's listing: under a watcher (`serve`, `ui`) reused until the tree changes.
    let view = engine.view(&engine.spec(None))?;
    let keys = view.distinct_keys();
    let mut layers = BTreeMap::new();
    let mut missing_segments = 0usize;
    let mut indexed_per_layer = Vec::new();
    let mut any_indexed = false;
    let mut seen_segments: HashSet<(usize, String)> = HashSet::new();
    for (name, fp) in [
        (layer::CHUNKS, layer::chunks_fingerprint()),
        (layer::LEXICAL, layer::lexical_fingerprint()),
        (layer::GRAPH, layer::graph_fingerprint()),
    ] {
        let cat = ws.store.catalogs(name, &fp)?;
        let mut n = 0;
        for k in &keys {
            if let Some(f) = cat.get(k) {
                n += 1;
                let seg = (f.dir, cat.segment_name(f).to_string());
                if seen_segments.insert(seg.clone()) && !ws.store.segment_path(seg.0, &seg.1).exists() {
                    missing_segments += 1;
                }
            }
        }
        indexed_per_layer.push(n);
        any_indexed |= n > 0;
        layers.insert(name, LayerState { fingerprint: fp, blobs_indexed: n });
    }
    let chunk_cat = ws.store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
    let summaries = crate::shard::chunks::summaries(&ws.store, &ws.shards, &chunk_cat, &keys).unwrap_or_default();
    let mut skipped = BTreeMap::new();
    for s in &view.skipped {
        *skipped.entry(s.reason.name().to_string()).or_default() += 1;
    }
    // Blobs over the size cap or unreadable are never stored: skipped, not waiting.
    let missing: HashSet<crate::store::Key> = keys.iter().filter(|k| !chunk_cat.contains(k)).copied().collect();
    let never = crate::index::never_stored(ws, &view, &missing);
    for f in view.files.iter().filter(|f| never.contains_key(&f.key)) {
        *skipped.entry(never[&f.key].name().to_string()).or_default() += 1;
    }
    let storable = keys.len() - never.len();
    // Chunks, lexical data, and graph facts when the graph layer is on.
    let layers_wanted = if ws.config.index.graph { 3 } else { 2 };
    let all_indexed = indexed_per_layer.iter().take(layers_wanted).all(|&n| n >= storable);
    let mut content_skipped = view.files.iter().filter(|f| never.contains_key(&f.key)).count();
    for f in &view.files {
        if let Some(r) = summaries.get(&f.key).and_then(|s| s.skip_reason(ws.config.index.max_file_size)) {
            *skipped.entry(r.name().to_string()).or_default() += 1;
            content_skipped += 1;
        }
    }
    let mut reasons = Vec::new();
    let head_indexed = if engine.folder.is_none() {
        match ws.repo.head()? {
            Some(_) => {
                let hv = View::open(ws, &ViewSpec::Rev("HEAD".into()))?;
                let head_missing: HashSet<crate::store::Key> =
                    hv.distinct_keys().into_iter().filter(|k| !chunk_cat.contains(k)).collect();
                let ok = crate::index::never_stored(ws, &hv, &head_missing).len() == head_missing.len();
                if !ok {
                    reasons.push("HEAD moved: the current commit has files that are not indexed".into());
                }
                Some(ok)
            }
            None => None,
        }
    } else {
        None
    };
    let unindexed = missing.len() - never.len();
    if unindexed > 0 && any_indexed {
        reasons.push(format!("{unindexed} changed or new files are not indexed yet"));
    }
    if missing_segments > 0 {
        reasons.push(format!("{missing_segments} catalogued segments are missing (run `git lynx doctor --repair`)"));
    }
    if let Some(n) = skipped.get("unreadable") {
        reasons.push(format!("{n} files could not be read"));
    }
    // Dense coverage for the configured model and any other model with vectors.
    let dense = if with_dense {
        dense_state(engine, &keys)?
    } else {
        Dense {
            state: "unknown".into(),
            model: engine.model.name.clone(),
            model_from: engine.model.origin,
            reason: None,
            builtin_because: None,
            coverage: 0.0,
            models: vec![],
        }
    };
    let state = if !any_indexed {
        "not indexed"
    } else if missing_segments > 0 || skipped.contains_key("unreadable") {
        "degraded"
    } else if !all_indexed || head_indexed == Some(false) {
        "stale"
    } else {
        "fresh"
    };
    let last_update = std::fs::read_dir(ws.store.objects().join("catalog"))
        .ok()
        .and_then(|rd| rd.flatten().filter_map(|e| e.metadata().ok()?.modified().ok()).max())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    let (bytes, _) = crate::fsutil::dir_size(ws.store.objects());
    Ok(Health {
        source: source.to_string(),
        state,
        reasons,
        view: view.id.clone(),
        files: view.files.len(),
        files_seen: view.files.len() + view.skipped.len(),
        files_indexed: view.files.len().saturating_sub(content_skipped),
        blobs: keys.len(),
        layers,
        head_indexed,
        dense,
        skipped,
        last_update,
        writer: StoreLock::holder(&ws.store.root, "lock"),
        watcher: StoreLock::holder(&ws.store.root, WATCH_LOCK),
        store: StoreInfo {
            path: ws.store.root.display().to_string(),
            bytes,
            segments: list_segments(ws.store.objects())?.len(),
            missing_segments,
            alternates: ws.store.dirs[1..].iter().map(|p| p.display().to_string()).collect(),
        },
    })
}

fn dense_state(engine: &Engine, keys: &[Key]) -> Result<Dense> {
    let ws = &engine.ws;
    let hashes = layer::chunk_hashes(&ws.store, keys)?;
    let total = hashes.len().max(1);
    let configured = engine.embedder();
    let configured_fp = configured.as_ref().ok().map(|m| m.fingerprint().to_string());
    let mut models = Vec::new();
    if let Ok(rd) = std::fs::read_dir(ws.store.objects().join("catalog")) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(fp) = name.strip_prefix(&format!("{}-", layer::VECTORS)).and_then(|s| s.strip_suffix(".cat"))
            else {
                continue;
            };
            let cat = ws.store.catalogs(layer::VECTORS, fp)?;
            let covered = hashes.iter().filter(|h| cat.contains(h)).count();
            let info: Option<layer::VectorLayerInfo> =
                std::fs::read_to_string(layer::vector_info_path(ws.store.objects(), fp))
                    .ok()
                    .and_then(|s| serde_json::from_str(&s).ok());
            models.push(VectorCoverage {
                fingerprint: fp.to_string(),
                model: info.map(|i| i.model).unwrap_or_else(|| "(unknown)".into()),
                chunks_covered: covered,
                coverage: covered as f64 / total as f64,
                configured: configured_fp.as_deref() == Some(fp),
            });
        }
    }
    models.sort_by(|a, b| b.configured.cmp(&a.configured).then(b.chunks_covered.cmp(&a.chunks_covered)));
    Ok(match configured {
        Ok(m) => {
            let cov = models.iter().find(|v| v.configured).map(|v| v.coverage).unwrap_or(0.0);
            Dense {
                state: if cov >= 0.999 {
                    "ready".into()
                } else if cov > 0.0 {
                    "partial".into()
                } else {
                    "missing".into()
                },
                model: Some(m.name().to_string()),
                model_from: engine.model.origin,
                reason: (cov < 0.999)
                    .then(|| "vectors for the configured model are incomplete; `git lynx index` computes them".into()),
                builtin_because: engine.builtin_because().map(str::to_string),
                coverage: cov,
                models,
            }
        }
        Err(reason) => Dense {
            state: "off".into(),
            model: engine.model.name.clone(),
            model_from: engine.model.origin,
            reason: Some(reason.to_string()),
            builtin_because: None,
            coverage: 0.0,
            models,
        },
    })
}

pub fn render_health(h: &Health) -> String {
    let mut out = format!("{} · source {}: {}\n", view_line(&h.view), h.source, h.state);
    for r in &h.reasons {
        out.push_str(&format!("  - {r}\n"));
    }
    // The same two counts as `index` prints, then the blobs the layers are counted in.
    out.push_str(&format!("files {} ({} indexed), distinct blobs {}\n", h.files_seen, h.files_indexed, h.blobs));
    for (name, l) in &h.layers {
        out.push_str(&format!("  {name} [{}]: {}/{} blobs\n", l.fingerprint, l.blobs_indexed, h.blobs));
    }
    match h.head_indexed {
        Some(true) => out.push_str("HEAD: indexed\n"),
        Some(false) => out.push_str("HEAD: not fully indexed\n"),
        None => {}
    }
    let coverage = if h.dense.state == "off" || h.dense.state == "unknown" {
        String::new()
    } else {
        format!(", {:.0}% of chunks", h.dense.coverage * 100.0)
    };
    let model = h.dense.model.as_deref().unwrap_or("no model");
    match &h.dense.builtin_because {
        Some(why) => out
            .push_str(&format!("dense: {} (built-in model {model}{coverage})\n  used because {why}\n", h.dense.state)),
        None => out.push_str(&format!("dense: {} ({model}, from {}{coverage})\n", h.dense.state, h.dense.model_from)),
    }
    if let Some(r) = &h.dense.reason {
        out.push_str(&format!("  {r}\n"));
    }
    for m in h.dense.models.iter().filter(|m| !m.configured) {
        out.push_str(&format!(
            "  other vectors: {} [{}] cover {:.0}% (kept; not used by the configured model)\n",
            m.model,
            m.fingerprint,
            m.coverage * 100.0
        ));
    }
    if !h.skipped.is_empty() {
        let parts: Vec<String> = h.skipped.iter().map(|(k, n)| format!("{k} {n}")).collect();
        out.push_str(&format!("skipped: {}\n", parts.join(", ")));
    }
    out.push_str(&format!(
        "store: {} — {} segments, {}{}\n",
        h.store.path,
        h.store.segments,
        indicatif::HumanBytes(h.store.bytes),
        h.last_update
            .map(|t| format!(", last update {}s ago", crate::fsutil::now_secs().saturating_sub(t)))
            .unwrap_or_default()
    ));
    for a in &h.store.alternates {
        out.push_str(&format!("  alternate: {a}\n"));
    }
    out.push_str(&format!("writer: {}\n", h.writer.as_deref().unwrap_or("none")));
    if let Some(w) = &h.watcher {
        out.push_str(&format!("watcher: {w}\n"));
    }
    out
}

/// `git lynx status`
pub fn run(engine: &Engine) -> Result<Answer> {
    let h = health(engine, &crate::sources::repo_source_name(&engine.ws), true)?;
    let mut text = render_health(&h);
    // The shared object store `index` reads from, and where that choice came from.
    let store = crate::store::remote::configured(None, &engine.ws.config);
    if let Some(s) = &store {
        text.push_str(&format!("object store: {} (from {}; `index` downloads what it has)\n", s.url, s.from));
    }
    let mut a = Answer::new("status", Some(h.view.clone()), &h, text);
    if let Some(s) = store {
        a.data.insert("objects_store".into(), serde_json::to_value(s)?);
    }
    Ok(a)
}

/// MCP `get_rag_status`: one source or all.
/// `list_sources` takes no arguments (an MCP call with any is refused by name).
#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ListArgs {}

/// `get_rag_status`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct StatusArgs {
    /// Source name (default: all).
    #[arg(long)]
    #[schemars(description = "Source name; omit for all")]
    pub source: Option<String>,
}

/// `update_source_index`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct UpdateArgs {
    /// The source to re-index (default: all; also --source NAME).
    #[arg(value_name = "NAME", conflicts_with = "source")]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub name: Option<String>,
    /// Also rebuild the source's shards (the per-segment search structures) from its segments.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    #[schemars(description = "")]
    #[serde(default, deserialize_with = "super::args::flag")]
    #[schemars(with = "Option<bool>")]
    pub force: Option<bool>,
    /// Source name (default: all).
    #[arg(long)]
    #[schemars(description = "Source name; omit for all")]
    pub source: Option<String>,
}

pub fn rag_status(sources: &Sources, source: Option<&str>) -> Result<Answer> {
    let mut out = Vec::new();
    let mut text = String::new();
    for s in sources.select(source)? {
        let h = health(&s.engine, &s.name, true)?;
        text.push_str(&render_health(&h));
        out.push(h);
    }
    let view = out.first().map(|h| h.view.clone());
    Ok(Answer::new("get_rag_status", view, &RagStatus { sources: out }, text))
}

/// `get_rag_status`: the health of each source asked.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RagStatus {
    pub sources: Vec<Health>,
}

/// `list_sources`: every source configured, and what of a LynxMCP configuration went unused.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SourceList {
    pub sources: Vec<SourceItem>,
    pub ignored_config_fields: Vec<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SourceItem {
    #[serde(flatten)]
    pub source: crate::sources::SourceInfo,
    pub state: &'static str,
    pub files: usize,
    pub blobs: usize,
    pub blobs_indexed: usize,
    pub reasons: Vec<String>,
    pub files_seen: usize,
    pub files_indexed: usize,
    pub skipped: BTreeMap<String, usize>,
    /// A documentation source's last snapshot: null when never fetched; absent for code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Option<SnapshotInfo>>,
}

/// A documentation source's kept snapshot.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SnapshotInfo {
    pub id: String,
    /// Seconds since the Unix epoch.
    pub created: u64,
    pub pages: usize,
    pub failures: Vec<crate::docsource::Problem>,
    pub skipped: Vec<crate::docsource::Problem>,
    /// Every snapshot kept, oldest first.
    pub snapshots: Vec<String>,
}

/// `update_source_index`: what indexing each source did.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SourceUpdates {
    pub force: bool,
    pub reports: Vec<SourceUpdate>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SourceUpdate {
    pub source: String,
    #[serde(flatten)]
    pub index: crate::index::IndexReport,
    /// The snapshot a documentation source was crawled or read into first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotRun>,
}

/// A new snapshot of a documentation source.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SnapshotRun {
    pub id: String,
    pub pages: usize,
    /// Pages whose text the store had not seen.
    pub new_texts: usize,
    /// HTTP requests made (webdoc) or files read (pdf).
    pub requests: usize,
    pub failures: Vec<crate::docsource::Problem>,
    pub skipped: Vec<crate::docsource::Problem>,
    pub millis: f64,
}

/// MCP `list_sources`.
pub fn list_sources(sources: &Sources) -> Result<Answer> {
    let mut items = Vec::new();
    let mut text = format!("{} source{}:\n", sources.list.len(), if sources.list.len() == 1 { "" } else { "s" });
    for s in &sources.list {
        let h = health(&s.engine, &s.name, false)?;
        text.push_str(&format!(
            "  {} ({}, {}{}): {} — {} files, {}/{} blobs indexed{}\n",
            s.name,
            s.kind,
            s.path.display(),
            if s.graph { "" } else { ", no graph" },
            h.state,
            h.files,
            h.layers[layer::CHUNKS].blobs_indexed,
            h.blobs,
            s.description_text().map(|d| format!(" — {d}")).unwrap_or_default()
        ));
        let mut item = SourceItem {
            source: s.info(),
            state: h.state,
            files: h.files,
            blobs: h.blobs,
            blobs_indexed: h.layers[layer::CHUNKS].blobs_indexed,
            reasons: h.reasons.clone(),
            files_seen: h.files_seen,
            files_indexed: h.files_indexed,
            skipped: h.skipped.clone(),
            snapshot: None,
        };
        if s.config.as_ref().is_some_and(|c| c.kind != crate::config::SourceType::Folder) {
            let ws = &s.engine.ws;
            match crate::docsource::load(ws, &s.name, None)? {
                Some(snap) => {
                    let verb =
                        if snap.kind == crate::config::SourceType::Webdoc { "last crawl" } else { "last extraction" };
                    text.push_str(&format!(
                        "    {verb} {} (snapshot {}): {} pages, {} failed, {} skipped; {} snapshot{} kept\n",
                        crate::present::when(snap.created),
                        snap.id,
                        snap.pages.len(),
                        snap.failures.len(),
                        snap.skipped.len(),
                        crate::docsource::snapshot_ids(ws, &s.name).len(),
                        if crate::docsource::snapshot_ids(ws, &s.name).len() == 1 { "" } else { "s" },
                    ));
                    for p in snap.failures.iter().chain(&snap.skipped).take(5) {
                        text.push_str(&format!(
                            "      {}: {}\n",
                            if p.target.is_empty() { "…" } else { &p.target },
                            p.reason
                        ));
                    }
                    item.snapshot = Some(Some(SnapshotInfo {
                        id: snap.id.clone(),
                        created: snap.created,
                        pages: snap.pages.len(),
                        failures: snap.failures.clone(),
                        skipped: snap.skipped.clone(),
                        snapshots: crate::docsource::snapshot_ids(ws, &s.name),
                    }));
                }
                None => {
                    text.push_str(&format!(
                        "    never fetched: `git lynx update-source-index {}` crawls or reads it\n",
                        s.name
                    ));
                    item.snapshot = Some(None);
                }
            }
        }
        items.push(item);
    }
    if !sources.ignored_fields.is_empty() {
        text.push_str(&format!("ignored LynxMCP config fields: {}\n", sources.ignored_fields.join(", ")));
    }
    Ok(Answer::new(
        "list_sources",
        None,
        &SourceList { sources: items, ignored_config_fields: sources.ignored_fields.clone() },
        text,
    ))
}

/// One line on a new snapshot: pages, what was new, what failed or was skipped.
pub fn snapshot_line(s: &crate::docsource::Snapshot) -> String {
    let verb = if s.kind == crate::config::SourceType::Webdoc { "crawled" } else { "extracted" };
    let mut line = format!(
        "{verb} {} page{} ({} new) in {:.1} s, snapshot {}",
        s.pages.len(),
        if s.pages.len() == 1 { "" } else { "s" },
        s.new_texts,
        s.millis / 1000.0,
        s.id
    );
    if !s.failures.is_empty() {
        line.push_str(&format!("; {} failed", s.failures.len()));
    }
    if !s.skipped.is_empty() {
        line.push_str(&format!("; {} skipped", s.skipped.len()));
    }
    line.push('\n');
    for p in s.failures.iter().chain(&s.skipped).take(10) {
        line.push_str(&format!("  {}: {}\n", if p.target.is_empty() { "…" } else { &p.target }, p.reason));
    }
    line
}

/// MCP `update_source_index`: index a source now (a documentation source is crawled or read
/// again first); `force` also rebuilds its shards.
/// Re-indexes the source `a` names (all when none).
pub fn update(sources: &Sources, a: &UpdateArgs) -> Result<Answer> {
    update_source(sources, a.name.as_deref().or(a.source.as_deref()), a.force.unwrap_or(false))
}

/// A new current snapshot of a documentation source: crawled or extracted again (`base`
/// resolves a relative PDF path).
#[cfg(feature = "docs")]
fn refresh(
    ws: &crate::workspace::Workspace,
    sc: &crate::config::SourceConfig,
    base: &std::path::Path,
    progress: &crate::progress::Progress,
) -> Result<crate::docsource::Snapshot> {
    lynx_docs::refresh(ws, sc, base, progress)
}

#[cfg(not(feature = "docs"))]
fn refresh(
    _: &crate::workspace::Workspace,
    _: &crate::config::SourceConfig,
    _: &std::path::Path,
    _: &crate::progress::Progress,
) -> Result<crate::docsource::Snapshot> {
    Err(crate::error::without("docs", "documentation sources"))
}

pub fn update_source(sources: &Sources, source: Option<&str>, force: bool) -> Result<Answer> {
    let mut text = String::new();
    let mut reports = Vec::new();
    for s in sources.select(source)? {
        if force {
            s.engine.forget_views();
            let _ = std::fs::remove_dir_all(crate::shard::shards_dir(&s.engine.ws.store.root));
        }
        // A documentation source gets a new snapshot first: a crawl, or the PDFs read again.
        let snapshot = match &s.config {
            Some(sc) if sc.kind != crate::config::SourceType::Folder => {
                let base = s.engine.ws.repo.workdir.clone().unwrap_or_else(|| s.engine.ws.repo.common_dir.clone());
                let snap = refresh(&s.engine.ws, sc, &base, &s.engine.progress)?;
                text.push_str(&format!("{}: {}", s.name, snapshot_line(&snap)));
                s.engine.forget_views();
                Some(snap)
            }
            _ => None,
        };
        let (index, index_text) = super::index::index_views(&s.engine, &[])?;
        text.push_str(&format!("{}: {index_text}", s.name));
        let snapshot = snapshot.map(|snap| SnapshotRun {
            id: snap.id,
            pages: snap.pages.len(),
            new_texts: snap.new_texts,
            requests: snap.requests,
            failures: snap.failures,
            skipped: snap.skipped,
            millis: snap.millis,
        });
        reports.push(SourceUpdate { source: s.name.clone(), index: index.total, snapshot });
    }
    Ok(Answer::new("update_source_index", None, &SourceUpdates { force, reports }, text))
}

results!(Health, RagStatus => "sources", SourceList => "sources", SourceUpdates => "reports");
