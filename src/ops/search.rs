//! `search`: hybrid / dense / sparse retrieval over a view, with path filters applied before
//! ranking.

use super::{Answer, view_line};
use crate::engine::Engine;
use crate::search::filter::Filters;
use crate::search::{self, Mode, Ranked};
use crate::view::ViewSpec;
use crate::view::cache::ViewData;
use anyhow::Result;
use serde::Serialize;

#[derive(Debug, Clone)]
pub struct SearchArgs {
    pub query: String,
    pub k: usize,
    pub rev: Option<String>,
    pub mode: Option<Mode>,
    pub filters: Filters,
    /// Lines of code shown per hit in the text rendering (0: none).
    pub snippet_lines: usize,
}

/// One hit as rendered.
#[derive(Debug, Clone, Serialize)]
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
    pub text: String,
}

#[derive(Debug, Serialize)]
pub struct SearchResult {
    pub query: String,
    pub mode: Mode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Filters::is_empty")]
    pub filters: Filters,
    pub results: Vec<Hit>,
}

pub fn hit(view: &ViewData, r: &Ranked) -> Hit {
    let c = view.table.chunk(r.ord);
    Hit {
        path: c.path.to_string(),
        start_line: c.start_line,
        end_line: c.end_line,
        symbol: c.symbol.to_string(),
        kind: c.kind.to_string(),
        language: c.lang.name().to_string(),
        score: r.score,
        sparse_rank: r.sparse_rank,
        dense_rank: r.dense_rank,
        text: c.text.to_string(),
    }
}

pub fn run(engine: &Engine, args: &SearchArgs) -> Result<Answer> {
    if args.query.trim().is_empty() {
        return Err(crate::error::usage("the search query is empty"));
    }
    let opened = engine.open_view(&ViewSpec::from_option(args.rev.as_deref()))?;
    let view = &opened.data;
    let allowed = args.filters.allowed(&view.table)?;
    let requested = args.mode.unwrap_or(Mode::parse(&engine.ws.config.search.mode)?);
    // Dense retrieval arrives with the embedding layer; until then every mode answers lexically.
    let (mode, note) = match requested {
        Mode::Sparse => (Mode::Sparse, None),
        m => (Mode::Sparse, Some(format!("{} search unavailable: no embedding model configured; results are lexical only", m.name()))),
    };
    let pool = args.k.max(engine.ws.config.search.pool) * 2;
    let ranked: Vec<Ranked> = search::sparse(view, &args.query, pool, allowed.as_ref())?
        .into_iter()
        .enumerate()
        .map(|(i, (ord, score))| Ranked { ord, score, sparse_rank: Some(i + 1), dense_rank: None })
        .collect();
    let ranked = search::dedup_identical(view, ranked);
    let results: Vec<Hit> = ranked.iter().take(args.k).map(|r| hit(view, r)).collect();
    let result = SearchResult { query: args.query.clone(), mode, note, filters: args.filters.clone(), results };
    let text = render(&view.id, &result, args.snippet_lines);
    Ok(Answer::new("search", Some(view.id.clone()), &result, text))
}

pub fn render(view: &crate::view::ViewId, r: &SearchResult, snippet_lines: usize) -> String {
    let mut out = format!("{} · mode: {} · {} result{}\n", view_line(view), r.mode.name(), r.results.len(), if r.results.len() == 1 { "" } else { "s" });
    if let Some(n) = &r.note {
        out.push_str(&format!("note: {n}\n"));
    }
    if r.results.is_empty() {
        out.push_str(&format!("no matches for \"{}\"\n", r.query));
    }
    for (i, h) in r.results.iter().enumerate() {
        out.push_str(&format!("{}. {}\n", i + 1, cite(h)));
        out.push_str(&snippet(&h.text, snippet_lines));
    }
    out
}

/// `path:start-end symbol (score)`
pub fn cite(h: &Hit) -> String {
    let sym = if h.symbol.is_empty() { format!("<{}>", h.kind) } else { h.symbol.clone() };
    format!("{}:{}-{} {} ({})", h.path, h.start_line, h.end_line, sym, format_score(h.score))
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
        out.push_str(&format!("    … ({} more lines)\n", total - lines));
    }
    out
}
