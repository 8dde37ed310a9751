//! `status`: what is indexed for the working tree and HEAD, and the store's size.

use super::Answer;
use crate::engine::Engine;
use crate::layer;
use crate::view::{View, ViewSpec};
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize)]
pub struct ViewStatus {
    pub view: crate::view::ViewId,
    pub files: usize,
    pub blobs: usize,
    pub blobs_indexed: usize,
    pub state: &'static str,
    pub skipped: BTreeMap<String, usize>,
}

#[derive(Debug, Serialize)]
pub struct StoreStatus {
    pub path: String,
    pub bytes: u64,
    pub segments: usize,
    pub alternates: Vec<String>,
    pub fingerprints: BTreeMap<&'static str, String>,
}

#[derive(Debug, Serialize)]
pub struct Status {
    pub worktree: Option<ViewStatus>,
    pub head: Option<ViewStatus>,
    pub store: StoreStatus,
}

fn view_status(engine: &Engine, spec: &ViewSpec) -> Result<ViewStatus> {
    let view = View::open(&engine.ws, spec)?;
    let chunks = engine.ws.store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
    let lex = engine.ws.store.catalogs(layer::LEXICAL, &layer::lexical_fingerprint())?;
    let keys = view.distinct_keys();
    let indexed = keys.iter().filter(|k| chunks.contains(k) && lex.contains(k)).count();
    let mut skipped = BTreeMap::new();
    for s in &view.skipped {
        *skipped.entry(s.reason.name().to_string()).or_default() += 1;
    }
    let summaries = crate::view::cache::blob_summaries(&engine.ws.store, &chunks, &keys)?;
    for f in &view.files {
        if let Some(r) = summaries.get(&f.key).and_then(|s| s.skip_reason(engine.ws.config.index.max_file_size)) {
            *skipped.entry(r.name().to_string()).or_default() += 1;
        }
    }
    let state = if indexed == keys.len() { "indexed" } else if indexed == 0 { "not indexed" } else { "partial" };
    Ok(ViewStatus { view: view.id, files: view.files.len(), blobs: keys.len(), blobs_indexed: indexed, state, skipped })
}

pub fn run(engine: &Engine) -> Result<Answer> {
    let ws = &engine.ws;
    let worktree = if ws.repo.workdir.is_some() { Some(view_status(engine, &ViewSpec::Worktree)?) } else { None };
    let head = match ws.repo.head()? {
        Some(_) => Some(view_status(engine, &ViewSpec::Rev("HEAD".into()))?),
        None => None,
    };
    let (bytes, _) = crate::fsutil::dir_size(ws.store.objects());
    let segments = crate::store::list_segments(ws.store.objects())?.len();
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert(layer::CHUNKS, layer::chunks_fingerprint());
    fingerprints.insert(layer::LEXICAL, layer::lexical_fingerprint());
    let store = StoreStatus {
        path: ws.store.root.display().to_string(),
        bytes,
        segments,
        alternates: ws.store.dirs[1..].iter().map(|p| p.display().to_string()).collect(),
        fingerprints,
    };
    let status = Status { worktree, head, store };
    let text = render(&status);
    let view = status.worktree.as_ref().map(|w| w.view.clone());
    Ok(Answer::new("status", view, &status, text))
}

fn render(s: &Status) -> String {
    let mut out = String::new();
    for (name, v) in [("worktree", &s.worktree), ("HEAD", &s.head)] {
        if let Some(v) = v {
            out.push_str(&format!(
                "{name} ({}): {} — {} files, {}/{} blobs indexed\n",
                v.view.label, v.state, v.files, v.blobs_indexed, v.blobs
            ));
            if !v.skipped.is_empty() {
                let parts: Vec<String> = v.skipped.iter().map(|(k, n)| format!("{k} {n}")).collect();
                out.push_str(&format!("  skipped: {}\n", parts.join(", ")));
            }
        }
    }
    out.push_str(&format!(
        "store: {} — {} segments, {}\n",
        s.store.path,
        s.store.segments,
        human_bytes(s.store.bytes)
    ));
    for a in &s.store.alternates {
        out.push_str(&format!("  alternate: {a}\n"));
    }
    out
}

pub fn human_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 { format!("{b} B") } else { format!("{v:.1} {}", units[i]) }
}
