//! Indexing: makes sure every blob of a view has objects for the current layer fingerprints.
//! Blobs that already have them are not read; the others are read (from git's object
//! database or the working tree), chunked and analysed in parallel, and written as new
//! segments. Vectors follow in a second phase that never blocks the first.

pub mod adopt;
pub mod embed;
pub mod history;
pub mod process;
pub mod scip;

use crate::layer::{self, chunks, graph, lexical};
use crate::progress::Progress;
use crate::repo::{Repo, SkipReason};
use crate::store::{Key, Store};
use crate::view::{View, ViewFile};
use crate::workspace::Workspace;
use anyhow::Result;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// What an `index` run did (`git lynx index --json` prints this).
#[derive(Debug, Default, Clone, Serialize, schemars::JsonSchema)]
pub struct IndexReport {
    pub view: Option<crate::view::ViewId>,
    pub files_seen: usize,
    pub files_indexed: usize,
    pub blobs_new: usize,
    pub blobs_reused: usize,
    /// Blobs whose objects came from an untrusted alternate, checked and copied in.
    #[serde(skip_serializing_if = "is_zero")]
    pub blobs_adopted: usize,
    /// Blobs whose objects came from the shared object store (`store.objects_url`).
    #[serde(skip_serializing_if = "is_zero")]
    pub blobs_fetched: usize,
    pub chunks_written: usize,
    pub segments_written: usize,
    pub chunks_embedded: usize,
    /// Commits whose history facts (subject, changed paths) this run computed.
    #[serde(skip_serializing_if = "is_zero")]
    pub commits_new: usize,
    pub dense: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_coverage: Option<f64>,
    /// The model the vectors were made with, when dense ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_model: Option<String>,
    /// Set when the built-in model stood in for the chosen one: which, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_builtin_because: Option<String>,
    pub skipped: BTreeMap<String, usize>,
    pub seconds: BTreeMap<String, f64>,
    /// What the shared object store gave this run: hits, misses, bytes, time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<crate::store::remote::Fetched>,
}

impl IndexReport {
    pub fn add(&mut self, other: &IndexReport) {
        self.files_seen += other.files_seen;
        self.files_indexed += other.files_indexed;
        self.blobs_new += other.blobs_new;
        self.blobs_reused += other.blobs_reused;
        self.blobs_adopted += other.blobs_adopted;
        self.blobs_fetched += other.blobs_fetched;
        if other.remote.is_some() {
            self.remote = other.remote.clone();
        }
        self.chunks_written += other.chunks_written;
        self.segments_written += other.segments_written;
        self.chunks_embedded += other.chunks_embedded;
        self.commits_new += other.commits_new;
        for (k, v) in &other.skipped {
            *self.skipped.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.seconds {
            *self.seconds.entry(k.clone()).or_default() += v;
        }
        self.dense = other.dense.clone();
        self.dense_reason = other.dense_reason.clone();
        self.dense_coverage = other.dense_coverage;
        self.dense_model = other.dense_model.clone();
        self.dense_builtin_because = other.dense_builtin_because.clone();
        self.view = other.view.clone();
    }
}

/// Of the view's files whose blobs are in `missing` (no objects), those that are never stored
/// and why: over the size cap (from the size git records, without reading the blob) or
/// unreadable. The rest are simply not indexed yet.
pub fn never_stored(ws: &Workspace, view: &View, missing: &std::collections::HashSet<Key>) -> HashMap<Key, SkipReason> {
    let max = ws.config.index.max_file_size;
    let repo = ws.repo.local();
    let mut out = HashMap::new();
    for f in view.files.iter().filter(|f| missing.contains(&f.key)) {
        let size = match (&f.content, f.size) {
            (Some(c), _) => Ok(c.len() as u64),
            (None, Some(s)) => Ok(s),
            (None, None) => Repo::blob_size(&repo, f.blob),
        };
        match size {
            Ok(s) if s > max => {
                out.insert(f.key, SkipReason::TooLarge);
            }
            Ok(_) => {}
            Err(_) => {
                out.insert(f.key, SkipReason::Unreadable);
            }
        }
    }
    out
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Rows per segment before a flush (keeps segments and memory bounded).
const SEGMENT_TEXT_BYTES: usize = 32 * 1024 * 1024;

/// Indexes the chunk and lexical layers of `view`. Returns the report; `skipped` counts both
/// path-level and content-level reasons.
pub fn index_view(ws: &Workspace, view: &View, progress: &Progress) -> Result<IndexReport> {
    Ok(index_with(ws, std::slice::from_ref(view), progress, true)?.remove(0))
}

/// Indexes several views as one job: the blobs new to the store in any of them are read,
/// analysed and written once, in shared batches (fewer, larger segments; the cores stay busy
/// across views). One report a view, as runs one after another would report: a new blob counts
/// for the first view that holds it, and the run's segments for the first view with new blobs.
pub fn index_views(ws: &Workspace, views: &[View], progress: &Progress) -> Result<Vec<IndexReport>> {
    index_with(ws, views, progress, true)
}

/// Processes whatever blobs of `view` lack objects, without the per-file report (what a query
/// does before answering). Returns the number of blobs processed.
pub fn ensure(ws: &Workspace, view: &View, progress: &Progress) -> Result<usize> {
    Ok(index_with(ws, std::slice::from_ref(view), progress, false)?.remove(0).blobs_new)
}

/// Before anything is looked up or computed: every segment the shared object store's manifest
/// for the view's commit names — this pipeline's blob layers, the history facts and the vectors
/// of `vectors` (the model's fingerprint) — in one round of downloads, instead of a catalog
/// round per layer and a second one for the vectors. None without a store or a commit (or when
/// this process already looked for that commit).
pub fn prefetch(ws: &Workspace, view: &View, vectors: Option<&str>) -> Option<crate::store::remote::Fetched> {
    let url = ws.store.remote.as_deref()?;
    let commit = view.id.commit.as_deref()?;
    let (chunks, lexical, graph, history) = (
        layer::chunks_fingerprint(),
        layer::lexical_fingerprint(),
        layer::graph_fingerprint(),
        layer::history::fingerprint(),
    );
    let with_graph = ws.config.index.graph;
    let accept = |l: &str, f: &str| match l {
        layer::CHUNKS => f == chunks,
        layer::LEXICAL => f == lexical,
        layer::GRAPH => with_graph && f == graph,
        layer::history::HISTORY => f == history,
        layer::VECTORS => vectors == Some(f),
        _ => false,
    };
    // Blobs still missing a layer, before and after: what the manifest gave counts as fetched.
    let missing = || -> Result<usize> {
        let (c, l, g) = (
            ws.store.catalogs(layer::CHUNKS, &chunks)?,
            ws.store.catalogs(layer::LEXICAL, &lexical)?,
            ws.store.catalogs(layer::GRAPH, &graph)?,
        );
        let keys: std::collections::HashSet<Key> = view.files.iter().map(|f| f.key).collect();
        Ok(keys.iter().filter(|k| !c.contains(k) || !l.contains(k) || (with_graph && !g.contains(k))).count())
    };
    let before = missing().ok()?;
    if before == 0 {
        return None;
    }
    let mut got = crate::store::remote::fetch_commit(&ws.store, url, commit, &accept);
    if got.segments == 0 && got.error.is_none() && got.refused.is_empty() {
        return None;
    }
    got.asked = before;
    got.hits = before - missing().unwrap_or(before).min(before);
    got.misses = got.asked - got.hits;
    Some(got)
}

fn index_with(ws: &Workspace, views: &[View], progress: &Progress, full_report: bool) -> Result<Vec<IndexReport>> {
    let t0 = Instant::now();
    let mut reports: Vec<IndexReport> = views
        .iter()
        .map(|view| {
            let mut report = IndexReport {
                view: Some(view.id.clone()),
                files_seen: view.files.len() + view.skipped.len(),
                ..Default::default()
            };
            for s in &view.skipped {
                *report.skipped.entry(s.reason.name().to_string()).or_default() += 1;
            }
            report
        })
        .collect();
    let chunks_fp = layer::chunks_fingerprint();
    let lexical_fp = layer::lexical_fingerprint();
    let chunk_cat = ws.store.catalogs(layer::CHUNKS, &chunks_fp)?;
    let lex_cat = ws.store.catalogs(layer::LEXICAL, &lexical_fp)?;
    let graph_fp = layer::graph_fingerprint();
    let graph_cat = ws.store.catalogs(layer::GRAPH, &graph_fp)?;
    let with_graph = ws.config.index.graph;

    // One representative file per distinct key, with the first view that holds it.
    let mut first: HashMap<Key, (&ViewFile, usize)> =
        HashMap::with_capacity(views.iter().map(|v| v.files.len()).max().unwrap_or(0));
    for (at, view) in views.iter().enumerate() {
        for f in &view.files {
            first.entry(f.key).or_insert((f, at));
        }
    }
    // Those still missing a layer.
    let mut todo: Vec<&ViewFile> = first
        .values()
        .map(|&(f, _)| f)
        .filter(|f| {
            !chunk_cat.contains(&f.key) || !lex_cat.contains(&f.key) || (with_graph && !graph_cat.contains(&f.key))
        })
        .collect();
    todo.sort_by_key(|a| a.key);
    let missing: std::collections::HashSet<Key> = todo.iter().map(|f| f.key).collect();
    // The shared object store first: what another machine (CI) computed and pushed is
    // downloaded, checked and installed; what it lacks is computed below.
    let mut fetched: std::collections::HashSet<Key> = std::collections::HashSet::new();
    if !todo.is_empty()
        && let Some(url) = ws.store.remote.as_deref()
    {
        let keys: Vec<Key> = todo.iter().map(|f| f.key).collect();
        let mut wanted = vec![
            (layer::CHUNKS.to_string(), chunks_fp.clone(), keys.clone()),
            (layer::LEXICAL.to_string(), lexical_fp.clone(), keys.clone()),
        ];
        if with_graph {
            wanted.push((layer::GRAPH.to_string(), graph_fp.clone(), keys));
        }
        let got = crate::store::remote::fetch_into(&ws.store, url, &wanted);
        if got.segments > 0 {
            let (c, l, g) = (
                ws.store.catalogs(layer::CHUNKS, &chunks_fp)?,
                ws.store.catalogs(layer::LEXICAL, &lexical_fp)?,
                ws.store.catalogs(layer::GRAPH, &graph_fp)?,
            );
            todo.retain(|f| {
                let still = !c.contains(&f.key) || !l.contains(&f.key) || (with_graph && !g.contains(&f.key));
                if !still {
                    fetched.insert(f.key);
                }
                still
            });
        }
        reports[0].remote = Some(got);
    }
    // Objects other machines made for these blobs (untrusted alternates) are checked and
    // copied in rather than computed again.
    let mut adopted = 0;
    if !todo.is_empty() && !ws.store.pools.is_empty() {
        for pool in &ws.store.pools {
            let wanted: Vec<(Key, adopt::Content)> = todo
                .iter()
                .map(|f| {
                    (
                        f.key,
                        match &f.content {
                            Some(c) => adopt::Content::Bytes(c.as_slice()),
                            None => adopt::Content::Odb(f.blob),
                        },
                    )
                })
                .collect();
            adopted += adopt::adopt(ws, pool, &wanted, None)?.blobs;
        }
        if adopted > 0 {
            let (c, l, g) = (
                ws.store.catalogs(layer::CHUNKS, &chunks_fp)?,
                ws.store.catalogs(layer::LEXICAL, &lexical_fp)?,
                ws.store.catalogs(layer::GRAPH, &graph_fp)?,
            );
            todo.retain(|f| !c.contains(&f.key) || !l.contains(&f.key) || (with_graph && !g.contains(&f.key)));
        }
    }
    let still: std::collections::HashSet<Key> = todo.iter().map(|f| f.key).collect();
    for key in missing.iter().filter(|k| !still.contains(k)) {
        match fetched.contains(key) {
            true => reports[first[key].1].blobs_fetched += 1,
            false => reports[first[key].1].blobs_adopted += 1,
        }
    }
    let list_s = t0.elapsed().as_secs_f64();

    // Read, chunk and analyse in parallel, and write, batch by batch: memory stays bounded on
    // large repositories, and an interrupted run keeps the batches it finished.
    progress.start("indexing files", todo.len() as u64);
    let max = ws.config.index.max_file_size;
    let sizes = blob_sizes(ws, &todo);
    let mut not_stored: HashMap<Key, SkipReason> = HashMap::new();
    let t1 = Instant::now();
    let mut write_s = 0.0;
    let write = |processed: Vec<process::Processed>| -> Result<(usize, f64)> {
        let t = Instant::now();
        let segments = write_processed(
            ws,
            processed,
            (&chunks_fp, &chunk_cat),
            (&lexical_fp, &lex_cat),
            (&graph_fp, &graph_cat),
            with_graph,
        )?;
        Ok((segments, t.elapsed().as_secs_f64()))
    };
    // Each batch is written while the next one is read and analysed, so the cores stay busy
    // through the writes (encoding, compression, fsync). Batches are written in order: the
    // same work writes the same segments.
    let mut pending: Option<Vec<process::Processed>> = None;
    let mut segments_written = 0;
    for range in batches(&sizes, ws.config.index.batch_mb.saturating_mul(1024 * 1024)) {
        let (results, written) = rayon::join(
            || {
                process_largest_first(ws, &todo[range.clone()], &sizes[range.clone()], |repo, f| {
                    let out = process_file(repo, f, max, with_graph);
                    progress.inc(1);
                    out
                })
            },
            || pending.take().map(&write).transpose(),
        );
        if let Some((segments, seconds)) = written? {
            segments_written += segments;
            write_s += seconds;
        }
        let mut processed = Vec::with_capacity(results.len());
        for r in results {
            match r? {
                process::Outcome::Skipped(key, reason) => {
                    not_stored.insert(key, reason);
                }
                process::Outcome::Done(p) => processed.push(p),
            }
        }
        for p in &processed {
            let report = &mut reports[first[&p.chunks.key].1];
            report.blobs_new += 1;
            report.chunks_written += p.chunks.chunks.len();
        }
        pending = Some(processed);
    }
    // Reading and analysing, with the writes they overlapped; then the last write.
    let process_s = t1.elapsed().as_secs_f64();
    if let Some((segments, seconds)) = pending.take().map(&write).transpose()? {
        segments_written += segments;
        write_s += seconds;
    }
    progress.finish();
    let unreadable: Vec<&ViewFile> =
        todo.iter().filter(|f| not_stored.get(&f.key) == Some(&SkipReason::Unreadable)).copied().collect();
    warn_unreadable(ws, &unreadable);
    let job_s = t0.elapsed().as_secs_f64();
    let new_blobs: usize = reports.iter().map(|r| r.blobs_new).sum();
    let carrier = reports.iter().position(|r| r.blobs_new > 0).unwrap_or(0);
    reports[carrier].segments_written = segments_written;
    for (at, (view, report)) in views.iter().zip(&mut reports).enumerate() {
        // Blobs the store held when this view's turn came: before the run, or stored for an
        // earlier view of it (one never stored is tried again for each view that holds it).
        let mut distinct = std::collections::HashSet::new();
        report.blobs_reused = view
            .files
            .iter()
            .filter(|f| distinct.insert(f.key))
            .filter(|f| !missing.contains(&f.key) || (first[&f.key].1 < at && !not_stored.contains_key(&f.key)))
            .count();
        // The job's time, shared by the views as their new blobs are (the first view when none is new).
        let share = match new_blobs {
            0 => f64::from(u8::from(at == 0)),
            n => report.blobs_new as f64 / n as f64,
        };
        report.seconds.insert("list".into(), list_s * share);
        report.seconds.insert("process".into(), process_s * share);
        report.seconds.insert("write".into(), write_s * share);
        report.seconds.insert("total".into(), job_s * share);
    }
    if !full_report {
        return Ok(reports);
    }
    // Content-level skips (binary, LFS) and the size cap, from the stored facts of every blob.
    let t2 = Instant::now();
    let chunk_cat = ws.store.catalogs(layer::CHUNKS, &chunks_fp)?;
    let keys: Vec<Key> = first.keys().copied().collect();
    let summary = crate::shard::chunks::summaries(&ws.store, &ws.shards, &chunk_cat, &keys)?;
    for (view, report) in views.iter().zip(&mut reports) {
        let mut indexed_files = 0;
        for f in &view.files {
            let reason = match summary.get(&f.key) {
                Some(s) => s.skip_reason(max),
                None => not_stored.get(&f.key).copied(),
            };
            match reason {
                Some(reason) => *report.skipped.entry(reason.name().to_string()).or_default() += 1,
                None => indexed_files += 1,
            }
        }
        report.files_indexed = indexed_files;
    }
    let summary_s = t2.elapsed().as_secs_f64() / views.len() as f64;
    for report in &mut reports {
        *report.seconds.entry("total".into()).or_default() += summary_s;
    }
    Ok(reports)
}

/// Warns about blobs git could not read — once: the set is remembered (`.lynx/unreadable`), and
/// the same set again on the next `index` is only logged at debug level.
fn warn_unreadable(ws: &Workspace, files: &[&ViewFile]) {
    let mut ids: Vec<String> = files.iter().map(|f| f.blob.to_string()).collect();
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return;
    }
    let path = ws.store.root.join("unreadable");
    let text = ids.join("\n");
    if std::fs::read_to_string(&path).is_ok_and(|known| known == text) {
        return;
    }
    let shown: Vec<String> = files.iter().take(3).map(|f| crate::present::quote_path(&f.path).into_owned()).collect();
    tracing::warn!(
        "{} file(s) could not be read from git's object store and are not indexed ({}{}); `git fsck` tells why (a partial or damaged clone)",
        ids.len(),
        shown.join(", "),
        if files.len() > 3 { ", …" } else { "" }
    );
    let _ = crate::fsutil::write_atomic(&path, text.as_bytes());
}

/// Writes the layers of `processed` (checked elsewhere or computed here) that the local store
/// still misses. Returns the number of segments written.
pub fn store_processed(ws: &Workspace, processed: Vec<process::Processed>) -> Result<usize> {
    if processed.is_empty() {
        return Ok(0);
    }
    let (chunks_fp, lexical_fp, graph_fp) =
        (layer::chunks_fingerprint(), layer::lexical_fingerprint(), layer::graph_fingerprint());
    let chunk_cat = ws.store.catalogs(layer::CHUNKS, &chunks_fp)?;
    let lex_cat = ws.store.catalogs(layer::LEXICAL, &lexical_fp)?;
    let graph_cat = ws.store.catalogs(layer::GRAPH, &graph_fp)?;
    write_processed(
        ws,
        processed,
        (&chunks_fp, &chunk_cat),
        (&lexical_fp, &lex_cat),
        (&graph_fp, &graph_cat),
        ws.config.index.graph,
    )
}

/// Writes the layers of `processed` that their catalogs still miss, as segments sorted by key
/// (identical work gives identical segments). Returns the number of segments written.
fn write_processed(
    ws: &Workspace,
    processed: Vec<process::Processed>,
    (chunks_fp, chunk_cat): (&str, &crate::store::Catalogs),
    (lexical_fp, lex_cat): (&str, &crate::store::Catalogs),
    (graph_fp, graph_cat): (&str, &crate::store::Catalogs),
    with_graph: bool,
) -> Result<usize> {
    let mut missing_chunks: Vec<chunks::BlobChunks> = Vec::new();
    let mut missing_terms: Vec<lexical::BlobTerms> = Vec::new();
    let mut missing_facts: Vec<graph::BlobFacts> = Vec::new();
    for p in processed {
        if !chunk_cat.contains(&p.chunks.key) {
            missing_chunks.push(p.chunks);
        }
        if !lex_cat.contains(&p.terms.key) {
            missing_terms.push(p.terms);
        }
        if with_graph && !graph_cat.contains(&p.facts.key) {
            missing_facts.push(p.facts);
        }
    }
    // The layers encode in parallel (Parquet encoding of one file is single-threaded).
    let ((written_chunks, written_facts), written_terms) = rayon::join(
        || {
            (
                write_batches(
                    &ws.store,
                    layer::CHUNKS,
                    chunks_fp,
                    &missing_chunks,
                    |b| b.chunks.iter().map(|c| c.text.len() + 64).sum::<usize>() + 64,
                    chunks::to_batch,
                    Some(crate::shard::chunks::write),
                ),
                write_batches(
                    &ws.store,
                    layer::GRAPH,
                    graph_fp,
                    &missing_facts,
                    |b| (b.facts.defs.len() + b.facts.calls.len() + b.facts.imports.len()) * 48 + 64,
                    graph::to_batch,
                    None,
                ),
            )
        },
        || {
            write_batches(
                &ws.store,
                layer::LEXICAL,
                lexical_fp,
                &missing_terms,
                |b| b.chunks.iter().map(|c| c.terms.len() * 12 + 16).sum::<usize>() + 64,
                lexical::to_batch,
                Some(crate::shard::postings::write),
            )
        },
    );
    Ok(written_chunks? + written_terms? + written_facts?)
}

/// The size of each blob to process (from the working tree, the view, or the object header).
fn blob_sizes(ws: &Workspace, files: &[&ViewFile]) -> Vec<u64> {
    files
        .par_iter()
        .map_init(
            || ws.repo.local(),
            |repo, f| match (&f.content, f.size) {
                (Some(c), _) => c.len() as u64,
                (None, Some(s)) => s,
                // An unreadable header is reported by the processing itself.
                (None, None) => Repo::blob_size(repo, f.blob).unwrap_or(0),
            },
        )
        .collect()
}

/// Consecutive ranges of `sizes` holding about `budget` bytes each (at least one item).
fn batches(sizes: &[u64], budget: u64) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut sum) = (0, 0u64);
    for (i, &s) in sizes.iter().enumerate() {
        if i > start && sum + s > budget {
            out.push(start..i);
            (start, sum) = (i, 0);
        }
        sum += s;
    }
    if start < sizes.len() {
        out.push(start..sizes.len());
    }
    out
}

/// Runs `work` over `files` on the rayon pool, biggest blobs first (longest-processing-time
/// scheduling): parse time follows size, and in a small change one large file started last
/// would finish the run on one core. Results come back in the order of `files`.
fn process_largest_first<T: Send>(
    ws: &Workspace,
    files: &[&ViewFile],
    sizes: &[u64],
    work: impl Fn(&gix::Repository, &ViewFile) -> Result<T> + Sync,
) -> Vec<Result<T>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    let next = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().min(files.len()).max(1);
    let mut done: Vec<(usize, Result<T>)> = (0..workers)
        .into_par_iter()
        .map(|_| {
            let repo = ws.repo.local();
            let mut mine = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&at) = order.get(i) else { break };
                mine.push((at, work(&repo, files[at])));
            }
            mine
        })
        .flatten()
        .collect();
    done.sort_unstable_by_key(|(at, _)| *at);
    done.into_iter().map(|(_, r)| r).collect()
}

fn process_file(repo: &gix::Repository, f: &ViewFile, max: u64, graph: bool) -> Result<process::Outcome> {
    let content: std::borrow::Cow<[u8]> = match &f.content {
        Some(c) => std::borrow::Cow::Borrowed(c.as_slice()),
        None => {
            // A blob can be absent (partial clones, pruned or damaged object databases): that
            // file is left out, the rest of the view is indexed.
            let read = || -> Result<Option<Vec<u8>>> {
                let size = match f.size {
                    Some(s) => s,
                    None => Repo::blob_size(repo, f.blob)?,
                };
                if size > max {
                    return Ok(None);
                }
                Ok(Some(Repo::read_blob(repo, f.blob)?))
            };
            match read() {
                Ok(Some(c)) => std::borrow::Cow::Owned(c),
                Ok(None) => return Ok(process::Outcome::Skipped(f.key, SkipReason::TooLarge)),
                Err(e) => {
                    // Said once per store state, after the batch (`warn_unreadable`).
                    tracing::debug!("{}: {e:#}", f.path);
                    return Ok(process::Outcome::Skipped(f.key, SkipReason::Unreadable));
                }
            }
        }
    };
    if content.len() as u64 > max {
        return Ok(process::Outcome::Skipped(f.key, SkipReason::TooLarge));
    }
    Ok(process::Outcome::Done(process::process_with(f.key, &f.path, &content, graph)))
}

/// Writes a segment's shard from its rows (the shard would otherwise be built from the
/// segment on first use).
type ShardWriter = fn(&std::path::Path, &str, &arrow::array::RecordBatch) -> Result<()>;

/// Writes `items` as segments of at most ~SEGMENT_TEXT_BYTES each (and their shards) and
/// records them in the catalog. Returns the number of segments written.
fn write_batches<T>(
    store: &Store,
    layer_name: &str,
    fp: &str,
    items: &[T],
    weight: impl Fn(&T) -> usize,
    to_batch: impl Fn(&[T]) -> Result<(arrow::array::RecordBatch, Vec<(Key, u32, u32)>)>,
    shard: Option<ShardWriter>,
) -> Result<usize> {
    let mut added = Vec::new();
    let mut start = 0;
    while start < items.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < items.len() && (end == start || bytes + weight(&items[end]) <= SEGMENT_TEXT_BYTES) {
            bytes += weight(&items[end]);
            end += 1;
        }
        let (batch, keys) = to_batch(&items[start..end])?;
        let name = store.write_segment(layer_name, fp, &batch)?;
        if let Some(write) = shard {
            write(&store.root, &name, &batch)?;
        }
        added.push((name, keys));
        start = end;
    }
    let n = added.len();
    store.commit(layer_name, fp, &added)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::batches;

    #[test]
    fn batches_hold_about_the_budget_and_cover_everything() {
        assert_eq!(batches(&[], 10), Vec::<std::ops::Range<usize>>::new());
        assert_eq!(batches(&[4, 4, 4, 4, 4], 10), vec![0..2, 2..4, 4..5]);
        // An item over the budget is a batch of its own.
        assert_eq!(batches(&[3, 50, 3, 3], 10), vec![0..1, 1..2, 2..4]);
        assert_eq!(batches(&[1, 1, 1], 100), vec![0..3]);
    }
}
