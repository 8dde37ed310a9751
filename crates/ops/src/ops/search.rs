//! `search`: hybrid / dense / sparse retrieval over a view, with path filters applied before
//! ranking.

use super::args::{Count, FilterArgs, Rev};
use super::{Answer, view_line};
use crate::engine::Engine;
use crate::search::filter::Filters;
use crate::search::searcher::Searcher;
use crate::search::{self, Mode, Ranked};
use crate::view::ViewData;
use anyhow::Result;
use serde::Serialize;

crate::error::errors! {
    /// A search whose arguments do not fit together.
    pub enum SearchError: Usage {
        GrepWithSource {} => "--exact and --regex search the repository's files; --source applies to ranked search",
        CursorOverSources {} => "cursors page one source at a time: pass --source NAME (MCP: source) with the cursor",
        /// `-k 0`.
        NoResults {} => "-k must be at least 1",
    }
}

/// `search`'s arguments on every surface. The command line's grep options are here too
/// (`search --exact` / `--regex` is answered by `grep`); MCP takes the ranked search's.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// What to look for: words, identifiers or a question.
    #[schemars(description = "")]
    pub query: String,
    /// Number of results [default: search.k of the configuration, 10].
    #[arg(short = 'k', long = "limit")]
    #[serde(rename = "n_results")]
    #[schemars(description = "default 10; at most 1000 (more is answered with that many and a note)")]
    pub k: Option<Count>,
    /// Retrieval mode [default: search.mode of the configuration, hybrid].
    #[arg(long, value_enum)]
    #[serde(default)]
    #[schemars(schema_with = "super::args::modes", description = "")]
    pub mode: Option<Mode>,
    /// Rerank the top candidates with the cross-encoder of `model.reranker`.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    #[schemars(description = "cross-encoder rerank (slower)")]
    #[serde(default, deserialize_with = "super::args::flag")]
    #[schemars(with = "Option<bool>")]
    pub rerank: Option<bool>,
    /// Rerank with this cross-encoder (a HuggingFace repo id or a local folder); implies --rerank.
    #[arg(long, value_name = "NAME|PATH")]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub reranker: Option<String>,
    #[command(flatten)]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub lines: super::args::Lines,
    /// List files (ranked by the evidence of their chunks) instead of chunks: a reading list.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    #[schemars(description = "list files (a reading list) instead of chunks")]
    #[serde(default, deserialize_with = "super::args::flag")]
    #[schemars(with = "Option<bool>")]
    pub files: Option<bool>,
    /// Print only the paths of the files (ranked; with --exact/--regex: every file with a match).
    #[arg(short = 'l', long = "files-with-matches")]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub files_with_matches: bool,
    #[command(flatten)]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub grep: super::grep::GrepFlags,
    /// Source to search (default: all sources).
    #[arg(long)]
    #[schemars(description = "Source name; omit for all")]
    pub source: Option<String>,
    /// Repository of a workspace to search (`--workspace`; the same as --source).
    #[arg(long, value_name = "REPO", conflicts_with = "source")]
    #[serde(default)]
    #[schemars(description = "Repository of the workspace (the same as source); omit for all")]
    pub repo: Option<String>,
    /// Say why each hit ranked: BM25 terms matched per field, dense similarity, fusion,
    /// priors applied and file evidence.
    #[arg(long, num_args = 0, default_missing_value = "true", conflicts_with_all = ["exact", "regex"])]
    #[schemars(description = "say why each hit ranked")]
    #[serde(default, deserialize_with = "super::args::flag")]
    #[schemars(with = "Option<bool>")]
    pub explain: Option<bool>,
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::args::Page,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub filters: FilterArgs,
}

impl SearchArgs {
    /// A ranked search for `query` with every other argument at its default.
    pub fn new(query: &str) -> SearchArgs {
        SearchArgs { query: query.to_string(), ..Default::default() }
    }

    /// The grep a `search --exact` / `--regex` asks for.
    pub fn grep_args(&self) -> Result<super::grep::GrepArgs> {
        if self.source.is_some() {
            return Err(SearchError::GrepWithSource {}.into());
        }
        let g = &self.grep;
        Ok(super::grep::GrepArgs {
            pattern: self.query.clone(),
            regex: g.regex,
            ignore_case: g.ignore_case,
            rev: self.at.rev.clone(),
            filters: self.filters.filters()?,
            before: g.before.or(g.context).unwrap_or(0),
            after: g.after.or(g.context).unwrap_or(0),
            max: self.k.map_or(1000, |c| c.0),
            files_only: self.files_with_matches,
            word: g.word,
            count: g.count,
        })
    }
}

/// How deep the ranking of the candidates after the first `pool` goes (pages past them).
const PAGE_DEPTH: usize = 1000;

pub use super::args::SNIPPET_LINES;

/// One hit as rendered.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Hit {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: String,
    pub kind: String,
    pub language: String,
    pub score: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sparse_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_rank: Option<usize>,
    /// Set when a cross-encoder reordered the results: `score` is then its relevance logit and
    /// this is the retrieval score it replaced.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub original_score: Option<f32>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub reranked: bool,
    /// The source it came from, when several were searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// How to cite a documentation page: `URL#anchor` or `file.pdf p.12` (absent for code).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub citation: Option<String>,
    pub text: String,
    /// With `--explain`: why it ranked where it did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub explain: Option<Explanation>,
    #[serde(skip)]
    pub ord: Option<u32>,
}

/// Why a hit ranked: each retriever's rank and score (BM25 per term and field), how they were
/// fused, the priors applied and the share of its file's other evidence.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Explanation {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sparse: Option<SparseWhy>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dense: Option<DenseWhy>,
    /// "rrf", "convex", or the one retriever's name.
    pub fusion: String,
    /// The score retrieval gave (fused), before priors.
    pub retrieval_score: f32,
    /// Added before the priors: the query naming the chunk's symbol or path, and its file's
    /// other candidates (`search::rank::Boosts`).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub boost: f32,
    /// Multipliers applied after retrieval, e.g. ("test file", 0.5).
    pub priors: Vec<PriorWhy>,
    /// Added for the other hits of the same file.
    pub file_evidence: f32,
    /// The factor of being a further chunk of a file listed higher up (1: its first).
    #[serde(skip_serializing_if = "is_one", default = "one")]
    pub further_chunk: f32,
    pub score: f32,
}

fn is_zero(x: &f32) -> bool {
    *x == 0.0
}

fn is_one(x: &f32) -> bool {
    *x == 1.0
}

fn one() -> f32 {
    1.0
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SparseWhy {
    pub rank: usize,
    pub bm25: f32,
    pub terms: Vec<search::bm25::TermScore>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DenseWhy {
    pub rank: usize,
    pub cosine: f32,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PriorWhy {
    pub prior: String,
    pub factor: f32,
}

#[derive(Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchResult {
    pub query: String,
    pub mode: Mode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Filters::is_empty", default)]
    pub filters: Filters,
    pub results: Vec<Hit>,
    /// With `--files`: files, best first.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub files: Vec<search::rank::RankedFile>,
    /// Pass as `--cursor` (MCP: `cursor`) for the next page; null on the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// When nothing matched: identifiers of the view near the query's words.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub suggestions: Vec<String>,
    /// The best retrieval score (before priors) among this answer's candidates: dividing by it
    /// puts answers from different indexes on one scale (BM25 has none of its own).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub score_scale: Option<f32>,
    /// The best embedding similarity among the candidates (dense retrieval on): one scale for
    /// every index searched with the same model, so it says which of several repositories
    /// holds the answer at all.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub best_cosine: Option<f32>,
    /// The source asked, when one was named.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<String>,
}

/// `--files` answers with files, otherwise with chunks.
impl super::Results for SearchResult {
    fn list(&self) -> Option<&'static str> {
        Some(if self.files.is_empty() { "results" } else { "files" })
    }
}

/// A ranked chunk as an answer's hit (its text read and checked here).
pub fn hit(view: &ViewData, r: &Ranked) -> Result<Hit> {
    let c = view.table.chunk(r.ord);
    let text = c.text()?;
    Ok(Hit {
        path: c.path.to_string(),
        start_line: c.start_line,
        end_line: c.end_line,
        symbol: c.symbol.to_string(),
        kind: c.kind.to_string(),
        language: c.lang.name().to_string(),
        score: r.score,
        sparse_rank: r.sparse_rank,
        dense_rank: r.dense_rank,
        original_score: None,
        reranked: false,
        source: None,
        citation: crate::docsource::citation(c.path, text),
        text: text.to_string(),
        explain: None,
        ord: Some(r.ord),
    })
}

/// Identifiers of the view near the words of a query that found nothing (typos, other
/// spellings), from the symbols its chunks define: the chunk table has them at hand, where
/// the code graph of a large view takes seconds to build.
fn nearest_identifiers(data: &ViewData, query: &str) -> Vec<String> {
    // Definitions only (not headings, prose windows or `impl` blocks), an oversized one's parts
    // by its own name; a member's chunk names its type too (`Cart.total`: `Cart`), whose own
    // chunk may be cut into members.
    let symbols = || {
        data.table
            .iter()
            .filter(|c| !matches!(c.kind, "header" | "text" | "section" | "impl"))
            .map(|c| c.symbol.rsplit_once("#part").map_or(c.symbol, |(name, _)| name))
            .filter(|s| !s.is_empty() && !s.contains(char::is_whitespace))
            .flat_map(|s| std::iter::once(s).chain(s.rsplit_once('.').map(|(owner, _)| owner)))
    };
    let mut out: Vec<String> = Vec::new();
    for word in
        query.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':')).filter(|w| w.len() >= 3)
    {
        for s in crate::graph::query::nearest_names(symbols(), word, 3) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out.truncate(5);
    out
}

/// Attaches an [`Explanation`] to each hit that came from `ranked`.
fn explain_hits(searcher: &Searcher, query: &str, mode: Mode, ranked: &[Ranked], hits: &mut [Hit]) {
    let data = searcher.data;
    let by_ord: std::collections::HashMap<u32, &Ranked> = ranked.iter().map(|r| (r.ord, r)).collect();
    let ords: Vec<u32> = hits.iter().filter_map(|h| h.ord).collect();
    let matched = searcher.matched_terms(query, mode, &ords);
    let priors = searcher.priors(query, mode);
    let fusion = searcher.fusion_name(mode).to_string();
    let mut next = 0;
    for h in hits.iter_mut() {
        let Some(ord) = h.ord else { continue };
        let terms = matched.get(next).cloned().unwrap_or_default();
        next += 1;
        let Some(r) = by_ord.get(&ord) else { continue };
        let prior: Vec<PriorWhy> =
            priors.explain(data, ord).into_iter().map(|(p, f)| PriorWhy { prior: p.to_string(), factor: f }).collect();
        let product: f32 = prior.iter().map(|p| p.factor).product();
        h.explain = Some(Explanation {
            sparse: r.sparse_rank.map(|rank| SparseWhy { rank, bm25: r.sparse_score.unwrap_or(0.0), terms }),
            dense: r.dense_rank.map(|rank| DenseWhy { rank, cosine: r.dense_score.unwrap_or(0.0) }),
            fusion: fusion.clone(),
            retrieval_score: r.fused,
            boost: r.boost,
            priors: prior,
            file_evidence: (r.score / r.decay - (r.fused + r.boost) * product).max(0.0),
            further_chunk: r.decay,
            score: r.score,
        });
    }
}

/// The explanation as one indented line of text.
fn render_explanation(e: &Explanation) -> String {
    let mut parts = Vec::new();
    if let Some(sp) = &e.sparse {
        let terms: Vec<String> = sp
            .terms
            .iter()
            .map(|t| format!("{}@{} {:.2}", t.term, format!("{:?}", t.field).to_lowercase(), t.score))
            .collect();
        parts.push(format!("bm25 #{} {:.2} [{}]", sp.rank, sp.bm25, terms.join(", ")));
    }
    if let Some(d) = &e.dense {
        parts.push(format!("dense #{} cosine {:.3}", d.rank, d.cosine));
    }
    parts.push(format!("{} {}", e.fusion, format_score(e.retrieval_score)));
    if e.boost > 0.0 {
        parts.push(format!("+{} named by the query or its file's other hits", format_score(e.boost)));
    }
    for p in &e.priors {
        parts.push(format!("×{:.2} {}", p.factor, p.prior));
    }
    if e.file_evidence > 0.0 {
        parts.push(format!("+{} file evidence", format_score(e.file_evidence)));
    }
    if e.further_chunk != 1.0 {
        parts.push(format!("×{:.2} further chunk of a file listed above", e.further_chunk));
    }
    format!("    why: {} → {}\n", parts.join(" · "), format_score(e.score))
}

/// Reorders `hits` by the cross-encoder's relevance of (query, chunk), keeping each retrieval
/// score as `original_score`. The passage leads with the path and symbol: a chunk's text alone
/// does not say where it lives.
pub fn rerank(ce: &crate::embed::rerank::CrossEncoder, query: &str, mut hits: Vec<Hit>) -> Result<Vec<Hit>> {
    let passages: Vec<String> = hits.iter().map(|h| format!("{} {}\n{}", h.path, h.symbol, h.text)).collect();
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    let scores = ce.score(query, &refs)?;
    for (h, s) in hits.iter_mut().zip(scores) {
        h.original_score = Some(h.score);
        h.score = s;
        h.reranked = true;
    }
    // Stable: equal logits keep retrieval order.
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(hits)
}

/// Search over one source, or all of them merged by score (each hit keeps its own source's
/// score, so the scale means the same thing whatever was merged).
/// The cross-encoder a search reranks with: a model named for this search, else the configured
/// one when rerank is asked for (`on`) or configured on (`search.rerank`) and not turned off.
pub fn reranker(config: &crate::config::Config, named: Option<&str>, on: Option<bool>) -> Option<String> {
    match (named, on) {
        (Some(n), _) => Some(n.to_string()),
        (None, Some(on)) => on.then(|| config.model.reranker.clone()),
        (None, None) => config.search.rerank.then(|| config.model.reranker.clone()),
    }
}

/// How sharply a workspace's merge follows each repository's best embedding similarity (its
/// ratio to the best repository's, to this power, weighs the repository's calibrated scores).
const REPOSITORY_BELIEF_POWER: i32 = 8;

/// The search asked of `args.source`, or of every source (merged by calibrated score).
pub fn run_sources(sources: &crate::sources::Sources, args: &SearchArgs) -> Result<Answer> {
    let source = args.source.as_deref().or(args.repo.as_deref());
    let selected = sources.select(source)?;
    if selected.len() == 1 {
        let mut a = run(&selected[0].engine, args)?;
        if source.is_some() {
            a.data.insert("source".into(), serde_json::Value::String(selected[0].name.clone()));
        }
        return Ok(a);
    }
    // Sources are merged by calibrated score: each answer's scores divided by its own best
    // retrieval score (before priors), so BM25's scale — which depends on each index's size
    // and vocabulary — cancels, and what the priors say (prose below code, tests below
    // sources) still orders the merged list. By rank alone a documentation section would sit
    // beside the best code hit whatever either scored.
    if args.page.cursor.is_some() {
        return Err(SearchError::CursorOverSources {}.into());
    }
    let mut all: Vec<(f64, usize, Hit)> = Vec::new();
    let mut files: Vec<(f64, usize, search::rank::RankedFile)> = Vec::new();
    let mut notes = Vec::new();
    let mut mode = None;
    let mut view = None;
    use rayon::prelude::*;
    let answers: Vec<Result<(crate::view::ViewId, SearchResult)>> =
        selected.par_iter().map(|s| result(&s.engine, args)).collect();
    // A source that cannot answer (its store locked by a writer that outlasts the wait, a
    // repository gone since the start) is named, and the others answer; a question that is
    // wrong (an unknown revision) is wrong for all of them.
    let mut skipped = Vec::new();
    let mut first_err = None;
    let mut kept = Vec::new();
    let mut answers_ok = Vec::new();
    for (s, a) in selected.iter().zip(answers) {
        match a {
            Ok(a) => {
                kept.push(*s);
                answers_ok.push(a);
            }
            Err(e) if crate::error::Kind::of(&e) == crate::error::Kind::Usage => return Err(e),
            Err(e) => {
                skipped.push(format!("skipped `{}`: {e:#}", s.name));
                first_err.get_or_insert(e);
            }
        }
    }
    if answers_ok.is_empty() {
        return Err(first_err.unwrap_or_else(|| anyhow::anyhow!("no source to ask")));
    }
    let (selected, answers) = (kept, answers_ok);
    // Each repository's own best scores 1 after calibration, whether it holds the answer or
    // only something like it; across a workspace's repositories the embedding similarity of
    // each one's best candidate (one model, one scale) says how much of it to believe.
    let best_cosine = answers.iter().filter_map(|(_, r)| r.best_cosine).fold(f32::NEG_INFINITY, f32::max);
    let belief = |r: &SearchResult| -> f64 {
        match r.best_cosine {
            Some(c) if sources.workspace.is_some() && best_cosine > 0.0 => {
                ((c.max(0.0) / best_cosine) as f64).powi(REPOSITORY_BELIEF_POWER)
            }
            _ => 1.0,
        }
    };
    for (si, (s, (a, r))) in selected.iter().zip(answers).enumerate() {
        let weight = belief(&r);
        if let Some(n) = r.note {
            notes.push((n, s.name.clone()));
        }
        let scale = r.score_scale.unwrap_or(1.0).max(1e-6) as f64 / weight.max(1e-9);
        mode = mode.or(Some(r.mode));
        view = view.or(Some(a));
        all.extend(r.results.into_iter().map(|mut h| {
            h.source = Some(s.name.clone());
            (h.score as f64 / scale, si, h)
        }));
        files.extend(r.files.into_iter().map(|mut f| {
            f.path = format!("[{}] {}", s.name, f.path);
            (f.score as f64 / scale, si, f)
        }));
    }
    let k = args.k.map_or(selected[0].engine.ws.config.search.k, |c| c.0);
    // Equal calibrated scores: the source listed first.
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    // Across a workspace's repositories, one repository fills at most part of the page while
    // others have hits (a large one would otherwise crowd out the rest); the page stays full.
    if sources.workspace.is_some() && selected.len() > 1 {
        let cap = k.div_ceil(2).max(3);
        let mut taken = vec![0usize; selected.len()];
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for x in all {
            if taken[x.1] < cap {
                taken[x.1] += 1;
                first.push(x);
            } else {
                rest.push(x);
            }
        }
        first.extend(rest.into_iter().take(k.saturating_sub(first.len().min(k))));
        all = first;
    }
    let mut all: Vec<Hit> = all.into_iter().map(|x| x.2).collect();
    all.truncate(k);
    // A note every source gives is said once.
    let mut grouped: Vec<(String, Vec<String>)> = Vec::new();
    for (n, name) in notes {
        match grouped.iter_mut().find(|(m, _)| *m == n) {
            Some((_, names)) => names.push(name),
            None => grouped.push((n, vec![name])),
        }
    }
    let mut notes: Vec<String> = grouped
        .into_iter()
        .map(|(n, names)| if names.len() == selected.len() { n } else { format!("{}: {n}", names.join(", ")) })
        .collect();
    notes.extend(skipped);
    files.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut files: Vec<search::rank::RankedFile> = files.into_iter().map(|x| x.2).collect();
    files.truncate(k);
    let view = view.expect("at least one source");
    let result = SearchResult {
        query: args.query.clone(),
        mode: mode.unwrap_or(Mode::Sparse),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        filters: args.filters.filters()?,
        results: all,
        files,
        next_cursor: None,
        suggestions: Vec::new(),
        score_scale: None,
        best_cosine: None,
        source: None,
    };
    let text = if args.files_with_matches { render_paths(&result) } else { render(&view, &result, args.lines.per_hit) };
    Ok(Answer::new("search", Some(view), &result, text))
}

pub fn run(engine: &Engine, args: &SearchArgs) -> Result<Answer> {
    let (view, result) = result(engine, args)?;
    let text = if args.files_with_matches { render_paths(&result) } else { render(&view, &result, args.lines.per_hit) };
    Ok(Answer::new("search", Some(view), &result, text))
}

/// The search's result over one engine, before any surface renders it (a workspace merges
/// these across repositories and renders once).
fn result(engine: &Engine, args: &SearchArgs) -> Result<(crate::view::ViewId, SearchResult)> {
    if args.query.trim().is_empty() {
        return Err(super::args::ArgError::EmptyQuery {}.into());
    }
    let k = args.k.map_or(engine.ws.config.search.k, |c| c.0);
    let filters = args.filters.filters()?;
    let reranker = reranker(&engine.ws.config, args.reranker.as_deref(), args.rerank);
    let files = args.files.unwrap_or(false) || args.files_with_matches;
    if k == 0 {
        return Err(SearchError::NoResults {}.into());
    }
    let (k, clamped) = search::clamp_k(k);
    let requested = match args.mode {
        Some(m) => m,
        None => engine.ws.config.search.mode,
    };
    // The model loads on the other core while the view is listed and assembled (its
    // tokenizer alone costs as much as assembling a 2,000-file view); errors are said where
    // dense retrieval is used.
    let (opened, _) = rayon::join(
        || -> Result<_> {
            let view = engine.view(&engine.spec(args.at.rev.as_deref()))?;
            let opened = engine.open_listed(&view)?;
            Ok((view, opened))
        },
        || {
            if requested != Mode::Sparse {
                let _ = engine.embedder();
            }
        },
    );
    let (view, opened) = opened?;
    let data = &opened.data;
    let allowed = filters.allowed(&data.table)?;
    // Pages walk one candidate list, retrieved to the same depth for every page of a question
    // (the depth follows the page size), so each item comes once.
    let question = (&args.query, requested.name(), &filters, &reranker, files, k);
    let pager = super::page::Pager::new("search", &data.key, &question, args.page.cursor.as_deref())?;
    let want = pager.want(k);
    // A file list draws on more chunks than it shows (as the evaluation does: 5 per file asked).
    let pool = if files { (5 * k).max(engine.ws.config.search.pool) } else { k.max(engine.ws.config.search.pool) };
    let searcher = engine.searcher(&view, data, requested)?;
    let mut r = searcher.retrieve(&args.query, requested, pool, allowed.as_deref())?;
    // Pages past the candidates continue with a deeper retrieval's ranking of the rest: the
    // first `pool` keep the ranking a single answer has, and the order stays one fixed list.
    if !files && want > r.ranked.len() && r.ranked.len() >= pool {
        let deep = searcher.retrieve(&args.query, requested, PAGE_DEPTH, allowed.as_deref())?;
        let head: std::collections::HashSet<u32> = r.ranked.iter().map(|x| x.ord).collect();
        r.ranked.extend(deep.ranked.into_iter().filter(|x| !head.contains(&x.ord)));
    }
    let scale = r.ranked.iter().map(|x| x.fused).fold(0f32, f32::max).max(1e-6);
    let mut notes = r.notes;
    notes.extend(clamped);
    notes.extend(engine.rev_note(args.at.rev.as_deref()));
    let mut results: Vec<Hit> = match &reranker {
        Some(name) => match engine.reranker(name) {
            Ok(ce) => {
                let n = r.ranked.len().min(pool);
                let mut hits =
                    rerank(&ce, &args.query, r.ranked.iter().take(n).map(|x| hit(data, x)).collect::<Result<_>>()?)?;
                for x in r.ranked.iter().skip(n).take(want.saturating_sub(n)) {
                    hits.push(hit(data, x)?);
                }
                hits.truncate(want);
                notes.push(format!("top {n} reranked by {name}"));
                hits
            }
            Err(reason) => {
                notes.push(format!("not reranked: {reason}"));
                r.ranked.iter().take(want).map(|x| hit(data, x)).collect::<Result<_>>()?
            }
        },
        None => r.ranked.iter().take(want).map(|x| hit(data, x)).collect::<Result<_>>()?,
    };
    if pager.offset > 0 {
        notes.push(format!("results {} and after", pager.offset + 1));
    }
    let note = if notes.is_empty() { None } else { Some(notes.join("; ")) };
    if files {
        // Files from a deep candidate list: a file's evidence is all its retrieved chunks.
        let mut files = search::rank::rank_files(data, &r.ranked, want);
        let next_cursor = pager.page(&mut files, k);
        let result = SearchResult {
            query: args.query.clone(),
            mode: r.mode,
            note,
            filters: filters.clone(),
            results: Vec::new(),
            files,
            next_cursor,
            suggestions: Vec::new(),
            score_scale: Some(scale),
            best_cosine: r.ranked.iter().filter_map(|x| x.dense_score).reduce(f32::max),
            source: None,
        };
        return Ok((data.id.clone(), result));
    }
    let next_cursor = pager.page(&mut results, k);
    let suggestions =
        if results.is_empty() && pager.offset == 0 { nearest_identifiers(data, &args.query) } else { Vec::new() };
    if args.explain.unwrap_or(false) {
        explain_hits(&searcher, &args.query, r.mode, &r.ranked, &mut results);
    }
    let result = SearchResult {
        query: args.query.clone(),
        mode: r.mode,
        note,
        filters: filters.clone(),
        results,
        files: Vec::new(),
        next_cursor,
        suggestions,
        score_scale: Some(scale),
        best_cosine: r.ranked.iter().filter_map(|x| x.dense_score).reduce(f32::max),
        source: None,
    };
    Ok((data.id.clone(), result))
}

pub fn render(view: &crate::view::ViewId, r: &SearchResult, snippet_lines: usize) -> String {
    if !r.files.is_empty() {
        let mut out = format!(
            "{} · mode: {} · {} file{}\n",
            view_line(view),
            r.mode.name(),
            r.files.len(),
            if r.files.len() == 1 { "" } else { "s" }
        );
        if let Some(n) = &r.note {
            out.push_str(&format!("note: {n}\n"));
        }
        for (i, f) in r.files.iter().enumerate() {
            let best = if f.symbol.is_empty() { String::new() } else { format!(" {}", f.symbol) };
            out.push_str(&format!(
                "{}. {} ({}) — best at {}-{}{best}; {} chunk{}\n",
                i + 1,
                crate::present::path(&f.path),
                format_score(f.score),
                f.start_line,
                f.end_line,
                f.chunks,
                if f.chunks == 1 { "" } else { "s" }
            ));
        }
        out.push_str(&super::page::more_line(r.next_cursor.as_deref()));
        return out;
    }
    let mut out = format!(
        "{} · mode: {} · {} result{}\n",
        view_line(view),
        r.mode.name(),
        r.results.len(),
        if r.results.len() == 1 { "" } else { "s" }
    );
    if let Some(n) = &r.note {
        out.push_str(&format!("note: {n}\n"));
    }
    if r.results.is_empty() {
        out.push_str(&format!("no matches for \"{}\"{}\n", r.query, crate::present::did_you_mean(&r.suggestions)));
    }
    push_hits(&mut out, &r.results, &r.query, snippet_lines);
    out.push_str(&super::page::more_line(r.next_cursor.as_deref()));
    out
}

/// Results after this many show one line each (their best): an agent reads the first few and
/// opens what it needs; the rest are places to look.
pub const PREVIEWED: usize = 3;
/// Longest preview line shown whole.
const PREVIEW_WIDTH: usize = 140;

/// The hits of a result list, best first: each one's citation, then an excerpt of `lines`
/// lines for the first `PREVIEWED`, one line for the rest.
pub fn push_hits(out: &mut String, hits: &[Hit], query: &str, lines: usize) {
    let terms = crate::analyze::highlight_terms(query);
    for (i, h) in hits.iter().enumerate() {
        out.push_str(&cite(h));
        out.push('\n');
        if let Some(e) = &h.explain {
            out.push_str(&render_explanation(e));
        }
        let n = if i < PREVIEWED { lines } else { lines.min(1) };
        out.push_str(&excerpt(&h.text, h.start_line, h.end_line, &terms, n));
    }
}

/// Up to `lines` lines of a hit: its first line (what it is), then the lines holding the most
/// query words, in file order — each numbered when the text is the whole range — the common
/// indentation dropped and long lines cut (the citation gives the range to open).
pub fn excerpt(text: &str, start: u32, end: u32, terms: &[String], lines: usize) -> String {
    if lines == 0 {
        return String::new();
    }
    let all: Vec<&str> = text.lines().collect();
    let numbered = end >= start && all.len() == (end - start + 1) as usize;
    let useful = |l: &str| l.trim().len() > 1;
    let Some(first) = all.iter().position(|l| useful(l)) else { return String::new() };
    let matches = |l: &str| {
        let low = l.to_lowercase();
        terms.iter().filter(|t| low.contains(t.as_str())).count()
    };
    if lines == 1 {
        // One line: the one naming the most query words, the first when none names more.
        let best = all
            .iter()
            .enumerate()
            .filter(|(_, l)| useful(l))
            .fold((first, matches(all[first])), |b, (i, l)| if matches(l) > b.1 { (i, matches(l)) } else { b });
        return excerpt_lines(&all, &[best.0], start, numbered);
    }
    let mut chosen = vec![first];
    if !terms.is_empty() {
        let mut scored: Vec<(usize, usize)> = all
            .iter()
            .enumerate()
            .filter(|&(i, l)| i != first && useful(l))
            .map(|(i, l)| (matches(l), i))
            .filter(|&(n, _)| n > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        chosen.extend(scored.into_iter().take(lines - 1).map(|(_, i)| i));
    }
    // Too few lines name the query: the head of the range fills the rest.
    let mut next = first + 1;
    while chosen.len() < lines && next < all.len() {
        if useful(all[next]) && !chosen.contains(&next) {
            chosen.push(next);
        }
        next += 1;
    }
    chosen.sort_unstable();
    excerpt_lines(&all, &chosen, start, numbered)
}

fn excerpt_lines(all: &[&str], chosen: &[usize], start: u32, numbered: bool) -> String {
    // The lines keep their indentation relative to each other (Python's blocks), not the
    // chunk's own.
    let indent = |l: &str| l.len() - l.trim_start().len();
    let common = chosen.iter().map(|&i| indent(all[i])).min().unwrap_or(0);
    let mut out = String::new();
    for &i in chosen {
        let l = all[i];
        let cut = common.min(indent(l));
        let mut line = if l.is_char_boundary(cut) { &l[cut..] } else { l.trim_start() }.trim_end().to_string();
        if line.len() > PREVIEW_WIDTH {
            let mut at = PREVIEW_WIDTH;
            while !line.is_char_boundary(at) {
                at -= 1;
            }
            line.truncate(at);
            line.push('…');
        }
        if numbered {
            out.push_str(&format!("    {}: {line}\n", start as usize + i));
        } else {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}

/// `-l`: the files, best first, one path per line (as `grep -l`).
pub fn render_paths(r: &SearchResult) -> String {
    r.files.iter().map(|f| format!("{}\n", crate::present::path(&f.path))).collect()
}

/// `path:start: symbol (start-end, score)`, the location first as grep and compilers print it.
pub fn cite(h: &Hit) -> String {
    let sym = if h.symbol.is_empty() { format!("<{}>", h.kind) } else { h.symbol.clone() };
    let at = match (&h.source, &h.citation) {
        (Some(s), Some(c)) => format!("[{s}] {c}"),
        (None, Some(c)) => c.clone(),
        (Some(s), None) => format!("[{s}] {}:{}:", crate::present::quote_path(&h.path), h.start_line),
        (None, None) => crate::present::loc(&h.path, h.start_line),
    };
    format!("{at} {sym} ({}-{}, {})", h.start_line, h.end_line, format_score(h.score))
}

pub fn format_score(s: f32) -> String {
    if s.abs() < 0.1 { format!("{s:.4}") } else { format!("{s:.2}") }
}

/// The first `lines` lines of `text`, indented, with a marker when cut.
pub fn snippet(text: &str, lines: usize) -> String {
    if lines == 0 {
        return String::new();
    }
    let mut out = String::new();
    let total = text.lines().count();
    for l in text.lines().take(lines) {
        out.push_str("    ");
        out.push_str(l.trim_end());
        out.push('\n');
    }
    if total > lines {
        let more = total - lines;
        out.push_str(&format!("    … ({more} more line{})\n", if more == 1 { "" } else { "s" }));
    }
    out
}
