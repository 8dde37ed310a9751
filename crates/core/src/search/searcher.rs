//! The one owner of ranking: a `Searcher` holds what ranks the chunks of one opened view — its
//! BM25 postings (in the view), the dense side and the model that embeds queries into it (when
//! a model covers the view), the history field, how queries become terms, and the ranking
//! settings — and turns a query into ranked chunks: retrieve from both sides, fuse, boost,
//! apply the priors and the file evidence, order, drop duplicates, saturate per file. The
//! engine opens one (`Engine::searcher`); search, deep search, search over a diff and the
//! evaluation all rank through it.

use super::rank::{self, Priors};
use super::{Allowed, Mode, QueryAnalysis, Ranked};
use crate::config::{Fusion, SearchConfig};
use crate::embed::Embedder;
use crate::view::ViewData;
use crate::view::dense::DenseView;
use crate::view::history::HistoryField;
use anyhow::Result;
use std::sync::Arc;

pub struct Searcher<'a> {
    pub data: &'a ViewData,
    /// The dense side and the model that embeds queries for it; None: lexical only.
    dense: Option<(Arc<DenseView>, Arc<dyn Embedder>)>,
    history: Option<Arc<HistoryField>>,
    analysis: QueryAnalysis,
    settings: &'a SearchConfig,
    /// What opening the sides found worth saying (partial dense coverage, why lexical only).
    notes: Vec<String>,
}

/// Ranked chunks of one query, with what the retrievers found.
pub struct Retrieved {
    pub mode: Mode,
    pub ranked: Vec<Ranked>,
    pub notes: Vec<String>,
    /// Best raw scores of each retriever (BM25, cosine), for strength checks.
    pub top_sparse: Option<f32>,
    pub top_dense: Option<f32>,
}

impl<'a> Searcher<'a> {
    pub fn new(
        data: &'a ViewData,
        dense: Option<(Arc<DenseView>, Arc<dyn Embedder>)>,
        history: Option<Arc<HistoryField>>,
        analysis: QueryAnalysis,
        settings: &'a SearchConfig,
        notes: Vec<String>,
    ) -> Searcher<'a> {
        Searcher { data, dense, history, analysis, settings, notes }
    }

    /// The mode a request gets: lexical when there is no dense side.
    pub fn mode(&self, requested: Mode) -> Mode {
        if self.dense.is_none() { Mode::Sparse } else { requested }
    }

    /// The fusion's name in explanations: the fusion for hybrid, else the mode.
    pub fn fusion_name(&self, mode: Mode) -> &'static str {
        match mode {
            Mode::Hybrid => self.settings.fusion.name(),
            m => m.name(),
        }
    }

    /// The history field with its BM25 weight, when it counts.
    fn history_field(&self) -> Option<(&HistoryField, f32)> {
        self.history.as_deref().filter(|_| self.settings.history > 0.0).map(|h| (h, self.settings.history))
    }

    /// The priors of `query` with these settings (one place, so the explanation shows the
    /// factors the ranking used).
    pub fn priors(&self, query: &str, mode: Mode) -> Priors {
        let s = self.settings;
        let factors = rank::Factors {
            test: s.test_factor,
            prose: s.prose_factor,
            secondary: s.secondary_factor,
            vendored: s.vendor_factor,
            stem: s.stem_factor,
            scope: s.scope_factor,
        };
        let priors = Priors::with_factors(query, factors);
        match &self.history {
            // Not for cosine alone: its scores sit so close together that the lift would decide
            // the order (measured worse).
            Some(h) if s.recency > 0.0 && mode != Mode::Dense => {
                priors.with_recency(h.clone(), s.recency, s.recency_half_life)
            }
            _ => priors,
        }
    }

    /// The query's terms each of `ords` matched (empty for cosine alone), for explanations.
    pub fn matched_terms(&self, query: &str, mode: Mode, ords: &[u32]) -> Vec<Vec<super::bm25::TermScore>> {
        if mode == Mode::Dense {
            return vec![Vec::new(); ords.len()];
        }
        let terms = super::query_terms(self.data, query, &self.analysis);
        super::bm25::explain(&self.data.table, &terms, self.history_field(), ords)
    }

    /// The chunks of the view ranked for `query`: up to `pool` candidates from each side,
    /// among `allowed` ordinals.
    pub fn retrieve(&self, query: &str, requested: Mode, pool: usize, allowed: Option<&Allowed>) -> Result<Retrieved> {
        let data = self.data;
        let s = self.settings;
        let mode = self.mode(requested);
        // The two sides are independent: the lexical one runs on one core while the dense one
        // embeds the query and scans on the other.
        let sparse = || {
            if mode == Mode::Dense {
                (Vec::new(), None)
            } else {
                let (h, s) = super::sparse_scored(data, query, pool, allowed, self.history_field(), &self.analysis);
                (h, Some(s))
            }
        };
        let dense = || -> Result<(Vec<(u32, f32)>, Option<Vec<f32>>)> {
            match (&self.dense, mode) {
                (Some((side, model)), Mode::Dense | Mode::Hybrid) => {
                    let q = model.embed_query(query)?;
                    let dense_pool = if s.dense_pool > 0 { s.dense_pool } else { pool };
                    Ok((side.search(&q, dense_pool, allowed), Some(q)))
                }
                _ => Ok((Vec::new(), None)),
            }
        };
        let ((sparse_hits, bm25_scores), dense) = rayon::join(sparse, dense);
        let (dense_hits, query_vector) = dense?;
        let top_sparse = sparse_hits.first().map(|h| h.1);
        let top_dense = dense_hits.first().map(|h| h.1);
        let mut ranked: Vec<Ranked> = match mode {
            Mode::Sparse => {
                sparse_hits.iter().enumerate().map(|(i, &(ord, score))| Ranked::sparse(i, ord, score)).collect()
            }
            Mode::Dense => {
                dense_hits.iter().enumerate().map(|(i, &(ord, score))| Ranked::dense(i, ord, score)).collect()
            }
            Mode::Hybrid => match (s.fusion, &self.dense, &query_vector, &bm25_scores) {
                (Fusion::Convex, Some((side, _)), Some(q), Some(b)) => {
                    let cos = |o: u32| side.has(o).then(|| crate::embed::dot(q, &side.row(o)));
                    super::convex(&sparse_hits, &dense_hits, |o| b.score(o), cos, s.dense_weight)
                }
                _ => super::rrf_with(&sparse_hits, &dense_hits, s.dense_weight, s.rrf_k),
            },
        };
        for r in &mut ranked {
            r.fused = r.score;
        }
        let boosts = rank::Boosts { definition: s.definition_boost, path: s.path_boost, coherence: s.coherence };
        rank::boost(data, &mut ranked, query, boosts);
        self.priors(query, mode).apply(data, &mut ranked);
        // Not for cosine alone: a file's chunks all score alike there, so the share would act as
        // a file-length prior (measured worse on two of four sets); BM25 and fused scores fall
        // off steeply enough for a second hit to be evidence.
        if mode != Mode::Dense {
            rank::file_evidence(data, &mut ranked, s.file_evidence);
        }
        // Ties are broken by location, so equal scores come out in path and line order.
        ranked.sort_by(|a, b| {
            let (ca, cb) = (data.table.chunk(a.ord), data.table.chunk(b.ord));
            b.score.total_cmp(&a.score).then_with(|| ca.path.cmp(cb.path)).then(ca.start_line.cmp(&cb.start_line))
        });
        let mut ranked = super::dedup_identical(data, ranked);
        rank::saturate(data, &mut ranked, s.chunk_decay);
        Ok(Retrieved { mode, ranked, notes: self.notes.clone(), top_sparse, top_dense })
    }
}
