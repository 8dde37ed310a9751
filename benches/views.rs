//! Views assembled, not rebuilt: what answering at a revision costs once its blobs are indexed.
//!
//!     cargo bench --bench views -- /path/to/repo [--revisions N]
//!
//! Reports, on a throwaway clone:
//! - first search at never-seen (but indexed) revisions, through the CLI (process start
//!   included) and inside `serve`;
//! - extra disk per view;
//! - following history: N revisions (default 80) spread over the whole first-parent history,
//!   `index --rev P` then `search --rev P` at each, in total, beside a full re-index per
//!   revision (cold index of a sample of them in fresh stores, scaled to N);
//! - warm search latency (CLI and MCP);
//! - `serve` memory while it answers every one of the N revisions.
//!
//! Dense retrieval uses LYNX_BENCH_MODEL, else ../shared/models/minilm-static-256 when present,
//! else --no-dense.

mod common;
use common::*;
use serde_json::json;
use std::time::Instant;

const QUERIES: &[&str] =
    &["parse configuration", "http handler", "retry backoff", "error handling", "read file", "close connection"];

fn main() {
    let Some(source) = repo_arg() else {
        eprintln!("usage: cargo bench --bench views -- /path/to/repo [--revisions N]");
        return;
    };
    let args: Vec<String> = std::env::args().collect();
    let n_revs: usize = args
        .iter()
        .position(|a| a == "--revisions")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(80);
    let default_model = format!("{}/../shared/models/minilm-static-256", env!("CARGO_MANIFEST_DIR"));
    let model_path = std::env::var("LYNX_BENCH_MODEL")
        .ok()
        .or_else(|| std::path::Path::new(&default_model).exists().then_some(default_model));
    let model: Vec<&str> = match &model_path {
        Some(m) => vec!["--model", m.as_str()],
        None => vec!["--no-dense"],
    };
    let with = |rest: &[&str]| -> Vec<String> { model.iter().chain(rest.iter()).map(|s| s.to_string()).collect() };
    let run = |dir: &std::path::Path, rest: &[&str]| {
        let a = with(rest);
        lynx(dir, &a.iter().map(String::as_str).collect::<Vec<_>>(), &[])
    };

    let head = git(&source, &["rev-parse", "HEAD"]);
    let all: Vec<String> = git(&source, &["rev-list", "--first-parent", &head]).lines().map(String::from).collect();
    let spread: Vec<String> = (0..n_revs).map(|i| all[(i * (all.len() - 1)) / (n_revs - 1).max(1)].clone()).collect();

    // --- First search at never-seen revisions (blobs indexed first).
    let (_tmp, dir) = clone_at(&source, &head);
    let cold = run(&dir, &["index"]);
    let files = cold.json["files_indexed"].as_u64().unwrap_or(0);
    let objects_head = du(&dir.join(".lynx/objects"));
    let recent: Vec<String> = (1..=10).map(|i| all[(i * 15).min(all.len() - 1)].clone()).collect();
    let mut idx = vec!["index".to_string()];
    for r in &recent {
        idx.push("--rev".into());
        idx.push(r.clone());
    }
    run(&dir, &idx.iter().map(String::as_str).collect::<Vec<_>>());
    let before = du(&dir.join(".lynx"));
    let mut cli_first = Vec::new();
    for (i, r) in recent.iter().enumerate() {
        cli_first.push(run(&dir, &["search", QUERIES[i % QUERIES.len()], "--rev", r]).ms);
    }
    let per_view_bytes = (du(&dir.join(".lynx")) as f64 - before as f64) / recent.len() as f64;
    cli_first.sort_by(|a, b| a.total_cmp(b));
    // Inside serve: the first question at each of those revisions.
    let mut s = Server::start(&dir, &model);
    s.init();
    s.call("search", json!({"query": "warm up"}));
    let mut mcp_first: Vec<f64> = recent
        .iter()
        .enumerate()
        .map(|(i, r)| s.call("search", json!({"query": QUERIES[i % QUERIES.len()], "rev": r})))
        .collect();
    mcp_first.sort_by(|a, b| a.total_cmp(b));
    // Warm latency at HEAD.
    let mut mcp_warm: Vec<f64> =
        (0..40).map(|i| s.call("search", json!({"query": QUERIES[i % QUERIES.len()]}))).collect();
    mcp_warm.sort_by(|a, b| a.total_cmp(b));
    drop(s.stdin);
    let _ = s.child.wait();
    let mut cli_warm: Vec<f64> = (0..20).map(|i| run(&dir, &["search", QUERIES[i % QUERIES.len()]]).ms).collect();
    cli_warm.sort_by(|a, b| a.total_cmp(b));

    // --- Following history in a fresh store.
    let (_tmp2, walk) = clone_at(&source, &head);
    let (mut index_ms, mut search_ms) = (0.0, 0.0);
    let t = Instant::now();
    for (i, p) in spread.iter().enumerate() {
        index_ms += run(&walk, &["index", "--rev", p]).ms;
        search_ms += run(&walk, &["search", QUERIES[i % QUERIES.len()], "--rev", p]).ms;
    }
    let walk_ms = t.elapsed().as_secs_f64() * 1000.0;
    let objects_all = du(&walk.join(".lynx/objects"));
    let cache_all = du(&walk.join(".lynx/cache"));
    // serve memory while answering at every revision of the walk.
    let mut s = Server::start(&walk, &model);
    s.init();
    let pid = s.child.id();
    let mut rss = Vec::new();
    for (i, p) in spread.iter().enumerate() {
        s.call("search", json!({"query": QUERIES[i % QUERIES.len()], "rev": p}));
        if (i + 1) % 10 == 0 || i + 1 == spread.len() {
            let (now, peak) = rss_mb(pid);
            rss.push(json!({"revisions": i + 1, "rss_mb": now, "peak_mb": peak}));
        }
    }
    drop(s.stdin);
    let _ = s.child.wait();
    // A full re-index per revision: cold index of a sample in fresh stores, scaled to N.
    let sample: Vec<&String> = spread.iter().step_by((spread.len() / 5).max(1)).take(5).collect();
    let mut cold_each = Vec::new();
    for p in &sample {
        let (_t, d) = clone_at(&source, p);
        cold_each.push(run(&d, &["index", "--rev", p]).ms);
    }
    let cold_mean = cold_each.iter().sum::<f64>() / cold_each.len() as f64;

    let report = json!({
        "repository": source.display().to_string(),
        "head": head,
        "model": model_path,
        "files_indexed_at_head": files,
        "cold_index_ms": cold.ms,
        "objects_bytes_head": objects_head,
        "first_search_never_seen_revision": {
            "cli_p50_ms": median(&cli_first), "cli_max_ms": cli_first.last(),
            "serve_p50_ms": median(&mcp_first), "serve_max_ms": mcp_first.last(),
            "revisions": recent.len(),
        },
        "extra_disk_per_view_bytes": per_view_bytes,
        "warm_search": {"cli_p50_ms": median(&cli_warm), "cli_p95_ms": percentile(&cli_warm, 0.95), "serve_p50_ms": median(&mcp_warm), "serve_p95_ms": percentile(&mcp_warm, 0.95)},
        "following_history": {
            "revisions": spread.len(),
            "total_ms": walk_ms,
            "index_ms": index_ms,
            "search_ms": search_ms,
            "objects_bytes": objects_all,
            "cache_bytes": cache_all,
            "full_reindex_per_revision_ms_estimated": cold_mean * spread.len() as f64,
            "full_reindex_sample_ms": cold_each,
        },
        "serve_memory": rss,
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
