//! A view's history field: for each file, the subjects of the most recent commits that changed
//! it among the commits reachable from the view's revision, analysed like chunk text. Nothing
//! newer than the revision can reach it: the commits are walked back from the revision itself.
//! BM25 scores it as a file-level field, like the path (`search::bm25`).

use super::table::ChunkTable;
use crate::analyze;
use std::collections::HashMap;

/// Term occurrences a view's history field holds at most (8 bytes each while it is built).
pub const MAX_OCCURRENCES: usize = 1 << 22;

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

/// Commits of a history walk with their subjects analysed once: what a history field needs
/// that does not depend on the view's table, so it is made on the other core while the view is
/// assembled, and kept with the walk for the next view at the same tip.
pub struct Recent {
    pub commits: Vec<crate::layer::history::CommitFacts>,
    /// Distinct terms of all subjects.
    names: Vec<String>,
    /// Each commit's subject as ids into `names`.
    terms: Vec<Vec<u32>>,
}

impl Recent {
    pub fn new(commits: Vec<crate::layer::history::CommitFacts>) -> Recent {
        let mut at: HashMap<String, u32> = HashMap::new();
        let mut names = Vec::new();
        let terms = commits
            .iter()
            .map(|c| {
                let mut ids = Vec::new();
                analyze::tokenize(&c.subject, |w| {
                    let id = match at.get(w) {
                        Some(&id) => id,
                        None => {
                            let id = names.len() as u32;
                            names.push(w.to_string());
                            at.insert(w.to_string(), id);
                            id
                        }
                    };
                    ids.push(id);
                });
                ids
            })
            .collect();
        Recent { commits, names, terms }
    }
}

impl HistoryField {
    /// From `recent` (newest first): at most `per_file` subjects per file.
    pub fn build(table: &ChunkTable, recent: &Recent, per_file: usize) -> HistoryField {
        let n = table.file_count();
        let mut taken = vec![0usize; n];
        let mut lengths = vec![0u32; n];
        let mut newest = vec![u32::MAX; n];
        // (term, file) once per occurrence.
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (age, (c, t)) in recent.commits.iter().zip(&recent.terms).enumerate() {
            for p in &c.paths {
                let Some(f) = table.file_of(p) else { continue };
                let fi = f as usize;
                newest[fi] = newest[fi].min(age as u32);
                // A view's field holds at most `MAX_OCCURRENCES` terms in all: commits that touch
                // thousands of files each cannot make it gigabytes.
                if taken[fi] >= per_file || pairs.len() + t.len() > MAX_OCCURRENCES {
                    continue;
                }
                taken[fi] += 1;
                lengths[fi] += t.len() as u32;
                pairs.extend(t.iter().map(|&term| (term, f)));
            }
        }
        pairs.sort_unstable();
        let mut by_id: Vec<Vec<(u32, u32)>> = vec![Vec::new(); recent.names.len()];
        for (term, f) in pairs {
            let list = &mut by_id[term as usize];
            match list.last_mut() {
                Some((last, tf)) if *last == f => *tf += 1,
                _ => list.push((f, 1)),
            }
        }
        let postings: HashMap<String, Vec<(u32, u32)>> = by_id
            .into_iter()
            .enumerate()
            .filter(|(_, list)| !list.is_empty())
            .map(|(id, list)| (recent.names[id].clone(), list))
            .collect();
        let total = total(&lengths, table);
        HistoryField { postings, lengths, total, commits: recent.commits.len(), newest }
    }

    /// The field over `table`, a table of the same files in the same order as the one it was
    /// built for (their chunks may differ: only the total depends on them).
    pub fn over(mut self, table: &ChunkTable) -> HistoryField {
        self.total = total(&self.lengths, table);
        self
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

/// Sum over the table's chunks of their file's history length.
fn total(lengths: &[u32], table: &ChunkTable) -> u64 {
    (0..lengths.len() as u32).map(|f| lengths[f as usize] as u64 * table.file_chunk_count(f) as u64).sum()
}

/// Sections a history field takes inside a kept view (`view::kept`): its terms (offsets and
/// heap), each term's postings (offsets, then (file, occurrences) pairs), the files' lengths and
/// how many commits back each last changed.
pub const SECTIONS: usize = 6;

impl HistoryField {
    /// Appends the field as `SECTIONS` sections, terms in sorted order (the same bytes in any
    /// process); `total` and `commits` go in the record's header.
    pub fn encode(&self, w: &mut crate::shard::Writer) {
        let mut terms: Vec<&String> = self.postings.keys().collect();
        terms.sort_unstable();
        let names: Vec<String> = terms.iter().map(|t| t.to_string()).collect();
        let (at, heap) = super::table::string_table(&names);
        let mut post_at = Vec::with_capacity(terms.len() + 1);
        let mut flat = Vec::new();
        post_at.push(0u32);
        for t in &terms {
            flat.extend(self.postings[*t].iter().flat_map(|&(f, n)| [f, n]));
            post_at.push(flat.len() as u32);
        }
        w.section_u32(&at);
        w.section(heap);
        w.section_u32(&post_at);
        w.section_u32(&flat);
        w.section_u32(&self.lengths);
        w.section_u32(&self.newest);
    }

    /// A field written by `encode` for a table of `files` files, checked like the table.
    pub fn decode(
        file: &crate::shard::File,
        at: usize,
        files: usize,
        total: u64,
        commits: usize,
    ) -> anyhow::Result<HistoryField> {
        let bad = |why: &str| anyhow::anyhow!("kept view {}: history field: {why}", file.path.display());
        let names = super::table::strings(file.u32s(at)?, file.bytes(at + 1)?).ok_or_else(|| bad("terms"))?;
        let post_at = file.u32s(at + 2)?;
        let flat = file.u32s(at + 3)?;
        let lengths = file.u32s(at + 4)?.to_vec();
        let newest = file.u32s(at + 5)?.to_vec();
        if lengths.len() != files || newest.len() != files {
            return Err(bad("per-file tables do not match the view"));
        }
        let ordered = post_at.first() == Some(&0)
            && post_at.windows(2).all(|w| w[0] <= w[1] && w[0] % 2 == 0)
            && post_at.last().is_some_and(|&e| e as usize == flat.len());
        if post_at.len() != names.len() + 1 || !ordered || flat.chunks(2).any(|p| p[0] as usize >= files) {
            return Err(bad("postings out of bounds"));
        }
        let postings = names
            .into_iter()
            .zip(post_at.windows(2))
            .map(|(t, w)| (t, flat[w[0] as usize..w[1] as usize].chunks_exact(2).map(|p| (p[0], p[1])).collect()))
            .collect();
        Ok(HistoryField { postings, lengths, total, commits, newest })
    }
}
