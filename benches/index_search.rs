//! Indexing and search on a real repository, through the CLI process.
//!
//!     cargo bench --bench index_search -- /path/to/repo [REV]
//!
//! (or LYNX_BENCH_REPO=...; scripts/bench-repos.sh fetches the pinned repositories). Reports
//! cold index time and files/s, a second revision with ~1% changed blobs, warm CLI search
//! latency p50/p95, and on-disk size. Dense vectors are off unless LYNX_BENCH_MODEL names a
//! model (then embedding is reported separately).

mod common;
use common::*;

const QUERIES: &[&str] = &[
    "parse configuration file",
    "http handler",
    "retry with backoff",
    "compaction of blocks",
    "query engine evaluation",
    "remote write queue",
    "label matcher regex",
    "tsdb head append",
    "scrape target discovery",
    "alerting rules evaluation",
    "error when file not found",
    "time series chunk encoding",
    "websocket connection",
    "metrics registry",
    "storage interface",
];

fn main() {
    let Some(source) = repo_arg() else {
        eprintln!("usage: cargo bench --bench index_search -- /path/to/repo [REV]   (see scripts/bench-repos.sh)");
        return;
    };
    let rev = std::env::args().skip(1).filter(|a| !a.starts_with('-')).nth(1).unwrap_or_else(|| "HEAD".into());
    let head = git(&source, &["rev-parse", &rev]);
    let (_tmp, dir) = clone_at(&source, &head);
    let files: usize = git(&dir, &["ls-files"]).lines().count();
    let model = std::env::var("LYNX_BENCH_MODEL").ok();
    let dense: Vec<&str> = match &model {
        Some(m) => vec!["--model", m.as_str()],
        None => vec!["--no-dense"],
    };

    // Cold, chunks and lexical data only (the graph layer off), then everything from nothing;
    // each the median of three runs (a shared machine's noise is ±20% on one run).
    let cold_runs = |graph: bool| -> Vec<Run> {
        let mut runs: Vec<Run> = (0..3)
            .map(|_| {
                let _ = std::fs::remove_dir_all(dir.join(".lynx"));
                if !graph {
                    std::fs::create_dir_all(dir.join(".lynx")).unwrap();
                    std::fs::write(dir.join(".lynx/config.toml"), "[index]\ngraph = false\n").unwrap();
                }
                let mut args = dense.clone();
                args.extend(["index", "--rev", head.as_str()]);
                lynx(&dir, &args, &[])
            })
            .collect();
        runs.sort_by(|a, b| {
            a.json["seconds"]["total"].as_f64().unwrap().total_cmp(&b.json["seconds"]["total"].as_f64().unwrap())
        });
        runs
    };
    let no_graph_runs = cold_runs(false);
    let no_graph_s = no_graph_runs[1].json["seconds"]["total"].as_f64().unwrap();
    let mut cold_all = cold_runs(true);
    let cold = cold_all.remove(1);
    let secs = &cold.json["seconds"];
    let chunk_secs = secs["total"].as_f64().unwrap() - secs["embed"].as_f64().unwrap_or(0.0);
    let indexed = cold.json["files_indexed"].as_u64().unwrap();

    // A second revision with about 1% of blobs changed, sampled at several points of history
    // (changed files differ a lot in size, so one sample says little): each sample indexes a
    // base revision into a fresh store, then its nearest ancestor with >= 1% changed files.
    let target = (files as f64 * 0.01).round().max(1.0) as usize;
    let mut samples = Vec::new();
    for i in 0..10 {
        let base = format!("{head}~{}", i * 30);
        let Ok(base_id) = std::panic::catch_unwind(|| git(&dir, &["rev-parse", &base])) else { break };
        let mut second = None;
        for n in 1..200 {
            let cand = format!("{base_id}~{n}");
            let Ok(changed) =
                std::panic::catch_unwind(|| git(&dir, &["diff", "--name-only", &base_id, &cand]).lines().count())
            else {
                break;
            };
            if changed >= target {
                second = Some((cand, changed));
                break;
            }
        }
        let Some((cand, changed)) = second else { continue };
        let mut sample = base_then_second(&dir, &dense, &base_id, &cand);
        sample["base"] = base_id.into();
        sample["changed_files"] = changed.into();
        samples.push(sample);
    }
    let ratios = sorted_ratios(&samples);

    // The same with exactly 1% of the indexable files, drawn uniformly (seeded), each edited by
    // one appended line in a new commit on top of the head: what a change of "1% of the blobs"
    // costs when the files are of typical size (history samples are biased to large files).
    let mut uniform = Vec::new();
    for seed in 1..=5u64 {
        let edited = commit_edits(&dir, &head, target, seed);
        let mut sample = base_then_second(&dir, &dense, &head, &edited);
        sample["seed"] = seed.into();
        sample["changed_files"] = target.into();
        uniform.push(sample);
    }
    let uniform_ratios = sorted_ratios(&uniform);
    // Restore the head revision's objects for the search measurements.
    let _ = std::fs::remove_dir_all(dir.join(".lynx"));
    let mut args = dense.clone();
    args.extend(["index", "--rev", head.as_str()]);
    lynx(&dir, &args, &[]);

    // Warm CLI search latency (one untimed run builds the view cache).
    let mut args = dense.clone();
    args.extend(["search", "warm up", "--rev", head.as_str()]);
    let first_search = lynx(&dir, &args, &[]);
    let mut times = Vec::new();
    for round in 0..3 {
        for q in QUERIES {
            let mut args = dense.clone();
            args.extend(["search", q, "--rev", head.as_str(), "-k", "10"]);
            let r = lynx(&dir, &args, &[]);
            if round > 0 || times.len() >= QUERIES.len() / 2 {
                times.push(r.ms);
            }
        }
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let objects = du(&dir.join(".lynx/objects"));
    let cache = du(&dir.join(".lynx/cache"));

    let report = serde_json::json!({
        "repository": source.display().to_string(),
        "revision": head,
        "tracked_files": files,
        "files_indexed": indexed,
        "cold_index_ms_wall": cold.ms,
        "cold_runs_total_s": [cold_all[0].json["seconds"]["total"], secs["total"], cold_all[1].json["seconds"]["total"]],
        "cold_chunks_lexical_s": chunk_secs,
        "cold_files_per_s": indexed as f64 / chunk_secs,
        "cold_chunks_lexical_only_s": no_graph_s,
        "cold_chunks_lexical_only_files_per_s": indexed as f64 / no_graph_s,
        "graph_facts_overhead": chunk_secs / no_graph_s - 1.0,
        "cold_phases_s": secs,
        "chunks": cold.json["chunks_written"],
        "embedded": cold.json["chunks_embedded"],
        "embed_s": secs["embed"],
        "one_percent_samples": samples,
        "one_percent_ratio_median": median(&ratios),
        "one_percent_ratio_max": ratios.last(),
        "uniform_one_percent_samples": uniform,
        "uniform_one_percent_ratio_median": median(&uniform_ratios),
        "uniform_one_percent_ratio_max": uniform_ratios.last(),
        "first_search_ms_including_view_build": first_search.ms,
        "search_p50_ms": percentile(&times, 0.5),
        "search_p95_ms": percentile(&times, 0.95),
        "search_runs": times.len(),
        "objects_bytes": objects,
        "view_cache_bytes": cache,
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}

/// Indexes `base` into a fresh store, then `second` on top of it; the second's cost against
/// the cold one.
fn base_then_second(dir: &std::path::Path, dense: &[&str], base: &str, second: &str) -> serde_json::Value {
    let _ = std::fs::remove_dir_all(dir.join(".lynx"));
    let index = |rev: &str| {
        let mut args = dense.to_vec();
        args.extend(["index", "--rev", rev]);
        lynx(dir, &args, &[])
    };
    let b = index(base);
    let c = index(second);
    serde_json::json!({
        "second": second, "blobs_new": c.json["blobs_new"], "cold_ms": b.ms, "second_ms": c.ms, "ratio": c.ms / b.ms,
    })
}

fn sorted_ratios(samples: &[serde_json::Value]) -> Vec<f64> {
    let mut r: Vec<f64> = samples.iter().map(|s| s["ratio"].as_f64().unwrap()).collect();
    r.sort_by(|a, b| a.total_cmp(b));
    r
}

/// A commit on top of `base` that appends a line to `n` files drawn uniformly from its
/// indexable blobs (xorshift, `seed`). Plumbing only: the checkout may be incomplete.
fn commit_edits(dir: &std::path::Path, base: &str, n: usize, seed: u64) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let listing = git(dir, &["ls-tree", "-r", "-l", base]);
    let candidates: Vec<(&str, &str)> = listing
        .lines()
        .filter_map(|l| {
            let (meta, path) = l.split_once('\t')?;
            let f: Vec<&str> = meta.split_whitespace().collect();
            let size: u64 = f.get(3)?.parse().ok()?;
            (f[1] == "blob" && (1..1 << 20).contains(&size)).then_some((f[0], path))
        })
        .collect();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let index = dir.join(format!(".git/lynx-bench-index-{seed}"));
    let env = [("GIT_INDEX_FILE", index.to_str().unwrap())];
    let run = |args: &[&str], input: Option<&[u8]>| -> String {
        let mut c = Command::new("git");
        c.args(args).current_dir(dir).envs(env).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        if let Some(i) = input {
            child.stdin.take().unwrap().write_all(i).unwrap();
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    run(&["read-tree", base], None);
    let mut chosen = std::collections::BTreeSet::new();
    let mut draws = 0;
    while chosen.len() < n.min(candidates.len()) && draws < 100 * n {
        draws += 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (mode, path) = candidates[(x % candidates.len() as u64) as usize];
        if chosen.contains(path) {
            continue;
        }
        // Blobs absent from a partial snapshot are drawn again.
        let read = Command::new("git")
            .args(["cat-file", "blob", &format!("{base}:{path}")])
            .current_dir(dir)
            .output()
            .unwrap();
        if !read.status.success() {
            continue;
        }
        let mut content = read.stdout;
        content.extend_from_slice(b"\nedited for the benchmark\n");
        let blob = run(&["hash-object", "-w", "--stdin"], Some(&content));
        run(&["update-index", "--cacheinfo", &format!("{mode},{blob},{path}")], None);
        chosen.insert(path);
    }
    let tree = run(&["write-tree", "--missing-ok"], None);
    let commit = run(
        &[
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
            "commit-tree",
            &tree,
            "-p",
            base,
            "-m",
            "bench edit",
        ],
        None,
    );
    let _ = std::fs::remove_file(&index);
    commit
}
