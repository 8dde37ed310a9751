//! Code graph speed on a real repository, in process (the MCP server's warm path) and through
//! the CLI.
//!
//!     cargo bench --bench graph -- /path/to/repo
//!
//! Reports the cost of graph-fact extraction on cold indexing (chunks + lexical alone vs with
//! facts), graph build time, and warm callers / impact / overview latency.

mod common;
use common::*;
use lynx_core::engine::{Engine, ModelChoice};
use lynx_core::graph::model::{Node, Rel};
use lynx_core::graph::query;
use lynx_core::progress::Progress;
use lynx_core::view::{View, ViewSpec};
use std::time::Instant;

fn main() {
    let Some(source) = repo_arg() else {
        eprintln!("usage: cargo bench --bench graph -- /path/to/repo");
        return;
    };
    let head = git(&source, &["rev-parse", "HEAD"]);
    let (_tmp, dir) = clone_at(&source, &head);

    // Extraction overhead: the same files chunked and analysed, with and without graph facts.
    let files: Vec<String> = git(&dir, &["ls-files"]).lines().map(String::from).collect();
    let contents: Vec<(String, Vec<u8>)> = files
        .iter()
        .filter_map(|f| std::fs::read(dir.join(f)).ok().map(|b| (f.clone(), b)))
        .filter(|(_, b)| b.len() <= 1 << 20 && lynx_core::repo::content_skip(b).is_none())
        .collect();
    use rayon::prelude::*;
    let t = Instant::now();
    contents.par_iter().for_each(|(p, b)| {
        let lang = lynx_core::lang::detect(p, b);
        for c in lynx_core::chunk::chunk(lang, &String::from_utf8_lossy(b)) {
            std::hint::black_box(lynx_core::layer::lexical::ChunkTerms::analyse(&c.text, &c.symbol));
        }
    });
    let without = t.elapsed().as_secs_f64();
    let t = Instant::now();
    contents.par_iter().for_each(|(p, b)| {
        let key = lynx_core::store::Key::blob(&[0; 20], lynx_core::repo::lang_hint(p));
        std::hint::black_box(lynx_core::index::process::process(key, p, b));
    });
    let with = t.elapsed().as_secs_f64();

    // Index, then build the graph cold (three times) and query it warm.
    lynx(&dir, &["--no-dense", "index"], &[]);
    let ws = lynx_core::workspace::Workspace::open(&dir).unwrap();
    let model = ModelChoice::from(None, true, &ws.config, false, None);
    let engine = Engine::new(ws, Progress::hidden(), model);
    let view = View::open(&engine.ws, &ViewSpec::Worktree).unwrap();
    let data = engine.open_listed(&view).unwrap().data;
    let mut builds = Vec::new();
    let mut g = None;
    for _ in 0..3 {
        engine.forget_views();
        let t = Instant::now();
        g = Some(engine.graph(&view, &data).unwrap());
        builds.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let g = g.unwrap();
    builds.sort_by(|a, b| a.total_cmp(b));
    // Definitions with callers, spread over the graph.
    let targets: Vec<u32> = (0..g.defs.len() as u32)
        .filter(|&d| {
            g.g.edges_directed(g.def_nodes[d as usize], petgraph::Direction::Incoming)
                .any(|e| e.weight().rel == Rel::Calls)
        })
        .step_by(7)
        .take(200)
        .collect();
    let time = |f: &dyn Fn(u32)| -> (f64, f64) {
        let mut v: Vec<f64> = targets
            .iter()
            .map(|&d| {
                let t = Instant::now();
                f(d);
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        v.sort_by(|a, b| a.total_cmp(b));
        (percentile(&v, 0.5), percentile(&v, 0.95))
    };
    let (callers50, callers95) = time(&|d| {
        let name = g.defs[d as usize].qualified.clone();
        let (defs, _) = query::match_symbol(&g, &name);
        let starts: Vec<Node> = defs.into_iter().map(Node::Def).collect();
        std::hint::black_box(query::adjacent(&g, &starts, &[Rel::Calls], petgraph::Direction::Incoming));
    });
    let (impact50, impact95) = time(&|d| {
        std::hint::black_box(query::bfs(
            &g,
            &[Node::Def(d)],
            &[Rel::Calls, Rel::Extends, Rel::Implements, Rel::ExtendsOrImplements],
            Some(petgraph::Direction::Incoming),
            3,
            query::MAX_NODES,
        ));
    });
    let t = Instant::now();
    let args = lynx_ops::ops::graph::GraphArgs {
        k: Some(lynx_ops::ops::args::Count(20)),
        ..lynx_ops::ops::graph::GraphArgs::of(lynx_ops::ops::graph::GraphOp::Overview)
    };
    lynx_ops::ops::graph::run(&engine, &args).unwrap();
    let overview_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    let args =
        lynx_ops::ops::graph::GraphArgs { op: Some(lynx_ops::ops::graph::GraphOp::SurprisingConnections), ..args };
    lynx_ops::ops::graph::run(&engine, &args).unwrap();
    let surprising_ms = t.elapsed().as_secs_f64() * 1000.0;
    // Through the CLI (process start, graph build, answer).
    let name = g.defs[targets[0] as usize].qualified.clone();
    let mut cli = Vec::new();
    for _ in 0..5 {
        cli.push(lynx(&dir, &["--no-dense", "graph", "query", "--op", "callers", "--symbol", &name], &[]).ms);
    }
    cli.sort_by(|a, b| a.total_cmp(b));
    let report = serde_json::json!({
        "repository": source.display().to_string(),
        "files": contents.len(),
        "definitions": g.defs.len(),
        "edges": g.g.edge_count(),
        "extraction": {"chunks_lexical_s": without, "with_graph_facts_s": with, "overhead": with / without - 1.0},
        "graph_build_ms": {"min": builds[0], "max": builds[2]},
        "warm_in_process": {"callers_p50_ms": callers50, "callers_p95_ms": callers95, "impact_depth3_p50_ms": impact50, "impact_depth3_p95_ms": impact95, "overview_ms": overview_ms, "surprising_connections_ms": surprising_ms},
        "cli_callers_ms_p50": percentile(&cli, 0.5),
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
