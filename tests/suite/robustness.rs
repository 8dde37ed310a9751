//! Crashes, concurrency, subdirectories and linked worktrees.

use crate::common;
use common::*;
use std::time::Duration;

fn big_project(r: &TestRepo, n: usize) {
    for i in 0..n {
        let body: String =
            (0..20).map(|j| format!("def fn_{i}_{j}(value):\n    return value * {j} + {i}\n\n")).collect();
        r.write(&format!("pkg{}/mod{i}.py", i % 17), &format!("\"\"\"Module {i}: unicorn{i} helpers.\"\"\"\n\n{body}"));
    }
}

fn results(r: &TestRepo, q: &str) -> Vec<(String, u64, u64)> {
    let v = r.json(&["search", q, "-k", "8"]);
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_string(),
                h["start_line"].as_u64().unwrap(),
                h["end_line"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn sigkill_during_index_leaves_a_consistent_store() {
    let reference = TestRepo::new();
    big_project(&reference, 1500);
    reference.commit_all("first");
    reference.json(&["index"]);
    let queries = ["unicorn42 helpers", "fn_7_3 value", "module unicorn1499"];
    let expected: Vec<_> = queries.iter().map(|q| results(&reference, q)).collect();

    let r = TestRepo::new();
    big_project(&r, 1500);
    r.commit_all("first");
    let mut interrupted = 0;
    for delay_ms in [30u64, 120, 300, 600] {
        let mut child = r.cmd(&["index", "--quiet"]).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        // Only a kill that lands while the index still runs tests anything.
        if child.try_wait().unwrap().is_none() {
            interrupted += 1;
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
    }
    assert!(interrupted > 0, "every index run finished before its kill: the test proved nothing");
    let again = r.json(&["index"]);
    assert_eq!(again["files_seen"], 1500, "{again}");
    let got: Vec<_> = queries.iter().map(|q| results(&r, q)).collect();
    assert_eq!(got, expected);
    // Nothing left to do, and every catalogued segment is readable.
    assert_eq!(r.json(&["index"])["blobs_new"], 0);
    let st = r.json(&["status"]);
    assert_eq!(st["state"], "fresh", "{st}");
}

#[test]
fn two_concurrent_index_processes() {
    let r = TestRepo::new();
    big_project(&r, 600);
    r.commit_all("first");
    let a = r.cmd(&["--json", "index"]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let b = r.cmd(&["--json", "index"]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["ok"], true);
        assert_eq!(v["files_indexed"], 600, "{v}");
    }
    assert_eq!(r.json(&["index"])["blobs_new"], 0);
    let hits = results(&r, "unicorn77 helpers");
    assert_eq!(hits[0].0, "pkg9/mod77.py");
}

#[test]
fn subdirectories_and_linked_worktrees_share_one_store() {
    let r = TestRepo::new();
    seed_project(&r, 4);
    r.commit_all("first");
    // From a subdirectory, and with -C.
    let sub = r.file("src");
    let out = r.cmd(&["--json", "index"]).current_dir(&sub).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["blobs_new"], 5, "{v}");
    let out = std::process::Command::new(BIN)
        .args(["-C", sub.to_str().unwrap(), "--json", "search", "compute_2"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][0]["path"], "src/mod2.py");
    assert!(r.file(".lynx/objects").is_dir() && !sub.join(".lynx").exists());
    // The store stays out of `git status`.
    assert!(!r.git(&["status", "--porcelain"]).contains(".lynx"));

    // A linked worktree on another branch reuses the main store's objects.
    let wt = tempfile::tempdir().unwrap();
    let wt_path = wt.path().join("wt");
    r.git(&["worktree", "add", "-q", "-b", "side", wt_path.to_str().unwrap()]);
    std::fs::write(wt_path.join("src/side.py"), "def side_branch_only():\n    pass\n").unwrap();
    let mut c = std::process::Command::new(BIN);
    isolate(&mut c).args(["--json", "index"]).current_dir(&wt_path);
    let v: serde_json::Value = serde_json::from_slice(&c.output().unwrap().stdout).unwrap();
    assert_eq!(v["blobs_new"], 1, "only the new file is processed: {v}");
    assert!(!wt_path.join(".lynx").exists());
    let mut c = std::process::Command::new(BIN);
    isolate(&mut c).args(["--json", "search", "side_branch_only"]).current_dir(&wt_path);
    let v: serde_json::Value = serde_json::from_slice(&c.output().unwrap().stdout).unwrap();
    assert_eq!(v["results"][0]["path"], "src/side.py");
}

#[test]
fn outside_a_repository_is_a_clear_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = std::process::Command::new(BIN);
    let out = isolate(&mut c)
        .args(["--json", "status"])
        .current_dir(dir.path())
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("not inside a git repository"), "{v}");
}

/// Catalog files of the blob layers written (one per layer once its first batch is
/// committed; the commits' history facts are computed beside them and not counted).
fn catalogs(r: &TestRepo) -> usize {
    std::fs::read_dir(r.file(".lynx/objects/catalog"))
        .map(|rd| {
            rd.flatten()
                .filter(|f| {
                    let name = f.file_name().to_string_lossy().into_owned();
                    name.ends_with(".cat") && !name.starts_with("history-")
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn an_interrupted_index_keeps_the_batches_it_finished() {
    let r = TestRepo::new();
    // About 8 MB of source in batches of 1 MB.
    for i in 0..400 {
        let body: String =
            (0..250).map(|j| format!("def fn_{i}_{j}(value):\n    return value * {j} + {i}  # pad\n\n")).collect();
        r.write(&format!("pkg{}/mod{i}.py", i % 13), &format!("\"\"\"Module {i}: griffin{i} helpers.\"\"\"\n\n{body}"));
    }
    r.commit_all("first");
    std::fs::create_dir_all(r.file(".lynx")).unwrap();
    std::fs::write(r.file(".lynx/config.toml"), "[index]\nbatch_mb = 1\n").unwrap();
    let mut child = r.cmd(&["--no-dense", "index", "--quiet"]).spawn().unwrap();
    // Kill once the first batch is committed (its three layers catalogued), long before the
    // eighth batch is.
    let t = std::time::Instant::now();
    while catalogs(&r) < 3 && t.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let finished_early = child.try_wait().unwrap().is_some();
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    assert!(!finished_early, "the kill must land while indexing is still running");
    let again = r.json(&["--no-dense", "index"]);
    let (new, reused) = (again["blobs_new"].as_u64().unwrap(), again["blobs_reused"].as_u64().unwrap());
    assert_eq!(new + reused, 400, "{again}");
    assert!(reused > 0 && new > 0, "the finished batches are kept and the rest done now: {again}");
    let hits = r.json(&["--no-dense", "search", "griffin377 helpers", "-k", "1"]);
    assert_eq!(hits["results"][0]["path"], "pkg0/mod377.py", "{hits}");
}

#[test]
fn a_missing_blob_is_skipped_with_one_warning() {
    let r = TestRepo::new();
    r.write("a.py", "needle_here = 1\n");
    r.write("b.py", "needle_here = 2\n");
    r.commit_all("two files");
    let blob = r.git(&["rev-parse", "HEAD:b.py"]).trim().to_string();
    std::fs::remove_file(r.file(&format!(".git/objects/{}/{}", &blob[..2], &blob[2..]))).unwrap();
    for args in [
        vec!["--no-dense", "search", "--exact", "needle_here", "--rev", "HEAD"],
        vec!["--no-dense", "search", "--regex", "needle_\\w+", "--rev", "HEAD"],
    ] {
        let out = r.lynx(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(stdout.contains("a.py:1:needle_here = 1"), "{stdout}");
        assert!(stderr.contains("could not be read") && stderr.contains("b.py"), "{stderr}");
    }
    let v = r.json(&["--no-dense", "search", "--exact", "needle_here", "--rev", "HEAD"]);
    assert_eq!(v["unreadable"], serde_json::json!(["b.py"]), "{v}");
    // `index` says it once per store state, not on every run.
    let first = r.lynx(&["--no-dense", "index", "--rev", "HEAD"]);
    assert!(
        String::from_utf8_lossy(&first.stderr).contains("could not be read"),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let again = r.lynx(&["--no-dense", "index", "--rev", "HEAD"]);
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("could not be read"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn a_deleted_history_segment_is_computed_again_by_index() {
    let r = TestRepo::new();
    seed_project(&r, 3);
    r.commit_all("first: the handlers");
    r.write("src/mod1.py", "def handler_1(request):\n    return 'quokka'\n");
    r.commit_all("second: the quokka answer");
    let v = r.json(&["--no-dense", "index"]);
    assert_eq!(v["commits_new"], 2, "{v}");
    let objects = r.file(".lynx/objects");
    let mut gone = 0;
    for name in lynx_core::store::list_segments(&objects).unwrap() {
        let p = objects.join(format!("{name}.parquet"));
        if lynx_core::store::read_segment_with_meta(&p).is_ok_and(|(_, layer, _)| layer == "history") {
            std::fs::remove_file(p).unwrap();
            gone += 1;
        }
    }
    assert!(gone > 0);
    let v = r.json(&["--no-dense", "index"]);
    assert_eq!(v["commits_new"], 2, "the facts are computed again: {v}");
    let out = r.lynx(&["--no-dense", "search", "quokka answer"]);
    assert!(
        out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("unavailable"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_commit_names_the_files_it_changed_renames_by_both_paths() {
    let r = TestRepo::new();
    r.write("src/old_name.py", "def kept():\n    return 1\n");
    r.write("src/edited.py", "x = 1\n");
    r.write("docs/gone.md", "# gone\n");
    let first = r.commit_all("first");
    r.git(&["mv", "src/old_name.py", "src/new_name.py"]);
    r.write("src/edited.py", "x = 2\n");
    r.write("src/deep/added.py", "y = 1\n");
    std::fs::remove_file(r.file("docs/gone.md")).unwrap();
    let second = r.commit_all("second");
    let repo = lynx_core::repo::Repo::discover(r.path()).unwrap();
    let id = |hex: &str| gix::ObjectId::from_hex(hex.as_bytes()).unwrap();
    let paths = repo.paths_changed(id(&first), id(&second)).unwrap();
    assert_eq!(
        paths,
        ["docs/gone.md", "src/deep/added.py", "src/edited.py", "src/new_name.py", "src/old_name.py"],
        "{paths:?}"
    );
}
