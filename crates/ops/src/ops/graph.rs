//! `graph_query` (callers | callees | subclasses | superclasses | imports | neighbors |
//! shortest_path | overview | surprising_connections | status) and `graph status`.

use super::args::Count;
use super::nav::{Ctx, open};
use super::{Answer, view_line};
use crate::engine::Engine;
use crate::graph::model::{Node, Rel};
use crate::graph::query::{self, Link, MatchKind, NodeRef, node_ref};
use anyhow::Result;
use petgraph::Direction;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

crate::error::errors! {
    /// A graph question that names no operation, symbol or relation it can follow.
    pub enum GraphError: Usage {
        UnknownOperation { given: String, known: String } => "unknown graph operation `{given}`; use one of: {known}",
        NoOperation {} => "missing required argument `operation` (`--op`)",
        NoSymbol { op: String } => "graph operation `{op}` needs a symbol (`--symbol`; in MCP the `symbol` argument)",
        UnknownRelation { given: String } =>
            "unknown relation `{given}` (contains, calls, references, extends, implements, inherits, imports, all)",
        NoTarget {} => "shortest_path needs a target symbol (`--target`; in MCP the `target` argument)",
    }
}

/// A graph operation. Parsed once, where it arrives (a clap value, an MCP argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum GraphOp {
    Callers,
    Callees,
    /// What the symbol uses as a value (passes, assigns, returns, stores).
    References,
    /// Who uses the symbol as a value.
    ReferencedBy,
    Subclasses,
    Superclasses,
    Imports,
    Neighbors,
    ShortestPath,
    Overview,
    SurprisingConnections,
    Status,
}

impl GraphOp {
    pub fn parse(s: &str) -> Result<GraphOp> {
        <GraphOp as clap::ValueEnum>::from_str(s.trim(), true).map_err(|_| {
            GraphError::UnknownOperation { given: s.to_string(), known: GraphOp::names().join(", ") }.into()
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            GraphOp::Callers => "callers",
            GraphOp::Callees => "callees",
            GraphOp::References => "references",
            GraphOp::ReferencedBy => "referenced_by",
            GraphOp::Subclasses => "subclasses",
            GraphOp::Superclasses => "superclasses",
            GraphOp::Imports => "imports",
            GraphOp::Neighbors => "neighbors",
            GraphOp::ShortestPath => "shortest_path",
            GraphOp::Overview => "overview",
            GraphOp::SurprisingConnections => "surprising_connections",
            GraphOp::Status => "status",
        }
    }

    fn value_variants() -> &'static [GraphOp] {
        <GraphOp as clap::ValueEnum>::value_variants()
    }

    /// Every operation's name, in order (help texts and the MCP schema).
    pub fn names() -> Vec<&'static str> {
        GraphOp::value_variants().iter().map(|o| o.name()).collect()
    }
}

impl std::fmt::Display for GraphOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `graph_query`'s arguments on every surface (`graph query OP SYMBOL` is the command line's
/// shorthand for `--op OP --symbol SYMBOL`).
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct GraphArgs {
    /// The operation: callers, callees, subclasses, superclasses, imports, neighbors,
    /// shortest_path, overview, surprising_connections, status.
    #[arg(long = "op", alias = "operation", value_name = "OP", value_enum, hide_possible_values = true)]
    #[serde(rename = "operation", deserialize_with = "graph_op")]
    #[schemars(schema_with = "graph_ops", description = "")]
    pub op: Option<GraphOp>,
    /// The symbol (or a file path, for imports and neighbors).
    #[arg(long)]
    #[schemars(description = "")]
    pub symbol: Option<String>,
    /// Target symbol for shortest_path.
    #[arg(long)]
    #[schemars(description = "shortest_path end")]
    pub target: Option<String>,
    /// Relation filter for neighbors (calls, contains, extends, implements, inherits, imports, all).
    #[arg(long)]
    #[schemars(description = "neighbors filter: calls|contains|inherits|imports|all")]
    pub relation: Option<String>,
    /// Hops to follow (callers, callees, neighbors) [default: 1; at most 10].
    #[arg(long)]
    #[schemars(description = "default 1")]
    pub depth: Option<Count>,
    /// Entries listed at most [default: 200; at most 1000 a page].
    #[arg(short = 'k', long = "limit")]
    #[serde(rename = "n_results")]
    #[schemars(description = "")]
    pub k: Option<Count>,
    /// Smallest community `overview` reports [default: 3].
    #[arg(long = "min-community-size")]
    #[serde(rename = "min_community_size")]
    #[schemars(description = "overview, default 3")]
    pub min_community: Option<Count>,
    /// Longest path shortest_path looks for [default: 6; at most 50].
    #[arg(long = "max-hops")]
    #[schemars(description = "shortest_path, default 6")]
    pub max_hops: Option<Count>,
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::args::Page,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: super::args::Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::Sources,
}

impl GraphArgs {
    /// The operation `op` with every other argument at its default.
    pub fn of(op: GraphOp) -> GraphArgs {
        GraphArgs { op: Some(op), ..Default::default() }
    }
    pub fn depth(&self) -> usize {
        Count::or(self.depth, 1, 10)
    }
    pub fn limit(&self) -> usize {
        Count::or(self.k, 200, 1000)
    }
    pub fn min_community(&self) -> usize {
        Count::or(self.min_community, MIN_COMMUNITY, 100_000)
    }
    pub fn max_hops(&self) -> usize {
        Count::or(self.max_hops, 6, 50)
    }
}

fn graph_op<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<GraphOp>, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    GraphOp::parse(&s).map(Some).map_err(|e| serde::de::Error::custom(e.to_string()))
}

fn graph_ops(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    super::args::one_of(&GraphOp::names())
}

/// Communities smaller than this are not reported by default.
pub const MIN_COMMUNITY: usize = 3;

/// A traversal from a symbol: callers, callees, subclasses, superclasses, imports, neighbors.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Traversal {
    pub op: GraphOp,
    pub symbol: String,
    pub matched: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_kind: Option<MatchKind>,
    pub depth: usize,
    pub results: Vec<Link>,
    pub truncated: bool,
    /// Pass as `--cursor` (MCP: `cursor`) for the next page; null on the last one.
    pub next_cursor: Option<String>,
    /// With `matched` false: names of the view near the one asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
}

/// One step of a path: a node and the relation it was reached by (none for the first).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PathStep {
    pub node: NodeRef,
    pub via: Option<&'static str>,
}

/// `shortest_path` between two symbols.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct GraphPath {
    pub op: GraphOp,
    pub symbol: String,
    pub target: String,
    /// False when the target names nothing in the view.
    pub matched: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<bool>,
    /// `symbol_to_target`, or `target_to_symbol` when only the reverse path exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<&'static str>,
    pub path: Vec<PathStep>,
}

/// `status`: the size of the view's graph.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct GraphStatus {
    pub op: GraphOp,
    pub stats: query::GraphStats,
}

/// `overview`: the hubs and communities of the view's graph.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct GraphOverview {
    pub op: GraphOp,
    pub hubs: Vec<Hub>,
    pub communities: Vec<Community>,
    pub stats: query::GraphStats,
}

/// `surprising_connections`: the edges that bridge parts of the graph.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Surprises {
    pub op: GraphOp,
    pub results: Vec<Surprise>,
    /// Whether betweenness was sampled (large graphs).
    pub sampled: bool,
}

fn starts(ctx: &Ctx, symbol: &str) -> (Vec<Node>, Option<MatchKind>) {
    let (defs, how) = query::match_symbol(&ctx.graph, symbol);
    if !defs.is_empty() {
        return (defs.into_iter().map(Node::Def).collect(), how);
    }
    // A file path works as a node too (imports, neighbors).
    if let Some(&f) = ctx.graph.by_path.get(symbol.trim_start_matches("./")) {
        return (vec![Node::File(f)], Some(MatchKind::Exact));
    }
    (Vec::new(), None)
}

pub fn run(engine: &Engine, a: &GraphArgs) -> Result<Answer> {
    let op = a.op.ok_or(GraphError::NoOperation {})?;
    let (limit, depth) = (a.limit(), a.depth());
    let ctx = open(engine, a.at.rev.as_deref())?;
    match op {
        GraphOp::Status => return status(&ctx),
        GraphOp::Overview => return overview(&ctx, limit, a.min_community()),
        GraphOp::SurprisingConnections => return surprising(&ctx, limit),
        _ => {}
    }
    let symbol =
        a.symbol.clone().filter(|s| !s.trim().is_empty()).ok_or_else(|| GraphError::NoSymbol { op: op.to_string() })?;
    let (nodes, how) = starts(&ctx, &symbol);
    let view = ctx.data.id.clone();
    if nodes.is_empty() {
        let suggestions = query::suggest(&ctx.graph, &symbol, 5);
        let text = format!(
            "{}\nno symbol named \"{symbol}\" in this view{}\n",
            view_line(&view),
            crate::present::did_you_mean(&suggestions)
        );
        let t = Traversal {
            op,
            symbol,
            matched: false,
            match_kind: None,
            depth,
            results: vec![],
            truncated: false,
            next_cursor: None,
            suggestions,
        };
        return Ok(Answer::new("graph_query", Some(view), &t, text));
    }
    let g = &ctx.graph;
    let inh = [Rel::Extends, Rel::Implements, Rel::ExtendsOrImplements];
    let question = (op.name(), &symbol, &a.relation, depth, limit);
    let pager = super::page::Pager::new("graph_query", &ctx.data.key, &question, a.page.cursor.as_deref())?;
    let want = pager.want(limit);
    let (mut results, _) = match op {
        GraphOp::Callers => query::bfs(g, &nodes, &[Rel::Calls], Some(Direction::Incoming), depth, want),
        GraphOp::Callees => query::bfs(g, &nodes, &[Rel::Calls], Some(Direction::Outgoing), depth, want),
        GraphOp::References => query::bfs(g, &nodes, &[Rel::References], Some(Direction::Outgoing), depth, want),
        GraphOp::ReferencedBy => query::bfs(g, &nodes, &[Rel::References], Some(Direction::Incoming), depth, want),
        GraphOp::Subclasses => query::bfs(g, &nodes, &inh, Some(Direction::Incoming), depth, want),
        GraphOp::Superclasses => query::bfs(g, &nodes, &inh, Some(Direction::Outgoing), depth, want),
        GraphOp::Imports => {
            // A definition stands for its file.
            let files: Vec<Node> = nodes
                .iter()
                .map(|n| match n {
                    Node::Def(d) => Node::File(g.defs[*d as usize].file),
                    other => *other,
                })
                .collect();
            let mut out = query::adjacent(g, &files, &[Rel::Imports], Direction::Outgoing);
            out.extend(query::adjacent(g, &files, &[Rel::Imports], Direction::Incoming).into_iter().map(|mut l| {
                l.relation = "imported_by";
                l
            }));
            (out, false)
        }
        GraphOp::Neighbors => {
            let rels = match &a.relation {
                Some(r) => Rel::parse_filter(r).ok_or_else(|| GraphError::UnknownRelation { given: r.to_string() })?,
                None => Rel::parse_filter("all").unwrap(),
            };
            query::bfs(g, &nodes, &rels, None, depth, want)
        }
        GraphOp::ShortestPath => {
            let target = a.target.clone().ok_or(GraphError::NoTarget {})?;
            let (to, _) = starts(&ctx, &target);
            if to.is_empty() {
                let text = format!("{}\nno symbol named \"{target}\" in this view\n", view_line(&view));
                return Ok(Answer::new(
                    "graph_query",
                    Some(view),
                    GraphPath { op, symbol, target, matched: false, found: None, direction: None, path: vec![] },
                    text,
                ));
            }
            let rels = Rel::parse_filter(a.relation.as_deref().unwrap_or("all"))
                .unwrap_or_else(|| Rel::parse_filter("all").unwrap());
            let hops = a.max_hops();
            // Edges are followed in their direction; when the symbol does not reach the target, the
            // target may reach the symbol, which is said plainly.
            let forward = query::shortest_path(g, &nodes, &to, &rels, hops);
            let (path, reverse) = match forward {
                Some(p) => (Some(p), false),
                None => (query::shortest_path(g, &to, &nodes, &rels, hops), true),
            };
            let mut text = format!("{}\n", view_line(&view));
            let steps: Vec<PathStep> = match &path {
                Some(p) => {
                    let (a, b) = if reverse { (&target, &symbol) } else { (&symbol, &target) };
                    if reverse {
                        text.push_str(&format!("no path from {symbol} to {target}; {target} reaches {symbol}:\n"));
                    }
                    text.push_str(&format!("path from {a} to {b} ({} hops):\n", p.len().saturating_sub(1)));
                    for (n, rel) in p {
                        let arrow = rel.map(|r| format!("--{r}--> ")).unwrap_or_default();
                        text.push_str(&format!(
                            "  {arrow}{} {} {}\n",
                            n.kind,
                            n.name,
                            n.path
                                .as_deref()
                                .map(|p| crate::present::loc(p, n.start_line.unwrap_or(0)))
                                .unwrap_or_default()
                        ));
                    }
                    p.iter().map(|(n, r)| PathStep { node: n.clone(), via: *r }).collect()
                }
                None => {
                    text.push_str(&format!("no path from {symbol} to {target} within {hops} hops\n"));
                    Vec::new()
                }
            };
            let direction = if path.is_none() {
                None
            } else if reverse {
                Some("target_to_symbol")
            } else {
                Some("symbol_to_target")
            };
            return Ok(Answer::new(
                "graph_query",
                Some(view),
                GraphPath { op, symbol, target, matched: true, found: Some(path.is_some()), direction, path: steps },
                text,
            ));
        }
        GraphOp::Status | GraphOp::Overview | GraphOp::SurprisingConnections => unreachable!("answered above"),
    };
    let next_cursor = pager.page(&mut results, limit);
    let truncated = next_cursor.is_some();
    let mut text = format!(
        "{}\n{op} of {symbol} ({}{}):\n",
        view_line(&view),
        results.len(),
        if truncated { ", more follow" } else { "" }
    );
    if results.is_empty() {
        text.push_str("  (none)\n");
    }
    let here = super::nav::home_file(nodes.iter().map(|n| match n {
        Node::Def(d) => Some(g.def_path(*d)),
        _ => None,
    }));
    super::nav::push_links(&mut text, &results, usize::MAX, here);
    text.push_str(&super::page::more_line(next_cursor.as_deref()));
    let t = Traversal {
        op,
        symbol,
        matched: true,
        match_kind: how,
        depth,
        results,
        truncated,
        next_cursor,
        suggestions: Vec::new(),
    };
    Ok(Answer::new("graph_query", Some(view), &t, text))
}

fn status(ctx: &Ctx) -> Result<Answer> {
    let s = query::stats(&ctx.graph);
    let mut text = format!(
        "{}\ngraph: {} files, {} definitions, {} external symbols, {} edges\n",
        view_line(&ctx.data.id),
        s.files,
        s.definitions,
        s.externals,
        s.edges
    );
    if s.precise_files > 0 {
        text.push_str(&format!(
            "  precise: {} of {} files have edges from an imported SCIP index\n",
            s.precise_files, s.files
        ));
    }
    for (title, m) in [
        ("by language", &s.by_language),
        ("by kind", &s.by_kind),
        ("by relation", &s.by_relation),
        ("by confidence", &s.by_confidence),
    ] {
        let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
        text.push_str(&format!("  {title}: {}\n", parts.join(", ")));
    }
    Ok(Answer::new("graph_query", Some(ctx.data.id.clone()), GraphStatus { op: GraphOp::Status, stats: s }, text))
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Hub {
    #[serde(flatten)]
    pub node: NodeRef,
    pub degree: usize,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Community {
    pub id: usize,
    pub size: usize,
    /// The most common directories of its members.
    pub directories: Vec<String>,
    pub hubs: Vec<String>,
}

fn overview(ctx: &Ctx, limit: usize, min_community: usize) -> Result<Answer> {
    let g = &ctx.graph;
    let mut hubs: Vec<Hub> = (0..g.defs.len() as u32)
        .filter(|&d| !g.is_test(Node::Def(d)))
        .map(|d| Hub { node: node_ref(g, Node::Def(d)), degree: query::structural_degree(g, d) })
        .filter(|h| h.degree > 0)
        .collect();
    hubs.sort_by(|a, b| b.degree.cmp(&a.degree).then(a.node.name.cmp(&b.node.name)));
    hubs.truncate(limit.min(25));
    let (nodes, adj) = query::structural(g);
    let comm = query::communities(&adj);
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, &c) in comm.iter().enumerate() {
        if !adj[i].is_empty() {
            groups.entry(c).or_default().push(i);
        }
    }
    let mut communities: Vec<Community> = groups
        .into_values()
        .filter(|m| m.len() >= min_community)
        .map(|members| {
            let mut dirs: BTreeMap<String, usize> = BTreeMap::new();
            for &i in &members {
                let p = g.def_path(nodes[i]);
                *dirs.entry(p.rsplit_once('/').map_or(".".to_string(), |(d, _)| d.to_string())).or_default() += 1;
            }
            let mut dv: Vec<(String, usize)> = dirs.into_iter().collect();
            dv.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let mut top: Vec<usize> = members.clone();
            top.sort_by_key(|&i| std::cmp::Reverse(adj[i].len()));
            Community {
                id: 0,
                size: members.len(),
                directories: dv.into_iter().take(3).map(|(d, _)| d).collect(),
                hubs: top.into_iter().take(3).map(|i| g.defs[nodes[i] as usize].qualified.clone()).collect(),
            }
        })
        .collect();
    communities.sort_by(|a, b| b.size.cmp(&a.size).then(a.hubs.cmp(&b.hubs)));
    for (i, c) in communities.iter_mut().enumerate() {
        c.id = i + 1;
    }
    communities.truncate(limit.min(20));
    let stats = query::stats(g);
    let mut text = format!(
        "{}\noverview: {} files, {} definitions, {} edges\n",
        view_line(&ctx.data.id),
        stats.files,
        stats.definitions,
        stats.edges
    );
    text.push_str("hubs (confident calls + inheritance, tests excluded):\n");
    for h in &hubs {
        text.push_str(&format!(
            "  {:>4}  {} {} {}\n",
            h.degree,
            h.node.kind,
            h.node.name,
            crate::present::loc(h.node.path.as_deref().unwrap_or(""), h.node.start_line.unwrap_or(0))
        ));
    }
    text.push_str("communities (modularity, largest first):\n");
    for c in &communities {
        text.push_str(&format!(
            "  #{} {} definitions in {} — e.g. {}\n",
            c.id,
            c.size,
            c.directories.join(", "),
            c.hubs.join(", ")
        ));
    }
    Ok(Answer::new(
        "graph_query",
        Some(ctx.data.id.clone()),
        GraphOverview { op: GraphOp::Overview, hubs, communities, stats },
        text,
    ))
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Surprise {
    pub from: NodeRef,
    pub to: NodeRef,
    pub betweenness: f64,
    pub cross_directory: bool,
}

/// Nodes above which betweenness samples its sources.
const SAMPLE_ABOVE: usize = 1500;

fn surprising(ctx: &Ctx, limit: usize) -> Result<Answer> {
    let g = &ctx.graph;
    let (nodes, adj) = query::structural(g);
    let eb = query::edge_betweenness(&adj, SAMPLE_ABOVE);
    let dir = |d: u32| g.def_path(d).rsplit_once('/').map_or(String::new(), |(d, _)| d.to_string());
    let mut edges: Vec<((usize, usize), f64)> = eb.into_iter().collect();
    // Bridges between directories first, then by betweenness.
    edges.sort_by(|a, b| {
        let ca = dir(nodes[a.0.0]) != dir(nodes[a.0.1]);
        let cb = dir(nodes[b.0.0]) != dir(nodes[b.0.1]);
        cb.cmp(&ca).then(b.1.total_cmp(&a.1)).then(a.0.cmp(&b.0))
    });
    let results: Vec<Surprise> = edges
        .into_iter()
        .take(limit.min(30))
        .map(|((i, j), b)| Surprise {
            from: node_ref(g, Node::Def(nodes[i])),
            to: node_ref(g, Node::Def(nodes[j])),
            betweenness: (b * 10.0).round() / 10.0,
            cross_directory: dir(nodes[i]) != dir(nodes[j]),
        })
        .collect();
    let mut text = format!(
        "{}\nsurprising connections (edge betweenness{}):\n",
        view_line(&ctx.data.id),
        if nodes.len() > SAMPLE_ABOVE {
            format!(", sampled over {SAMPLE_ABOVE} of {} nodes", nodes.len())
        } else {
            String::new()
        }
    );
    if results.is_empty() {
        text.push_str("  (none: no calls or inheritance between definitions)\n");
    }
    for s in &results {
        text.push_str(&format!(
            "  {:>8.1}  {} ({}) — {} ({}){}\n",
            s.betweenness,
            s.from.name,
            s.from.path.as_deref().unwrap_or(""),
            s.to.name,
            s.to.path.as_deref().unwrap_or(""),
            if s.cross_directory { "  [crosses directories]" } else { "" }
        ));
    }
    Ok(Answer::new(
        "graph_query",
        Some(ctx.data.id.clone()),
        Surprises { op: GraphOp::SurprisingConnections, results, sampled: nodes.len() > SAMPLE_ABOVE },
        text,
    ))
}

/// `graph clear-scip`: forgets every imported SCIP index; the graph is heuristic again.
pub fn clear_scip(engine: &Engine) -> Result<Answer> {
    let n = engine.ws.store.clear_catalog(crate::layer::scip::SCIP, &crate::layer::scip::fingerprint())?;
    engine.forget_views();
    let text = format!("forgot the precise facts of {n} blobs; `git lynx gc` removes their segments\n");
    Ok(Answer::new("clear_scip", None, ScipCleared { blobs: n }, text))
}

/// How many blobs' precise facts were forgotten.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ScipCleared {
    pub blobs: usize,
}

/// `graph import-scip INDEX`: stores what a SCIP index says about the files of a view (default
/// the working tree), so their edges become `precise` in every view holding the same blobs.
pub fn import_scip(engine: &Engine, index: &std::path::Path, rev: Option<&str>) -> Result<Answer> {
    let spec = crate::view::ViewSpec::from_option(rev);
    let view = engine.view(&spec)?;
    let r = crate::index::scip::import(&engine.ws, &view, index)?;
    engine.forget_views();
    let mut text = format!(
        "imported {} of {} documents from {}{} at {}: {} definitions, {} calls, {} imports, {} inheritance relations\n",
        r.imported,
        r.documents,
        r.index,
        if r.tool.is_empty() { String::new() } else { format!(" ({})", r.tool) },
        r.view,
        r.definitions,
        r.calls,
        r.imports,
        r.implements
    );
    if r.imported > 0 {
        text.push_str("their calls, imports and bases are now `precise` in every view holding these blobs\n");
    }
    for s in r.skipped.iter().take(20) {
        text.push_str(&format!("  skipped {}: {}\n", crate::present::quote_path(&s.path), s.reason));
    }
    if r.skipped.len() > 20 {
        text.push_str(&format!("  … and {} more skipped (--json lists them all)\n", r.skipped.len() - 20));
    }
    if r.imported == 0 && r.documents > 0 {
        anyhow::bail!(
            "{}no document of {} matches a file of this view; index the same revision (or pass --rev)",
            text,
            r.index
        );
    }
    Ok(Answer::new("import_scip", None, &r, text))
}

results!(
    Traversal => "results",
    GraphPath => "path",
    GraphStatus,
    GraphOverview,
    Surprises => "results",
);

results!(crate::index::scip::ImportReport, ScipCleared);
