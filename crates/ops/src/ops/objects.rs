//! `objects export REV… --to DIR|FILE` and `objects import DIR|FILE`: carrying a store's
//! segments to a teammate, CI or another clone.

use super::Answer;
use crate::engine::Engine;
use crate::layer;
use crate::store::pack;
use crate::view::{View, ViewSpec};
use anyhow::{Context, Result};
use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;

/// What `objects export` writes and where.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Revisions whose views' segments to export (default: HEAD).
    pub revs: Vec<String>,
    /// A directory, or a file ending in `.lynxpack`.
    #[arg(long)]
    pub to: PathBuf,
}

/// What `objects import` reads and how far it trusts it.
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// The directory or `.lynxpack` file to import.
    pub from: PathBuf,
    /// Use the objects as they are (only for packs you made or fully trust).
    #[arg(long)]
    pub trust: bool,
}

pub fn export(engine: &Engine, args: &ExportArgs) -> Result<Answer> {
    let (revs, to) = (&args.revs[..], args.to.as_path());
    // The current snapshots of documentation sources travel too: their texts, manifests and
    // the objects of their pages.
    let (doc_files, doc_keys, snapshots) = crate::docsource::export_files(&engine.ws)?;
    let (segments, n_revs) = needed_segments(engine, revs, &doc_keys)?;
    let (n, bytes) = pack::export(&engine.ws.store, &segments, &doc_files, to)?;
    let mut text = format!(
        "exported {n} segments ({}) for {n_revs} revision(s) to {}\n",
        indicatif::HumanBytes(bytes),
        to.display()
    );
    if snapshots > 0 {
        text.push_str(&format!("with the current snapshot of {snapshots} documentation source(s)\n"));
    }
    Ok(Answer::new(
        "objects_export",
        None,
        Exported { segments: n, bytes, to: to.display().to_string(), doc_snapshots: snapshots },
        text,
    ))
}

/// The segments the views of `revs` (default HEAD) need — chunks, lexical and graph objects of
/// their blobs, the vectors of every model for their chunks, and the history facts of the
/// commits their history field reads — indexing what is missing first. Returns (object
/// directory, segment name) pairs and the number of revisions.
pub fn needed_segments(
    engine: &Engine,
    revs: &[String],
    extra_keys: &[crate::store::Key],
) -> Result<(BTreeSet<(usize, String)>, usize)> {
    let ws = &engine.ws;
    let specs: Vec<ViewSpec> = if revs.is_empty() {
        vec![ViewSpec::Rev("HEAD".into())]
    } else {
        revs.iter().map(|r| engine.spec(Some(r))).collect()
    };
    let mut keys: HashSet<crate::store::Key> = HashSet::new();
    let mut commits: HashSet<crate::store::Key> = HashSet::new();
    let history = &ws.config.search;
    let with_history = (history.history > 0.0 || history.recency > 0.0) && history.history_commits > 0;
    for s in &specs {
        let view = View::open(ws, s)?;
        // Export what the revision needs; index it first so nothing is missing.
        crate::index::index_view(ws, &view, &engine.progress)?;
        keys.extend(view.files.iter().map(|f| f.key));
        // A clone indexing the next commit then computes that commit's facts, not a thousand.
        if let (true, Some(tip)) = (with_history, view.id.commit.as_deref()) {
            let facts = crate::index::history::recent(ws, tip, history.history_commits)?;
            commits.extend(facts.iter().map(|f| f.key));
        }
    }
    keys.extend(extra_keys.iter().copied());
    let mut segments: BTreeSet<(usize, String)> = BTreeSet::new();
    for (name, fp) in [
        (layer::CHUNKS, layer::chunks_fingerprint()),
        (layer::LEXICAL, layer::lexical_fingerprint()),
        (layer::GRAPH, layer::graph_fingerprint()),
    ] {
        let cat = ws.store.catalogs(name, &fp)?;
        for k in &keys {
            if let Some(f) = cat.get(k) {
                segments.insert((f.dir, cat.segment_name(f).to_string()));
            }
        }
    }
    let cat = ws.store.catalogs(layer::history::HISTORY, &layer::history::fingerprint())?;
    for k in &commits {
        if let Some(f) = cat.get(k) {
            segments.insert((f.dir, cat.segment_name(f).to_string()));
        }
    }
    // Vectors of every model for those chunks.
    let hashes = layer::chunk_hashes(&ws.store, &keys)?;
    let mut vector_fps: BTreeSet<String> = BTreeSet::new();
    for d in &ws.store.dirs {
        if let Ok(rd) = std::fs::read_dir(d.join("catalog")) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if let Some(fp) = n.strip_prefix(&format!("{}-", layer::VECTORS)).and_then(|s| s.strip_suffix(".cat")) {
                    vector_fps.insert(fp.to_string());
                }
            }
        }
    }
    for fp in &vector_fps {
        let cat = ws.store.catalogs(layer::VECTORS, fp)?;
        for h in &hashes {
            if let Some(f) = cat.get(h) {
                segments.insert((f.dir, cat.segment_name(f).to_string()));
            }
        }
    }
    Ok((segments, specs.len()))
}

/// `objects import`: segments from a directory or pack. Their hashes and pipeline are checked
/// first; then, unless `trust`, every blob's objects are checked against the blob in this
/// repository and copied into the local store (`index::adopt`); blobs this repository does not
/// have cannot be checked and are left out.
pub fn import(engine: &Engine, args: &ImportArgs) -> Result<Answer> {
    let (from, trust) = (args.from.as_path(), args.trust);
    let ws = &engine.ws;
    let current = [
        (layer::CHUNKS, layer::chunks_fingerprint()),
        (layer::LEXICAL, layer::lexical_fingerprint()),
        (layer::GRAPH, layer::graph_fingerprint()),
    ];
    let history_fp = layer::history::fingerprint();
    let accept = |l: &str, fp: &str| {
        l == layer::VECTORS
            || (l == layer::history::HISTORY && fp == history_fp)
            || current.iter().any(|(cl, cfp)| *cl == l && cfp == fp)
    };
    // Staged beside the store one segment at a time (checked on the way), then installed or
    // adopted, and removed.
    let staging = crate::fsutil::temp_path_for(&ws.store.root.join("import"));
    std::fs::create_dir_all(&staging).with_context(|| format!("creating {}", staging.display()))?;
    let staged = (|| -> Result<_> {
        let segments = pack::read_checked(from, &accept, &staging)?;
        let doc_files = pack::read_extra(from)?;
        Ok((segments, doc_files))
    })();
    let (segments, doc_files) = match staged {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    let total = segments.len();
    if trust {
        let derived: Vec<(String, crate::shard::Kind)> = segments
            .iter()
            .filter_map(|(name, s)| crate::shard::Kind::for_layer(&s.layer).map(|k| (name.clone(), k)))
            .collect();
        let new = pack::install(&ws.store, &staging, segments);
        let _ = std::fs::remove_dir_all(&staging);
        let new = new?;
        // Their search structures are built now, on every core, so the first question (or the
        // next `index`) costs what it adds, not the whole import again.
        {
            use rayon::prelude::*;
            derived.par_iter().for_each(|(name, kind)| {
                if let Err(e) = crate::shard::build(&ws.store, 0, name, *kind) {
                    tracing::warn!("the search structure of imported segment {name} is built at its first use: {e:#}");
                }
            });
        }
        let mut text = format!(
            "imported {total} segments from {} ({new} new; hashes verified, contents trusted with --trust)\n",
            from.display()
        );
        let docs = crate::docsource::import_files(ws, doc_files)?;
        if docs.snapshots + docs.refused.len() > 0 {
            text.push_str(&format!(
                "imported {} documentation snapshot(s) ({} new page texts)\n",
                docs.snapshots, docs.texts
            ));
        }
        for r in &docs.refused {
            text.push_str(&format!("refused {r}\n"));
        }
        return Ok(Answer::new(
            "objects_import",
            None,
            ImportedTrusted { segments: total, new, trusted: true, docs },
            text,
        ));
    }
    // A page's text can only be checked against its site by crawling it again.
    let doc_note = doc_files.iter().any(|(rel, _)| rel.starts_with("sources/")).then(|| {
        "documentation snapshots were not imported: nothing here can check them against their sites; import with --trust if you trust the exporter, or `git lynx update-source-index` to crawl\n".to_string()
    });
    let history_left = segments.iter().filter(|(_, s)| s.layer == layer::history::HISTORY).count();
    let result = (|| -> Result<crate::index::adopt::Adoption> {
        pack::stage(&staging, &segments)?;
        let hash_len = ws.repo.object_hash().len_in_bytes();
        let mut keys: Vec<crate::store::Key> = segments
            .iter()
            .filter(|(_, s)| s.layer == layer::CHUNKS)
            .flat_map(|(_, s)| s.keys.iter().map(|k| k.0))
            .collect();
        keys.sort();
        keys.dedup();
        let wanted: Vec<(crate::store::Key, crate::index::adopt::Content)> = keys
            .into_iter()
            .filter_map(|k| {
                gix::ObjectId::try_from(&k.0[..hash_len]).ok().map(|id| (k, crate::index::adopt::Content::Odb(id)))
            })
            .collect();
        let model = engine.embedder().ok();
        crate::index::adopt::adopt(ws, &staging, &wanted, model.as_deref())
    })();
    let _ = std::fs::remove_dir_all(&staging);
    let a = result?;
    // The model named for this import is the store's from now on, as `index --model` makes it.
    if let (true, Some(name), true) = (engine.model.from_flag, engine.model.name.as_deref(), a.vectors > 0)
        && let Err(e) = crate::engine::ModelChoice::record(&ws.store.root, name)
    {
        tracing::warn!("could not record the model for this store: {e:#}");
    }
    let mut text = format!(
        "imported {total} segments from {}: objects of {} blobs and {} vectors checked and adopted",
        from.display(),
        a.blobs,
        a.vectors
    );
    if a.unverifiable > 0 {
        text.push_str(&format!(
            "; {} blobs left out (not in this repository, so they cannot be checked: fetch them, then import again)",
            a.unverifiable
        ));
    }
    text.push('\n');
    for r in &a.rejected {
        text.push_str(&format!("refused segment {}: {}\n", r.segment, r.reason));
    }
    if history_left > 0 {
        // A commit's facts (subject, changed paths) can only be checked by computing them.
        text.push_str(&format!(
            "{history_left} history segment(s) left out: commit facts are computed here when indexing (import with --trust to take them)\n"
        ));
    }
    text.push_str(doc_note.as_deref().unwrap_or(""));
    Ok(Answer::new(
        "objects_import",
        None,
        Imported { segments: total, adopted: a, history_segments_left_out: history_left },
        text,
    ))
}

/// Segments written for a teammate: how many, their size, where.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Exported {
    pub segments: usize,
    pub bytes: u64,
    pub to: String,
    pub doc_snapshots: usize,
}

/// Segments taken as they are (`--trust`), with the documentation snapshots that came along.
#[derive(Debug, serde::Serialize)]
pub struct ImportedTrusted<D> {
    pub segments: usize,
    pub new: usize,
    pub trusted: bool,
    pub docs: D,
}

/// Segments checked blob by blob against this repository before use.
#[derive(Debug, serde::Serialize)]
pub struct Imported {
    pub segments: usize,
    pub adopted: crate::index::adopt::Adoption,
    pub history_segments_left_out: usize,
}

results!(Exported, Imported);
impl<D: serde::Serialize> super::Results for ImportedTrusted<D> {}
