//! Retrieval over a view: BM25 (sparse), dense, and their fusion.

pub mod bm25;
pub mod filter;
pub mod rank;
pub mod searcher;

use crate::analyze;
use crate::view::ViewData;
use anyhow::Result;

/// The retrieval mode (owned by the configuration, where it is parsed).
pub use crate::config::SearchMode as Mode;

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
    /// The score retrieval gave, before priors and file evidence.
    pub fused: f32,
    /// The factor of being a further chunk of a file listed higher up (1: the file's first).
    pub decay: f32,
    /// Added to the retrieval score before the priors: the query naming the chunk's path or the
    /// symbol it defines, and the weight of its file's other candidates.
    pub boost: f32,
}

impl Ranked {
    /// A candidate neither list has scored yet.
    pub fn unscored(ord: u32) -> Ranked {
        Ranked {
            ord,
            score: 0.0,
            sparse_rank: None,
            dense_rank: None,
            sparse_score: None,
            dense_score: None,
            fused: 0.0,
            decay: 1.0,
            boost: 0.0,
        }
    }

    pub fn sparse(i: usize, ord: u32, score: f32) -> Ranked {
        Ranked { score, sparse_rank: Some(i + 1), sparse_score: Some(score), fused: score, ..Ranked::unscored(ord) }
    }

    pub fn dense(i: usize, ord: u32, score: f32) -> Ranked {
        Ranked { score, dense_rank: Some(i + 1), dense_score: Some(score), fused: score, ..Ranked::unscored(ord) }
    }
}

pub use crate::view::table::Allowed;

/// BM25 candidates for `query` (chunk ordinal, score), best first.
pub fn sparse(
    view: &ViewData,
    query: &str,
    pool: usize,
    allowed: Option<&Allowed>,
    history: bm25::History,
) -> Result<Vec<(u32, f32)>> {
    sparse_with(view, query, pool, allowed, history, &QueryAnalysis::default())
}

/// How a query's text becomes weighted terms.
#[derive(Debug, Clone, Default)]
pub struct QueryAnalysis {
    /// Drop the words questions are phrased with.
    pub question_words: bool,
    /// Weight of inflection variants (0: none).
    pub variants: f32,
    /// The repository's synonyms, if it has a file of them.
    pub synonyms: Option<std::sync::Arc<Synonyms>>,
}

/// Weight of a synonym beside the word the query wrote.
pub const SYNONYM_WEIGHT: f32 = 0.6;

/// Groups of words that mean the same in a code base (`auth, authentication, login`), one group
/// per line, `#` comments; a query word of a group also searches the others, at
/// [`SYNONYM_WEIGHT`]. Entries go through the same analyser as queries.
#[derive(Debug, Default)]
pub struct Synonyms {
    by_term: std::collections::HashMap<String, Vec<String>>,
}

impl Synonyms {
    pub fn parse(text: &str) -> Synonyms {
        let mut by_term: std::collections::HashMap<String, Vec<String>> = Default::default();
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let group: Vec<String> = line.split([',', '=']).flat_map(analyze::query_terms).collect();
            for t in &group {
                let e = by_term.entry(t.clone()).or_default();
                for o in &group {
                    if o != t && !e.contains(o) {
                        e.push(o.clone());
                    }
                }
            }
        }
        Synonyms { by_term }
    }

    pub fn of(&self, term: &str) -> &[String] {
        self.by_term.get(term).map_or(&[], Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.by_term.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_term.is_empty()
    }
}

pub fn sparse_with(
    view: &ViewData,
    query: &str,
    pool: usize,
    allowed: Option<&Allowed>,
    history: bm25::History,
    qa: &QueryAnalysis,
) -> Result<Vec<(u32, f32)>> {
    Ok(sparse_scored(view, query, pool, allowed, history, qa).0)
}

/// BM25 candidates, and the scratch that holds every chunk's exact score for the query
/// (`Scratch::score`), for fusion that needs scores beyond the pool.
pub fn sparse_scored(
    view: &ViewData,
    query: &str,
    pool: usize,
    allowed: Option<&Allowed>,
    history: bm25::History,
    qa: &QueryAnalysis,
) -> (Vec<(u32, f32)>, bm25::Scratch) {
    let terms = query_terms(view, query, qa);
    let mut scratch = bm25::Scratch::pooled();
    let hits = bm25::search_with(&view.table, &terms, pool, allowed, history, &mut scratch);
    (hits, scratch)
}

/// The weighted terms BM25 scores `query` with in `view`.
pub fn query_terms(view: &ViewData, query: &str, qa: &QueryAnalysis) -> Vec<(String, f32)> {
    let mut terms = analyze::weighted_query_terms(query, qa.question_words, qa.variants);
    if let Some(syn) = &qa.synonyms {
        let written: Vec<(String, f32)> = terms.iter().filter(|t| t.1 >= 1.0).cloned().collect();
        for (t, w) in written {
            for o in syn.of(&t) {
                if !terms.iter().any(|x| &x.0 == o) {
                    terms.push((o.clone(), w * SYNONYM_WEIGHT));
                }
            }
        }
    }
    // Variants and synonyms count only where the index has them.
    terms.retain(|(t, w)| *w >= 1.0 || bm25::occurs(&view.table, t));
    terms
}

/// `k` as asked, or the largest accepted (`config::MAX_K`) with a note saying so.
pub fn clamp_k(k: usize) -> (usize, Option<String>) {
    let max = crate::config::MAX_K;
    if k > max {
        (max, Some(format!("k = {k} is more than a reading list; answered with the first {max}")))
    } else {
        (k, None)
    }
}

/// Reciprocal Rank Fusion constant.
pub const RRF_K: f32 = crate::config::DEFAULT_RRF_K;

/// Fuses ranked lists by weighted RRF: the sparse list contributes 1 / (k + rank) (rank from
/// 1), the dense list `dense_weight` / (k + rank).
pub fn rrf_with(sparse: &[(u32, f32)], dense: &[(u32, f32)], dense_weight: f32, k: f32) -> Vec<Ranked> {
    let mut by_ord: std::collections::HashMap<u32, Ranked> = std::collections::HashMap::new();
    for (i, &(ord, s)) in sparse.iter().enumerate() {
        let e = by_ord.entry(ord).or_insert_with(|| Ranked::unscored(ord));
        e.score += 1.0 / (k + (i + 1) as f32);
        e.sparse_rank = Some(i + 1);
        e.sparse_score = Some(s);
    }
    for (i, &(ord, s)) in dense.iter().enumerate() {
        let e = by_ord.entry(ord).or_insert_with(|| Ranked::unscored(ord));
        e.score += dense_weight / (k + (i + 1) as f32);
        e.dense_rank = Some(i + 1);
        e.dense_score = Some(s);
    }
    let mut v: Vec<Ranked> = by_ord.into_values().collect();
    v.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.sparse_rank.unwrap_or(usize::MAX).cmp(&b.sparse_rank.unwrap_or(usize::MAX)))
            .then(a.ord.cmp(&b.ord))
    });
    v
}

/// Fuses by a convex combination of normalised scores over the union of both candidate lists:
/// `(1 - w) * bm25 / max_bm25 + w * max(cos, 0) / max_cos`, the maxima taken over the
/// candidates. Every candidate has both scores, computed rather than assumed (`bm25` and `cos`
/// give any chunk's exact score; `cos` is `None` for a chunk not yet embedded, scored 0): a
/// chunk one retriever missed is not scored as if that retriever had found nothing. Unlike rank
/// fusion this keeps the margins: a BM25 winner far ahead of the rest is not overtaken by the
/// dense list's favourite on rank alone. Both sides are divided by their best, so each keeps
/// its own spread: when the cosines of all candidates lie close together (the model does not
/// tell them apart) the dense side moves the order little, where stretching them to 0..1 gave
/// its noise the full weight (measured in docs/EVALUATION.md).
pub fn convex(
    sparse: &[(u32, f32)],
    dense: &[(u32, f32)],
    bm25: impl Fn(u32) -> f32,
    cos: impl Fn(u32) -> Option<f32>,
    w: f32,
) -> Vec<Ranked> {
    let mut by_ord: std::collections::HashMap<u32, Ranked> =
        std::collections::HashMap::with_capacity(sparse.len() + dense.len());
    for (i, &(ord, s)) in sparse.iter().enumerate() {
        let e = by_ord.entry(ord).or_insert_with(|| Ranked::unscored(ord));
        e.sparse_rank = Some(i + 1);
        e.sparse_score = Some(s);
    }
    for (i, &(ord, c)) in dense.iter().enumerate() {
        let e = by_ord.entry(ord).or_insert_with(|| Ranked::unscored(ord));
        e.dense_rank = Some(i + 1);
        e.dense_score = Some(c);
    }
    let mut v: Vec<Ranked> = by_ord.into_values().collect();
    for e in v.iter_mut() {
        e.sparse_score.get_or_insert_with(|| bm25(e.ord));
        if e.dense_score.is_none() {
            e.dense_score = cos(e.ord);
        }
    }
    let smax = v.iter().filter_map(|e| e.sparse_score).fold(0f32, f32::max).max(1e-6);
    let cmax = v.iter().filter_map(|e| e.dense_score).fold(0f32, f32::max).max(1e-6);
    for e in v.iter_mut() {
        let s = e.sparse_score.unwrap_or(0.0) / smax;
        let c = e.dense_score.unwrap_or(0.0).max(0.0) / cmax;
        e.score = (1.0 - w) * s + w * c;
    }
    v.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.sparse_rank.unwrap_or(usize::MAX).cmp(&b.sparse_rank.unwrap_or(usize::MAX)))
            .then(a.ord.cmp(&b.ord))
    });
    v
}

/// Drops byte-identical chunks (same content hash) after the first, keeping order.
pub fn dedup_identical(view: &ViewData, ranked: Vec<Ranked>) -> Vec<Ranked> {
    let mut seen = std::collections::HashSet::with_capacity(ranked.len());
    ranked.into_iter().filter(|r| seen.insert(view.table.chunk_hash(r.ord))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convex_scores_every_candidate_by_both_retrievers() {
        // Chunk 1 leads BM25 by far; chunk 2 leads the cosines; chunk 3 was found by BM25 only
        // and chunk 4 by the dense list only: their other score is looked up, not assumed 0.
        let sparse = [(1u32, 10.0f32), (2, 2.0), (3, 1.0)];
        let dense = [(2u32, 0.9f32), (4, 0.8), (1, 0.5)];
        let bm25 = |o: u32| if o == 4 { 4.0 } else { panic!("{o} has its BM25 score already") };
        let cos = |o: u32| if o == 3 { Some(0.3) } else { panic!("{o} has its cosine already") };
        let v = convex(&sparse, &dense, bm25, cos, 0.4);
        let score = |o: u32| v.iter().find(|r| r.ord == o).unwrap().score;
        // BM25 / 10; cosine / 0.9.
        let want = |s: f32, c: f32| 0.6 * s / 10.0 + 0.4 * c / 0.9;
        for (o, s, c) in [(1, 10.0, 0.5), (2, 2.0, 0.9), (3, 1.0, 0.3), (4, 4.0, 0.8)] {
            assert!((score(o) - want(s, c)).abs() < 1e-6, "chunk {o}: {} vs {}", score(o), want(s, c));
        }
        // The margin holds: rank fusion would put chunk 2 first (ranks 2 and 1 against 1 and 3).
        assert_eq!(v.iter().map(|r| r.ord).collect::<Vec<_>>(), [1, 4, 2, 3]);
        assert_eq!(rrf_with(&sparse, &dense, 1.0, RRF_K)[0].ord, 2);
        let four = v.iter().find(|r| r.ord == 4).unwrap();
        assert_eq!((four.sparse_rank, four.dense_rank, four.sparse_score), (None, Some(2), Some(4.0)));
    }

    #[test]
    fn convex_leaves_unembedded_chunks_at_the_bottom_of_the_cosine_scale() {
        let v = convex(&[(7, 3.0), (8, 3.0)], &[(7, 0.6)], |_| 0.0, |_| None, 0.5);
        assert_eq!(v[0].ord, 7);
        assert!((v[1].score - 0.5).abs() < 1e-6, "{:?}", v[1].score);
        // A negative cosine counts as none, never below it.
        let v = convex(&[(7, 3.0), (8, 3.0)], &[(7, 0.6)], |_| 0.0, |_| Some(-0.4), 0.5);
        assert!((v[1].score - 0.5).abs() < 1e-6, "{:?}", v[1].score);
    }

    /// The dense side's say depends on how far apart its cosines are: the same BM25 list and
    /// the same dense favourite, once with cosines the model spreads (a clear semantic match)
    /// and once with cosines close together (no real preference).
    #[test]
    fn convex_gives_the_dense_side_the_weight_of_its_own_spread() {
        let sparse = [(1u32, 10.0f32), (2, 8.0)];
        let order = |c1: f32, c2: f32| {
            let cos = move |o: u32| Some(if o == 1 { c1 } else { c2 });
            let dense = [(2u32, c2), (1, c1)];
            let v = convex(&sparse, &dense, |_| unreachable!(), cos, 0.4);
            (v.iter().map(|r| r.ord).collect::<Vec<_>>(), v[0].score - v[1].score)
        };
        // Spread (0.2 against 0.8): chunk 2 overtakes, 0.6·0.8 + 0.4 = 0.88 against 0.6 + 0.1.
        let (spread, _) = order(0.2, 0.8);
        assert_eq!(spread, [2, 1]);
        // Close together (0.50 against 0.52): BM25's lead holds, 0.6 + 0.4·0.50/0.52 = 0.985
        // against 0.88; min-max scaling would have stretched the 0.02 to the full weight
        // (0.6 + 0 against 0.48 + 0.4) and let chunk 2 win.
        let (flat, margin) = order(0.50, 0.52);
        assert_eq!(flat, [1, 2]);
        assert!((margin - (0.6 + 0.4 * 0.50 / 0.52 - 0.88)).abs() < 1e-5, "{margin}");
    }

    /// The fusion weight is per query: each side's say is the spread of its own scores. Two
    /// hand-made queries over the same three chunks (1 defines `parse_config`, 2 loads the
    /// settings, 3 is unrelated) with the same configured weight 0.4: an identifier-like one
    /// (`parse_config`: BM25 finds the chunk that names it far ahead, a static model's cosines
    /// lie close together) and a natural-language one ("how are the settings loaded": BM25 on
    /// common words scores all three alike, the cosines tell them apart). The dense side's
    /// effective weight — its share of the spread of the fused scores — is small for the first
    /// and most of it for the second.
    #[test]
    fn each_query_weighs_the_two_sides_by_their_own_spread() {
        let effective = |sparse: &[(u32, f32)], dense: &[(u32, f32)]| {
            let bm25 = |o: u32| sparse.iter().find(|s| s.0 == o).unwrap().1;
            let cos = |o: u32| dense.iter().find(|d| d.0 == o).map(|d| d.1);
            let v = convex(sparse, dense, bm25, cos, 0.4);
            let (smax, cmax) = (sparse[0].1, dense[0].1);
            let range = |f: &dyn Fn(&Ranked) -> f32| {
                let xs: Vec<f32> = v.iter().map(f).collect();
                xs.iter().cloned().fold(f32::MIN, f32::max) - xs.iter().cloned().fold(f32::MAX, f32::min)
            };
            let lexical = range(&|r: &Ranked| 0.6 * r.sparse_score.unwrap() / smax);
            let semantic = range(&|r: &Ranked| 0.4 * r.dense_score.unwrap() / cmax);
            (v.iter().map(|r| r.ord).collect::<Vec<_>>(), semantic / (lexical + semantic))
        };
        let (order, ident) = effective(&[(1, 12.0), (2, 2.0), (3, 1.5)], &[(1, 0.62), (3, 0.60), (2, 0.58)]);
        assert_eq!(order, [1, 2, 3], "the named definition first, the rest in BM25's order");
        assert!(ident < 0.1, "{ident}");
        let (order, sentence) = effective(&[(2, 3.0), (1, 2.8), (3, 2.6)], &[(2, 0.80), (1, 0.40), (3, 0.10)]);
        assert_eq!(order, [2, 1, 3]);
        assert!(sentence > 0.7, "{sentence}");
    }
}
