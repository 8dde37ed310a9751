//! `deep_search`: asks query variants in order and stops at the first strong result set; when
//! none is strong it returns the strongest weak set with an explicit warning. Strength is
//! judged on the retrievers' own scores (BM25, cosine), never on fused RRF scores, whose
//! rank-1 value alone (1/61) would pass any fixed threshold.

use super::args::{Count, FilterArgs, Rev};
use super::search::{Hit, hit, render as render_hits};
use super::{Answer, view_line};
use crate::engine::Engine;
use crate::search::{Mode, Ranked};

use anyhow::Result;
use serde::Serialize;

crate::error::errors! {
    /// A deep search with nothing to ask.
    pub enum DeepError: Usage {
        NoVariant {} => "deep_search needs at least one non-empty query variant",
    }
}

/// `deep_search`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct DeepArgs {
    /// Query variants, tried in order.
    #[arg(required = true)]
    #[serde(rename = "queries", deserialize_with = "super::args::strings")]
    #[schemars(with = "super::args::Strings", description = "Variants, best first")]
    pub variants: Vec<String>,
    /// Number of results [default: 10].
    #[arg(short = 'k', long = "limit")]
    #[serde(rename = "n_results")]
    #[schemars(description = "")]
    pub k: Option<Count>,
    /// Retrieval mode [default: search.mode of the configuration, hybrid].
    #[arg(long, value_enum)]
    #[serde(default)]
    #[schemars(schema_with = "super::args::modes", description = "")]
    pub mode: Option<Mode>,
    /// Strong hits needed to accept a variant (default: search.deep_min_results, 2; at most 50).
    #[arg(long)]
    #[schemars(description = "default 2")]
    pub min_results: Option<Count>,
    /// Run every variant and include each one's results.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    #[schemars(description = "")]
    #[serde(default, deserialize_with = "super::args::flag")]
    #[schemars(with = "Option<bool>")]
    pub return_all_variants: Option<bool>,
    /// A hit counts as strong when its score reaches this (instead of the per-retriever bars).
    #[arg(long)]
    #[schemars(description = "strong = score at least this")]
    pub min_score: Option<f32>,
    #[command(flatten)]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub lines: super::args::Lines,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub filters: FilterArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::Sources,
}

impl DeepArgs {
    /// Results wanted: as asked (the search bounds it, with a note), else 10.
    pub fn k(&self) -> usize {
        self.k.map_or(10, |c| c.0)
    }
    /// Strong hits a variant needs: as asked, at most 50, else the configuration's.
    pub fn min_results(&self, config: &crate::config::Config) -> usize {
        Count::or(self.min_results, config.search.deep_min_results, 50)
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Variant {
    pub query: String,
    pub mode: Mode,
    pub strong: bool,
    pub strong_results: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_sparse: Option<f32>,
    /// The BM25 score a hit of this variant needed to count as strong.
    pub sparse_threshold: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_dense: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<Hit>>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DeepResult {
    pub chosen: usize,
    /// How many variants were asked for (the ones after a strong one are not run).
    pub asked: usize,
    pub strong: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub variants: Vec<Variant>,
    pub mode: Mode,
    pub results: Vec<Hit>,
}

/// The BM25 score a hit needs to be strong for `query`.
pub fn sparse_threshold(query: &str, per_term: f32) -> f32 {
    per_term * crate::analyze::query_terms(query).len().max(1) as f32
}

pub fn is_strong(r: &Ranked, sparse_threshold: f32, dense_threshold: f32) -> bool {
    r.sparse_score.is_some_and(|s| s >= sparse_threshold) || r.dense_score.is_some_and(|d| d >= dense_threshold)
}

fn relative(score: Option<f32>, threshold: f32) -> f32 {
    score.unwrap_or(0.0) / threshold.max(f32::MIN_POSITIVE)
}

pub fn run(engine: &Engine, a: &DeepArgs) -> Result<Answer> {
    let variants: Vec<&String> = a.variants.iter().filter(|v| !v.trim().is_empty()).collect();
    if variants.is_empty() {
        return Err(DeepError::NoVariant {}.into());
    }
    let (k, min_results) = (a.k(), a.min_results(&engine.ws.config));
    let return_all_variants = a.return_all_variants.unwrap_or(false);
    let view = engine.view(&engine.spec(a.at.rev.as_deref()))?;
    let data = engine.open_listed(&view)?.data;
    let allowed = a.filters.filters()?.allowed(&data.table)?;
    let requested = match a.mode {
        Some(m) => m,
        None => engine.ws.config.search.mode,
    };
    let dense_threshold = match engine.embedder() {
        Ok(m) if m.kind() == "static" => engine.ws.config.search.deep_dense_static,
        _ => engine.ws.config.search.deep_dense_transformer,
    };
    let pool = search_k(k).max(engine.ws.config.search.pool);
    let mut out_variants = Vec::new();
    let mut sets: Vec<(Vec<Ranked>, Mode)> = Vec::new();
    let mut notes: Vec<String> = crate::search::clamp_k(k).1.into_iter().collect();
    let mut chosen = None;
    for q in &variants {
        let r = engine.searcher(&view, &data, requested)?.retrieve(q, requested, pool, allowed.as_deref())?;
        notes.extend(r.notes.iter().cloned());
        let top: Vec<Ranked> = r.ranked.into_iter().take(search_k(k)).collect();
        let sparse_threshold = sparse_threshold(q, engine.ws.config.search.deep_sparse_per_term);
        let strong_results = match a.min_score {
            Some(min) => top.iter().filter(|x| x.score >= min).count(),
            None => top.iter().filter(|x| is_strong(x, sparse_threshold, dense_threshold)).count(),
        };
        let strong = strong_results >= min_results.max(1);
        out_variants.push(Variant {
            query: q.to_string(),
            mode: r.mode,
            strong,
            strong_results,
            best_sparse: r.top_sparse,
            sparse_threshold,
            best_dense: r.top_dense,
            results: match return_all_variants {
                true => Some(top.iter().map(|x| hit(&data, x)).collect::<Result<_>>()?),
                false => None,
            },
        });
        sets.push((top, r.mode));
        if strong && chosen.is_none() {
            chosen = Some(out_variants.len() - 1);
            if !return_all_variants {
                break;
            }
        }
    }
    let (chosen, strong) = match chosen {
        Some(i) => (i, true),
        // The strongest weak set: most strong hits, then the best raw scores.
        None => {
            let best = (0..out_variants.len())
                .max_by(|&i, &j| {
                    let (a, b) = (&out_variants[i], &out_variants[j]);
                    a.strong_results
                        .cmp(&b.strong_results)
                        .then(a.best_dense.unwrap_or(-1.0).total_cmp(&b.best_dense.unwrap_or(-1.0)))
                        // Relative to each variant's own bar: raw BM25 grows with query length.
                        .then(
                            relative(a.best_sparse, a.sparse_threshold)
                                .total_cmp(&relative(b.best_sparse, b.sparse_threshold)),
                        )
                        .then(j.cmp(&i))
                })
                .unwrap_or(0);
            (best, false)
        }
    };
    let warning = (!strong).then(|| {
        format!(
            "no variant found a strong result set (needed {} hits above BM25 {:.1} per query term or cosine {:.2}); these are the strongest weak results — verify before relying on them",
            min_results.max(1),
            engine.ws.config.search.deep_sparse_per_term,
            dense_threshold
        )
    });
    notes.sort();
    notes.dedup();
    // The first variant said why there is no model; later ones need not repeat it briefly.
    if notes.iter().any(|n| n.starts_with("results are lexical only: ")) {
        notes.retain(|n| !n.starts_with("results are lexical only (no model"));
    }
    let (set, mode) = &sets[chosen];
    let results: Vec<Hit> = set.iter().map(|x| hit(&data, x)).collect::<Result<_>>()?;
    let result = DeepResult {
        chosen: chosen + 1,
        asked: variants.len(),
        strong,
        warning,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        variants: out_variants,
        mode: *mode,
        results,
    };
    let text = render(&data.id, &result, a.lines.per_hit);
    Ok(Answer::new("deep_search", Some(data.id.clone()), &result, text))
}

fn render(view: &crate::view::ViewId, r: &DeepResult, lines: usize) -> String {
    let tried = if r.variants.len() < r.asked {
        format!(" ({} tried: the first strong one ends the search)", r.variants.len())
    } else {
        String::new()
    };
    let mut out = format!("{} · deep search · chose variant {} of {}{tried}\n", view_line(view), r.chosen, r.asked);
    for (i, v) in r.variants.iter().enumerate() {
        let scores = match (v.best_sparse, v.best_dense) {
            (Some(s), Some(d)) => format!("best bm25 {s:.2}, cosine {d:.3}"),
            (Some(s), None) => format!("best bm25 {s:.2}"),
            (None, Some(d)) => format!("best cosine {d:.3}"),
            (None, None) => "no hits".into(),
        };
        out.push_str(&format!(
            "  {}. \"{}\": {} ({} strong; {scores})\n",
            i + 1,
            v.query,
            if v.strong { "strong" } else { "weak" },
            v.strong_results
        ));
    }
    if let Some(w) = &r.warning {
        out.push_str(&format!("warning: {w}\n"));
    }
    let inner = super::search::SearchResult {
        query: r.variants[r.chosen - 1].query.clone(),
        mode: r.mode,
        note: r.note.clone(),
        filters: Default::default(),
        results: r.results.clone(),
        files: Vec::new(),
        next_cursor: None,
        suggestions: Vec::new(),
        score_scale: None,
        best_cosine: None,
        source: None,
    };
    let body = render_hits(view, &inner, lines);
    // Skip the repeated view line of the inner rendering.
    out.push_str(body.split_once('\n').map(|x| x.1).unwrap_or(""));
    out
}

fn search_k(k: usize) -> usize {
    crate::search::clamp_k(k).0
}

results!(DeepResult => "results");
