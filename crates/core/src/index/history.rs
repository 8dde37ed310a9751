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
    let commits = walk(ws, tip, max)?;
    tracing::debug!("history: walked {} commits in {:.1} ms", commits.len(), t.elapsed().as_secs_f64() * 1000.0);
    let fp = history::fingerprint();
    let cat = ws.store.catalogs(HISTORY, &fp)?;
    let mut by_key: HashMap<crate::store::Key, CommitFacts> = HashMap::with_capacity(commits.len());
    // Stored facts, from each segment's shard; a segment that cannot be read (deleted,
    // damaged) leaves its commits to be computed again.
    let keys = commits.iter().map(|(id, _)| (commit_key(id), commit_key(id)));
    for g in cat.by_segment(keys, |_| true) {
        // The segment is the truth: its shard is not read once it is gone.
        if !ws.store.segment_path(g.dir, &g.name).exists() {
            tracing::debug!("history segment {} is gone; its commits are computed again", g.name);
            continue;
        }
        let shard = match ws.shards.history(&ws.store, g.dir, &g.name) {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!("history segment {} unreadable ({e:#}); its commits are computed again", g.name);
                continue;
            }
        };
        for (key, row, _) in g.rows() {
            if let Some(facts) = shard.facts(row, key) {
                by_key.insert(facts.key, facts);
            }
        }
    }
    let missing: Vec<&(gix::ObjectId, Vec<gix::ObjectId>)> =
        commits.iter().filter(|(id, _)| !by_key.contains_key(&commit_key(id))).collect();
    let mut computed: Vec<CommitFacts> = missing
        .par_iter()
        .map(|(id, parents)| {
            let (subject, time) = ws.repo.subject_and_time(*id).unwrap_or_default();
            // Merges and root commits name no change of their own.
            let paths = match parents.as_slice() {
                [parent] => ws.repo.paths_changed(*parent, *id).unwrap_or_default(),
                _ => Vec::new(),
            };
            CommitFacts { key: commit_key(id), subject, time, paths }
        })
        .collect();
    let n_computed = computed.len();
    // A commit at a shallow clone's boundary lacks its parents here: its facts (no changed
    // paths) hold only until the clone is deepened, so they are used and never stored.
    let boundary: std::collections::HashSet<crate::store::Key> = ws
        .repo
        .local()
        .shallow_commits()
        .ok()
        .flatten()
        .map(|c| c.iter().map(commit_key).collect())
        .unwrap_or_default();
    let (mut stored, passing): (Vec<CommitFacts>, Vec<CommitFacts>) =
        computed.drain(..).partition(|f| !boundary.contains(&f.key));
    if !stored.is_empty() {
        stored.sort_by_key(|a| a.key);
        let (batch, keys) = history::to_batch(&stored)?;
        let name = ws.store.write_segment(HISTORY, &fp, &batch)?;
        crate::shard::history::write_facts(&ws.store.root, &name, &stored)?;
        ws.store.commit(HISTORY, &fp, &[(name, keys)])?;
    }
    by_key.extend(stored.into_iter().chain(passing).map(|f| (f.key, f)));
    tracing::debug!(
        "history: {} commits read, {n_computed} computed, in {:.1} ms",
        commits.len(),
        t.elapsed().as_secs_f64() * 1000.0
    );
    Ok((commits.iter().filter_map(|(id, _)| by_key.remove(&commit_key(id))).collect(), n_computed))
}

/// The `max` most recent commits reachable from `tip` with their parents, as `walk_ids` lists
/// them. A commit's ancestry never changes, so the list is kept per (tip, max) under
/// `.lynx/cache/walks` and read back instead of walking again (a walk decompresses every commit
/// it passes; the list is one small file). Shallow repositories are walked every time: deepening
/// one changes what a commit reaches.
pub fn walk(ws: &Workspace, tip: &str, max: usize) -> Result<Vec<(gix::ObjectId, Vec<gix::ObjectId>)>> {
    let id = ws.repo.resolve(tip)?.commit;
    let hex = crate::repo::hex(&id);
    let path = ws.store.root.join("cache").join("walks").join(&hex[..2]).join(format!("{}-{max}", &hex[2..]));
    if let Some(list) = std::fs::read(&path).ok().and_then(|b| decode_walk(&b, id)) {
        return Ok(list);
    }
    let list = ws.repo.walk_ids(&hex, max)?;
    if !ws.repo.local().is_shallow().unwrap_or(true)
        && let Err(e) = crate::fsutil::write_atomic(&path, &encode_walk(&list))
    {
        tracing::debug!("history walk of {hex} not kept: {e:#}");
    }
    Ok(list)
}

const WALK_MAGIC: &[u8; 8] = b"LYNXWLK1";

/// `LYNXWLK1`, id length u8, then per commit: parent count u8, id, parents; an xxh3-64 of all
/// that last.
fn encode_walk(list: &[(gix::ObjectId, Vec<gix::ObjectId>)]) -> Vec<u8> {
    let id_len = list.first().map_or(20, |(id, _)| id.as_bytes().len());
    let mut out = Vec::with_capacity(9 + list.len() * (2 + 2 * id_len) + 8);
    out.extend_from_slice(WALK_MAGIC);
    out.push(id_len as u8);
    for (id, parents) in list {
        out.push(parents.len().min(255) as u8);
        out.extend_from_slice(id.as_bytes());
        for p in parents.iter().take(255) {
            out.extend_from_slice(p.as_bytes());
        }
    }
    let sum = twox_hash::XxHash3_64::oneshot(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A kept walk, if it is whole, checks out and starts at `tip`; anything else is walked again.
fn decode_walk(b: &[u8], tip: gix::ObjectId) -> Option<Vec<(gix::ObjectId, Vec<gix::ObjectId>)>> {
    let (body, sum) = b.split_at_checked(b.len().checked_sub(8)?)?;
    if body.get(..8)? != WALK_MAGIC || twox_hash::XxHash3_64::oneshot(body) != u64::from_le_bytes(sum.try_into().ok()?)
    {
        return None;
    }
    let id_len = *body.get(8)? as usize;
    if id_len != tip.as_bytes().len() {
        return None;
    }
    let id_at = |at: usize| -> Option<gix::ObjectId> { gix::ObjectId::try_from(body.get(at..at + id_len)?).ok() };
    let mut out = Vec::new();
    let mut at = 9;
    while at < body.len() {
        let n = body[at] as usize;
        let id = id_at(at + 1)?;
        let parents = (0..n).map(|i| id_at(at + 1 + (i + 1) * id_len)).collect::<Option<Vec<_>>>()?;
        out.push((id, parents));
        at += 1 + (n + 1) * id_len;
    }
    (out.first()?.0 == tip).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_walk_reads_back_and_damage_is_refused() {
        let id = |b: u8| gix::ObjectId::from_bytes_or_panic(&[b; 20]);
        let list = vec![(id(1), vec![id(2)]), (id(2), vec![id(3), id(4)]), (id(3), vec![]), (id(4), vec![])];
        let bytes = encode_walk(&list);
        assert_eq!(decode_walk(&bytes, id(1)), Some(list.clone()));
        // Another tip, any flipped byte, any truncation: walked again.
        assert_eq!(decode_walk(&bytes, id(2)), None);
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert_eq!(decode_walk(&b, id(1)), None, "flip at {i}");
            assert_eq!(decode_walk(&bytes[..i], id(1)), None, "truncated to {i}");
        }
    }
}
