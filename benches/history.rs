//! History: indexing 50 consecutive revisions after a cold first one, storage growth, and
//! the pre-commit report time on a small staged change.
//!
//!     cargo bench --bench history -- /path/to/repo [REV]

mod common;
use common::*;

fn main() {
    let Some(source) = repo_arg() else {
        eprintln!("usage: cargo bench --bench history -- /path/to/repo [REV]");
        return;
    };
    let rev = std::env::args().skip(1).filter(|a| !a.starts_with('-')).nth(1).unwrap_or_else(|| "HEAD".into());
    let head = git(&source, &["rev-parse", &rev]);
    let (_tmp, dir) = clone_at(&source, &head);
    let revs: Vec<String> =
        git(&dir, &["rev-list", "--first-parent", "-n", "51", &head]).lines().map(String::from).collect();
    let oldest = revs.last().unwrap().clone();
    let cold = lynx(&dir, &["--no-dense", "index", "--rev", &oldest], &[]);
    let after_first = du(&dir.join(".lynx/objects"));
    // All fifty in one command (what CI does with `index --rev A --rev B …`).
    let mut args: Vec<String> = vec!["--no-dense".into(), "index".into()];
    for r in revs.iter().rev().skip(1) {
        args.push("--rev".into());
        args.push(r.clone());
    }
    let all = lynx(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let fifty_ms = all.ms;
    let blobs_new = all.json["blobs_new"].as_u64().unwrap_or(0);
    let mut each = vec![fifty_ms / 50.0];
    let after_all = du(&dir.join(".lynx/objects"));
    each.sort_by(|a, b| a.total_cmp(b));

    // Pre-commit: a one-line change to a source file, staged, on a warm store.
    let _ = std::process::Command::new("git")
        .args(["-c", "advice.detachedHead=false", "checkout", "-q", &head])
        .current_dir(&dir)
        .output();
    lynx(&dir, &["--no-dense", "index"], &[]);
    let files = git(&dir, &["ls-files"]);
    let target = files
        .lines()
        .find(|f| {
            f.ends_with(".go") || f.ends_with(".rs") || f.ends_with(".py") || f.ends_with(".ts") || f.ends_with(".java")
        })
        .unwrap()
        .to_string();
    let path = dir.join(&target);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\n// touched by the benchmark\n");
    std::fs::write(&path, text).unwrap();
    git(&dir, &["add", &target]);
    lynx(&dir, &["--no-dense", "impact", "--staged"], &[]); // first run builds the staged view
    let mut pre = Vec::new();
    for i in 0..5 {
        // A different one-line change each time, like successive commits.
        let mut t = std::fs::read_to_string(&path).unwrap();
        t.push_str(&format!("// edit {i}\n"));
        std::fs::write(&path, t).unwrap();
        git(&dir, &["add", &target]);
        pre.push(lynx(&dir, &["--no-dense", "impact", "--staged", "--quiet"], &[]).ms);
    }
    pre.sort_by(|a, b| a.total_cmp(b));
    let report = serde_json::json!({
        "repository": source.display().to_string(),
        "first_revision": oldest,
        "cold_first_ms": cold.ms,
        "fifty_revisions_ms": fifty_ms,
        "fifty_over_cold": fifty_ms / cold.ms,
        "per_revision_ms": {"p50": percentile(&each, 0.5), "max": each.last()},
        "blobs_new_over_fifty": blobs_new,
        "objects_bytes_after_first": after_first,
        "objects_bytes_after_fifty": after_all,
        "storage_growth": after_all as f64 / after_first as f64 - 1.0,
        "pre_commit_report_ms": {"p50": percentile(&pre, 0.5), "max": pre.last()},
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
