//! Queries over a view's code graph: symbol matching, callers/callees, inheritance, imports,
//! neighbourhoods, shortest paths, overview (hubs and communities), surprising connections and
//! counts. Traversals are cycle-safe and capped; capped answers say `truncated`.

use super::model::{CodeGraph, Node, Rel};
use petgraph::Direction;
use petgraph::visit::EdgeRef;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// Most nodes a traversal returns.
pub const MAX_NODES: usize = 400;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    Exact,
    CaseInsensitive,
}

/// Definitions going by `symbol`: exact qualified or leaf name, then case-insensitive. Empty
/// when nothing matches: a near miss (`get_cookie_heade`) is never taken for another symbol,
/// `suggest` names the candidates instead.
pub fn match_symbol(cg: &CodeGraph, symbol: &str) -> (Vec<u32>, Option<MatchKind>) {
    // `path/to/file.py:name` restricts the match to one file.
    if let Some((path, name)) = symbol.rsplit_once(':')
        && let Some(&f) = cg.by_path.get(path.trim_start_matches("./"))
    {
        let (defs, how) = match_symbol(cg, name);
        let in_file: Vec<u32> = defs.into_iter().filter(|&d| cg.defs[d as usize].file == f).collect();
        return if in_file.is_empty() { (Vec::new(), None) } else { (in_file, how) };
    }
    let s = normalise(symbol);
    if s.is_empty() {
        return (Vec::new(), None);
    }
    let mut exact: Vec<u32> = cg.by_qualified.get(&s).cloned().unwrap_or_default();
    // A leaf name means every definition of that name (`get`: the function and the methods).
    if !s.contains('.') || exact.is_empty() {
        exact.extend(cg.by_name.get(&s).into_iter().flatten().copied());
    }
    if exact.is_empty() {
        // `Class.method` written without its namespace.
        exact = cg
            .defs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.qualified.ends_with(&format!(".{s}")))
            .map(|(i, _)| i as u32)
            .collect();
    }
    if !exact.is_empty() {
        return (rank(cg, exact), Some(MatchKind::Exact));
    }
    let lower = s.to_lowercase();
    let ci: Vec<u32> = cg
        .defs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.name.to_lowercase() == lower || d.qualified.to_lowercase() == lower)
        .map(|(i, _)| i as u32)
        .collect();
    if !ci.is_empty() {
        return (rank(cg, ci), Some(MatchKind::CaseInsensitive));
    }
    (Vec::new(), None)
}

/// A symbol as the graph writes it: `a::b` and Ruby's `Class#method` as `a.b`; a JavaScript
/// `#private` name (`Counter.#step`, `#step`) kept as written.
fn normalise(symbol: &str) -> String {
    let s = symbol.trim().replace("::", ".");
    let mut out = String::with_capacity(s.len());
    let mut prev: Option<char> = None;
    for c in s.chars() {
        if c == '#' && prev.is_some_and(|p| p.is_alphanumeric() || p == '_') {
            out.push('.');
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    out
}

/// Up to `n` qualified names close to `symbol` for a "did you mean": names within a few edits
/// (a typo), then names that contain it, nearest first.
pub fn suggest(cg: &CodeGraph, symbol: &str, n: usize) -> Vec<String> {
    nearest_names(cg.defs.iter().filter(|d| d.kind != "impl").map(|d| d.qualified.as_str()), symbol, n)
}

/// Up to `n` of `names` (qualified: `a.b.C`, `a::b`) close to `symbol`: within a few edits of
/// its leaf or of the whole name, then containing it, nearest first. Lengths are compared
/// before any edit distance, so a view's hundreds of thousands of names take milliseconds.
pub fn nearest_names<'a>(names: impl Iterator<Item = &'a str>, symbol: &str, n: usize) -> Vec<String> {
    let s = normalise(symbol).to_lowercase();
    if s.is_empty() {
        return Vec::new();
    }
    let leaf = s.rsplit('.').next().unwrap_or(&s).to_string();
    let budget = (leaf.chars().count() / 4).clamp(1, 3);
    // An edit distance is at least the difference in length.
    let near = |a: &str, b: &str| a.chars().count().abs_diff(b.chars().count()) <= budget;
    let mut scored: Vec<(usize, bool, &str)> = Vec::new();
    let mut seen = HashSet::new();
    for q in names {
        let whole: std::borrow::Cow<str> = if q.contains("::") { q.replace("::", ".").into() } else { q.into() };
        let name = whole.rsplit('.').next().unwrap_or(&whole);
        let (close_leaf, close_whole) = (near(&leaf, name), near(&s, &whole));
        let contains = leaf.len() >= 3 && whole.len() >= s.len() && contains_ignoring_case(&whole, &s);
        if !(close_leaf || close_whole || contains) || !seen.insert(q) {
            continue;
        }
        let lev = |a: &str, b: &str| strsim::levenshtein(a, &b.to_lowercase());
        let distance = match (close_leaf, close_whole) {
            (true, true) => lev(&leaf, name).min(lev(&s, &whole)),
            (true, false) => lev(&leaf, name),
            (false, true) => lev(&s, &whole),
            (false, false) => usize::MAX,
        };
        if distance <= budget {
            scored.push((distance, false, q));
        } else if contains {
            scored.push((budget + 1 + q.len().saturating_sub(s.len()), true, q));
        }
    }
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(b.2)));
    scored.into_iter().take(n).map(|x| x.2.to_string()).collect()
}

/// Whether `hay` contains `needle` (already in lower case), case ignored.
fn contains_ignoring_case(hay: &str, needle: &str) -> bool {
    if !hay.is_ascii() {
        return hay.to_lowercase().contains(needle);
    }
    hay.as_bytes().windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Non-test definitions first, then by kind (types and functions before the rest), then path.
fn rank(cg: &CodeGraph, mut v: Vec<u32>) -> Vec<u32> {
    // Examples, benchmarks and documentation repeat the project's own definitions: after them.
    let aside = |path: &str| {
        path.split('/').rev().skip(1).any(|d| {
            matches!(
                d.to_ascii_lowercase().as_str(),
                "example"
                    | "examples"
                    | "docs"
                    | "doc"
                    | "bench"
                    | "benches"
                    | "benchmark"
                    | "benchmarks"
                    | "samples"
                    | "sample"
                    | "demo"
                    | "demos"
            )
        })
    };
    v.sort_by_key(|&d| {
        let def = &cg.defs[d as usize];
        (
            cg.is_test(Node::Def(d)),
            aside(cg.def_path(d)),
            def.kind == "impl",
            cg.def_path(d).to_string(),
            def.start_line,
        )
    });
    v.dedup();
    v
}

/// One node of an answer, with where it is.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct NodeRef {
    pub name: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub test: bool,
}

pub fn node_ref(cg: &CodeGraph, n: Node) -> NodeRef {
    match n {
        Node::Def(d) => {
            let def = &cg.defs[d as usize];
            NodeRef {
                name: def.qualified.clone(),
                kind: def.kind.clone(),
                path: Some(cg.def_path(d).to_string()),
                start_line: Some(def.start_line),
                end_line: Some(def.end_line),
                test: cg.is_test(n),
            }
        }
        Node::File(f) => NodeRef {
            name: cg.files[f as usize].path.clone(),
            kind: "file".into(),
            path: Some(cg.files[f as usize].path.clone()),
            start_line: None,
            end_line: None,
            test: cg.files[f as usize].is_test,
        },
        Node::External(e) => NodeRef {
            name: cg.externals[e as usize].clone(),
            kind: "external".into(),
            path: None,
            start_line: None,
            end_line: None,
            test: false,
        },
    }
}

/// An edge of an answer: the node at the other end, the relation and where it happens.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Link {
    pub node: NodeRef,
    pub relation: &'static str,
    pub confidence: &'static str,
    /// Line of the call/import in the caller's file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The file of that line when it is not this node's: a callee is shown at its definition,
    /// and the call site (`site`:`line`) is the caller's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// Hops from the start (1 = direct).
    pub depth: usize,
    /// The node is the start itself: a function that calls itself.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recursive: bool,
}

/// The one order of every list of dependants and neighbours: confident before guessed,
/// production code before tests, nearer before further, then path and line ascending.
pub fn order(links: &mut [Link]) {
    links.sort_by(|a, b| {
        let key = |l: &Link| {
            (
                !matches!(l.confidence, "precise" | "extracted" | "resolved"),
                l.node.test,
                l.depth,
                l.node.path.clone(),
                l.line.or(l.node.start_line),
                l.node.start_line,
            )
        };
        key(a).cmp(&key(b)).then_with(|| a.node.name.cmp(&b.node.name))
    });
}

/// Direct neighbours of `starts` over `rels` in `dir`.
pub fn adjacent(cg: &CodeGraph, starts: &[Node], rels: &[Rel], dir: Direction) -> Vec<Link> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for &s in starts {
        for e in cg.g.edges_directed(cg.node_of(s), dir) {
            if !rels.contains(&e.weight().rel) {
                continue;
            }
            let other = if dir == Direction::Outgoing { e.target() } else { e.source() };
            let n = cg.g[other];
            if !seen.insert((n, e.weight().rel)) {
                continue;
            }
            let line = (e.weight().line > 0).then_some(e.weight().line);
            out.push(Link {
                node: node_ref(cg, n),
                relation: e.weight().rel.name(),
                confidence: e.weight().confidence.name(),
                site: if dir == Direction::Outgoing { line.and(node_ref(cg, s).path) } else { None },
                line,
                depth: 1,
                recursive: n == s,
            });
        }
    }
    order(&mut out);
    out
}

/// Breadth-first traversal: nodes reachable from `starts` within `depth` hops over `rels`
/// (`dir` None = both ways). Cycle-safe; capped at `limit` with `truncated`.
pub fn bfs(
    cg: &CodeGraph,
    starts: &[Node],
    rels: &[Rel],
    dir: Option<Direction>,
    depth: usize,
    limit: usize,
) -> (Vec<Link>, bool) {
    bfs_where(cg, starts, rels, dir, depth, limit, |_| true)
}

/// [`bfs`] over the edges `follow` accepts (e.g. only confident ones, so that every path
/// found is trusted from end to end).
pub fn bfs_where(
    cg: &CodeGraph,
    starts: &[Node],
    rels: &[Rel],
    dir: Option<Direction>,
    depth: usize,
    limit: usize,
    follow: impl Fn(&super::model::Edge) -> bool,
) -> (Vec<Link>, bool) {
    // The walk goes wider than asked, so that the first `limit` in answer order are the same
    // whatever `limit` is (pages of one list never overlap or skip).
    let mut w = walk(cg, starts, rels, dir, depth, limit.max(4 * MAX_NODES), &follow);
    // A start that calls itself is its own caller and callee (recursion), said as such.
    for &s in starts {
        let n = cg.node_of(s);
        for e in cg.g.edges_connecting(n, n) {
            if rels.contains(&e.weight().rel) && follow(e.weight()) {
                w.links.push(Link {
                    node: node_ref(cg, s),
                    relation: e.weight().rel.name(),
                    confidence: e.weight().confidence.name(),
                    line: (e.weight().line > 0).then_some(e.weight().line),
                    site: None,
                    depth: 1,
                    recursive: true,
                });
            }
        }
    }
    order(&mut w.links);
    let truncated = w.truncated || w.links.len() > limit;
    w.links.truncate(limit);
    (w.links, truncated)
}

/// What a bounded walk found, and where it stopped.
pub struct Walk {
    pub links: Vec<Link>,
    /// The node of each link, in the same order.
    pub nodes: Vec<Node>,
    /// Stopped at `limit` nodes.
    pub truncated: bool,
    /// Edges to nodes not yet reached that lead on from the last level the depth allowed: how
    /// much a deeper walk would add at least (0: nothing was cut).
    pub cut: usize,
}

/// [`bfs_where`], counting what the depth limit cut.
pub fn walk(
    cg: &CodeGraph,
    starts: &[Node],
    rels: &[Rel],
    dir: Option<Direction>,
    depth: usize,
    limit: usize,
    follow: impl Fn(&super::model::Edge) -> bool,
) -> Walk {
    let mut beyond: HashSet<Node> = HashSet::new();
    let mut nodes = Vec::new();
    let mut seen: HashSet<Node> = starts.iter().copied().collect();
    let mut queue: VecDeque<(Node, usize)> = starts.iter().map(|&s| (s, 0)).collect();
    let mut out = Vec::new();
    let mut truncated = false;
    while let Some((n, d)) = queue.pop_front() {
        let dirs: &[Direction] = match dir {
            Some(Direction::Outgoing) => &[Direction::Outgoing],
            Some(Direction::Incoming) => &[Direction::Incoming],
            None => &[Direction::Outgoing, Direction::Incoming],
        };
        for &dd in dirs {
            for e in cg.g.edges_directed(cg.node_of(n), dd) {
                if !rels.contains(&e.weight().rel) || !follow(e.weight()) {
                    continue;
                }
                let other = cg.g[if dd == Direction::Outgoing { e.target() } else { e.source() }];
                if d >= depth {
                    if !seen.contains(&other) {
                        beyond.insert(other);
                    }
                    continue;
                }
                if !seen.insert(other) {
                    continue;
                }
                if out.len() >= limit {
                    truncated = true;
                    return Walk { links: out, nodes, truncated, cut: beyond.len() };
                }
                let line = (e.weight().line > 0).then_some(e.weight().line);
                out.push(Link {
                    node: node_ref(cg, other),
                    relation: e.weight().rel.name(),
                    confidence: e.weight().confidence.name(),
                    site: if dd == Direction::Outgoing { line.and(node_ref(cg, n).path) } else { None },
                    line,
                    depth: d + 1,
                    recursive: false,
                });
                nodes.push(other);
                queue.push_back((other, d + 1));
            }
        }
    }
    beyond.retain(|n| !seen.contains(n));
    Walk { links: out, nodes, truncated, cut: beyond.len() }
}

/// Who reaches `starts` (incoming `rels`), split by trust: the walk follows confident edges
/// only, to `depth` hops, since a name-only guess compounds with every hop; the edges a guess
/// adds are listed one hop deep and never followed.
pub struct Reach {
    /// Through confident edges, to `depth` hops.
    pub confident: Vec<Link>,
    /// Direct callers through ambiguous or inferred edges only, not walked further.
    pub possible: Vec<Link>,
    pub truncated: bool,
    /// Definitions one hop past the depth limit (0: the walk was complete).
    pub cut: usize,
}

pub fn reach(cg: &CodeGraph, starts: &[Node], rels: &[Rel], depth: usize) -> Reach {
    let w = walk(cg, starts, rels, Some(Direction::Incoming), depth, MAX_NODES, |e| e.confidence.is_confident());
    let mut known: HashSet<Node> = starts.iter().copied().collect();
    known.extend(w.nodes.iter().copied());
    let mut possible = Vec::new();
    for &s in starts {
        for e in cg.g.edges_directed(cg.node_of(s), Direction::Incoming) {
            let wt = e.weight();
            if !rels.contains(&wt.rel)
                || wt.confidence.is_confident()
                || wt.confidence == super::model::Confidence::External
            {
                continue;
            }
            let other = cg.g[e.source()];
            if !known.insert(other) {
                continue;
            }
            possible.push(Link {
                node: node_ref(cg, other),
                relation: wt.rel.name(),
                confidence: wt.confidence.name(),
                line: (wt.line > 0).then_some(wt.line),
                site: None,
                depth: 1,
                recursive: false,
            });
        }
    }
    let mut confident = w.links;
    order(&mut confident);
    order(&mut possible);
    Reach { confident, possible, truncated: w.truncated, cut: w.cut }
}

/// What depends on a symbol this repository uses but does not define (a shared library's
/// function, imported): the definitions that call or reference an outside name `name` stands
/// for (`name`, `mod.name`, `pkg::name`), then their dependants through confident edges. None
/// when nothing here uses such a name.
pub fn reach_imported(cg: &CodeGraph, name: &str, rels: &[Rel], depth: usize) -> Option<Reach> {
    let stands_for = |e: &str| {
        e == name || e.strip_suffix(name).is_some_and(|q| q.ends_with('.') || q.ends_with("::") || q.ends_with('/'))
    };
    let outside: Vec<Node> =
        cg.externals.iter().enumerate().filter(|(_, e)| stands_for(e)).map(|(i, _)| Node::External(i as u32)).collect();
    let mut users = Vec::new();
    let mut links = Vec::new();
    for &s in &outside {
        for e in cg.g.edges_directed(cg.node_of(s), Direction::Incoming) {
            let wt = e.weight();
            let user = cg.g[e.source()];
            if !rels.contains(&wt.rel) || users.contains(&user) {
                continue;
            }
            users.push(user);
            links.push(Link {
                node: node_ref(cg, user),
                relation: wt.rel.name(),
                confidence: wt.confidence.name(),
                line: (wt.line > 0).then_some(wt.line),
                site: None,
                depth: 1,
                recursive: false,
            });
        }
    }
    if links.is_empty() {
        return None;
    }
    let mut further = reach(cg, &users, rels, depth.saturating_sub(1).max(1));
    if depth <= 1 {
        further.confident.clear();
    }
    for l in further.confident.iter_mut().chain(further.possible.iter_mut()) {
        l.depth += 1;
    }
    links.extend(further.confident);
    order(&mut links);
    Some(Reach { confident: links, possible: further.possible, truncated: further.truncated, cut: further.cut })
}

/// The shortest path from one of `from` to one of `to`, following edges in their direction
/// (a caller to its callee, a file to what it imports, a class to its base). Each step names
/// the relation of the edge that leads into it (`None` for the first).
pub fn shortest_path(
    cg: &CodeGraph,
    from: &[Node],
    to: &[Node],
    rels: &[Rel],
    max_depth: usize,
) -> Option<Vec<(NodeRef, Option<&'static str>)>> {
    let targets: HashSet<Node> = to.iter().copied().collect();
    let mut prev: HashMap<Node, (Node, Rel)> = HashMap::new();
    let mut seen: HashSet<Node> = from.iter().copied().collect();
    let mut queue: VecDeque<(Node, usize)> = from.iter().map(|&s| (s, 0)).collect();
    let mut hit = from.iter().copied().find(|n| targets.contains(n));
    'search: while hit.is_none() {
        let Some((n, d)) = queue.pop_front() else { break };
        if d >= max_depth {
            continue;
        }
        for e in cg.g.edges_directed(cg.node_of(n), Direction::Outgoing) {
            if !rels.contains(&e.weight().rel) {
                continue;
            }
            let other = cg.g[e.target()];
            if seen.insert(other) {
                prev.insert(other, (n, e.weight().rel));
                if targets.contains(&other) {
                    hit = Some(other);
                    break 'search;
                }
                queue.push_back((other, d + 1));
            }
        }
    }
    let end = hit?;
    let mut path = vec![(node_ref(cg, end), None)];
    let mut cur = end;
    while let Some(&(p, rel)) = prev.get(&cur) {
        path.last_mut().expect("the path has its end").1 = Some(rel.name());
        path.push((node_ref(cg, p), None));
        cur = p;
    }
    path.reverse();
    Some(path)
}

/// Undirected, weighted adjacency of definitions over calls / inheritance (the structural
/// graph used by overview and surprising connections; containment and tests excluded).
pub fn structural(cg: &CodeGraph) -> (Vec<u32>, Vec<Vec<(usize, f64)>>) {
    let nodes: Vec<u32> = (0..cg.defs.len() as u32).filter(|&d| !cg.is_test(Node::Def(d))).collect();
    let index: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, &d)| (d, i)).collect();
    let mut adj: Vec<HashMap<usize, f64>> = vec![HashMap::new(); nodes.len()];
    for e in cg.g.edge_indices() {
        let w = cg.g[e];
        if !(w.rel == Rel::Calls || w.rel.is_inherits()) {
            continue;
        }
        let (a, b) = cg.g.edge_endpoints(e).unwrap();
        if let (Node::Def(x), Node::Def(y)) = (cg.g[a], cg.g[b])
            && let (Some(&i), Some(&j)) = (index.get(&x), index.get(&y))
            && i != j
        {
            // A name-only match counts a quarter: it may join unrelated code.
            let weight = if w.confidence.is_confident() { 1.0 } else { 0.25 };
            *adj[i].entry(j).or_default() += weight;
            *adj[j].entry(i).or_default() += weight;
        }
    }
    (nodes, adj.into_iter().map(|m| m.into_iter().collect()).collect())
}

/// Louvain-style local moving: each node joins the neighbouring community with the best
/// modularity gain until nothing moves. Returns a community id per node.
pub fn communities(adj: &[Vec<(usize, f64)>]) -> Vec<usize> {
    let n = adj.len();
    let mut comm: Vec<usize> = (0..n).collect();
    let degree: Vec<f64> = adj.iter().map(|v| v.iter().map(|(_, w)| w).sum()).collect();
    let m2: f64 = degree.iter().sum();
    if m2 == 0.0 {
        return comm;
    }
    let mut tot: Vec<f64> = degree.clone();
    for _round in 0..20 {
        let mut moved = false;
        for i in 0..n {
            if adj[i].is_empty() {
                continue;
            }
            let ci = comm[i];
            let mut links: HashMap<usize, f64> = HashMap::new();
            for &(j, w) in &adj[i] {
                *links.entry(comm[j]).or_default() += w;
            }
            tot[ci] -= degree[i];
            let gain = |c: usize, k_in: f64| k_in - tot[c] * degree[i] / m2;
            let mut best = ci;
            let mut best_gain = gain(ci, *links.get(&ci).unwrap_or(&0.0));
            let mut cands: Vec<(&usize, &f64)> = links.iter().collect();
            cands.sort_by_key(|(c, _)| **c);
            for (&c, &k_in) in cands {
                let g = gain(c, k_in);
                if g > best_gain + 1e-12 {
                    best = c;
                    best_gain = g;
                }
            }
            tot[best] += degree[i];
            if best != ci {
                comm[i] = best;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    comm
}

/// Edge betweenness (Brandes) on the structural graph; sampled sources above `sample_above`
/// nodes (scaled up), so large graphs stay fast.
pub fn edge_betweenness(adj: &[Vec<(usize, f64)>], sample_above: usize) -> HashMap<(usize, usize), f64> {
    let n = adj.len();
    let sources: Vec<usize> = if n > sample_above {
        let step = n as f64 / sample_above as f64;
        (0..sample_above).map(|i| (i as f64 * step) as usize).collect()
    } else {
        (0..n).collect()
    };
    let scale = n as f64 / sources.len().max(1) as f64;
    let mut eb: HashMap<(usize, usize), f64> = HashMap::new();
    for &s in &sources {
        let mut stack = Vec::new();
        let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut sigma = vec![0f64; n];
        let mut dist = vec![-1i64; n];
        sigma[s] = 1.0;
        dist[s] = 0;
        let mut q = VecDeque::from([s]);
        while let Some(v) = q.pop_front() {
            stack.push(v);
            for &(w, _) in &adj[v] {
                if dist[w] < 0 {
                    dist[w] = dist[v] + 1;
                    q.push_back(w);
                }
                if dist[w] == dist[v] + 1 {
                    sigma[w] += sigma[v];
                    pred[w].push(v);
                }
            }
        }
        let mut delta = vec![0f64; n];
        while let Some(w) = stack.pop() {
            for &v in &pred[w] {
                let c = sigma[v] / sigma[w] * (1.0 + delta[w]);
                let key = if v < w { (v, w) } else { (w, v) };
                *eb.entry(key).or_default() += c * scale;
                delta[v] += c;
            }
        }
    }
    eb
}

/// Node/edge counts by language, kind, relation and confidence.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct GraphStats {
    pub files: usize,
    pub definitions: usize,
    pub externals: usize,
    pub edges: usize,
    /// Files whose edges come from an imported SCIP index.
    pub precise_files: usize,
    pub by_language: BTreeMap<String, usize>,
    pub by_kind: BTreeMap<String, usize>,
    pub by_relation: BTreeMap<String, usize>,
    pub by_confidence: BTreeMap<String, usize>,
}

pub fn stats(cg: &CodeGraph) -> GraphStats {
    let mut by_language = BTreeMap::new();
    for d in &cg.defs {
        *by_language.entry(cg.files[d.file as usize].lang.name().to_string()).or_default() += 1;
    }
    let mut by_kind = BTreeMap::new();
    for d in &cg.defs {
        *by_kind.entry(d.kind.clone()).or_default() += 1;
    }
    let mut by_relation = BTreeMap::new();
    let mut by_confidence = BTreeMap::new();
    for e in cg.g.edge_weights() {
        *by_relation.entry(e.rel.name().to_string()).or_default() += 1;
        if e.rel != Rel::Contains {
            *by_confidence.entry(e.confidence.name().to_string()).or_default() += 1;
        }
    }
    GraphStats {
        files: cg.files.len(),
        definitions: cg.defs.len(),
        externals: cg.externals.len(),
        edges: cg.g.edge_count(),
        precise_files: cg.precise_files,
        by_language,
        by_kind,
        by_relation,
        by_confidence,
    }
}

/// Degree over confident calls and inheritance (containment, tests and name-only matches
/// excluded: a hub is what code demonstrably depends on).
pub fn structural_degree(cg: &CodeGraph, d: u32) -> usize {
    let n = cg.def_nodes[d as usize];
    cg.g.edges_directed(n, Direction::Incoming)
        .chain(cg.g.edges_directed(n, Direction::Outgoing))
        .filter(|e| {
            (e.weight().rel == Rel::Calls || e.weight().rel.is_inherits()) && e.weight().confidence.is_confident()
        })
        .filter(|e| {
            let other = if e.source() == n { e.target() } else { e.source() };
            !cg.is_test(cg.g[other])
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::nearest_names;

    #[test]
    fn nearest_names_are_typos_first_then_containing_names() {
        let names = ["reconcile_ledger", "Ledger.reconcile", "open_ledger_book", "Ünïcode.grüße", "net::http::Client"];
        let near = |q: &str| nearest_names(names.iter().copied(), q, 3);
        // Two edits from the leaf of a name; a name containing the word comes after.
        assert_eq!(near("reconcle_ledgr"), vec!["reconcile_ledger"]);
        assert_eq!(near("ledger"), vec!["Ledger.reconcile", "open_ledger_book", "reconcile_ledger"]);
        // Qualified with `::` or `.`, case ignored, lengths counted in characters.
        assert_eq!(near("http.Clent"), vec!["net::http::Client"]);
        assert_eq!(near("GRÜSE"), vec!["Ünïcode.grüße"]);
        assert!(near("zzqxv").is_empty());
    }
}
