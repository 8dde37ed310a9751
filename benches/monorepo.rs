//! Indexing and answering at monorepo scale: the synthetic monorepo of `scripts/monorepo.sh`
//! (twenty public repositories side by side, ~88,000 files), through the CLI process.
//!
//!     scripts/monorepo.sh /tmp/mono && cargo bench --bench monorepo -- /tmp/mono/repo
//!
//! Reports, on a fresh store each: a cold `index --rev HEAD` with static vectors (the model of
//! LYNX_BENCH_MODEL, else ../shared/models/minilm-static-256) and without (`--no-dense`), wall
//! time and peak memory; the first search after it, warm CLI searches (process start to answer)
//! and searches inside one `serve`, p50 / p95.

mod common;
use common::*;
use std::time::Instant;

const QUERIES: &[&str] = &[
    "parse configuration file",
    "retry with exponential backoff",
    "http request timeout",
    "database migration",
    "authentication token validation",
    "write ahead log",
    "command line argument parsing",
    "json serialization of errors",
    "connection pool",
    "template rendering",
];

/// Peak resident memory (MB) of the largest child waited for so far.
fn children_peak_mb() -> f64 {
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut r) };
    r.ru_maxrss as f64 / 1024.0
}

fn main() {
    let Some(source) = repo_arg() else {
        eprintln!("usage: cargo bench --bench monorepo -- /path/to/monorepo   (made by scripts/monorepo.sh)");
        return;
    };
    let head = git(&source, &["rev-parse", "HEAD"]);
    let files = git(&source, &["ls-tree", "-r", "--name-only", "HEAD"]).lines().count();
    let model = std::env::var("LYNX_BENCH_MODEL")
        .unwrap_or_else(|_| format!("{}/../shared/models/minilm-static-256", env!("CARGO_MANIFEST_DIR")));
    println!("monorepo {} at {}: {files} files; static model {model}", source.display(), &head[..12]);
    for (label, flags) in
        [("--no-dense", vec!["--no-dense".to_string()]), ("static vectors", vec!["--model".to_string(), model.clone()])]
    {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        // A fresh store over the same objects, no checkout: every answer is at `--rev HEAD`.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        git(tmp.path(), &["clone", "-q", "--shared", "--no-checkout", source.to_str().unwrap(), dir.to_str().unwrap()]);
        let before = children_peak_mb();
        let args: Vec<&str> = flags.iter().copied().chain(["index", "--rev", "HEAD"]).collect();
        let index = lynx(&dir, &args, &[]);
        let peak = children_peak_mb();
        println!(
            "[{label}] cold index --rev HEAD: {:.1} s wall, peak {:.0} MB{} — {} files indexed, {} chunks, {} embedded",
            index.ms / 1000.0,
            peak,
            if peak <= before { " (or less: an earlier run peaked higher)" } else { "" },
            index.json["files_indexed"],
            index.json["chunks_written"],
            index.json["chunks_embedded"],
        );
        let search = |q: &str| -> f64 {
            let args: Vec<&str> = flags.iter().copied().chain(["search", q, "--rev", "HEAD"]).collect();
            lynx(&dir, &args, &[]).ms
        };
        println!("[{label}] first search after index: {:.0} ms", search(QUERIES[0]));
        let mut warm: Vec<f64> = QUERIES.iter().chain(QUERIES).map(|q| search(q)).collect();
        warm.sort_by(f64::total_cmp);
        println!(
            "[{label}] warm CLI search: p50 {:.0} ms, p95 {:.0} ms",
            percentile(&warm, 0.5),
            percentile(&warm, 0.95)
        );
        let mut server = Server::start(&dir, &flags);
        server.init();
        let t = Instant::now();
        let first = server.call("search", serde_json::json!({"query": QUERIES[1], "rev": "HEAD"}));
        let mut in_serve: Vec<f64> = QUERIES
            .iter()
            .chain(QUERIES)
            .map(|q| server.call("search", serde_json::json!({"query": q, "rev": "HEAD"})))
            .collect();
        in_serve.sort_by(f64::total_cmp);
        println!(
            "[{label}] serve: first search {:.0} ms ({:.1} s after start), then p50 {:.1} ms, p95 {:.1} ms",
            first,
            t.elapsed().as_secs_f64(),
            percentile(&in_serve, 0.5),
            percentile(&in_serve, 0.95)
        );
        let (_, serve_peak) = rss_mb(server.child.id());
        println!("[{label}] serve peak memory {serve_peak:.0} MB; store {:.0} MB", du(&dir.join(".lynx")) as f64 / 1e6);
        let _ = server.child.kill();
        let _ = server.child.wait();
    }
}
