//! The MCP server on a real repository, through stdio like an agent: time from process start
//! to the first answered search (already indexed), then warm tool-call latency.
//!
//!     cargo bench --bench mcp -- /path/to/repo
//!
//! Dense retrieval uses LYNX_BENCH_MODEL when set (query embedding time is part of search
//! then, and reported apart with --no-dense for comparison).

mod common;
use common::*;
use serde_json::{Value, json};
use std::time::Instant;

const QUERIES: &[&str] = &[
    "parse configuration",
    "http handler",
    "retry backoff",
    "compaction",
    "query evaluation",
    "remote write",
    "label matcher",
    "head append",
    "target discovery",
    "rule evaluation",
];

fn main() {
    let Some(source) = repo_arg() else {
        eprintln!("usage: cargo bench --bench mcp -- /path/to/repo");
        return;
    };
    let head = git(&source, &["rev-parse", "HEAD"]);
    let (_tmp, dir) = clone_at(&source, &head);
    let model_env = std::env::var("LYNX_BENCH_MODEL").ok();
    let model: Vec<&str> = match &model_env {
        Some(m) => vec!["--model", m.as_str()],
        None => vec!["--no-dense"],
    };
    let mut index_args = model.clone();
    index_args.push("index");
    lynx(&dir, &index_args, &[]);
    // One server run warms the view cache on disk, as a previous session would have.
    {
        let mut s = Server::start(&dir, &model);
        s.init();
        s.call("search", json!({"query": "warm up"}));
        drop(s.stdin);
        let _ = s.child.wait();
    }
    // Process start → first answered search.
    let mut firsts = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let mut s = Server::start(&dir, &model);
        s.init();
        s.call("search", json!({"query": "scrape target"}));
        firsts.push(t.elapsed().as_secs_f64() * 1000.0);
        drop(s.stdin);
        let _ = s.child.wait();
    }
    firsts.sort_by(|a, b| a.total_cmp(b));
    // Warm latency (after the graph, the dense matrix and the file watcher are up).
    let mut s = Server::start(&dir, &model);
    s.init();
    s.call("search", json!({"query": "warm"}));
    s.call("find_usages", json!({"symbol": "main"}));
    std::thread::sleep(std::time::Duration::from_secs(2));
    let lat = |tool: &str, args: &dyn Fn(usize) -> Value, s: &mut Server| {
        let mut v: Vec<f64> = (0..40).map(|i| s.call(tool, args(i))).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        json!({"p50_ms": percentile(&v, 0.5), "p95_ms": percentile(&v, 0.95)})
    };
    let search = lat("search", &|i| json!({"query": QUERIES[i % QUERIES.len()]}), &mut s);
    let search_sparse = lat("search", &|i| json!({"query": QUERIES[i % QUERIES.len()], "mode": "sparse"}), &mut s);
    let symbols = ["main", "Append", "Query", "Close", "String", "New", "Run", "Get"];
    let usages = lat("find_usages", &|i| json!({"symbol": symbols[i % symbols.len()]}), &mut s);
    let impact = lat("impact", &|i| json!({"symbol": symbols[i % symbols.len()]}), &mut s);
    drop(s.stdin);
    let _ = s.child.wait();
    let report = json!({
        "repository": source.display().to_string(),
        "model": model_env,
        "start_to_first_search_ms": {"p50": percentile(&firsts, 0.5), "max": firsts.last()},
        "warm": {"search": search, "search_sparse": search_sparse, "find_usages": usages, "impact": impact},
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
