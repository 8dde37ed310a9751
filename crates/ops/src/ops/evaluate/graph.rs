//! `evaluate graph TRUTH.json`: the code graph's precision and recall against hand-checked
//! edges (docs/eval/graph/). A truth file names focus symbols, classes and files of one
//! repository at one commit and lists every project-internal call edge into and out of each
//! focus symbol, the direct bases and subclasses of each focus class and the imports of each
//! focus file; the graph's edges touching the same focus are compared with them. Precision is
//! reported per confidence level, because a wrong edge labelled `extracted` or `resolved`
//! misleads more than a wrong `inferred` one.

use crate::engine::Engine;
use crate::graph::model::{CodeGraph, Confidence, Node, Rel};
use anyhow::{Context, Result};
use petgraph::Direction;
use petgraph::visit::EdgeRef;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

#[derive(Debug, Deserialize)]
pub struct Truth {
    pub repo: String,
    pub commit: String,
    #[serde(default)]
    pub language: String,
    #[serde(default)]
    pub focus_symbols: Vec<String>,
    #[serde(default)]
    pub focus_classes: Vec<String>,
    #[serde(default)]
    pub focus_files: Vec<String>,
    #[serde(default)]
    pub calls: Vec<TruthEdge>,
    #[serde(default)]
    pub inherits: Vec<TruthEdge>,
    #[serde(default)]
    pub imports: Vec<TruthEdge>,
    #[serde(default)]
    pub not_edges: Vec<TruthEdge>,
    /// Definitions whose every incoming reference (a use as a value, not a call) is listed in
    /// `references`.
    #[serde(default)]
    pub focus_referenced: Vec<String>,
    #[serde(default)]
    pub references: Vec<TruthEdge>,
}

#[derive(Debug, Deserialize)]
pub struct TruthEdge {
    pub from: String,
    pub to: String,
}

pub fn load(path: &Path) -> Result<Truth> {
    super::load_truth(path, "graph")
}

/// One kind's comparison.
#[derive(Debug, Default, Serialize)]
pub struct KindScore {
    pub truth: usize,
    pub found: usize,
    pub correct: usize,
    pub precision: f64,
    pub recall: f64,
    /// Precision of the edges of each confidence level: (correct, found).
    pub by_confidence: BTreeMap<String, (usize, usize)>,
    /// Found edges the truth file marks as traps (`not_edges`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub traps_hit: Vec<String>,
    /// Found edges not in the truth, and true edges not found (for error analysis).
    pub wrong: Vec<String>,
    pub missed: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct GraphReport {
    pub repo: String,
    pub commit: String,
    pub language: String,
    /// Focus names the graph has no definition for.
    pub unknown_focus: Vec<String>,
    pub calls: KindScore,
    pub inherits: KindScore,
    pub imports: KindScore,
    /// References into `focus_referenced` (absent when the truth file lists none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub references: Option<KindScore>,
    /// Precision of the edges labelled extracted or resolved, over all kinds.
    pub confident_precision: f64,
}

/// `path:qualified` of a definition, `path` of a file.
fn key(cg: &CodeGraph, n: Node) -> Option<String> {
    match n {
        Node::Def(d) => Some(format!("{}:{}", cg.def_path(d), cg.defs[d as usize].qualified)),
        Node::File(f) => Some(cg.files[f as usize].path.clone()),
        Node::External(_) => None,
    }
}

/// The definitions a `path:qualified` name stands for (overloads share one name).
fn defs_of(cg: &CodeGraph, name: &str) -> Vec<u32> {
    let Some((path, q)) = name.split_once(':') else { return Vec::new() };
    cg.by_qualified.get(q).map(|v| v.iter().copied().filter(|&d| cg.def_path(d) == path).collect()).unwrap_or_default()
}

/// The graph's edges of `rels` into and out of `nodes`, keyed `from → to`, with the best
/// confidence among parallel edges. Calls of a class (constructor calls) are left out: truth
/// files differ on whether `new X()` is a call, so neither side scores them.
fn edges_around(
    cg: &CodeGraph,
    nodes: &[Node],
    rels: &[Rel],
    only: Option<Direction>,
) -> HashMap<(String, String), Confidence> {
    let rank = |c: Confidence| c.rank();
    let mut out: HashMap<(String, String), Confidence> = HashMap::new();
    for &n in nodes {
        let dirs: &[Direction] = match only {
            Some(Direction::Outgoing) => &[Direction::Outgoing],
            Some(Direction::Incoming) => &[Direction::Incoming],
            None => &[Direction::Outgoing, Direction::Incoming],
        };
        for &dir in dirs {
            for e in cg.g.edges_directed(cg.node_of(n), dir) {
                if !rels.contains(&e.weight().rel) {
                    continue;
                }
                let (a, b) = (cg.g[e.source()], cg.g[e.target()]);
                if e.weight().rel == Rel::Calls
                    && matches!(b, Node::Def(d) if crate::chunk::defs::type_kind(&cg.defs[d as usize].kind))
                {
                    continue;
                }
                let (Some(ka), Some(kb)) = (key(cg, a), key(cg, b)) else { continue };
                let c = e.weight().confidence;
                out.entry((ka, kb))
                    .and_modify(|old| {
                        if rank(c) < rank(*old) {
                            *old = c
                        }
                    })
                    .or_insert(c);
            }
        }
    }
    out
}

/// A call of a constructor is a call of its class (`new X()`, `X()`, `X.new`): one name for both,
/// however a truth file or a language writes it.
fn class_of_constructor(name: &str) -> String {
    for suffix in [".__init__", ".__construct", ".constructor", ".initialize", ".new"] {
        if let Some(class) = name.strip_suffix(suffix) {
            return class.to_string();
        }
    }
    name.to_string()
}

fn score(
    found: HashMap<(String, String), Confidence>,
    truth: &BTreeSet<(String, String)>,
    traps: &BTreeSet<(String, String)>,
) -> KindScore {
    let norm = |(a, b): &(String, String)| (a.clone(), class_of_constructor(b));
    let truth: BTreeSet<(String, String)> = truth.iter().map(norm).collect();
    let traps: BTreeSet<(String, String)> = traps.iter().map(norm).collect();
    // A truth file that lists no recursion does not judge it: a function's edge to itself
    // counts only where the file says whether it recurses.
    let judges_recursion = truth.iter().any(|(a, b)| a == b);
    let mut merged: HashMap<(String, String), Confidence> = HashMap::new();
    for (e, c) in found {
        if e.0 == e.1 && !judges_recursion {
            continue;
        }
        merged.entry(norm(&e)).or_insert(c);
    }
    let (truth, traps, found) = (&truth, &traps, merged);
    let mut s = KindScore { truth: truth.len(), found: found.len(), ..Default::default() };
    let mut found: Vec<((String, String), Confidence)> = found.into_iter().collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    for (edge, c) in &found {
        let ok = truth.contains(edge);
        let slot = s.by_confidence.entry(c.name().to_string()).or_default();
        slot.1 += 1;
        if ok {
            slot.0 += 1;
            s.correct += 1;
        } else {
            s.wrong.push(format!("{} -> {} [{}]", edge.0, edge.1, c.name()));
        }
        if traps.contains(edge) {
            s.traps_hit.push(format!("{} -> {} [{}]", edge.0, edge.1, c.name()));
        }
    }
    let found_set: BTreeSet<&(String, String)> = found.iter().map(|(e, _)| e).collect();
    s.missed = truth.iter().filter(|e| !found_set.contains(e)).map(|e| format!("{} -> {}", e.0, e.1)).collect();
    s.precision = if s.found == 0 { 1.0 } else { s.correct as f64 / s.found as f64 };
    s.recall = if s.truth == 0 { 1.0 } else { (s.truth - s.missed.len()) as f64 / s.truth as f64 };
    s
}

pub fn run(engine: &Engine, t: &Truth, rev: Option<&str>) -> Result<GraphReport> {
    let rev = rev.unwrap_or(&t.commit);
    let view = engine.view(&engine.spec(Some(rev))).with_context(|| format!("opening {} at {rev}", t.repo))?;
    let data = engine.open_listed(&view)?.data;
    let cg = engine.graph(&view, &data)?;
    let mut unknown = Vec::new();
    let mut resolve = |names: &[String]| -> Vec<Node> {
        let mut out = Vec::new();
        for n in names {
            let ds = defs_of(&cg, n);
            if ds.is_empty() {
                unknown.push(n.clone());
            }
            out.extend(ds.into_iter().map(Node::Def));
        }
        out
    };
    let symbols = resolve(&t.focus_symbols);
    let classes = resolve(&t.focus_classes);
    let referenced = resolve(&t.focus_referenced);
    let files: Vec<Node> = t
        .focus_files
        .iter()
        .filter_map(|p| match cg.by_path.get(p) {
            Some(&f) => Some(Node::File(f)),
            None => {
                unknown.push(p.clone());
                None
            }
        })
        .collect();
    let pairs = |edges: &[TruthEdge]| -> BTreeSet<(String, String)> {
        edges.iter().map(|e| (e.from.clone(), e.to.clone())).collect()
    };
    let traps = pairs(&t.not_edges);
    // Truth call edges to a class (a constructor) are left out, as the graph's are.
    let is_class = |name: &str| {
        let name = class_of_constructor(name);
        defs_of(&cg, &name).iter().any(|&d| crate::chunk::defs::type_kind(&cg.defs[d as usize].kind))
    };
    let true_calls: BTreeSet<(String, String)> = pairs(&t.calls).into_iter().filter(|(_, to)| !is_class(to)).collect();
    let calls = score(edges_around(&cg, &symbols, &[Rel::Calls], None), &true_calls, &traps);
    let inherits = score(
        edges_around(&cg, &classes, &[Rel::Extends, Rel::Implements, Rel::ExtendsOrImplements], None),
        &pairs(&t.inherits),
        &traps,
    );
    let imports =
        score(edges_around(&cg, &files, &[Rel::Imports], Some(Direction::Outgoing)), &pairs(&t.imports), &traps);
    let references = (!t.focus_referenced.is_empty()).then(|| {
        score(
            edges_around(&cg, &referenced, &[Rel::References], Some(Direction::Incoming)),
            &pairs(&t.references),
            &traps,
        )
    });
    let (mut ok, mut all) = (0, 0);
    for k in [&calls, &inherits, &imports].into_iter().chain(references.as_ref()) {
        for c in ["precise", "extracted", "resolved"] {
            if let Some((a, b)) = k.by_confidence.get(c) {
                ok += a;
                all += b;
            }
        }
    }
    Ok(GraphReport {
        repo: t.repo.clone(),
        commit: t.commit.clone(),
        language: t.language.clone(),
        unknown_focus: unknown,
        calls,
        inherits,
        imports,
        references,
        confident_precision: if all == 0 { 1.0 } else { ok as f64 / all as f64 },
    })
}

pub fn render(r: &GraphReport, details: bool) -> String {
    let mut out = format!("{} ({}) at {}\n", r.repo, r.language, &r.commit[..12.min(r.commit.len())]);
    out.push_str("kind       truth  found  correct  precision  recall  by confidence (correct/found)\n");
    let kinds: Vec<(&str, &KindScore)> = [("calls", &r.calls), ("inherits", &r.inherits), ("imports", &r.imports)]
        .into_iter()
        .chain(r.references.as_ref().map(|k| ("references", k)))
        .collect();
    for &(name, k) in &kinds {
        let conf: Vec<String> = k.by_confidence.iter().map(|(c, (a, b))| format!("{c} {a}/{b}")).collect();
        out.push_str(&format!(
            "{name:<10} {:>5}  {:>5}  {:>7}  {:>9.3}  {:>6.3}  {}\n",
            k.truth,
            k.found,
            k.correct,
            k.precision,
            k.recall,
            conf.join(", ")
        ));
    }
    out.push_str(&format!(
        "precision of confident edges (precise, extracted, resolved): {:.3}\n",
        r.confident_precision
    ));
    if !r.unknown_focus.is_empty() {
        out.push_str(&format!("focus names with no definition in the graph: {}\n", r.unknown_focus.join(", ")));
    }
    for &(name, k) in &kinds {
        for t in &k.traps_hit {
            out.push_str(&format!("trap hit ({name}): {t}\n"));
        }
        if details {
            for w in &k.wrong {
                out.push_str(&format!("wrong ({name}): {w}\n"));
            }
            for m in &k.missed {
                out.push_str(&format!("missed ({name}): {m}\n"));
            }
        }
    }
    out
}

results!(GraphReport);
