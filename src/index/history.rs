//! The history layer's rows for the commits a view's history holds: read from the store, and
//! computed (a tree diff against the first parent) and stored for commits never seen before.
//! A commit's row is computed once per store, whatever view asks.

use crate::layer::history::{self, CommitFacts, HISTORY, commit_key};
use crate::workspace::Workspace;
use anyhow::Result;
use rayon::prelude::*;
use std::collections::HashMap;

/// The facts of the `max` most recent commits reachable from `tip` (newest first). Facts the
/// store lacks (and facts whose segment is gone or damaged) are computed and stored; the rest
/// are read. `index` calls this for every revision it indexes, so a question never diffs trees.
pub fn recent(ws: &Workspace, tip: &str, max: usize) -> Result<Vec<CommitFacts>> {
    Ok(recent_counted(ws, tip, max)?.0)
}

/// The same, with how many commits had to be computed.
pub fn recent_counted(ws: &Workspace, tip: &str, max: usize) -> Result<(Vec<CommitFacts>, usize)> {
    if max == 0 {
        return Ok((Vec::new(), 0));
    }
    let t = std::time::Instant::now();
    let commits = ws.repo.walk_ids(tip, max)?;
    tracing::debug!("history: walked {} commits in {:.1} ms", commits.len(), t.elapsed().as_secs_f64() * 1000.0);
    let fp = history::fingerprint();
    let cat = ws.store.catalogs(HISTORY, &fp)?;
    let mut by_key: HashMap<crate::store::Key, CommitFacts> = HashMap::with_capacity(commits.len());
    // Stored facts, each segment decoded once; a segment that cannot be read (deleted,
    // damaged) leaves its commits to be computed again.
    let keys = commits.iter().map(|(id, _)| ((), commit_key(id)));
    for g in cat.by_segment(keys, |_| true) {
        let batch = match ws.store.read_segment(g.dir, &g.name) {
            Ok(b) => b,
            Err(e) => {
                tracing::debug!("history segment {} unreadable ({e:#}); its commits are computed again", g.name);
                continue;
            }
        };
        for (_, row, _) in g.rows() {
            if let Ok(facts) = history::read(&batch, row) {
                by_key.insert(facts.key, facts);
            }
        }
    }
    let missing: Vec<&(gix::ObjectId, Vec<gix::ObjectId>)> = commits.iter().filter(|(id, _)| !by_key.contains_key(&commit_key(id))).collect();
    let mut computed: Vec<CommitFacts> = missing
        .par_iter()
        .map(|(id, parents)| {
            let (subject, time) = ws.repo.subject_and_time(*id).unwrap_or_default();
            // Merges and root commits name no change of their own.
            let paths = match parents.as_slice() {
                [parent] => ws.repo.changed_paths(*parent, *id).map(|v| v.into_iter().map(|(p, _)| p).collect()).unwrap_or_default(),
                _ => Vec::new(),
            };
            CommitFacts { key: commit_key(id), subject, time, paths }
        })
        .collect();
    let n_computed = computed.len();
    if !computed.is_empty() {
        computed.sort_by(|a, b| a.key.cmp(&b.key));
        let (batch, keys) = history::to_batch(&computed)?;
        let name = ws.store.write_segment(HISTORY, &fp, &batch)?;
        ws.store.commit(HISTORY, &fp, &[(name, keys)])?;
        by_key.extend(computed.into_iter().map(|f| (f.key, f)));
    }
    tracing::debug!("history: {} commits read, {n_computed} computed, in {:.1} ms", commits.len(), t.elapsed().as_secs_f64() * 1000.0);
    Ok((commits.iter().filter_map(|(id, _)| by_key.remove(&commit_key(id))).collect(), n_computed))
}
