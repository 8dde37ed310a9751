//! Navigation over the code graph: find_definition, find_usages, find_tests_for,
//! describe_symbol, impact and module_summary. Each returns a typed result rendered as JSON
//! or text by the same `Answer`.

use super::args::{Count, Rev};
use super::search::{Hit, cite, hit as search_hit, snippet};
use super::{Answer, view_line};
use crate::engine::Engine;
use crate::graph::model::{CodeGraph, Node, Rel};
use crate::graph::query::{self, Link, MatchKind, NodeRef, node_ref};
use crate::present;
use crate::search::{self, Ranked};
use crate::view::View;
use crate::view::ViewData;
use anyhow::Result;
use petgraph::Direction;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

crate::error::errors! {
    /// A navigation question whose arguments cannot be used.
    pub enum NavError: Usage {
        TestPattern { why: String } => "test_path_pattern is not a valid regular expression: {why}",
    }
}

/// `find_definition`'s and `describe_symbol`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct SymbolArgs {
    /// Symbol: qualified (`Class.method`) or leaf name.
    #[schemars(description = "Name or Class.method (path:name to pick a file)")]
    pub symbol: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::Sources,
    /// When no definition has that name, also list the chunks that mention it (BM25).
    #[arg(long = "lexical")]
    #[serde(default, rename = "fallback")]
    #[schemars(description = "also list lexical matches when nothing is named so")]
    pub lexical: bool,
}

impl SymbolArgs {
    pub fn new(symbol: &str, rev: Option<&str>) -> SymbolArgs {
        SymbolArgs {
            symbol: symbol.to_string(),
            at: Rev { rev: rev.map(String::from) },
            source: Default::default(),
            lexical: false,
        }
    }
}

/// Near names offered for a name that is not there: a few, so a miss stays short.
const NEAREST: usize = 3;

/// `find_usages`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct UsagesArgs {
    /// Symbol: qualified (`Class.method`) or leaf name.
    #[schemars(description = "Name or Class.method (path:name to pick a file)")]
    pub symbol: String,
    /// Usages listed at most [default: 50; at most 500 a page].
    #[arg(short = 'k', long = "limit")]
    #[serde(rename = "n_results")]
    #[schemars(description = "default 50")]
    pub k: Option<Count>,
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::args::Page,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::Sources,
}

impl UsagesArgs {
    /// Usages a page lists.
    pub fn limit(&self) -> usize {
        Count::or(self.k, 50, 500)
    }
}

/// `find_tests_for`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct TestsArgs {
    /// Symbol: qualified (`Class.method`) or leaf name, or a file path.
    #[schemars(description = "Name or Class.method (path:name to pick a file)")]
    pub symbol: String,
    /// Keep only tests whose path matches this regular expression.
    #[arg(long = "test-path-pattern")]
    #[schemars(description = "regex the test paths must match")]
    pub test_path_pattern: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::args::Page,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::Sources,
}

/// `module_summary`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ModuleArgs {
    /// Path of the file (repository-relative).
    #[serde(rename = "path")]
    #[schemars(description = "")]
    pub file: String,
    /// At most this many entries per list (definitions, imports, dependents) [default: 200;
    /// at most 10000].
    #[arg(short = 'k', long = "limit")]
    #[serde(rename = "n_results")]
    #[schemars(description = "per list, default 200")]
    pub k: Option<Count>,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::Sources,
}

/// An opened view with its graph.
pub struct Ctx {
    pub view: std::sync::Arc<View>,
    pub data: Arc<ViewData>,
    pub graph: Arc<CodeGraph>,
}

pub fn open(engine: &Engine, rev: Option<&str>) -> Result<Ctx> {
    let view = engine.view(&engine.spec(rev))?;
    let data = engine.open_listed(&view)?.data;
    let graph = engine.graph(&view, &data)?;
    Ok(Ctx { view, data, graph })
}

/// A definition with the code of its chunk (first lines).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Definition {
    #[serde(flatten)]
    pub node: NodeRef,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub signature: String,
}

fn definition(ctx: &Ctx, d: u32) -> Result<Definition> {
    let node = node_ref(&ctx.graph, Node::Def(d));
    let (start, end) = (node.start_line.unwrap_or(0), node.end_line.unwrap_or(0));
    let path = node.path.as_deref().unwrap_or("");
    let code = match head_at(ctx, path, start, end)? {
        Some(t) => Some(t),
        None => code_at(ctx, path, start, end)?,
    };
    Ok(Definition { node, signature: code.map(|t| first_code_lines(&t, 3)).unwrap_or_default() })
}

/// The lines of a definition from its first line on, from the innermost chunk holding that line
/// (a class's own head, not its largest method's chunk).
fn head_at(ctx: &Ctx, path: &str, start: u32, end: u32) -> Result<Option<String>> {
    let t = &ctx.data.table;
    let Some(c) = ctx
        .data
        .file_chunks(path)
        .map(|o| t.chunk(o))
        .filter(|c| c.start_line <= start && start <= c.end_line)
        .max_by_key(|c| c.start_line)
    else {
        return Ok(None);
    };
    let to = end.min(c.end_line);
    Ok(Some(
        c.text()?
            .lines()
            .skip((start - c.start_line) as usize)
            .take((to - start + 1) as usize)
            .collect::<Vec<_>>()
            .join("\n"),
    ))
}

/// Lines `start..=end` of a file of the view, from its chunks.
pub fn code_at(ctx: &Ctx, path: &str, start: u32, end: u32) -> Result<Option<String>> {
    let t = &ctx.data.table;
    let mut best: Option<(u32, String)> = None;
    for ord in ctx.data.file_chunks(path) {
        let c = t.chunk(ord);
        if c.end_line < start || c.start_line > end {
            continue;
        }
        let overlap = c.end_line.min(end).saturating_sub(c.start_line.max(start)) + 1;
        if best.as_ref().is_none_or(|(o, _)| overlap > *o) {
            let from = start.max(c.start_line) - c.start_line;
            let to = end.min(c.end_line) - c.start_line;
            let text: Vec<&str> = c.text()?.lines().skip(from as usize).take((to - from + 1) as usize).collect();
            best = Some((overlap, text.join("\n")));
        }
    }
    Ok(best.map(|b| b.1))
}

/// A definition's head: up to `n` lines after its comments and decorators, ending where its
/// body begins.
fn first_code_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| {
            let t = l.trim_start();
            t.is_empty()
                || t.starts_with("//")
                || t.starts_with('#')
                || t.starts_with("/*")
                || t.starts_with('*')
                || t.starts_with('@')
                || t.starts_with("\"\"\"")
        })
        .take(n)
        .collect();
    // A head ends at the line that opens the body (`{`, Python's `:`, an arrow) or ends the
    // declaration (`;`): what follows is the body.
    let end = lines
        .iter()
        .position(|l| {
            let t = l.trim_end();
            t.ends_with('{') || t.ends_with(':') || t.ends_with("=>") || t.ends_with(';')
        })
        .map_or(lines.len(), |i| i + 1);
    lines[..end].join("\n")
}

fn no_match(op: &'static str, ctx: &Ctx, symbol: &str) -> Answer {
    let suggestions = query::suggest(&ctx.graph, symbol, NEAREST);
    let text = format!(
        "{}\nno definition of \"{symbol}\" in this view{}\n",
        view_line(&ctx.data.id),
        crate::present::did_you_mean(&suggestions)
    );
    Answer::new(op, Some(ctx.data.id.clone()), super::Unmatched::new(symbol, suggestions), text)
}

fn matched_line(symbol: &str, defs: &[Definition], how: MatchKind) -> String {
    let how = match how {
        MatchKind::Exact => "",
        MatchKind::CaseInsensitive => " (case-insensitive match)",
    };
    let mut out = format!("{symbol}{how}: {} definition{}\n", defs.len(), if defs.len() == 1 { "" } else { "s" });
    for d in defs.iter().take(10) {
        out.push_str(&format!(
            "  {} {} ({}-{})\n",
            present::loc(d.node.path.as_deref().unwrap_or(""), d.node.start_line.unwrap_or(0)),
            d.node.kind,
            d.node.start_line.unwrap_or(0),
            d.node.end_line.unwrap_or(0)
        ));
    }
    out
}

fn render_links(title: &str, links: &[Link], out: &mut String, here: Option<&str>, max: usize) {
    out.push_str(&format!("{title} ({}):\n", links.len()));
    if links.is_empty() {
        out.push_str("  (none)\n");
    }
    push_links(out, links, max, here);
}

/// Links a description names per list (nearest first); `graph_query` pages through them all.
const DESCRIBE_LINKS: usize = 15;
/// Links a list names before counting the rest.
const LINKS_LISTED: usize = 60;

/// A module's dependants: each one while they are few, else the files they are in (most first),
/// which is what a summary of a module needs.
fn render_dependents(dependents: &[Link], total: usize, out: &mut String) {
    if dependents.len() <= DEPENDENTS_LISTED {
        return render_links("dependents", dependents, out, None, LINKS_LISTED);
    }
    let mut files: Vec<(&str, usize)> = Vec::new();
    for l in dependents {
        let p = l.node.path.as_deref().unwrap_or("");
        match files.iter_mut().find(|(f, _)| *f == p) {
            Some((_, n)) => *n += 1,
            None => files.push((p, 1)),
        }
    }
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    out.push_str(&format!("dependents ({total}), by file:\n"));
    for (f, n) in files.iter().take(DEPENDENTS_LISTED) {
        out.push_str(&format!("  {} ({n})\n", present::path(f)));
    }
    if files.len() > DEPENDENTS_LISTED {
        out.push_str(&format!("  … {} more\n", present::count(files.len() - DEPENDENTS_LISTED, "file", "files")));
    }
}

/// Dependants an impact answer lists one by one (nearest first).
const IMPACT_LISTED: usize = 25;

/// Dependants of a module listed one by one; more are summed up by file.
const DEPENDENTS_LISTED: usize = 10;

/// A list of links, one line each up to `max` — symbols outside the repository (`len`,
/// `strings.HasPrefix`) gathered on one line at the end. `here`: the file of the symbol asked
/// about, whose call sites are said by their line alone.
pub fn push_links<L: std::borrow::Borrow<Link>>(out: &mut String, links: &[L], max: usize, here: Option<&str>) {
    let (outside, inside): (Vec<&Link>, Vec<&Link>) =
        links.iter().map(|l| l.borrow()).partition(|l| l.node.path.is_none() && l.node.kind == "external");
    for l in inside.iter().take(max) {
        out.push_str(&format!("  {}\n", link_line_at(l, true, here)));
    }
    if inside.len() > max {
        out.push_str(&format!("  … {} more\n", inside.len() - max));
    }
    if !outside.is_empty() {
        let mut names: Vec<&str> = Vec::new();
        for l in &outside {
            if !names.contains(&l.node.name.as_str()) {
                names.push(&l.node.name);
            }
        }
        let shown = names.len().min(max.max(1));
        let more = if names.len() > shown { format!(" (+{} more)", names.len() - shown) } else { String::new() };
        out.push_str(&format!("  outside the repository: {}{more}\n", names[..shown].join(", ")));
    }
}

/// The one file every start of a query is defined in, if there is one: call sites there need
/// no path.
pub fn home_file<'a>(paths: impl IntoIterator<Item = Option<&'a str>>) -> Option<&'a str> {
    let mut home = None;
    for p in paths {
        match (home, p) {
            (_, None) => return None,
            (None, Some(p)) => home = Some(p),
            (Some(h), Some(p)) if h != p => return None,
            _ => {}
        }
    }
    home
}

/// `path:line: kind name (start-end)`; the line is where the relation is written (the call),
/// else where the node starts; then what is not the usual — a relation other than a call, an
/// edge that is not confident. `styled`: for a reader (relative paths, colour); plain for
/// Markdown reports.
pub fn link_line(l: &Link, styled: bool) -> String {
    link_line_at(l, styled, None)
}

fn link_line_at(l: &Link, styled: bool, here: Option<&str>) -> String {
    // A callee is shown where it is defined; its call site, in another file, said apart.
    let line =
        if l.site.is_some() { l.node.start_line.unwrap_or(0) } else { l.line.or(l.node.start_line).unwrap_or(0) };
    let verb = match l.relation {
        "calls" => "called at",
        "references" => "referenced at",
        "imports" => "imported at",
        _ => "at",
    };
    let site = match (&l.site, l.line) {
        (Some(p), Some(n)) if here == Some(p.as_str()) => format!(" ({verb} line {n})"),
        (Some(p), Some(n)) if styled => format!(" ({verb} {})", present::loc(p, n).trim_end_matches(':')),
        (Some(p), Some(n)) => format!(" ({verb} {}:{n})", present::quote_path(p)),
        _ => String::new(),
    };
    let at = match (&l.node.path, l.node.start_line, l.node.end_line) {
        (Some(p), Some(s), Some(e)) if styled => {
            format!("{} {} {} ({s}-{e})", present::loc(p, line), l.node.kind, l.node.name)
        }
        (Some(p), Some(s), Some(e)) => {
            format!("{}:{line}: {} {} ({s}-{e})", present::quote_path(p), l.node.kind, l.node.name)
        }
        // A file is its path.
        (Some(p), _, _) if l.node.kind == "file" => {
            if styled {
                present::path(p)
            } else {
                present::quote_path(p).into_owned()
            }
        }
        (Some(p), _, _) => format!(
            "{} {} {}",
            if styled { present::path(p) } else { present::quote_path(p).into_owned() },
            l.node.kind,
            l.node.name
        ),
        // "external" is said once, as the confidence; the kind says what it is.
        _ if l.node.kind == "external" => l.node.name.to_string(),
        _ => format!("{} {}", l.node.kind, l.node.name),
    };
    let depth = if l.depth > 1 { format!(" [depth {}]", l.depth) } else { String::new() };
    let test = if l.node.test { " (test)" } else { "" };
    let recursion = if l.recursive { " (recursion)" } else { "" };
    // A confident call is the usual line and says nothing more.
    let confident = matches!(l.confidence, "precise" | "extracted" | "resolved");
    let how = match (l.relation != "calls", confident) {
        (false, true) => String::new(),
        (true, true) => format!(" — {}", l.relation),
        (false, false) => format!(" — {}", l.confidence),
        (true, false) => format!(" — {}, {}", l.relation, l.confidence),
    };
    format!("{at}{site}{depth}{test}{recursion}{how}")
}

// ---------------------------------------------------------------- find_definition

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FindDefinition {
    pub symbol: String,
    pub matched: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_kind: Option<MatchKind>,
    pub results: Vec<Definition>,
    /// BM25 hits when the graph knows no such definition.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lexical: Vec<Hit>,
    /// Near names when nothing matched (a typo, a partial name).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
}

pub fn find_definition(engine: &Engine, a: &SymbolArgs) -> Result<Answer> {
    let symbol = super::args::required(&a.symbol, "symbol")?;
    let symbol = symbol.as_str();
    let ctx = open(engine, a.at.rev.as_deref())?;
    let (defs, how) = query::match_symbol(&ctx.graph, symbol);
    if defs.is_empty() {
        // Lexical matches only when asked for: a miss is said in one line.
        let lexical: Vec<Hit> = if a.lexical {
            search::sparse(&ctx.data, symbol, 5, None, None)?
                .iter()
                .enumerate()
                .map(|(i, &(o, s))| search_hit(&ctx.data, &Ranked::sparse(i, o, s)))
                .collect::<Result<_>>()?
        } else {
            Vec::new()
        };
        let suggestions = query::suggest(&ctx.graph, symbol, NEAREST);
        let mut text = format!(
            "{}\nno definition of \"{symbol}\" in this view{}",
            view_line(&ctx.data.id),
            crate::present::did_you_mean(&suggestions)
        );
        if lexical.is_empty() {
            text.push('\n');
        } else {
            text.push_str("; lexical matches:\n");
            for h in &lexical {
                text.push_str(&format!("  {}\n", cite(h)));
            }
        }
        let r = FindDefinition {
            symbol: symbol.into(),
            matched: false,
            match_kind: None,
            results: vec![],
            lexical,
            suggestions,
        };
        return Ok(Answer::new("find_definition", Some(ctx.data.id.clone()), &r, text));
    }
    let results: Vec<Definition> = defs.iter().take(20).map(|&d| definition(&ctx, d)).collect::<Result<_>>()?;
    let mut text = format!("{}\n", view_line(&ctx.data.id));
    for d in &results {
        text.push_str(&format!(
            "{} {} {} ({}-{}){}\n",
            present::loc(d.node.path.as_deref().unwrap_or(""), d.node.start_line.unwrap_or(0)),
            d.node.kind,
            d.node.name,
            d.node.start_line.unwrap_or(0),
            d.node.end_line.unwrap_or(0),
            if d.node.test { " (test)" } else { "" }
        ));
        text.push_str(&snippet(&d.signature, 3));
    }
    let r = FindDefinition {
        symbol: symbol.into(),
        matched: true,
        match_kind: how,
        results,
        lexical: vec![],
        suggestions: vec![],
    };
    Ok(Answer::new("find_definition", Some(ctx.data.id.clone()), &r, text))
}

// ---------------------------------------------------------------- find_usages

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Usage {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: String,
    pub kind: String,
    /// "graph" (a resolved call or inheritance edge) or "lexical" (the name appears in the code).
    pub origin: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relation: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FindUsages {
    pub symbol: String,
    pub matched: bool,
    pub definitions: Vec<Definition>,
    pub results: Vec<Usage>,
    pub truncated: bool,
    /// Pass as `--cursor` (MCP: `cursor`) for the next page; null on the last one.
    pub next_cursor: Option<String>,
}

/// Byte offset of the first whole-identifier occurrence of `name` in `text`.
fn identifier_at(text: &str, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let s = from + i;
        let e = s + name.len();
        let before = s == 0 || !(bytes[s - 1].is_ascii_alphanumeric() || bytes[s - 1] == b'_');
        let after = e >= bytes.len() || !(bytes[e].is_ascii_alphanumeric() || bytes[e] == b'_');
        if before && after {
            return Some(s);
        }
        from = e;
    }
    None
}

pub fn find_usages(engine: &Engine, a: &UsagesArgs) -> Result<Answer> {
    let symbol = super::args::required(&a.symbol, "symbol")?;
    let (symbol, limit, cursor) = (symbol.as_str(), a.limit(), a.page.cursor.as_deref());
    let ctx = open(engine, a.at.rev.as_deref())?;
    let pager = super::page::Pager::new("find_usages", &ctx.data.key, &(symbol, limit), cursor)?;
    let (defs, _) = query::match_symbol(&ctx.graph, symbol);
    let leaf = symbol.rsplit(['.', ':']).next().unwrap_or(symbol).to_string();
    let starts: Vec<Node> = defs.iter().map(|&d| Node::Def(d)).collect();
    let mut results = Vec::new();
    let mut seen: HashSet<(String, u32, u32)> = HashSet::new();
    let def_spans: HashSet<(String, u32)> =
        defs.iter().map(|&d| (ctx.graph.def_path(d).to_string(), ctx.graph.defs[d as usize].start_line)).collect();
    let graph_links = query::adjacent(&ctx.graph, &starts, &CALLER_RELS, Direction::Incoming);
    for l in &graph_links {
        let (Some(p), Some(s), Some(e)) = (l.node.path.clone(), l.node.start_line, l.node.end_line) else { continue };
        if seen.insert((p.clone(), s, e)) {
            results.push(Usage {
                path: p,
                start_line: s,
                end_line: e,
                symbol: l.node.name.clone(),
                kind: l.node.kind.clone(),
                origin: "graph",
                relation: Some(l.relation),
                confidence: Some(l.confidence),
                line: l.line,
            });
        }
    }
    // Calls from file level (scripts, module initialisers).
    for &s in &starts {
        for e in ctx.graph.g.edges_directed(ctx.graph.node_of(s), Direction::Incoming) {
            if let Node::File(f) = ctx.graph.g[petgraph::visit::EdgeRef::source(&e)]
                && matches!(e.weight().rel, Rel::Calls | Rel::References)
            {
                let p = ctx.graph.files[f as usize].path.clone();
                let line = e.weight().line;
                if seen.insert((p.clone(), line, line)) {
                    results.push(Usage {
                        path: p,
                        start_line: line,
                        end_line: line,
                        symbol: String::new(),
                        kind: "file".into(),
                        origin: "graph",
                        relation: Some(e.weight().rel.name()),
                        confidence: Some(e.weight().confidence.name()),
                        line: Some(line),
                    });
                }
            }
        }
    }
    // Lexical references: chunks that contain the identifier, outside the definition itself.
    let hits = search::sparse(&ctx.data, &leaf, 200, None, None)?;
    for (o, _) in hits {
        let c = ctx.data.table.chunk(o);
        // A symbol defined in the code is used by code: prose that names it (changelogs,
        // guides) is not a usage.
        if !defs.is_empty() && !c.lang.is_code() {
            continue;
        }
        let text = c.text()?;
        let Some(at) = identifier_at(text, &leaf) else { continue };
        if def_spans.contains(&(c.path.to_string(), c.start_line)) {
            continue;
        }
        let covered =
            results.iter().any(|u| u.path == c.path && u.start_line <= c.end_line && c.start_line <= u.end_line);
        if covered || !seen.insert((c.path.to_string(), c.start_line, c.end_line)) {
            continue;
        }
        // The definition's own chunk is not a usage.
        if defs.iter().any(|&d| {
            let dd = &ctx.graph.defs[d as usize];
            ctx.graph.def_path(d) == c.path
                && dd.start_line <= c.start_line
                && c.end_line <= dd.end_line
                && c.symbol == dd.qualified
        }) {
            continue;
        }
        results.push(Usage {
            path: c.path.into(),
            start_line: c.start_line,
            end_line: c.end_line,
            symbol: c.symbol.into(),
            kind: c.kind.into(),
            origin: "lexical",
            relation: None,
            confidence: None,
            line: Some(c.start_line + text[..at].matches('\n').count() as u32),
        });
    }
    let next_cursor = pager.page(&mut results, limit);
    let truncated = next_cursor.is_some();
    let definitions: Vec<Definition> = defs.iter().take(10).map(|&d| definition(&ctx, d)).collect::<Result<_>>()?;
    let matched = !defs.is_empty();
    let mut text = format!("{}\n", view_line(&ctx.data.id));
    if matched {
        text.push_str(&matched_line(symbol, &definitions, MatchKind::Exact));
    } else {
        text.push_str(&format!("no definition named \"{symbol}\"; lexical references only\n"));
    }
    text.push_str(&format!("usages ({}{}):\n", results.len(), if truncated { ", truncated" } else { "" }));
    if results.is_empty() {
        text.push_str("  (none)\n");
    }
    for u in &results {
        let sym = if u.symbol.is_empty() { format!("<{}>", u.kind) } else { u.symbol.clone() };
        // The graph's confident calls are the usual case; anything else says what it is.
        let how = match (u.relation, u.confidence) {
            (Some(r), Some("precise" | "extracted" | "resolved")) => r.to_string(),
            (Some(r), Some(c)) => format!("{r}, {c}"),
            _ => "mentions".into(),
        };
        text.push_str(&format!(
            "{} {} ({}-{}) [{how}]\n",
            present::loc(&u.path, u.line.unwrap_or(u.start_line)),
            sym,
            u.start_line,
            u.end_line,
        ));
    }
    text.push_str(&super::page::more_line(next_cursor.as_deref()));
    let r = FindUsages { symbol: symbol.into(), matched, definitions, results, truncated, next_cursor };
    Ok(Answer::new("find_usages", Some(ctx.data.id.clone()), &r, text))
}

// ---------------------------------------------------------------- mentions

/// Where a symbol's name appears outside its definitions, for an answer whose graph walk found
/// nothing confident: a zero that is not the whole truth says so.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Mentions {
    /// Chunks that name it outside its definitions.
    pub places: usize,
    pub files: usize,
    /// The first few of those files.
    pub first_files: Vec<String>,
}

/// Lexical mentions of the name of `defs[0]` outside every definition in `defs`, in the files
/// `keep` accepts.
fn mentions(ctx: &Ctx, defs: &[u32], keep: impl Fn(&str) -> bool) -> Result<Option<Mentions>> {
    let Some(&first) = defs.first() else { return Ok(None) };
    let g = &ctx.graph;
    let leaf = g.defs[first as usize].name.clone();
    if leaf.is_empty() {
        return Ok(None);
    }
    let inside = |path: &str, line: u32| {
        defs.iter().any(|&d| {
            let dd = &g.defs[d as usize];
            g.def_path(d) == path && dd.start_line <= line && line <= dd.end_line
        })
    };
    let mut places = 0;
    let mut files: Vec<String> = Vec::new();
    for (o, _) in search::sparse(&ctx.data, &leaf, 200, None, None)? {
        let c = ctx.data.table.chunk(o);
        if !keep(c.path) {
            continue;
        }
        let text = c.text()?;
        let mut from = 0;
        let mut outside = false;
        while let Some(at) = identifier_at(&text[from..], &leaf) {
            let line = c.start_line + text[..from + at].matches('\n').count() as u32;
            if !inside(c.path, line) {
                outside = true;
                break;
            }
            from += at + leaf.len();
        }
        if outside {
            places += 1;
            if !files.iter().any(|f| f == c.path) {
                files.push(c.path.to_string());
            }
        }
    }
    files.sort();
    Ok((places > 0).then(|| Mentions { places, files: files.len(), first_files: files.into_iter().take(5).collect() }))
}

/// The one line an answer adds when its walk found nothing confident but the name is used.
fn mentions_line(what: &str, m: &Mentions) -> String {
    format!(
        "no confident {what}, but the name appears in {} in {}: {}{} (find_usages lists them)\n",
        present::count(m.places, "place", "places"),
        present::count(m.files, "file", "files"),
        m.first_files.iter().map(|f| present::path(f)).collect::<Vec<_>>().join(", "),
        if m.files > m.first_files.len() { ", …" } else { "" }
    )
}

/// "called by 3, referenced by 2, subclassed by 1": how the links reach their subject.
pub fn relation_counts(links: &[Link]) -> String {
    let mut calls = 0;
    let mut refs = 0;
    let mut inherits = 0;
    for l in links {
        match l.relation {
            "calls" => calls += 1,
            "references" => refs += 1,
            _ => inherits += 1,
        }
    }
    let mut parts = Vec::new();
    if calls > 0 {
        parts.push(format!("called by {calls}"));
    }
    if refs > 0 {
        parts.push(format!("referenced by {refs}"));
    }
    if inherits > 0 {
        parts.push(format!("subclassed by {inherits}"));
    }
    parts.join(", ")
}

// ---------------------------------------------------------------- tests

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TestRef {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// "graph" (calls the symbol, maybe through others) or "convention" (a test file for its file).
    pub origin: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
}

/// Test files that by naming convention test `path` (`test_x.py`, `x_test.go`, `XTest.java`,
/// `x.spec.ts`, `tests/x.rs`, …), among the view's files, inside the code's own package: Go
/// tests sit in the package's directory; elsewhere the test's directory, with layout names
/// (`src`, `test`, `main`, `java`, …) left out, is the code's or one of its ancestors (a
/// mirrored package, or the tests tree of the package).
pub fn conventional_tests(cg: &CodeGraph, path: &str) -> Vec<String> {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let lower = stem.to_lowercase();
    let package = package_dir(dir);
    let mut out = Vec::new();
    for f in &cg.files {
        if !f.is_test || f.path == path {
            continue;
        }
        let (fdir, fname) = f.path.rsplit_once('/').unwrap_or(("", &f.path));
        let (fstem, fext) = fname.rsplit_once('.').unwrap_or((fname, ""));
        let fl = fstem.to_lowercase();
        let same_family =
            fext == ext || matches!((ext, fext), ("ts" | "tsx" | "js" | "jsx", "ts" | "tsx" | "js" | "jsx"));
        if !same_family {
            continue;
        }
        let related = if ext == "go" {
            fdir == dir
        } else {
            let test_package = package_dir(fdir);
            package == test_package || package.starts_with(&format!("{test_package}/")) || test_package.is_empty()
        };
        if !related {
            continue;
        }
        let by_name = TEST_NAMES.iter().any(|p| p.replace("{}", &lower) == fl);
        // `tests/test_<package>_<module>.py` for `<package>/<module>.py` (a plural directory
        // named in the singular: `downloadermiddlewares/retry.py` → `test_downloadermiddleware_retry.py`).
        let by_package =
            fl.strip_prefix("test_").and_then(|x| x.strip_suffix(&format!("_{lower}"))).is_some_and(|pkg| {
                !pkg.is_empty()
                    && dir.split('/').any(|seg| {
                        let seg = seg.to_lowercase();
                        seg == pkg || seg.trim_end_matches('s') == pkg.trim_end_matches('s')
                    })
            });
        if by_name || by_package {
            out.push(f.path.clone());
        }
    }
    out.sort();
    out
}

/// Test file names for a code file named `{}` (its stem, lower case), across languages:
/// `test_x.py`, `x_test.go`, `x_test.py`, `XTest.java`, `XTests.cs`, `x.test.ts(x)`, `x.spec.ts`,
/// `x_spec.rb`, and a same-named file in a tests tree (`tests/x.rs`, `__tests__/x.js`). Rust's
/// `#[cfg(test)]` modules and other tests inside the file itself are found beside these.
const TEST_NAMES: &[&str] =
    &["test_{}", "{}_test", "{}_tests", "{}test", "{}tests", "{}.test", "{}.spec", "{}_spec", "{}"];

/// A directory without the segments that only say where sources or tests live.
fn package_dir(dir: &str) -> String {
    const LAYOUT: &[&str] =
        &["src", "lib", "main", "test", "tests", "spec", "specs", "__tests__", "java", "kotlin", "scala", "unit"];
    dir.split('/').filter(|s| !s.is_empty() && !LAYOUT.contains(s)).collect::<Vec<_>>().join("/")
}

/// Adds the tests that reach definitions of `files` to `out` (deduplicated, a stronger origin
/// replacing a weaker one): "graph" through confident call edges (`reach.confident`),
/// "convention" by file name or inside the same file, "guessed" through a direct name-only match
/// (`reach.possible`; listed, not counted as tests to re-run).
pub fn add_tests(g: &CodeGraph, reach: &query::Reach, files: &[&str], out: &mut Vec<TestRef>) {
    let mut put = |t: TestRef| {
        // A whole test file is said once: not beside tests named in it.
        if t.symbol.is_none() && out.iter().any(|x| x.path == t.path) {
            return;
        }
        if t.symbol.is_some() {
            out.retain(|x| !(x.path == t.path && x.symbol.is_none()));
        }
        match out.iter_mut().find(|x| x.path == t.path && x.symbol == t.symbol) {
            Some(x) if origin_rank(t.origin) < origin_rank(x.origin) => *x = t,
            Some(_) => {}
            None => out.push(t),
        }
    };
    let as_test = |l: &Link, origin: &'static str| TestRef {
        path: l.node.path.clone().unwrap_or_default(),
        symbol: Some(l.node.name.clone()),
        start_line: l.node.start_line,
        end_line: l.node.end_line,
        origin,
        depth: Some(l.depth),
    };
    for l in reach.confident.iter().filter(|l| l.node.test) {
        put(as_test(l, "graph"));
    }
    for &f in files {
        for t in conventional_tests(g, f) {
            put(TestRef { path: t, symbol: None, start_line: None, end_line: None, origin: "convention", depth: None });
        }
        // Tests inside the same file (Rust `#[cfg(test)] mod tests`, Go examples…).
        if let Some(&fi) = g.by_path.get(f) {
            for d in g.defs.iter().filter(|d| d.file == fi && d.is_test && d.kind != "module") {
                put(TestRef {
                    path: f.to_string(),
                    symbol: Some(d.qualified.clone()),
                    start_line: Some(d.start_line),
                    end_line: Some(d.end_line),
                    origin: "convention",
                    depth: None,
                });
            }
        }
    }
    for l in reach.possible.iter().filter(|l| l.node.test) {
        put(as_test(l, "guessed"));
    }
    // Nearer first (a test file named for the code counts as one hop), guesses last.
    let key =
        |t: &TestRef| (t.origin == "guessed", t.depth.unwrap_or(1), t.path.clone(), t.start_line, t.symbol.clone());
    out.sort_by_key(key);
}

fn origin_rank(origin: &str) -> u8 {
    match origin {
        "graph" => 0,
        "convention" => 1,
        _ => 2,
    }
}

/// Tests to re-run: every origin but "guessed".
pub fn to_rerun(tests: &[TestRef]) -> usize {
    tests.iter().filter(|t| t.origin != "guessed").count()
}

/// What a test of `defs` reaches: the definitions, and for a type its members too (a test that
/// calls a method of a class tests the class).
fn with_members(g: &CodeGraph, defs: &[u32]) -> Vec<Node> {
    let mut starts: Vec<Node> = defs.iter().map(|&d| Node::Def(d)).collect();
    for &d in defs {
        if crate::chunk::defs::type_kind(&g.defs[d as usize].kind) {
            for e in g.g.edges_directed(g.def_nodes[d as usize], Direction::Outgoing) {
                if e.weight().rel == Rel::Contains
                    && let Node::Def(m) = g.g[petgraph::visit::EdgeRef::target(&e)]
                {
                    starts.push(Node::Def(m));
                }
            }
        }
    }
    starts
}

/// Relations a test reaches what it tests through.
pub const TEST_RELS: [Rel; 2] = [Rel::Calls, Rel::References];

fn tests_for(ctx: &Ctx, defs: &[u32], depth: usize) -> Vec<TestRef> {
    let g = &ctx.graph;
    let starts = with_members(g, defs);
    let reach = query::reach(g, &starts, &TEST_RELS, depth);
    let mut files: Vec<&str> = defs.iter().map(|&d| g.def_path(d)).collect();
    files.sort();
    files.dedup();
    let mut out = Vec::new();
    add_tests(g, &reach, &files, &mut out);
    out
}

/// Tests, nearest first, up to `max` named: the tests of one file found the same way on one line
/// (`path [graph]: name (line), …`), the rest counted.
fn render_tests(title: &str, tests: &[TestRef], out: &mut String, max: usize) {
    let guessed = tests.len() - to_rerun(tests);
    out.push_str(&format!(
        "{title} ({}){}:\n",
        to_rerun(tests),
        if guessed > 0 { format!(", and {guessed} through a name-only match [guessed]") } else { String::new() }
    ));
    if tests.is_empty() {
        out.push_str("  (none found)\n");
    }
    let shown = &tests[..tests.len().min(max)];
    let mut i = 0;
    while i < shown.len() {
        let t = &shown[i];
        let how =
            format!("{}{}", t.origin, t.depth.filter(|d| *d > 1).map(|d| format!(", depth {d}")).unwrap_or_default());
        let run = shown[i..]
            .iter()
            .take_while(|x| x.path == t.path && x.origin == t.origin && x.depth == t.depth && x.symbol.is_some())
            .count();
        if run >= 2 {
            let names: Vec<String> = shown[i..i + run]
                .iter()
                .map(|x| format!("{} ({})", x.symbol.as_deref().unwrap_or(""), x.start_line.unwrap_or(0)))
                .collect();
            out.push_str(&format!("  {} [{how}]: {}\n", present::path(&t.path), names.join(", ")));
            i += run;
            continue;
        }
        match (&t.symbol, t.start_line, t.end_line) {
            (Some(s), Some(a), Some(b)) => {
                out.push_str(&format!("  {} {s} ({a}-{b}) [{how}]\n", present::loc(&t.path, a)))
            }
            _ => out.push_str(&format!("  {} [{how}]\n", present::path(&t.path))),
        }
        i += 1;
    }
    if tests.len() > max {
        let rest = &tests[max..];
        let mut files: Vec<&str> = rest.iter().map(|t| t.path.as_str()).collect();
        files.sort_unstable();
        files.dedup();
        out.push_str(&format!("  … {} more in {}\n", rest.len(), present::count(files.len(), "file", "files")));
    }
}

/// Tests a description names (the nearest); `find_tests_for` lists them all.
const DESCRIBE_TESTS: usize = 8;
/// Tests a list answer names before counting the rest.
const TESTS_LISTED: usize = 50;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FindTests {
    pub symbol: String,
    pub matched: bool,
    pub results: Vec<TestRef>,
    /// Pass as `--cursor` (MCP: `cursor`) for the next page; null on the last one.
    pub next_cursor: Option<String>,
    /// When no test was found: test files that name the symbol all the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mentions: Option<Mentions>,
}

/// Tests per page of `find_tests_for`.
pub const TESTS_PER_PAGE: usize = 50;

/// `test_path_pattern`, a regular expression, keeps the tests whose path it matches.
pub fn find_tests_for(engine: &Engine, a: &TestsArgs) -> Result<Answer> {
    let symbol = super::args::required(&a.symbol, "symbol")?;
    let (symbol, rev, test_path_pattern, cursor) =
        (symbol.as_str(), a.at.rev.as_deref(), a.test_path_pattern.as_deref(), a.page.cursor.as_deref());
    let pattern = match test_path_pattern {
        Some(p) => Some(regex::Regex::new(p).map_err(|e| NavError::TestPattern { why: e.to_string() })?),
        None => None,
    };
    let keep = |t: &TestRef| pattern.as_ref().is_none_or(|re| re.is_match(&t.path));
    let ctx = open(engine, rev)?;
    let pager = super::page::Pager::new("find_tests_for", &ctx.data.key, &(symbol, test_path_pattern), cursor)?;
    let (defs, how) = query::match_symbol(&ctx.graph, symbol);
    let defs: Vec<u32> = defs.into_iter().filter(|&d| !ctx.graph.is_test(Node::Def(d))).collect();
    if defs.is_empty() {
        // A file path names its tests too.
        if let Some(&fi) = ctx.graph.by_path.get(symbol) {
            let mut tests: Vec<TestRef> = conventional_tests(&ctx.graph, symbol)
                .into_iter()
                .map(|p| TestRef {
                    path: p,
                    symbol: None,
                    start_line: None,
                    end_line: None,
                    origin: "convention",
                    depth: None,
                })
                .filter(|t| keep(t))
                .collect();
            let _ = fi;
            let next_cursor = pager.page(&mut tests, TESTS_PER_PAGE);
            let mut text = format!("{}\n{symbol} (file)\n", view_line(&ctx.data.id));
            render_tests("tests", &tests, &mut text, TESTS_LISTED);
            text.push_str(&super::page::more_line(next_cursor.as_deref()));
            let r = FindTests { symbol: symbol.into(), matched: true, results: tests, next_cursor, mentions: None };
            return Ok(Answer::new("find_tests_for", Some(ctx.data.id.clone()), &r, text));
        }
        return Ok(no_match("find_tests_for", &ctx, symbol));
    }
    let mut tests: Vec<TestRef> = tests_for(&ctx, &defs, 4).into_iter().filter(|t| keep(t)).collect();
    let mentioned = if to_rerun(&tests) == 0 {
        mentions(&ctx, &defs, |p| {
            crate::graph::model::is_test_path(p) && pattern.as_ref().is_none_or(|re| re.is_match(p))
        })?
    } else {
        None
    };
    let next_cursor = pager.page(&mut tests, TESTS_PER_PAGE);
    let definitions: Vec<Definition> = defs.iter().take(5).map(|&d| definition(&ctx, d)).collect::<Result<_>>()?;
    let mut text =
        format!("{}\n{}", view_line(&ctx.data.id), matched_line(symbol, &definitions, how.unwrap_or(MatchKind::Exact)));
    if let Some(p) = test_path_pattern {
        text.push_str(&format!("tests whose path matches /{p}/\n"));
    }
    render_tests("tests", &tests, &mut text, TESTS_LISTED);
    if let Some(m) = &mentioned {
        text.push_str(&mentions_line("test", m));
    }
    text.push_str(&super::page::more_line(next_cursor.as_deref()));
    let r = FindTests { symbol: symbol.into(), matched: true, results: tests, next_cursor, mentions: mentioned };
    Ok(Answer::new("find_tests_for", Some(ctx.data.id.clone()), &r, text))
}

// ---------------------------------------------------------------- describe_symbol

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Describe {
    pub symbol: String,
    pub matched: bool,
    pub definitions: Vec<Definition>,
    /// Production code that calls it (tests that do are under `tests`, counted in `test_callers`).
    pub callers: Vec<Link>,
    /// Production code that uses it as a value: passes, assigns, returns or stores it.
    pub references: Vec<Link>,
    /// Tests among its direct callers and referrers (listed once, under `tests`).
    pub test_callers: usize,
    pub callees: Vec<Link>,
    pub superclasses: Vec<Link>,
    pub subclasses: Vec<Link>,
    pub tests: Vec<TestRef>,
    /// When nothing confident depends on it: where its name appears all the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mentions: Option<Mentions>,
}

pub fn describe_symbol(engine: &Engine, a: &SymbolArgs) -> Result<Answer> {
    let symbol = super::args::required(&a.symbol, "symbol")?;
    let symbol = symbol.as_str();
    let ctx = open(engine, a.at.rev.as_deref())?;
    let (defs, how) = query::match_symbol(&ctx.graph, symbol);
    if defs.is_empty() {
        return Ok(no_match("describe_symbol", &ctx, symbol));
    }
    // Describe the best match (several same-named definitions are listed).
    let main = vec![defs[0]];
    let starts = [Node::Def(defs[0])];
    let g = &ctx.graph;
    let inh = [Rel::Extends, Rel::Implements, Rel::ExtendsOrImplements];
    let mut callers = query::adjacent(g, &starts, &[Rel::Calls], Direction::Incoming);
    let mut references = query::adjacent(g, &starts, &[Rel::References], Direction::Incoming);
    let before = callers.len() + references.len();
    callers.retain(|l| !l.node.test);
    references.retain(|l| !l.node.test);
    let test_callers = before - callers.len() - references.len();
    let confident = |ls: &[Link]| ls.iter().any(|l| matches!(l.confidence, "precise" | "extracted" | "resolved"));
    let tests = tests_for(&ctx, &main, 3);
    let mentions = if !confident(&callers) && !confident(&references) && to_rerun(&tests) == 0 {
        mentions(&ctx, &main, |_| true)?
    } else {
        None
    };
    let r = Describe {
        symbol: symbol.into(),
        matched: true,
        definitions: defs.iter().take(10).map(|&d| definition(&ctx, d)).collect::<Result<_>>()?,
        callers,
        references,
        test_callers,
        callees: query::adjacent(g, &starts, &[Rel::Calls], Direction::Outgoing),
        superclasses: query::adjacent(g, &starts, &inh, Direction::Outgoing),
        subclasses: query::adjacent(g, &starts, &inh, Direction::Incoming),
        tests,
        mentions,
    };
    let mut text = format!(
        "{}\n{}",
        view_line(&ctx.data.id),
        matched_line(symbol, &r.definitions, how.unwrap_or(MatchKind::Exact))
    );
    if let Some(d) = r.definitions.first() {
        text.push_str(&snippet(&d.signature, 3));
    }
    let here = home_file(r.definitions.iter().map(|d| d.node.path.as_deref()));
    if !r.superclasses.is_empty() {
        render_links("bases", &r.superclasses, &mut text, None, DESCRIBE_LINKS);
    }
    if !r.subclasses.is_empty() {
        render_links("subclasses", &r.subclasses, &mut text, None, DESCRIBE_LINKS);
    }
    render_links("callers", &r.callers, &mut text, None, DESCRIBE_LINKS);
    if !r.references.is_empty() {
        render_links("referenced by", &r.references, &mut text, None, DESCRIBE_LINKS);
    }
    if r.test_callers > 0 {
        text.push_str(&format!(
            "  and {} that call or reference it directly (under tests)\n",
            present::count(r.test_callers, "test", "tests")
        ));
    }
    render_links("callees", &r.callees, &mut text, here, DESCRIBE_LINKS);
    render_tests("tests", &r.tests, &mut text, DESCRIBE_TESTS);
    if let Some(m) = &r.mentions {
        text.push_str(&mentions_line("caller, reference or test", m));
    }
    Ok(Answer::new("describe_symbol", Some(ctx.data.id.clone()), &r, text))
}

// ---------------------------------------------------------------- impact

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Impact {
    pub symbol: String,
    pub matched: bool,
    pub max_depth: usize,
    pub definitions: Vec<Definition>,
    /// Transitive callers (and subclasses) through confident edges, with hop distance, then the
    /// direct callers a name-only match suggests (their `confidence` says so; not followed).
    pub results: Vec<Link>,
    /// Of `results`, those reached through confident edges.
    pub confident: usize,
    pub truncated: bool,
    /// Definitions one hop past `max_depth` that the walk did not reach (0: it was complete).
    pub cut: usize,
    pub tests: Vec<TestRef>,
    /// Tests to re-run: `tests` but the guessed ones.
    pub tests_to_rerun: usize,
    /// Affected definitions per file (confident ones).
    pub by_file: BTreeMap<String, usize>,
    /// When nothing confident depends on it: where its name appears all the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mentions: Option<Mentions>,
}

/// Incoming relations that make a definition affected by a change to another.
pub const CALLER_RELS: [Rel; 5] =
    [Rel::Calls, Rel::References, Rel::Extends, Rel::Implements, Rel::ExtendsOrImplements];

/// The callers of `defs` to `max_depth` hops, split by trust, and the tests that reach them.
pub fn impact_of(g: &CodeGraph, defs: &[u32], max_depth: usize) -> (query::Reach, Vec<TestRef>) {
    let starts: Vec<Node> = defs.iter().map(|&d| Node::Def(d)).collect();
    let reach = query::reach(g, &starts, &CALLER_RELS, max_depth.max(1));
    let mut files: Vec<&str> = defs.iter().map(|&d| g.def_path(d)).collect();
    files.sort();
    files.dedup();
    let mut tests = Vec::new();
    // A test of a class's methods tests the class.
    let members = with_members(g, defs);
    if members.len() > starts.len() {
        add_tests(g, &query::reach(g, &members, &CALLER_RELS, max_depth.max(1)), &files, &mut tests);
    } else {
        add_tests(g, &reach, &files, &mut tests);
    }
    (reach, tests)
}

/// How a bounded walk ended, for a reader: nothing when it was complete.
pub fn walk_note(reach: &query::Reach, max_depth: usize) -> String {
    let mut notes = Vec::new();
    if reach.cut > 0 {
        notes.push(format!(
            "stopped at depth {max_depth}: {} one hop further (raise --max-depth)",
            present::count(reach.cut, "definition", "definitions")
        ));
    }
    if reach.truncated {
        notes.push(format!("stopped at {} definitions", query::MAX_NODES));
    }
    notes.join("; ")
}

pub fn impact(engine: &Engine, symbol: &str, rev: Option<&str>, max_depth: usize) -> Result<Answer> {
    let ctx = open(engine, rev)?;
    let (defs, how) = query::match_symbol(&ctx.graph, symbol);
    if defs.is_empty() {
        return Ok(match imported_impact(&ctx, symbol, max_depth) {
            Some((r, text)) => Answer::new("impact", Some(ctx.data.id.clone()), &r, text),
            None => no_match("impact", &ctx, symbol),
        });
    }
    let definitions: Vec<Definition> = defs.iter().take(10).map(|&d| definition(&ctx, d)).collect::<Result<_>>()?;
    let head = matched_line(symbol, &definitions, how.unwrap_or(MatchKind::Exact));
    let (r, text) = impact_report(&ctx, symbol, &defs, &head, max_depth)?;
    Ok(Answer::new("impact", Some(ctx.data.id.clone()), &r, text))
}

/// The blast radius here of a symbol this view uses but does not define (another repository's
/// function, imported): what calls it, what depends on those, and their tests. The answer is
/// not `matched` (the definition is elsewhere), so a workspace lists it after the repository
/// that defines it.
fn imported_impact(ctx: &Ctx, symbol: &str, max_depth: usize) -> Option<(Impact, String)> {
    let reach = query::reach_imported(&ctx.graph, symbol, &CALLER_RELS, max_depth.max(1))?;
    let mut tests = Vec::new();
    add_tests(&ctx.graph, &reach, &[], &mut tests);
    let mut by_file = BTreeMap::new();
    for l in &reach.confident {
        if let Some(p) = &l.node.path {
            *by_file.entry(p.clone()).or_default() += 1;
        }
    }
    let mut text = format!(
        "{}\n{symbol} is not defined here; it is used from outside (an import) by {} in {}\n",
        view_line(&ctx.data.id),
        present::count(reach.confident.len(), "definition", "definitions"),
        present::count(by_file.len(), "file", "files"),
    );
    let production: Vec<&Link> = reach.confident.iter().filter(|l| !l.node.test).collect();
    push_links(&mut text, &production, IMPACT_LISTED, None);
    render_tests("tests to re-run", &tests, &mut text, TESTS_LISTED);
    let r = Impact {
        symbol: symbol.to_string(),
        matched: false,
        max_depth,
        definitions: Vec::new(),
        confident: reach.confident.len(),
        results: reach.confident,
        truncated: reach.truncated,
        cut: reach.cut,
        tests_to_rerun: to_rerun(&tests),
        tests,
        by_file,
        mentions: None,
    };
    Some((r, text))
}

/// The blast radius of `defs` (named `subject`, introduced by the `head` line): transitive
/// callers and subclasses, and the tests to re-run; with its text.
pub fn impact_report(ctx: &Ctx, subject: &str, defs: &[u32], head: &str, max_depth: usize) -> Result<(Impact, String)> {
    let (reach, tests) = impact_of(&ctx.graph, defs, max_depth);
    let definitions: Vec<Definition> = defs.iter().take(10).map(|&d| definition(ctx, d)).collect::<Result<_>>()?;
    let mut by_file = BTreeMap::new();
    for l in &reach.confident {
        if let Some(p) = &l.node.path {
            *by_file.entry(p.clone()).or_default() += 1;
        }
    }
    let mut text = format!("{}\n{head}", view_line(&ctx.data.id));
    let note = walk_note(&reach, max_depth);
    let how = relation_counts(&reach.confident);
    text.push_str(&format!(
        "blast radius: {} in {} within {max_depth} hops{}{}\n",
        present::count(reach.confident.len(), "definition", "definitions"),
        present::count(by_file.len(), "file", "files"),
        if how.is_empty() { String::new() } else { format!(": {how}") },
        if note.is_empty() { String::new() } else { format!(" ({note})") }
    ));
    let mentioned = if reach.confident.is_empty() { mentions(ctx, defs, |_| true)? } else { None };
    if let Some(m) = &mentioned {
        text.push_str(&mentions_line("dependant", m));
    }
    // Tests are listed once, under the tests to re-run.
    let production: Vec<&Link> = reach.confident.iter().filter(|l| !l.node.test).collect();
    // Nearest first: beyond the first lines, the rest are said by how many files they touch.
    push_links(&mut text, &production[..production.len().min(IMPACT_LISTED)], IMPACT_LISTED, None);
    if production.len() > IMPACT_LISTED {
        let rest = &production[IMPACT_LISTED..];
        let mut files: Vec<&str> = rest.iter().filter_map(|l| l.node.path.as_deref()).collect();
        files.sort_unstable();
        files.dedup();
        text.push_str(&format!(
            "  … {} more in {} (`--json` or `format: summary` lists them)\n",
            rest.len(),
            present::count(files.len(), "file", "files")
        ));
    }
    let test_dependants = reach.confident.len() - production.len();
    if test_dependants > 0 {
        text.push_str(&format!(
            "  and {} (under tests to re-run)\n",
            present::count(test_dependants, "test definition", "test definitions")
        ));
    }
    if !reach.possible.is_empty() {
        text.push_str(&format!(
            "possible direct callers, matched by name only (not followed): {}\n",
            reach.possible.len()
        ));
        push_links(&mut text, &reach.possible, 10, None);
    }
    render_tests("tests to re-run", &tests, &mut text, TESTS_LISTED);
    let confident = reach.confident.len();
    let tests_to_rerun = to_rerun(&tests);
    let mut results = reach.confident;
    results.extend(reach.possible);
    let r = Impact {
        symbol: subject.into(),
        matched: true,
        max_depth,
        definitions,
        results,
        confident,
        truncated: reach.truncated,
        cut: reach.cut,
        tests,
        tests_to_rerun,
        by_file,
        mentions: mentioned,
    };
    Ok((r, text))
}

// ---------------------------------------------------------------- module_summary

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ModuleSummary {
    pub path: String,
    pub matched: bool,
    pub language: String,
    pub definitions: Vec<NodeRef>,
    pub imports: Vec<Link>,
    pub dependents: Vec<Link>,
    pub tests: Vec<String>,
}

/// The answer of `module_summary` for a path that names no file of the view.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct UnmatchedFile {
    pub path: String,
    /// Always false.
    pub matched: bool,
}

/// `limit` caps each list (definitions, imports, dependents); the answer says how many there were.
pub fn module_summary(engine: &Engine, a: &ModuleArgs) -> Result<Answer> {
    let path = super::args::required(&a.file, "path")?;
    let (path, limit) = (path.as_str(), Count::or(a.k, 200, 10_000));
    let ctx = open(engine, a.at.rev.as_deref())?;
    let g = &ctx.graph;
    let path = path.trim_start_matches("./");
    let Some(&fi) = g.by_path.get(path).or_else(|| {
        // A unique suffix is enough (`config.go` for `config/config.go`).
        let m: Vec<&String> = g.by_path.keys().filter(|p| p.ends_with(&format!("/{path}"))).collect();
        if m.len() == 1 { g.by_path.get(m[0]) } else { None }
    }) else {
        let text = format!("{}\nno file \"{path}\" in this view\n", view_line(&ctx.data.id));
        return Ok(Answer::new(
            "module_summary",
            Some(ctx.data.id.clone()),
            UnmatchedFile { path: path.to_string(), matched: false },
            text,
        ));
    };
    let file = &g.files[fi as usize];
    let definitions: Vec<NodeRef> = g
        .defs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.file == fi)
        .map(|(i, _)| node_ref(g, Node::Def(i as u32)))
        .collect();
    let imports = query::adjacent(g, &[Node::File(fi)], &[Rel::Imports], Direction::Outgoing);
    // Dependents: files importing this one, and definitions elsewhere calling into it.
    let mut dependents = query::adjacent(g, &[Node::File(fi)], &[Rel::Imports], Direction::Incoming);
    let own: Vec<Node> =
        g.defs.iter().enumerate().filter(|(_, d)| d.file == fi).map(|(i, _)| Node::Def(i as u32)).collect();
    let mut callers: Vec<Link> = query::adjacent(
        g,
        &own,
        &[Rel::Calls, Rel::Extends, Rel::Implements, Rel::ExtendsOrImplements],
        Direction::Incoming,
    )
    .into_iter()
    .filter(|l| l.node.path.as_deref() != Some(file.path.as_str()))
    .collect();
    callers.dedup_by(|a, b| a.node.path == b.node.path && a.node.name == b.node.name);
    dependents.extend(callers);
    let tests = conventional_tests(g, &file.path);
    let total = (definitions.len(), imports.len(), dependents.len());
    let (mut definitions, mut imports, mut dependents) = (definitions, imports, dependents);
    definitions.truncate(limit);
    imports.truncate(limit);
    dependents.truncate(limit);
    let mut text = format!(
        "{}\n{} ({}, {} definitions)\n",
        view_line(&ctx.data.id),
        present::path(&file.path),
        file.lang.name(),
        total.0
    );
    for d in definitions.iter().take(80) {
        let depth = d.name.matches('.').count();
        text.push_str(&format!(
            "  {}{} {} {}-{}\n",
            "  ".repeat(depth.min(4)),
            d.kind,
            d.name,
            d.start_line.unwrap_or(0),
            d.end_line.unwrap_or(0)
        ));
    }
    render_links("imports", &imports, &mut text, Some(&file.path), LINKS_LISTED);
    render_dependents(&dependents, total.2, &mut text);
    text.push_str(&format!(
        "tests: {}\n",
        if tests.is_empty() { "(none by convention)".to_string() } else { tests.join(", ") }
    ));
    if total.0 > definitions.len() || total.1 > imports.len() || total.2 > dependents.len() {
        text.push_str(&format!(
            "(limited to {limit} per list: {} definitions, {} imports, {} dependents in all)\n",
            total.0, total.1, total.2
        ));
    }
    let r = ModuleSummary {
        path: file.path.clone(),
        matched: true,
        language: file.lang.name().into(),
        definitions,
        imports,
        dependents,
        tests,
    };
    Ok(Answer::new("module_summary", Some(ctx.data.id.clone()), &r, text))
}

results!(
    FindDefinition => "results",
    FindUsages => "results",
    FindTests => "results",
    Describe => "definitions",
    Impact => "results",
    ModuleSummary => "definitions",
    UnmatchedFile,
);
