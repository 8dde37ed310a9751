//! BM25 over a view, exactly: the postings of the query's terms are read from the view's
//! shared postings shards, restricted to the rows the view holds, and scored with the view's own
//! statistics (live chunk count, average field lengths, document frequencies counted over the
//! view). Three fields per chunk, weighted: its text, its symbol, its path (the path field is
//! the view's: the same blob can sit at several paths). Nothing depends on which other views
//! exist or how the shards were built, so a view answers the same wherever it is assembled.
//! Scoring is exhaustive over the matching chunks (no pruning), in a fixed order of terms and
//! fields, so scores are reproducible to the last bit.

use crate::view::table::Allowed;
use crate::view::table::{ChunkTable, NONE};

/// Field weights. The symbol and path fields are short, so BM25's length normalisation already
/// makes a match there count for more than one in the body; heavier boosts measured worse on
/// natural-language questions (docs/EVALUATION.md).
pub const CONTENT_BOOST: f32 = 1.0;
pub const SYMBOL_BOOST: f32 = 1.0;
pub const PATH_BOOST: f32 = 1.25;

/// BM25's term-frequency saturation and length normalisation (the usual constants).
pub const K1: f32 = 1.2;
pub const B: f32 = 0.75;
/// Length normalisation of a chunk's text, far weaker than the usual 0.75. A chunk is already
/// bounded by the chunker (one definition, or a window), so its length says how much the code
/// does, not how wordy it is; full normalisation let a one-line mention of a word outrank the
/// definition that uses it throughout. Measured on development sets of four kinds and then,
/// once, on repositories held out from tuning (docs/EVALUATION.md): 0.05–0.25 is a plateau.
pub const TEXT_B: f32 = 0.15;

/// Inverse document frequency as Lucene and tantivy define it (never negative).
pub fn idf(docs: u64, df: u64) -> f32 {
    let (n, df) = (docs as f32, df as f32);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// One term's BM25 weight in a document of length `len` (average `avg`), normalised for
/// length by `b`.
#[inline]
pub fn term_score(idf: f32, tf: f32, len: f32, avg: f32, b: f32) -> f32 {
    idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - b + b * len / avg))
}

/// Reusable buffers for one search (kept by callers that search many times).
#[derive(Default)]
pub struct Scratch {
    scores: Vec<f32>,
    hit: Vec<bool>,
    touched: Vec<u32>,
    postings: Vec<(u32, u32)>,
}

/// Scratches of finished searches, reused: a monorepo view's is 3 MB that a fresh one pays in
/// page faults and zeroing at every question.
static POOL: std::sync::Mutex<Vec<Scratch>> = std::sync::Mutex::new(Vec::new());

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.scores.capacity() > 0
            && let Ok(mut pool) = POOL.lock()
            && pool.len() < 4
        {
            pool.push(std::mem::take(self));
        }
    }
}

impl Scratch {
    /// A scratch from an earlier search when one is free, else a new one.
    pub fn pooled() -> Scratch {
        POOL.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default()
    }

    /// Chunk `ord`'s score in the last search (0 when no query term matched it).
    pub fn score(&self, ord: u32) -> f32 {
        self.scores.get(ord as usize).copied().unwrap_or(0.0)
    }
}

/// A file-level field beside the chunk's own: the history of the chunk's file, with its weight.
pub type History<'a> = Option<(&'a crate::view::history::HistoryField, f32)>;

/// Top `k` chunk ordinals of `table` for the analysed query `terms`, best first (ties: lower
/// ordinal first), among `allowed` ordinals when given. Statistics are the whole view's.
pub fn search(
    table: &ChunkTable,
    terms: &[(String, f32)],
    k: usize,
    allowed: Option<&Allowed>,
    history: History,
) -> Vec<(u32, f32)> {
    search_with(table, terms, k, allowed, history, &mut Scratch::default())
}

pub fn search_with(
    table: &ChunkTable,
    terms: &[(String, f32)],
    k: usize,
    allowed: Option<&Allowed>,
    history: History,
    s: &mut Scratch,
) -> Vec<(u32, f32)> {
    let n = table.len();
    if terms.is_empty() || k == 0 || n == 0 {
        return Vec::new();
    }
    // Only what the last search touched is non-zero: clearing that is cheaper than clearing
    // every chunk's slot.
    if s.scores.len() == n && s.hit.len() == n {
        for &o in &s.touched {
            s.scores[o as usize] = 0.0;
            s.hit[o as usize] = false;
        }
    } else {
        s.scores.clear();
        s.scores.resize(n, 0.0);
        s.hit.clear();
        s.hit.resize(n, false);
    }
    s.touched.clear();
    let mut postings = std::mem::take(&mut s.postings);
    each_field_score(table, terms, &mut postings, |_, _, o, v| add(s, o, v));
    s.postings = postings;
    // History: the subjects of the commits that changed the chunk's file. Evidence for chunks
    // the query already matched, never a match of its own (a file is not found for words only
    // its commits used, such as a name it no longer contains).
    if let Some((h, boost)) = history {
        each_history_score(table, terms, h, boost, |_, o, v| {
            if s.hit[o as usize] {
                s.scores[o as usize] += v;
            }
        });
    }
    let mut out: Vec<(u32, f32)> = s
        .touched
        .iter()
        .filter(|&&o| allowed.is_none_or(|a| a.contains(o)))
        .map(|&o| (o, s.scores[o as usize]))
        .collect();
    top_k(&mut out, k);
    out
}

/// The field of a chunk a query term matched in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    Text,
    Symbol,
    Path,
    History,
}

/// Calls `f(term index, field, ordinal, score)` for every (term, field, chunk) match, in the
/// fixed order scores are summed in.
fn each_field_score(
    table: &ChunkTable,
    terms: &[(String, f32)],
    postings: &mut Vec<(u32, u32)>,
    mut f: impl FnMut(usize, Field, u32, f32),
) {
    let n = table.len();
    let docs = n as u64;
    let avg = table.totals.map(|t| (t as f32 / n as f32).max(1e-6));
    for (ti, (term, tw)) in terms.iter().enumerate() {
        let (term, tw) = (term.as_str(), *tw);
        // Chunk text.
        content_postings(table, term, postings);
        if !postings.is_empty() {
            let w = tw * CONTENT_BOOST * idf(docs, postings.len() as u64);
            for &(o, tf) in postings.iter() {
                let len = table.tokens(o).content as f32;
                f(ti, Field::Text, o, w * term_score(1.0, tf as f32, len, avg[0], TEXT_B));
            }
        }
        // Symbol.
        symbol_postings(table, term, postings);
        if !postings.is_empty() {
            let w = tw * SYMBOL_BOOST * idf(docs, postings.len() as u64);
            for &(o, _) in postings.iter() {
                let len = table.tokens(o).symbol as f32;
                f(ti, Field::Symbol, o, w * term_score(1.0, 1.0, len, avg[1], B));
            }
        }
        // Path: every chunk of a file shares its path's terms.
        let files = table.path_postings(term);
        if !files.is_empty() {
            let df: u64 = files.iter().map(|&(fi, _)| table.file_chunk_count(fi) as u64).sum();
            if df > 0 {
                let w = tw * PATH_BOOST * idf(docs, df);
                for &(fi, tf) in files {
                    for o in table.file_ords(fi) {
                        let len = table.tokens(o).path as f32;
                        f(ti, Field::Path, o, w * term_score(1.0, tf as f32, len, avg[2], B));
                    }
                }
            }
        }
    }
}

/// Calls `f(term index, ordinal, score)` for every chunk whose file's history holds a term
/// (counted only for chunks a field matched).
fn each_history_score(
    table: &ChunkTable,
    terms: &[(String, f32)],
    h: &crate::view::history::HistoryField,
    boost: f32,
    mut f: impl FnMut(usize, u32, f32),
) {
    let n = table.len();
    let docs = n as u64;
    let avg_h = (h.total as f32 / n as f32).max(1e-6);
    for (ti, (term, tw)) in terms.iter().enumerate() {
        let files = h.postings(term);
        let df: u64 = files.iter().map(|&(fi, _)| table.file_chunk_count(fi) as u64).sum();
        if df == 0 {
            continue;
        }
        let w = tw * boost * idf(docs, df);
        for &(fi, tf) in files {
            let len = h.length(fi) as f32;
            for o in table.file_ords(fi) {
                f(ti, o, w * term_score(1.0, tf as f32, len, avg_h, B));
            }
        }
    }
}

/// One term's share of a chunk's BM25 score.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct TermScore {
    pub term: String,
    pub field: Field,
    pub score: f32,
}

/// Why each of `ords` scored what it did: its matches per term and field, in scoring order
/// (their sum is the chunk's BM25 score).
pub fn explain(table: &ChunkTable, terms: &[(String, f32)], history: History, ords: &[u32]) -> Vec<Vec<TermScore>> {
    let at: std::collections::HashMap<u32, usize> = ords.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let mut out: Vec<Vec<TermScore>> = vec![Vec::new(); ords.len()];
    if table.is_empty() {
        return out;
    }
    let mut postings = Vec::new();
    each_field_score(table, terms, &mut postings, |ti, field, o, v| {
        if let Some(&i) = at.get(&o) {
            out[i].push(TermScore { term: terms[ti].0.clone(), field, score: v });
        }
    });
    if let Some((h, boost)) = history {
        each_history_score(table, terms, h, boost, |ti, o, v| {
            if let Some(&i) = at.get(&o)
                && !out[i].is_empty()
            {
                out[i].push(TermScore { term: terms[ti].0.clone(), field: Field::History, score: v });
            }
        });
    }
    out
}

#[inline]
fn add(s: &mut Scratch, o: u32, v: f32) {
    let i = o as usize;
    if !s.hit[i] {
        s.hit[i] = true;
        s.touched.push(o);
    }
    s.scores[i] += v;
}

pub use crate::view::top_k;

/// (ordinal, frequency) of the view's chunks whose text holds `term`.
fn content_postings(table: &ChunkTable, term: &str, out: &mut Vec<(u32, u32)>) {
    out.clear();
    for (shard, ords) in table.lex_shards.iter().zip(&table.lex_ords) {
        shard.content(term, |row, tf| push_holders(table, ords, row, tf, out));
    }
}

/// (ordinal, 1) of the view's chunks whose symbol holds `term`.
fn symbol_postings(table: &ChunkTable, term: &str, out: &mut Vec<(u32, u32)>) {
    out.clear();
    for (shard, ords) in table.lex_shards.iter().zip(&table.lex_ords) {
        shard.symbol(term, |row, tf| push_holders(table, ords, row, tf, out));
    }
}

#[inline]
fn push_holders(table: &ChunkTable, ords: &[u32], row: u32, tf: u32, out: &mut Vec<(u32, u32)>) {
    let mut o = ords.get(row as usize).copied().unwrap_or(NONE);
    while o != NONE {
        out.push((o, tf));
        o = table.same_row.get(o as usize).copied().unwrap_or(NONE);
    }
}

/// Whether the text of a chunk of the view holds `term` (a common word's list is not decoded
/// past its first chunk in the view).
pub fn occurs(table: &ChunkTable, term: &str) -> bool {
    table
        .lex_shards
        .iter()
        .zip(&table.lex_ords)
        .any(|(shard, ords)| shard.content_any(term, |row| ords.get(row as usize).is_some_and(|&o| o != NONE)))
}

/// Whole-file BM25 (the evaluation baseline): one document per file, its chunks' text
/// concatenated, analysed with the same analyser, one field, no priors.
pub struct FileBm25 {
    /// term → (document, frequency)
    postings: std::collections::HashMap<String, Vec<(u32, u32)>>,
    /// (file id, length) per document
    docs: Vec<(u32, u32)>,
    avg: f32,
}

impl FileBm25 {
    pub fn build(files: &[(u32, String)]) -> FileBm25 {
        let mut postings: std::collections::HashMap<String, Vec<(u32, u32)>> = Default::default();
        let mut docs = Vec::new();
        for (f, text) in files {
            if text.is_empty() {
                continue;
            }
            let d = docs.len() as u32;
            let mut len = 0u32;
            let mut counts: indexmap::IndexMap<String, u32> = Default::default();
            crate::analyze::tokenize(text, |t| {
                len += 1;
                *counts.entry(t.to_string()).or_default() += 1;
            });
            for (t, n) in counts {
                postings.entry(t).or_default().push((d, n));
            }
            docs.push((*f, len));
        }
        let total: u64 = docs.iter().map(|d| d.1 as u64).sum();
        let avg = if docs.is_empty() { 1.0 } else { (total as f32 / docs.len() as f32).max(1e-6) };
        FileBm25 { postings, docs, avg }
    }

    /// Top files (file id, score).
    pub fn search(&self, terms: &[String], k: usize) -> Vec<(u32, f32)> {
        if terms.is_empty() || k == 0 {
            return Vec::new();
        }
        let mut scores: std::collections::HashMap<u32, f32> = Default::default();
        for t in terms {
            let Some(p) = self.postings.get(t) else { continue };
            let w = idf(self.docs.len() as u64, p.len() as u64);
            for &(d, tf) in p {
                *scores.entry(d).or_default() += term_score(w, tf as f32, self.docs[d as usize].1 as f32, self.avg, B);
            }
        }
        let mut out: Vec<(u32, f32)> = scores.into_iter().map(|(d, s)| (self.docs[d as usize].0, s)).collect();
        top_k(&mut out, k);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_file_scores_ignore_empty_slots() {
        let files = vec![
            (0, "retry backoff retry".to_string()),
            (1, "backoff only here".to_string()),
            (2, "unrelated words".to_string()),
        ];
        let mut padded = files.clone();
        padded.extend((3..40).map(|f| (f, String::new())));
        let terms = vec!["retry".to_string(), "backoff".to_string()];
        let a = FileBm25::build(&files).search(&terms, 10);
        let b = FileBm25::build(&padded).search(&terms, 10);
        assert_eq!(a.len(), 2);
        assert_eq!(a, b);
        assert_eq!(a[0].0, 0, "two matching terms beat one");
    }

    #[test]
    fn bm25_arithmetic() {
        // idf of a term in 1 of 10 documents, and the saturation of its frequency.
        let w = idf(10, 1);
        assert!((w - (1.0f32 + 9.5 / 1.5).ln()).abs() < 1e-6);
        let one = term_score(w, 1.0, 10.0, 10.0, B);
        let two = term_score(w, 2.0, 10.0, 10.0, B);
        assert!((one - w).abs() < 1e-6, "tf 1 at average length scores the idf");
        assert!(two > one && two < 2.0 * one, "frequency saturates");
        assert!(term_score(w, 1.0, 20.0, 10.0, B) < one, "longer documents score lower");
        // Twice the average length: 2.2 / (1 + 1.2 (1 - b + 2b)), so 2.2 / 3.1 with the usual
        // normalisation and 2.2 / 2.38 with a chunk text's.
        assert!((term_score(1.0, 1.0, 20.0, 10.0, B) - 2.2 / 3.1).abs() < 1e-6);
        assert!((term_score(1.0, 1.0, 20.0, 10.0, TEXT_B) - 2.2 / 2.38).abs() < 1e-6);
        let mut v = vec![(3, 1.0), (1, 2.0), (2, 2.0), (0, 0.5)];
        top_k(&mut v, 3);
        assert_eq!(v, vec![(1, 2.0), (2, 2.0), (3, 1.0)]);
    }
}
