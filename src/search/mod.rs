//! Retrieval over a view: BM25 (sparse), dense, and their fusion.

pub mod bm25;
pub mod filter;

use crate::analyze;
use crate::view::cache::ViewData;
use anyhow::Result;
use serde::Serialize;

/// Retrieval mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
}

/// BM25 candidates for `query` (chunk ordinal, score), best first.
pub fn sparse(view: &ViewData, query: &str, pool: usize, allowed: Option<&std::sync::Arc<tantivy::BitSet>>) -> Result<Vec<(u32, f32)>> {
    let terms = analyze::query_terms(query);
    view.bm25.search(&terms, pool, allowed)
}

/// Drops byte-identical chunks (same content hash) after the first, keeping order.
pub fn dedup_identical(view: &ViewData, ranked: Vec<Ranked>) -> Vec<Ranked> {
    let mut seen = std::collections::HashSet::with_capacity(ranked.len());
    ranked.into_iter().filter(|r| seen.insert(view.table.chunk_hash(r.ord))).collect()
}
