//! `export_graph`: one self-contained, offline HTML file (inline data, inline script, SVG) for
//! a symbol's blast radius or a module's hub, written under `.lynx/exports/`.

use super::nav::open;
use super::{Answer, view_line};
use crate::engine::Engine;
use crate::graph::model::{Node, Rel};
use crate::graph::query::{self, node_ref};
use anyhow::Result;
use petgraph::Direction;
use petgraph::visit::EdgeRef;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

crate::error::errors! {
    /// A graph export with no subject or a file it must not write.
    pub enum ExportError: Usage {
        NotFound { target: String } => "nothing named \"{target}\" in this view",
        NoSubject {} =>
            "export_graph needs a symbol or a module (`--symbol` / `--module`; in MCP `symbol` / `module`, or LynxMCP's `target` with `mode`)",
        /// The page's path, refused (`why` says the rule).
        Out { why: &'static str, out: String } => "argument `out` {why} (got \"{out}\")",
    }
}

/// `export_graph`'s arguments on every surface. MCP's `out` is checked to stay inside the
/// repository before it gets here (`mcp::tools`).
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ExportArgs {
    /// Centre the view on this symbol.
    #[arg(long)]
    #[schemars(description = "")]
    pub symbol: Option<String>,
    /// Centre the view on this file (repository-relative path).
    #[arg(long)]
    #[schemars(description = "")]
    pub module: Option<String>,
    /// The HTML file to write (default: .lynx/exports/graph-<name>.html; a file elsewhere in
    /// the working tree is left out of its views, as Lynx's own output).
    #[arg(long)]
    #[schemars(with = "Option<String>", description = "file inside the repository")]
    pub out: Option<PathBuf>,
    /// Hops from the centre [default: 2; at most 6].
    #[arg(long)]
    #[schemars(description = "")]
    pub depth: Option<super::args::Count>,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: super::args::Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::OneSource,
}

/// What the page's script draws: its title, the view, the nodes and the edges.
#[derive(Serialize)]
struct PageData<'a> {
    title: &'a str,
    view: &'a str,
    nodes: &'a [JsNode],
    edges: &'a [JsEdge],
}

#[derive(Serialize)]
struct JsNode {
    id: usize,
    name: String,
    kind: String,
    path: String,
    line: u32,
    root: bool,
    test: bool,
    /// Not drawn at first: a neighbour one step beyond the view, shown when a node is expanded.
    hidden: bool,
    /// Steps from the roots: the page labels near rings first when labels would collide.
    ring: usize,
    /// A symbol's page: -1 for its callers (drawn left of it), 1 for its callees (right), 0
    /// for the symbol itself and for a module's page.
    side: i8,
    x: f64,
    y: f64,
}

#[derive(Serialize)]
struct JsEdge {
    source: usize,
    target: usize,
    relation: &'static str,
    confidence: &'static str,
    confident: bool,
}

const MAX_EXPORT_NODES: usize = 300;
/// Neighbours beyond the drawn ones carried for expanding nodes in the page.
const MAX_HIDDEN_NODES: usize = 600;

/// An explorer page, built: its HTML and what it holds.
struct Built {
    view: crate::view::ViewId,
    target: String,
    html: String,
    shown: usize,
    drawn_edges: usize,
    expandable: usize,
}

/// The explorer page of a symbol's or a module's neighbourhood (what `git lynx ui` serves).
pub fn page(engine: &Engine, a: &ExportArgs) -> Result<String> {
    match build(engine, a)? {
        Ok(b) => Ok(b.html),
        Err((_, target)) => Err(ExportError::NotFound { target: target.to_string() }.into()),
    }
}

/// What `export_graph` wrote.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Exported {
    /// False when the symbol or module names nothing in the view (nothing is written).
    pub matched: bool,
    pub symbol: String,
    /// The page written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub nodes: usize,
    pub edges: usize,
    /// Nodes one click away on the page.
    pub expandable: usize,
    pub truncated: bool,
}

pub fn run(engine: &Engine, a: &ExportArgs) -> Result<Answer> {
    let b = match build(engine, a)? {
        Ok(b) => b,
        Err((view, target)) => {
            let text = format!("{}\nnothing named \"{target}\" in this view\n", view_line(&view));
            return Ok(Answer::new(
                "export_graph",
                Some(view),
                Exported {
                    matched: false,
                    symbol: target,
                    path: None,
                    nodes: 0,
                    edges: 0,
                    expandable: 0,
                    truncated: false,
                },
                text,
            ));
        }
    };
    let out = match &a.out {
        Some(p) => p.clone(),
        None => {
            let safe: String =
                b.target.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
            engine.ws.store.root.join("exports").join(format!("graph-{safe}.html"))
        }
    };
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // The page names every symbol it draws: searched, it would answer for the code it shows.
    // Recorded first, so that a watcher never lists it.
    engine.ws.repo.note_output(&out)?;
    crate::fsutil::write_atomic(&out, b.html.as_bytes())?;
    let truncated = b.shown >= MAX_EXPORT_NODES;
    let text = format!(
        "{}\nwrote {} ({} nodes, {} edges{}; {} more one click away) — open it in a browser; it needs no network\n",
        view_line(&b.view),
        out.display(),
        b.shown,
        b.drawn_edges,
        if truncated { ", truncated" } else { "" },
        b.expandable,
    );
    Ok(Answer::new(
        "export_graph",
        Some(b.view),
        Exported {
            matched: true,
            symbol: b.target,
            path: Some(out.display().to_string()),
            nodes: b.shown,
            edges: b.drawn_edges,
            expandable: b.expandable,
            truncated,
        },
        text,
    ))
}

/// The page, or (when nothing matched) the view and the name asked for.
fn build(engine: &Engine, a: &ExportArgs) -> Result<std::result::Result<Built, (crate::view::ViewId, String)>> {
    let ctx = open(engine, a.at.rev.as_deref())?;
    let g = &ctx.graph;
    let (roots, title): (Vec<Node>, String) = match (&a.symbol, &a.module) {
        (Some(s), _) => {
            let (defs, _) = query::match_symbol(g, s);
            (defs.into_iter().take(3).map(Node::Def).collect(), format!("blast radius of {s}"))
        }
        (None, Some(m)) => {
            let m = m.trim_start_matches("./");
            (g.by_path.get(m).map(|&f| vec![Node::File(f)]).unwrap_or_default(), format!("module {m}"))
        }
        _ => {
            return Err(ExportError::NoSubject {}.into());
        }
    };
    let target = a.symbol.clone().or(a.module.clone()).unwrap_or_default();
    if roots.is_empty() {
        return Ok(Err((ctx.data.id.clone(), target)));
    }
    // The neighbourhood: callers (blast radius) and callees / imports and dependents.
    let rels: Vec<Rel> = if a.module.is_some() && a.symbol.is_none() {
        vec![Rel::Imports, Rel::Contains, Rel::Calls]
    } else {
        vec![Rel::Calls, Rel::Extends, Rel::Implements, Rel::ExtendsOrImplements]
    };
    let mut set: Vec<Node> = roots.clone();
    let mut seen: HashSet<Node> = roots.iter().copied().collect();
    // Where each drawn node sits from the roots: (side, hops); callers on one side, callees on
    // the other.
    let mut place: HashMap<Node, (i8, usize)> = roots.iter().map(|&r| (r, (0, 0))).collect();
    for (dir, depth) in [(Direction::Incoming, super::args::Count::or(a.depth, 2, 6)), (Direction::Outgoing, 1)] {
        let side = if dir == Direction::Incoming { -1 } else { 1 };
        let mut frontier = roots.clone();
        for hop in 0..depth {
            let mut next = Vec::new();
            for n in &frontier {
                for e in g.g.edges_directed(g.node_of(*n), dir) {
                    if !rels.contains(&e.weight().rel) {
                        continue;
                    }
                    let other = g.g[if dir == Direction::Outgoing { e.target() } else { e.source() }];
                    if set.len() < MAX_EXPORT_NODES && seen.insert(other) {
                        set.push(other);
                        place.insert(other, (side, hop + 1));
                        next.push(other);
                    }
                }
            }
            frontier = next;
        }
    }
    let shown = set.len();
    // One step further, hidden until a node is expanded in the page.
    for i in 0..shown {
        for dir in [Direction::Incoming, Direction::Outgoing] {
            for e in g.g.edges_directed(g.node_of(set[i]), dir) {
                if !rels.contains(&e.weight().rel) {
                    continue;
                }
                let other = g.g[if dir == Direction::Outgoing { e.target() } else { e.source() }];
                if set.len() < shown + MAX_HIDDEN_NODES && seen.insert(other) {
                    set.push(other);
                }
            }
        }
    }
    let index: HashMap<Node, usize> = set.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut edges = Vec::new();
    for &n in &set {
        for e in g.g.edges_directed(g.node_of(n), Direction::Outgoing) {
            if !rels.contains(&e.weight().rel) {
                continue;
            }
            if let Some(&t) = index.get(&g.g[e.target()]) {
                let w = e.weight();
                edges.push(JsEdge {
                    source: index[&n],
                    target: t,
                    relation: w.rel.name(),
                    confidence: w.confidence.name(),
                    confident: w.confidence.is_confident(),
                });
            }
        }
    }
    let roots_i: Vec<usize> = roots.iter().filter_map(|r| index.get(r).copied()).collect();
    let symbol_page = a.symbol.is_some();
    let sides: Vec<(i8, usize)> = set.iter().map(|n| place.get(n).copied().unwrap_or((0, 0))).collect();
    let (pos, ring) = if symbol_page {
        let tests: Vec<bool> = set.iter().map(|&n| g.is_test(n)).collect();
        let order: Vec<(String, u32)> = set
            .iter()
            .map(|&n| {
                let r = node_ref(g, n);
                (r.path.unwrap_or_default(), r.start_line.unwrap_or(0))
            })
            .collect();
        layered_layout(shown, &sides, &tests, &order, &edges)
    } else {
        radial_layout(set.len(), shown, &roots_i, &edges)
    };
    let nodes: Vec<JsNode> = set
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let r = node_ref(g, n);
            JsNode {
                id: i,
                name: r.name,
                kind: r.kind,
                path: r.path.unwrap_or_default(),
                line: r.start_line.unwrap_or(0),
                root: roots.contains(&n),
                test: r.test,
                hidden: i >= shown,
                ring: ring[i],
                side: if symbol_page { sides[i].0 } else { 0 },
                x: pos[i].0,
                y: pos[i].1,
            }
        })
        .collect();
    let data =
        serde_json::to_string(&PageData { title: &title, view: &ctx.data.id.label, nodes: &nodes, edges: &edges })?;
    let drawn_edges = edges.iter().filter(|e| e.source < shown && e.target < shown).count();
    Ok(Ok(Built {
        view: ctx.data.id.clone(),
        target,
        html: render_html(&title, &data),
        shown,
        drawn_edges,
        expandable: set.len() - shown,
    }))
}

/// Positions for a neighbourhood, computed once here so the page draws at once: the drawn
/// nodes (the first `shown`) on rings by their distance from the roots (unreached ones on the
/// outermost ring), each ring wide enough that neighbours on it keep `SPACING` apart, and
/// ordered by the angle of the node that reached them so edges between rings stay short. The
/// hidden nodes take no room on the rings (the first view is laid out for what it draws): each
/// sits on a short arc just outside the drawn node that reveals it. Returns positions and rings.
fn radial_layout(n: usize, shown: usize, roots: &[usize], edges: &[JsEdge]) -> (Vec<(f64, f64)>, Vec<usize>) {
    const SPACING: f64 = 34.0;
    const RING_GAP: f64 = 120.0;
    let shown = shown.min(n);
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in edges {
        adj[e.source].push(e.target);
        adj[e.target].push(e.source);
    }
    for a in &mut adj {
        a.sort_unstable();
        a.dedup();
    }
    let mut ring = vec![usize::MAX; n];
    let mut parent = vec![usize::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for &r in roots.iter().filter(|&&r| r < shown) {
        ring[r] = 0;
        queue.push_back(r);
    }
    while let Some(v) = queue.pop_front() {
        for &w in adj[v].iter().filter(|&&w| w < shown) {
            if ring[w] == usize::MAX {
                ring[w] = ring[v] + 1;
                parent[w] = v;
                queue.push_back(w);
            }
        }
    }
    let deepest = ring[..shown].iter().filter(|&&r| r != usize::MAX).max().copied().unwrap_or(0);
    for r in ring[..shown].iter_mut().filter(|r| **r == usize::MAX) {
        *r = deepest + 1;
    }
    let mut pos = vec![(0.0, 0.0); n];
    let mut angle = vec![0.0f64; n];
    let rings = ring[..shown].iter().max().copied().unwrap_or(0);
    let mut radius = 0.0f64;
    let round = |v: f64| (v * 10.0).round() / 10.0;
    for k in 0..=rings {
        let mut members: Vec<usize> = (0..shown).filter(|&i| ring[i] == k).collect();
        if members.is_empty() {
            continue;
        }
        members.sort_by(|&a, &b| {
            let pa = if parent[a] == usize::MAX { 0.0 } else { angle[parent[a]] };
            let pb = if parent[b] == usize::MAX { 0.0 } else { angle[parent[b]] };
            pa.total_cmp(&pb).then(a.cmp(&b))
        });
        let m = members.len() as f64;
        radius = if k == 0 && members.len() == 1 {
            0.0
        } else {
            (radius + RING_GAP).max(m * SPACING / std::f64::consts::TAU)
        };
        // Turn the ring so that its nodes sit, on the whole, where the nodes that reached them are.
        let step = std::f64::consts::TAU / m;
        let (mut sin, mut cos) = (0.0, 0.0);
        for (j, &i) in members.iter().enumerate() {
            let want = if parent[i] == usize::MAX { -std::f64::consts::FRAC_PI_2 } else { angle[parent[i]] };
            sin += (want - step * j as f64).sin();
            cos += (want - step * j as f64).cos();
        }
        let turn = if sin == 0.0 && cos == 0.0 { -std::f64::consts::FRAC_PI_2 } else { sin.atan2(cos) };
        for (j, &i) in members.iter().enumerate() {
            let a = turn + step * j as f64;
            angle[i] = a;
            pos[i] = (round(radius * a.cos()), round(radius * a.sin()));
        }
    }
    // Hidden nodes, grouped by the first drawn node they touch, fanned out beyond it.
    let mut revealed_by: Vec<Vec<usize>> = vec![Vec::new(); shown];
    for h in shown..n {
        match adj[h].iter().find(|&&w| w < shown) {
            Some(&p) => {
                ring[h] = ring[p] + 1;
                revealed_by[p].push(h);
            }
            None => ring[h] = rings + 1,
        }
    }
    for (p, kids) in revealed_by.iter().enumerate().filter(|(_, k)| !k.is_empty()) {
        let (px, py) = pos[p];
        let at_centre = px.hypot(py) < 1.0;
        let out = if at_centre { 0.0 } else { py.atan2(px) };
        let m = kids.len() as f64;
        // At most a half circle facing outwards (a full one around a root at the centre), and
        // further out when that arc is too short for SPACING between neighbours.
        let widest = if at_centre { std::f64::consts::TAU } else { std::f64::consts::PI };
        let reach = (RING_GAP * 0.75).max(m * SPACING / widest);
        let spread = (m * SPACING / reach).min(widest);
        let step = if at_centre {
            spread / m
        } else if m > 1.0 {
            spread / (m - 1.0)
        } else {
            0.0
        };
        let first = if at_centre { 0.0 } else { out - spread / 2.0 };
        for (j, &h) in kids.iter().enumerate() {
            let a = first + step * j as f64;
            pos[h] = (round(px + reach * a.cos()), round(py + reach * a.sin()));
        }
    }
    (pos, ring)
}

/// Columns apart on a symbol's page: room for a label beside each node.
const COLUMN: f64 = 260.0;
/// Rows apart inside a column.
const ROW: f64 = 30.0;

/// Positions for a symbol's page, read like its impact list: the symbol in the middle, its
/// callers in columns to the left by hops (production code first, then tests, each by path and
/// line), its callees in a column to the right; a hidden neighbour sits one column further out
/// than the drawn node that reveals it. Returns positions and, as rings, the hops.
fn layered_layout(
    shown: usize,
    place: &[(i8, usize)],
    tests: &[bool],
    order: &[(String, u32)],
    edges: &[JsEdge],
) -> (Vec<(f64, f64)>, Vec<usize>) {
    let n = place.len();
    let mut pos = vec![(0.0, 0.0); n];
    let mut ring: Vec<usize> = place.iter().map(|p| p.1).collect();
    let column = |side: i8, hops: usize| side as i64 * hops as i64;
    let mut columns: std::collections::BTreeMap<i64, Vec<usize>> = std::collections::BTreeMap::new();
    for (i, &(side, hops)) in place.iter().enumerate().take(shown) {
        columns.entry(column(side, hops)).or_default().push(i);
    }
    for (c, members) in &mut columns {
        members.sort_by(|&a, &b| (tests[a], &order[a]).cmp(&(tests[b], &order[b])));
        let m = members.len() as f64;
        for (j, &i) in members.iter().enumerate() {
            pos[i] = (*c as f64 * COLUMN, ((j as f64) - (m - 1.0) / 2.0) * ROW);
        }
    }
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in edges {
        adj[e.source].push(e.target);
        adj[e.target].push(e.source);
    }
    let mut revealed_by: Vec<Vec<usize>> = vec![Vec::new(); shown];
    for h in shown..n {
        if let Some(&p) = adj[h].iter().find(|&&w| w < shown) {
            revealed_by[p].push(h);
            ring[h] = ring[p] + 1;
        }
    }
    for (p, kids) in revealed_by.iter().enumerate().filter(|(_, k)| !k.is_empty()) {
        let (px, py) = pos[p];
        let outwards = if place[p].0 > 0 { 1.0 } else { -1.0 };
        let m = kids.len() as f64;
        for (j, &h) in kids.iter().enumerate() {
            pos[h] = (px + outwards * COLUMN * 0.75, py + ((j as f64) - (m - 1.0) / 2.0) * ROW * 0.6);
        }
    }
    (pos, ring)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The graph explorer page: one self-contained file (inline style, script and data).
const EXPLORER: &str = include_str!("graph_explorer.html");

fn render_html(title: &str, data_json: &str) -> String {
    // `</` cannot appear inside the inline script.
    let data = data_json.replace("</", "<\\/");
    // Split on the template's own markers, so nothing in the title or the data is taken for one.
    let (head, rest) = EXPLORER.split_once("__TITLE__").expect("template has a title marker");
    let (mid, tail) = rest.split_once("/*__DATA__*/null").expect("template has a data marker");
    format!("{head}{}{mid}{data}{tail}", escape(title))
}

/// A file an agent asked a tool to write: relative to the repository and inside it (an agent
/// must not be able to write anywhere else through the server).
pub fn inside_repository(engine: &crate::engine::Engine, out: &str) -> Result<std::path::PathBuf> {
    use std::path::Component;
    let refuse = |why: &'static str| Err(ExportError::Out { why, out: out.escape_debug().to_string() }.into());
    let p = std::path::Path::new(out);
    let escapes = p.is_absolute()
        || p.components().any(|c| matches!(c, Component::ParentDir | Component::Prefix(_) | Component::RootDir));
    if escapes || out.trim().is_empty() {
        return refuse("must be a path inside the repository, relative to its root");
    }
    let lower = out.to_ascii_lowercase();
    if !(lower.ends_with(".html") || lower.ends_with(".htm")) {
        return refuse("must name an .html file (the tool writes a web page, nothing else)");
    }
    let first = p
        .components()
        .find(|c| !matches!(c, Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy().to_ascii_lowercase());
    if first.as_deref().is_some_and(|f| f == ".git" || f == ".lynx") {
        return refuse("may not lead into .git or .lynx");
    }
    let root = engine.ws.repo.workdir()?;
    let root_real = root.canonicalize()?;
    let full = root.join(p);
    // Every component that exists is resolved, symbolic links included: the deepest existing
    // ancestor (or the file itself) must stay inside the work tree, outside git's directory.
    let mut existing = full.as_path();
    while !existing.exists() && existing.symlink_metadata().is_err() {
        match existing.parent() {
            Some(parent) => existing = parent,
            None => break,
        }
    }
    let real = existing.canonicalize()?;
    if !real.starts_with(&root_real) {
        return refuse("leads outside the repository through a symbolic link");
    }
    let store = engine.ws.store.root.canonicalize().unwrap_or_else(|_| engine.ws.store.root.clone());
    if real.starts_with(&engine.ws.repo.common_dir)
        || real.starts_with(root_real.join(".lynx"))
        || real.starts_with(&store)
    {
        return refuse("may not lead into .git or .lynx");
    }
    if full.symlink_metadata().is_ok_and(|m| !m.is_file()) {
        return refuse("names something that is not a plain file");
    }
    Ok(full)
}

results!(Exported);

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(source: usize, target: usize) -> JsEdge {
        JsEdge { source, target, relation: "calls", confidence: "resolved", confident: true }
    }

    #[test]
    fn rings_by_distance_without_overlaps() {
        // A root, 40 callers, each with a caller of its own, and one node nothing reaches.
        let mut edges: Vec<JsEdge> = (1..=40).map(|i| edge(i, 0)).collect();
        edges.extend((1..=40).map(|i| edge(40 + i, i)));
        let (pos, ring) = radial_layout(82, 82, &[0], &edges);
        assert_eq!((ring[0], ring[1], ring[41], ring[81]), (0, 1, 2, 3));
        assert_eq!(pos[0], (0.0, 0.0));
        let r = |i: usize| pos[i].0.hypot(pos[i].1);
        let same = |a: f64, b: f64| (a - b).abs() < 0.5;
        assert!(
            (1..=40).all(|i| same(r(i), r(1)))
                && (41..=80).all(|i| same(r(i), r(41)))
                && r(41) > r(1) + 100.0
                && r(81) > r(41) + 100.0,
            "rings by distance"
        );
        for i in 0..pos.len() {
            for j in i + 1..pos.len() {
                let d = (pos[i].0 - pos[j].0).hypot(pos[i].1 - pos[j].1);
                assert!(d >= 30.0, "nodes {i} and {j} are {d} apart");
            }
        }
        // Hidden nodes leave the drawn ones where they were and sit beside the node revealing them.
        let mut with_hidden: Vec<JsEdge> = (1..=40).map(|i| edge(i, 0)).collect();
        with_hidden.extend((1..=40).map(|i| edge(40 + i, i)));
        with_hidden.extend((0..5).map(|j| edge(82 + j, 7)));
        let (hpos, hring) = radial_layout(87, 82, &[0], &with_hidden);
        assert_eq!(&hpos[..82], &pos[..], "drawn nodes keep their places");
        for h in 82..87 {
            assert_eq!(hring[h], 2);
            let near = (hpos[h].0 - pos[7].0).hypot(hpos[h].1 - pos[7].1);
            assert!(near < 100.0 && hpos[h].0.hypot(hpos[h].1) > r(7), "hidden {h} beyond its node: {near}");
        }
        // A node sits on the side of the node that reached it.
        for i in 1..=40 {
            let (a, b) = (pos[i], pos[40 + i]);
            let cos = (a.0 * b.0 + a.1 * b.1) / (a.0.hypot(a.1) * b.0.hypot(b.1));
            assert!(cos > 0.9, "caller {} is far from its callee's side ({cos})", 40 + i);
        }
    }
}
