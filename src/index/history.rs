//! The history layer's rows for the commits a view's history holds: read from the store, and
//! computed (a tree diff against the first parent) and stored for commits never seen before.
//! A commit's row is computed once per store, whatever view asks.

use crate::layer::history::{self, CommitFacts, HISTORY, commit_key};
use crate::workspace::Workspace;
use anyhow::Result;
use rayon::prelude::*;
use std::collections::HashMap;

/// The facts of the `max` most recent commits reachable from `tip` (newest first).
pub fn recent(ws: &Workspace, tip: &str, max: usize) -> Result<Vec<CommitFacts>> {
    if max == 0 {
        return Ok(Vec::new());
    }
    let commits = ws.repo.commits_in_range(None, tip, max)?;
    let fp = history::fingerprint();
    let cat = ws.store.catalogs(HISTORY, &fp)?;
    let missing: Vec<&crate::repo::history::CommitInfo> = commits.iter().filter(|c| !cat.contains(&commit_key(&c.id))).collect();
    let mut computed: Vec<CommitFacts> = missing
        .par_iter()
        .map(|c| {
            // Merges and root commits name no change of their own.
            let paths = match c.parents.as_slice() {
                [parent] => ws.repo.changed_paths(*parent, c.id).map(|v| v.into_iter().map(|(p, _)| p).collect()).unwrap_or_default(),
                _ => Vec::new(),
            };
            CommitFacts { key: commit_key(&c.id), subject: c.subject.clone(), time: c.time, paths }
        })
        .collect();
    let mut by_key: HashMap<crate::store::Key, CommitFacts> = HashMap::with_capacity(commits.len());
    if !computed.is_empty() {
        computed.sort_by(|a, b| a.key.cmp(&b.key));
        let (batch, keys) = history::to_batch(&computed)?;
        let name = ws.store.write_segment(HISTORY, &fp, &batch)?;
        ws.store.commit(HISTORY, &fp, &[(name, keys)])?;
        by_key.extend(computed.into_iter().map(|f| (f.key, f)));
    }
    // The rest from their segments, each segment decoded once.
    let mut by_segment: HashMap<(usize, String), Vec<crate::store::Found>> = HashMap::new();
    for c in &commits {
        let k = commit_key(&c.id);
        if by_key.contains_key(&k) {
            continue;
        }
        if let Some(f) = cat.get(&k) {
            by_segment.entry((f.dir, cat.segment_name(f).to_string())).or_default().push(f);
        }
    }
    for ((dir, name), founds) in by_segment {
        let batch = ws.store.read_segment(dir, &name)?;
        for f in founds {
            let facts = history::read(&batch, f.loc.row as usize)?;
            by_key.insert(facts.key, facts);
        }
    }
    Ok(commits.iter().filter_map(|c| by_key.remove(&commit_key(&c.id))).collect())
}
