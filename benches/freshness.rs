//! Freshness: time from a save to the change being searchable under `git lynx watch` (after
//! the debounce window), and the reconcile time at start with no changes.
//!
//!     cargo bench --bench freshness -- /path/to/repo

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    let Some(source) = repo_arg() else {
        eprintln!("usage: cargo bench --bench freshness -- /path/to/repo");
        return;
    };
    let head = git(&source, &["rev-parse", "HEAD"]);
    let (_tmp, dir) = clone_at(&source, &head);
    let debounce_ms = 300u64;
    std::fs::create_dir_all(dir.join(".lynx")).unwrap();
    std::fs::write(dir.join(".lynx/config.toml"), format!("[watch]\ndebounce_ms = {debounce_ms}\n")).unwrap();
    let model: Vec<String> = match std::env::var("LYNX_BENCH_MODEL") {
        Ok(m) => vec!["--model".into(), m],
        Err(_) => vec!["--no-dense".into()],
    };
    let mut idx = model.clone();
    idx.push("index".into());
    lynx(&dir, &idx.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let mut reconciles = Vec::new();
    let mut saves = Vec::new();
    for round in 0..3 {
        let mut child = Command::new(bin())
            .args(&model)
            .args(["--json", "watch"])
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let u: serde_json::Value = serde_json::from_str(&line).unwrap();
        reconciles.push((u["catch_up_millis"].as_f64().unwrap(), u["millis"].as_f64().unwrap()));
        // Saves: a new unique identifier in an existing file, then poll search until found.
        let files = git(&dir, &["ls-files"]);
        let target = files
            .lines()
            .filter(|f| f.ends_with(".go") || f.ends_with(".rs") || f.ends_with(".py"))
            .nth(round * 7)
            .unwrap()
            .to_string();
        for i in 0..3 {
            let token = format!("zzfreshtoken{round}x{i}");
            let path = dir.join(&target);
            let mut text = std::fs::read_to_string(&path).unwrap();
            text.push_str(&format!("\n// {token}\n"));
            let t = Instant::now();
            std::fs::write(&path, text).unwrap();
            // The watcher's update: debounce, then only the new blob is indexed and the view,
            // graph and dense matrix refreshed.
            line.clear();
            out.read_line(&mut line).unwrap();
            let updated = t.elapsed().as_secs_f64() * 1000.0;
            let mut s = model.clone();
            s.extend(["search".into(), token.clone(), "--mode".into(), "sparse".into(), "-k".into(), "1".into()]);
            let args: Vec<&str> = s.iter().map(String::as_str).collect();
            let r = lynx(&dir, &args, &[]);
            assert!(r.json["results"].as_array().is_some_and(|a| !a.is_empty()), "not searchable after the update");
            saves.push((updated, t.elapsed().as_secs_f64() * 1000.0));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut catch_up: Vec<f64> = reconciles.iter().map(|r| r.0).collect();
    let mut full: Vec<f64> = reconciles.iter().map(|r| r.1).collect();
    catch_up.sort_by(|a, b| a.total_cmp(b));
    full.sort_by(|a, b| a.total_cmp(b));
    let mut upd: Vec<f64> = saves.iter().map(|s| s.0).collect();
    let mut found: Vec<f64> = saves.iter().map(|s| s.1).collect();
    upd.sort_by(|a, b| a.total_cmp(b));
    found.sort_by(|a, b| a.total_cmp(b));
    let report = serde_json::json!({
        "repository": source.display().to_string(),
        "tracked_files": git(&dir, &["ls-files"]).lines().count(),
        "debounce_ms": debounce_ms,
        "reconcile_no_changes_ms": {"p50": percentile(&catch_up, 0.5), "max": catch_up.last()},
        "reconcile_including_view_graph_warmup_ms": {"p50": percentile(&full, 0.5)},
        "save_to_watcher_update_ms": {"p50": percentile(&upd, 0.5), "max": upd.last()},
        "save_to_watcher_update_after_debounce_ms": {"p50": percentile(&upd, 0.5) - debounce_ms as f64, "max": upd.last().map(|m| m - debounce_ms as f64)},
        "save_to_search_answer_ms": {"p50": percentile(&found, 0.5), "max": found.last()},
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
