//! `gc`: removes segments that no ref, no reflog entry of the last 30 days and no working tree
//! needs, and temp files left behind by a crash. Segments are removed whole: one that still
//! holds a needed blob stays.

use crate::fsutil::{self, TMP_SUFFIX};
use crate::layer;
use crate::repo::Repo;
use crate::store::catalog::{Catalog, catalog_path};
use crate::store::{Key, list_segments, lock::StoreLock};
use crate::view::{View, ViewSpec};
use crate::workspace::Workspace;
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Unreferenced segments younger than this may belong to an index run still in progress.
const GRACE: Duration = Duration::from_secs(3600);

#[derive(Debug, Default, Serialize)]
pub struct GcReport {
    pub dry_run: bool,
    pub live_commits: usize,
    pub worktrees: usize,
    pub segments_total: usize,
    pub segments_removed: usize,
    pub bytes_removed: u64,
    pub temp_files_removed: usize,
    pub shards_removed: usize,
    /// Documentation sources: snapshots other than each source's current one, and page texts
    /// no kept snapshot names.
    pub doc_snapshots_removed: usize,
    pub doc_texts_removed: usize,
    pub removed: Vec<String>,
}

pub fn gc(ws: &Workspace, dry_run: bool, reflog_days: u64) -> Result<GcReport> {
    let mut report = GcReport { dry_run, ..Default::default() };
    let cutoff = fsutil::now_secs() as i64 - (reflog_days as i64) * 86_400;

    // Everything a ref, a recent reflog entry or a working tree needs.
    let mut needed: HashSet<Key> = HashSet::new();
    let commits = ws.repo.live_commits(cutoff)?;
    report.live_commits = commits.len();
    for c in &commits {
        let view = View::open(ws, &ViewSpec::Rev(c.to_hex().to_string()))?;
        needed.extend(view.files.iter().map(|f| f.key));
    }
    for dir in ws.repo.worktree_dirs()? {
        let Ok(repo) = Repo::discover(&dir) else { continue };
        let other = Workspace {
            repo,
            store: crate::store::Store::open(&ws.store.root, &ws.config.store.trusted)?,
            config: ws.config.clone(),
            shards: Default::default(),
        };
        if let Ok(view) = View::open(&other, &ViewSpec::Worktree) {
            needed.extend(view.files.iter().map(|f| f.key));
            report.worktrees += 1;
        }
    }
    // Plain-folder sources of the local configuration, and the current snapshot of each
    // documentation source (older snapshots go).
    for sc in ws.config.sources.iter().filter(|s| s.kind == crate::config::SourceType::Folder) {
        let root = ws.repo.workdir.as_deref().map(|w| w.join(&sc.path)).unwrap_or_else(|| sc.path.clone().into());
        if root.join(".git").exists() {
            continue;
        }
        let spec = ViewSpec::Folder { root, extensions: sc.extensions.clone(), ignore: sc.ignore.clone() };
        if let Ok(view) = View::open(ws, &spec) {
            needed.extend(view.files.iter().map(|f| f.key));
        }
    }
    let (pages, snapshots_removed, texts_removed) = crate::docsource::gc(ws, dry_run)?;
    report.doc_snapshots_removed = snapshots_removed;
    report.doc_texts_removed = texts_removed;
    for (path, blob) in pages {
        if let Ok(id) = crate::repo::parse_oid(&blob) {
            needed.insert(Key::blob(id.as_bytes(), crate::repo::lang_hint(&path)));
        }
    }

    let _lock = if dry_run { None } else { Some(StoreLock::acquire(&ws.store.root, "gc")?) };
    let objects = ws.store.objects().to_path_buf();
    let on_disk: BTreeSet<String> = list_segments(&objects)?.into_iter().collect();
    report.segments_total = on_disk.len();
    let current: Vec<(String, String)> = vec![
        (layer::CHUNKS.into(), layer::chunks_fingerprint()),
        (layer::LEXICAL.into(), layer::lexical_fingerprint()),
        (layer::GRAPH.into(), layer::graph_fingerprint()),
        (layer::scip::SCIP.into(), layer::scip::fingerprint()),
    ];
    // History rows are keyed by commit and small: every commit's row is kept.
    let history = catalog_path(&objects, layer::history::HISTORY, &layer::history::fingerprint());
    let needed_hashes = layer::chunk_hashes(&ws.store, &needed)?;
    let mut live: HashSet<String> = HashSet::new();
    let mut referenced: HashSet<String> = HashSet::new();
    let mut catalogs: Vec<(std::path::PathBuf, Catalog, bool)> = Vec::new();
    for entry in std::fs::read_dir(objects.join("catalog"))?.flatten() {
        let path = entry.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_string) else { continue };
        if path.extension().is_none_or(|e| e != "cat") {
            continue;
        }
        let cat = Catalog::load(&path)?;
        // Vectors of every model stay valid for their fingerprint: any model's vector of a
        // needed chunk is kept.
        let is_vectors = stem.starts_with(&format!("{}-", layer::VECTORS));
        let is_current = is_vectors || current.iter().any(|(l, fp)| catalog_path(&objects, l, fp) == path);
        referenced.extend(cat.segments.iter().cloned());
        if path == history {
            live.extend(cat.segments.iter().cloned());
        } else if is_current {
            for (k, loc) in &cat.entries {
                let keep = if is_vectors { needed_hashes.contains(k) } else { needed.contains(k) };
                if keep {
                    live.insert(cat.segments[loc.seg as usize].clone());
                }
            }
        }
        catalogs.push((path, cat, is_current));
    }

    let now = SystemTime::now();
    let mut dead = Vec::new();
    for name in &on_disk {
        if live.contains(name) {
            continue;
        }
        let path = objects.join(format!("{name}.parquet"));
        let young = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).unwrap_or_default() < GRACE);
        if !referenced.contains(name) && young {
            continue; // may be an index run's segment not yet in the catalog
        }
        dead.push(name.clone());
    }
    for name in &dead {
        let path = objects.join(format!("{name}.parquet"));
        report.bytes_removed += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        report.removed.push(name.clone());
    }
    report.segments_removed = dead.len();
    report.temp_files_removed = remove_temp_files(&ws.store.root, dry_run)?;
    if dry_run {
        return Ok(report);
    }
    for (path, mut cat, is_current) in catalogs {
        cat.remove_segments(&dead);
        if cat.entries.is_empty() && !is_current {
            let _ = std::fs::remove_file(&path);
        } else {
            cat.save(&path)?;
        }
    }
    for name in &dead {
        let _ = std::fs::remove_file(objects.join(format!("{name}.parquet")));
    }
    // Shards of removed segments (and any left by a crash or an older layout) go too.
    report.shards_removed = crate::shard::remove_orphans(&ws.store);
    let _ = std::fs::remove_dir_all(ws.store.root.join("cache").join("views"));
    let _ = std::fs::remove_dir_all(ws.store.root.join("cache").join("worktree-views"));
    let _ = std::fs::remove_dir_all(ws.store.root.join("cache").join("views-dense"));
    // Kept history walks are small and made again on use; gc bounds their number.
    let _ = std::fs::remove_dir_all(ws.store.root.join("cache").join("walks"));
    // Vocabulary records of models no longer used would stay for ever; the current one is
    // written again at its next load.
    let _ = std::fs::remove_dir_all(ws.store.root.join("cache").join("vocab"));
    // So would the untracked-file lists of working trees since removed.
    let _ = std::fs::remove_dir_all(ws.store.root.join("cache").join("untracked"));
    Ok(report)
}

/// Removes `*.lynx-tmp` files and directories whose writer is gone (dead pid or old).
fn remove_temp_files(root: &Path, dry_run: bool) -> Result<usize> {
    let mut n = 0;
    let mut walk = walkdir::WalkDir::new(root).min_depth(1).into_iter();
    while let Some(entry) = walk.next() {
        let Ok(e) = entry else { continue };
        let name = e.file_name().to_string_lossy();
        let is_dir = e.file_type().is_dir();
        if name.ends_with(TMP_SUFFIX) {
            if is_dir {
                // A half-written directory is removed whole, never entered.
                walk.skip_current_dir();
            }
            if writer_gone(&name, e.path()) {
                n += 1;
                if !dry_run {
                    let _ = if is_dir { std::fs::remove_dir_all(e.path()) } else { std::fs::remove_file(e.path()) };
                }
            }
        }
    }
    Ok(n)
}

/// Temp names carry the writer's pid: `.<name>.<pid>.<n>.lynx-tmp`.
fn writer_gone(name: &str, path: &Path) -> bool {
    let parts: Vec<&str> = name.trim_end_matches(TMP_SUFFIX).rsplit('.').collect();
    let pid = parts.get(1).and_then(|p| p.parse::<u32>().ok());
    let alive = pid.is_some_and(|p| p == std::process::id() || Path::new(&format!("/proc/{p}")).exists());
    let old = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| SystemTime::now().duration_since(t).unwrap_or_default() > GRACE);
    !alive || old
}
