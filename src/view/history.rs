//! A view's history field: for each file, the subjects of the most recent commits that changed
//! it among the commits reachable from the view's revision, analysed like chunk text. Nothing
//! newer than the revision can reach it: the commits are walked back from the revision itself.
//! BM25 scores it as a file-level field, like the path (`search::bm25`).

use super::table::ChunkTable;
use crate::analyze;
use std::collections::HashMap;

pub struct HistoryField {
    /// term → (file, occurrences in the file's history)
    postings: HashMap<String, Vec<(u32, u32)>>,
    /// Tokens of each file's history.
    lengths: Vec<u32>,
    /// Sum over chunks of their file's history length (for the average).
    pub total: u64,
    /// Commits looked at.
    pub commits: usize,
    /// Per file, how many commits back (from the revision) it last changed; u32::MAX: not seen.
    newest: Vec<u32>,
}

impl HistoryField {
    /// From `commits` (newest first): at most `per_file` subjects per file. Each subject is
    /// analysed once and its terms interned, so the field costs a few allocations per distinct
    /// term, not per (file, term).
    pub fn build(table: &ChunkTable, commits: &[crate::layer::history::CommitFacts], per_file: usize) -> HistoryField {
        let n = table.file_count();
        let mut taken = vec![0usize; n];
        let mut lengths = vec![0u32; n];
        let mut newest = vec![u32::MAX; n];
        let mut ids: HashMap<String, u32> = HashMap::new();
        // (term, file) once per occurrence.
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (age, c) in commits.iter().enumerate() {
            let mut terms: Option<Vec<u32>> = None;
            for p in &c.paths {
                let Some(f) = table.file_of(p) else { continue };
                let fi = f as usize;
                newest[fi] = newest[fi].min(age as u32);
                if taken[fi] >= per_file {
                    continue;
                }
                taken[fi] += 1;
                let t = terms.get_or_insert_with(|| {
                    analyze::tokens(&c.subject)
                        .into_iter()
                        .map(|w| {
                            let next = ids.len() as u32;
                            *ids.entry(w).or_insert(next)
                        })
                        .collect()
                });
                lengths[fi] += t.len() as u32;
                pairs.extend(t.iter().map(|&term| (term, f)));
            }
        }
        pairs.sort_unstable();
        let mut by_id: Vec<Vec<(u32, u32)>> = vec![Vec::new(); ids.len()];
        for (term, f) in pairs {
            let list = &mut by_id[term as usize];
            match list.last_mut() {
                Some((last, tf)) if *last == f => *tf += 1,
                _ => list.push((f, 1)),
            }
        }
        let postings: HashMap<String, Vec<(u32, u32)>> =
            ids.into_iter().map(|(t, id)| (t, std::mem::take(&mut by_id[id as usize]))).collect();
        let total = (0..n as u32).map(|f| lengths[f as usize] as u64 * table.file_chunk_count(f) as u64).sum();
        HistoryField { postings, lengths, total, commits: commits.len(), newest }
    }

    /// How recently `file` changed, from 1 (in the revision's own commit) falling by half every
    /// `half_life` commits back; 0 when it did not change in the commits looked at.
    pub fn recency(&self, file: u32, half_life: f32) -> f32 {
        match self.newest.get(file as usize) {
            Some(&age) if age != u32::MAX => (-(age as f32) * std::f32::consts::LN_2 / half_life.max(1.0)).exp(),
            _ => 0.0,
        }
    }

    /// Files whose history holds `term`, with its number of occurrences.
    pub fn postings(&self, term: &str) -> &[(u32, u32)] {
        self.postings.get(term).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn length(&self, file: u32) -> u32 {
        self.lengths.get(file as usize).copied().unwrap_or(0)
    }
}
