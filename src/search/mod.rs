//! Retrieval over a view: BM25 (sparse), dense, and their fusion.

pub mod bm25;
pub mod filter;
pub mod rank;

use crate::analyze;
use crate::view::ViewData;
use anyhow::Result;
use serde::Serialize;

/// Retrieval mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Hybrid,
    Dense,
    Sparse,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Mode> {
        match s {
            "hybrid" => Ok(Mode::Hybrid),
            "dense" => Ok(Mode::Dense),
            "sparse" | "bm25" | "lexical" => Ok(Mode::Sparse),
            other => Err(crate::error::usage(format!("unknown search mode `{other}`: use hybrid, dense or sparse"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Hybrid => "hybrid",
            Mode::Dense => "dense",
            Mode::Sparse => "sparse",
        }
    }
}

/// A ranked chunk.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub ord: u32,
    pub score: f32,
    pub sparse_rank: Option<usize>,
    pub dense_rank: Option<usize>,
    /// Raw retriever scores behind the fused one (BM25, cosine).
    pub sparse_score: Option<f32>,
    pub dense_score: Option<f32>,
}

impl Ranked {
    pub fn sparse(i: usize, ord: u32, score: f32) -> Ranked {
        Ranked { ord, score, sparse_rank: Some(i + 1), dense_rank: None, sparse_score: Some(score), dense_score: None }
    }

    pub fn dense(i: usize, ord: u32, score: f32) -> Ranked {
        Ranked { ord, score, sparse_rank: None, dense_rank: Some(i + 1), sparse_score: None, dense_score: Some(score) }
    }
}

pub use crate::view::table::Allowed;

/// BM25 candidates for `query` (chunk ordinal, score), best first.
pub fn sparse(view: &ViewData, query: &str, pool: usize, allowed: Option<&Allowed>, history: bm25::History) -> Result<Vec<(u32, f32)>> {
    sparse_with(view, query, pool, allowed, history, &QueryAnalysis::default())
}

/// How a query's text becomes weighted terms.
#[derive(Debug, Clone, Default)]
pub struct QueryAnalysis {
    /// Drop the words questions are phrased with.
    pub question_words: bool,
    /// Weight of inflection variants (0: none).
    pub variants: f32,
}

pub fn sparse_with(view: &ViewData, query: &str, pool: usize, allowed: Option<&Allowed>, history: bm25::History, qa: &QueryAnalysis) -> Result<Vec<(u32, f32)>> {
    let mut terms = analyze::weighted_query_terms(query, qa.question_words, qa.variants);
    // Variants count only where the index has them.
    terms.retain(|(t, w)| *w >= 1.0 || bm25::doc_freq(&view.table, t) > 0);
    Ok(bm25::search(&view.table, &terms, pool, allowed, history))
}

/// `k` as asked, or the largest accepted (`config::MAX_K`) with a note saying so.
pub fn clamp_k(k: usize) -> (usize, Option<String>) {
    let max = crate::config::MAX_K;
    if k > max { (max, Some(format!("k = {k} is more than a reading list; answered with the first {max}"))) } else { (k, None) }
}

/// Reciprocal Rank Fusion constant (LynxMCP's and the literature's default).
pub const RRF_K: f32 = 60.0;

/// Fuses ranked lists by weighted RRF: the sparse list contributes 1 / (RRF_K + rank) (rank
/// from 1), the dense list `dense_weight` / (RRF_K + rank).
pub fn rrf(sparse: &[(u32, f32)], dense: &[(u32, f32)], dense_weight: f32) -> Vec<Ranked> {
    rrf_with(sparse, dense, dense_weight, RRF_K)
}

/// Weighted RRF with constant `k`.
pub fn rrf_with(sparse: &[(u32, f32)], dense: &[(u32, f32)], dense_weight: f32, k: f32) -> Vec<Ranked> {
    let mut by_ord: std::collections::HashMap<u32, Ranked> = std::collections::HashMap::new();
    let blank = |ord: u32| Ranked { ord, score: 0.0, sparse_rank: None, dense_rank: None, sparse_score: None, dense_score: None };
    for (i, &(ord, s)) in sparse.iter().enumerate() {
        let e = by_ord.entry(ord).or_insert_with(|| blank(ord));
        e.score += 1.0 / (k + (i + 1) as f32);
        e.sparse_rank = Some(i + 1);
        e.sparse_score = Some(s);
    }
    for (i, &(ord, s)) in dense.iter().enumerate() {
        let e = by_ord.entry(ord).or_insert_with(|| blank(ord));
        e.score += dense_weight / (k + (i + 1) as f32);
        e.dense_rank = Some(i + 1);
        e.dense_score = Some(s);
    }
    let mut v: Vec<Ranked> = by_ord.into_values().collect();
    v.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.sparse_rank.unwrap_or(usize::MAX).cmp(&b.sparse_rank.unwrap_or(usize::MAX))).then(a.ord.cmp(&b.ord)));
    v
}

/// Fuses by scores: each list min-max normalised over its candidates (a candidate missing from
/// a list scores 0 there), the dense list weighted by `dense_weight`.
pub fn linear(sparse: &[(u32, f32)], dense: &[(u32, f32)], dense_weight: f32) -> Vec<Ranked> {
    let norm = |v: &[(u32, f32)]| -> Vec<(u32, f32)> {
        let (lo, hi) = v.iter().fold((f32::MAX, f32::MIN), |(lo, hi), x| (lo.min(x.1), hi.max(x.1)));
        let span = (hi - lo).max(1e-6);
        v.iter().map(|&(o, s)| (o, (s - lo) / span)).collect()
    };
    let mut by_ord: std::collections::HashMap<u32, Ranked> = std::collections::HashMap::new();
    let blank = |ord: u32| Ranked { ord, score: 0.0, sparse_rank: None, dense_rank: None, sparse_score: None, dense_score: None };
    for (i, (&(ord, s), (_, n))) in sparse.iter().zip(norm(sparse)).enumerate() {
        let e = by_ord.entry(ord).or_insert_with(|| blank(ord));
        e.score += n;
        e.sparse_rank = Some(i + 1);
        e.sparse_score = Some(s);
    }
    for (i, (&(ord, s), (_, n))) in dense.iter().zip(norm(dense)).enumerate() {
        let e = by_ord.entry(ord).or_insert_with(|| blank(ord));
        e.score += dense_weight * n;
        e.dense_rank = Some(i + 1);
        e.dense_score = Some(s);
    }
    let mut v: Vec<Ranked> = by_ord.into_values().collect();
    v.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.sparse_rank.unwrap_or(usize::MAX).cmp(&b.sparse_rank.unwrap_or(usize::MAX))).then(a.ord.cmp(&b.ord)));
    v
}

/// Drops byte-identical chunks (same content hash) after the first, keeping order.
pub fn dedup_identical(view: &ViewData, ranked: Vec<Ranked>) -> Vec<Ranked> {
    let mut seen = std::collections::HashSet::with_capacity(ranked.len());
    ranked.into_iter().filter(|r| seen.insert(view.table.chunk_hash(r.ord))).collect()
}
