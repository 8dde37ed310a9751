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
    let missing: Vec<crate::store::Key> = commits.iter().map(|c| commit_key(&c.id)).filter(|k| !by_key.contains_key(k)).collect();
    for g in cat.by_segment(missing.into_iter().map(|k| ((), k)), |_| true) {
        let batch = ws.store.read_segment(g.dir, &g.name)?;
        for (_, row, _) in g.rows() {
            let facts = history::read(&batch, row)?;
            by_key.insert(facts.key, facts);
        }
    }
    Ok(commits.iter().filter_map(|c| by_key.remove(&commit_key(&c.id))).collect())
}
