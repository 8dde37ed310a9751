//! Git workflows: search inside changes, impact over ranges, hooks, shared objects.

use crate::common;
use common::*;
use std::collections::BTreeSet;

#[test]
fn search_diff_finds_a_low_ranked_change_that_global_search_misses() {
    let r = TestRepo::new();
    // Thirty files that match "parse config" strongly, committed on main.
    for i in 0..30 {
        r.write(&format!("lib/parser{i}.py"), &format!("def parse_config_{i}(path):\n    \"\"\"Parse config parse config parse config.\"\"\"\n    return parse(open(path).read())\n"));
    }
    r.write("app/main.py", "def run():\n    return 1\n");
    r.commit_all("base");
    r.git(&["checkout", "-q", "-b", "feature"]);
    // The change mentions the query only weakly.
    r.write("app/main.py", "def run():\n    # fall back when the config cannot be parsed\n    return 1\n");
    r.commit_all("feature");
    let global = r.search_paths(&["--no-dense", "parse config", "-k", "10"]);
    assert!(!global.contains(&"app/main.py".to_string()), "the change is not in the global top 10: {global:?}");
    let v = r.json(&["--no-dense", "search-diff", "parse config"]);
    assert_eq!(v["base"], "main", "base auto-detected: {v}");
    assert_eq!(v["results"][0]["path"], "app/main.py", "{v}");
    let files: Vec<&str> = v["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(files, ["app/main.py"]);
    // Staged and unstaged work is included by default.
    r.write("app/extra.py", "def helper():\n    return 'config parse fallback'\n");
    let v = r.json(&["--no-dense", "search-diff", "config parse fallback"]);
    let paths: BTreeSet<&str> = v["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert!(paths.contains("app/extra.py"), "{v}");
}

#[test]
fn impact_of_deleting_a_function_lists_its_former_callers() {
    let r = TestRepo::new();
    r.write("lib.py", "def shared():\n    return 1\n\n\ndef keep():\n    return 2\n");
    r.write("a.py", "from lib import shared\n\n\ndef use_a():\n    return shared()\n");
    r.write("b.py", "from lib import shared\n\n\ndef use_b():\n    return shared() + 1\n");
    r.commit_all("base");
    r.write("lib.py", "def keep():\n    return 2\n");
    r.commit_all("delete shared");
    let v = r.json(&["--no-dense", "impact", "HEAD~1..HEAD"]);
    let deleted: Vec<&serde_json::Value> =
        v["definitions"].as_array().unwrap().iter().filter(|d| d["change"] == "deleted").collect();
    assert_eq!(deleted.len(), 1, "{v}");
    assert_eq!(deleted[0]["name"], "shared");
    assert_eq!(deleted[0]["snapshot"], "before");
    let callers: BTreeSet<&str> =
        deleted[0]["callers"].as_array().unwrap().iter().map(|l| l["node"]["name"].as_str().unwrap()).collect();
    assert_eq!(callers, BTreeSet::from(["use_a", "use_b"]));
    // CI gate: deleted definitions that are still called trip `deleted` (exit 3).
    let out = r.lynx(&["--no-dense", "impact", "HEAD~1..HEAD", "--fail-on", "deleted", "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(3));
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("### Lynx impact report") && md.contains("deleted function shared"), "{md}");
    assert_eq!(r.lynx(&["--no-dense", "impact", "HEAD~1..HEAD", "--fail-on", "callers>10"]).status.code(), Some(0));
}

#[test]
fn staged_unstaged_and_committed_ranges() {
    let r = TestRepo::new();
    r.write(
        "m.py",
        "def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n\n\ndef gamma():\n    return alpha() + beta()\n",
    );
    r.commit_all("base");
    r.write(
        "m.py",
        "def alpha():\n    return 10\n\n\ndef beta():\n    return 2\n\n\ndef gamma():\n    return alpha() + beta()\n",
    );
    r.git(&["add", "m.py"]);
    r.write(
        "m.py",
        "def alpha():\n    return 10\n\n\ndef beta():\n    return 20\n\n\ndef gamma():\n    return alpha() + beta()\n",
    );
    let changed = |v: &serde_json::Value| -> BTreeSet<String> {
        v["definitions"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_string()).collect()
    };
    // --staged: only what `git commit` would record.
    assert_eq!(changed(&r.json(&["--no-dense", "impact", "--staged"])), BTreeSet::from(["alpha".to_string()]));
    // No argument: all uncommitted work (staged + unstaged).
    assert_eq!(changed(&r.json(&["--no-dense", "impact"])), BTreeSet::from(["alpha".to_string(), "beta".to_string()]));
    r.git(&["commit", "-q", "-am", "both"]);
    assert!(changed(&r.json(&["--no-dense", "impact"])).is_empty());
    assert_eq!(
        changed(&r.json(&["--no-dense", "impact", "HEAD~1..HEAD"])),
        BTreeSet::from(["alpha".to_string(), "beta".to_string()])
    );
    let v = r.json(&["--no-dense", "impact", "HEAD~1..HEAD"]);
    let alpha = v["definitions"].as_array().unwrap().iter().find(|d| d["name"] == "alpha").unwrap();
    assert_eq!(alpha["callers"][0]["node"]["name"], "gamma");
    assert_eq!(alpha["snapshot"], "after");
}

#[test]
fn hooks_install_beside_an_existing_hook_and_both_run() {
    let r = TestRepo::new();
    r.write("m.py", "def alpha():\n    return 1\n\n\ndef gamma():\n    return alpha()\n");
    r.commit_all("base");
    let hooks = r.file(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("pre-commit"),
        "#!/bin/sh\necho existing-hook-ran >> \"$(git rev-parse --show-toplevel)/hook.log\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(hooks.join("pre-commit"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let v = r.json(&["hooks", "install"]);
    assert!(v["installed"].as_array().unwrap().len() >= 4, "{v}");
    assert!(hooks.join("pre-commit.lynx-chained").exists());
    // The hooks call `git lynx`: put the binary on PATH as git-lynx.
    let bin_dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(BIN, bin_dir.path().join("git-lynx")).unwrap();
    let path = format!("{}:{}", bin_dir.path().display(), std::env::var("PATH").unwrap());
    r.write("m.py", "def alpha():\n    return 2\n\n\ndef gamma():\n    return alpha()\n");
    r.git(&["add", "m.py"]);
    let out = isolate(&mut std::process::Command::new("git"))
        .args(["commit", "-q", "-m", "change"])
        .current_dir(r.path())
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "commit went through: {}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Quiet by default: one line saying what the change reaches.
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("lynx: 1 definition (1 changed, 0 added, 0 deleted), 1 caller"), "{stderr}");
    assert!(std::fs::read_to_string(r.file("hook.log")).unwrap().contains("existing-hook-ran"));
    // A comment-only edit changes no definition: the hook says nothing.
    r.write("m.py", "# a comment\ndef alpha():\n    return 2\n\n\ndef gamma():\n    return alpha()\n");
    r.git(&["add", "m.py"]);
    let out = isolate(&mut std::process::Command::new("git"))
        .args(["commit", "-q", "-m", "comment"])
        .current_dir(r.path())
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "silent when no definition changed");
    // Verbose: the full report, and a report file on request.
    r.write("m.py", "# a comment\ndef alpha():\n    return 4\n\n\ndef gamma():\n    return alpha()\n");
    r.git(&["add", "m.py"]);
    let report = r.file("report.md");
    let out = isolate(&mut std::process::Command::new("git"))
        .args(["commit", "-q", "-m", "verbose"])
        .current_dir(r.path())
        .env("PATH", &path)
        .env("LYNX_HOOK_VERBOSE", "1")
        .env("LYNX_HOOK_REPORT", &report)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--- lynx: impact of the staged change ---") && stderr.contains("gamma"), "{stderr}");
    assert!(std::fs::read_to_string(&report).unwrap().contains("### Lynx impact report"));
    // Configured to block: a change with callers trips `callers>0`, and the report says why.
    r.write("m.py", "def alpha():\n    return 3\n\n\ndef gamma():\n    return alpha()\n");
    r.git(&["add", "m.py"]);
    let out = isolate(&mut std::process::Command::new("git"))
        .args(["commit", "-q", "-m", "blocked"])
        .current_dir(r.path())
        .env("PATH", &path)
        .env("LYNX_HOOK_FAIL_ON", "callers>0")
        .output()
        .unwrap();
    assert!(!out.status.success(), "the configured check blocks the commit");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("check failed: 1 transitive callers through precise, extracted or resolved edges > 0")
            && stderr.contains("commit blocked"),
        "{stderr}"
    );
    let v = r.json(&["hooks", "uninstall"]);
    assert!(v["dir"].is_string());
    assert!(
        std::fs::read_to_string(hooks.join("pre-commit")).unwrap().contains("existing-hook-ran"),
        "original restored"
    );
}

#[test]
fn a_second_clone_reuses_exported_objects_and_tampered_packs_are_refused() {
    let a = TestRepo::new();
    seed_project(&a, 8);
    a.commit_all("first");
    let model = format!("{}/tests/fixtures/models/tiny-static", env!("CARGO_MANIFEST_DIR"));
    let first = a.json(&["--model", &model, "index", "--rev", "HEAD"]);
    assert!(first["blobs_new"].as_u64().unwrap() > 0 && first["chunks_embedded"].as_u64().unwrap() > 0);
    let shared = tempfile::tempdir().unwrap();
    let dir = shared.path().join("objects");
    a.json(&["objects", "export", "HEAD", "--to", dir.to_str().unwrap()]);
    let pack = shared.path().join("team.lynxpack");
    a.json(&["objects", "export", "HEAD", "--to", pack.to_str().unwrap()]);

    // A fresh clone pointed at the exported (untrusted) directory adopts everything after
    // checking it: each blob processed again, each vector computed again, found identical.
    let b_dir = tempfile::tempdir().unwrap();
    let b_path = b_dir.path().join("b");
    a.git(&["clone", "-q", a.path().to_str().unwrap(), b_path.to_str().unwrap()]);
    let run = |args: &[&str], envs: &[(&str, &str)]| -> serde_json::Value {
        let mut c = std::process::Command::new(BIN);
        isolate(&mut c).arg("--json").args(args).current_dir(&b_path);
        for (k, v) in envs {
            c.env(k, v);
        }
        serde_json::from_slice(&c.output().unwrap().stdout).unwrap()
    };
    let v = run(&["--model", &model, "index"], &[("LYNX_ALTERNATE_OBJECT_DIRECTORIES", dir.to_str().unwrap())]);
    assert_eq!(v["blobs_new"], 0, "{v}");
    assert_eq!(v["blobs_adopted"], first["blobs_new"], "{v}");
    assert_eq!(v["chunks_embedded"], first["chunks_embedded"], "{v}");
    assert_eq!(v["dense"], "ready");
    let s = run(
        &["--model", &model, "search", "compute_3"],
        &[("LYNX_ALTERNATE_OBJECT_DIRECTORIES", dir.to_str().unwrap())],
    );
    assert_eq!(s["results"][0]["path"], "src/mod3.py", "{s}");

    // Importing the pack into another clone works too.
    let c_dir = tempfile::tempdir().unwrap();
    let c_path = c_dir.path().join("c");
    a.git(&["clone", "-q", a.path().to_str().unwrap(), c_path.to_str().unwrap()]);
    let mut cmd = std::process::Command::new(BIN);
    // Vectors are checked against the model before they are adopted, so it is named.
    let out = isolate(&mut cmd)
        .args(["--json", "--model", &model, "objects", "import", pack.to_str().unwrap()])
        .current_dir(&c_path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let mut cmd = std::process::Command::new(BIN);
    let v: serde_json::Value = serde_json::from_slice(
        &isolate(&mut cmd).args(["--json", "--model", &model, "index"]).current_dir(&c_path).output().unwrap().stdout,
    )
    .unwrap();
    assert_eq!(v["blobs_new"], 0, "{v}");
    assert_eq!(v["chunks_embedded"], 0, "{v}");

    // A tampered pack is refused and nothing is written.
    let mut bytes = std::fs::read(&pack).unwrap();
    let at = bytes.len() / 3;
    bytes[at] ^= 0x55;
    let bad = shared.path().join("bad.lynxpack");
    std::fs::write(&bad, &bytes).unwrap();
    let d = TestRepo::new();
    let out = d.lynx(&["--json", "objects", "import", bad.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("refusing"), "{v}");
    assert!(crate_segments(&d.file(".lynx/objects")).is_empty());
}

fn crate_segments(objects: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(objects) {
        for e in rd.flatten() {
            if e.file_name().len() == 2 {
                for f in std::fs::read_dir(e.path()).unwrap().flatten() {
                    out.push(f.file_name().to_string_lossy().into_owned());
                }
            }
        }
    }
    out
}

/// Searching every source interleaves them by calibrated score: each source's scores over its
/// own best retrieval score, so neither raw BM25 scale (which follows each index's size and
/// vocabulary) nor rank alone decides; the priors (prose below code) still do.
#[test]
fn sources_are_interleaved_by_calibrated_score() {
    let r = TestRepo::new();
    r.write("src/retry.py", "def retry_with_backoff(call, attempts):\n    \"\"\"Retry a call with exponential backoff.\"\"\"\n    return call()\n");
    r.write("src/backoff.py", "def backoff_delay(attempt):\n    # retry backoff grows\n    return 2 ** attempt\n");
    r.write("src/policy.py", "class RetryPolicy:\n    \"\"\"Retry backoff limits.\"\"\"\n    limit = 3\n");
    for i in 0..6 {
        r.write(&format!("src/other{i}.py"), &format!("def other_{i}():\n    return {i}\n"));
    }
    r.commit_all("first");
    let docs = tempfile::tempdir().unwrap();
    std::fs::write(docs.path().join("retries.md"), "# Retries\n\nHow retry and backoff work.\n").unwrap();
    for i in 0..5 {
        std::fs::write(docs.path().join(format!("page{i}.md")), format!("# Page {i}\n\nSomething else entirely.\n"))
            .unwrap();
    }
    r.json(&["source", "add", "docs", docs.path().to_str().unwrap()]);
    let v = r.json(&["--no-dense", "search", "retry backoff", "-k", "4"]);
    let hits = v["results"].as_array().unwrap();
    let code: Vec<f64> = hits.iter().filter(|h| h["source"] != "docs").map(|h| h["score"].as_f64().unwrap()).collect();
    let doc = hits.iter().position(|h| h["source"] == "docs").unwrap_or_else(|| panic!("{v}"));
    assert!(
        code.len() >= 2 && code.iter().all(|&c| c > hits[doc]["score"].as_f64().unwrap()),
        "the fixture must have the code outscore the docs: {v}"
    );
    // The docs' best hit is its source's best (calibrated 1 before priors, 0.3 after: prose);
    // the code hits are 1.0, 0.84 and 0.46 of theirs: it comes fourth, not second (rank).
    assert_eq!(doc, 3, "{v}");
    // One source by name.
    let v = r.json(&["--no-dense", "search", "retry backoff", "--source", "docs"]);
    let paths: Vec<&str> = v["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert_eq!(paths.first(), Some(&"retries.md"), "{v}");
    assert!(paths.iter().all(|p| p.ends_with(".md")), "{v}");
}

/// `-q` makes an action silent when it works (as git's -q); answers and `--json` still print.
#[test]
fn quiet_actions_print_nothing() {
    let r = TestRepo::new();
    r.write("src/a.py", "def echidna_spines():\n    return 1\n");
    r.commit_all("first");
    let out = r.lynx(&["--no-dense", "-q", "index"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    let v = r.json(&["--no-dense", "-q", "index"]);
    assert_eq!(v["operation"], "index");
    let out = r.lynx(&["--no-dense", "-q", "search", "echidna"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("src/a.py"), "a question still gets its answer");
}

#[test]
fn fail_on_callers_counts_only_trusted_paths() {
    let r = TestRepo::new();
    // `Cart.total` is called on a typed value (resolved) and on an untyped one (inferred).
    r.write("shop/cart.py", "class Cart:\n    def total(self):\n        return 1\n");
    r.write("shop/a.py", "from shop.cart import Cart\n\n\ndef typed(c: Cart):\n    return c.total()\n");
    r.write("shop/b.py", "def untyped(c):\n    return c.total()\n");
    r.commit_all("base");
    r.write("shop/cart.py", "class Cart:\n    def total(self):\n        return 2\n");
    r.commit_all("change");
    let v = r.json(&["--no-dense", "impact", "HEAD~1..HEAD"]);
    assert_eq!(v["totals"]["transitive_callers"], 2, "{v}");
    assert_eq!(v["totals"]["confident_callers"], 1, "{v}");
    // One trusted caller: callers>1 passes, callers>0 trips.
    assert_eq!(r.lynx(&["--no-dense", "impact", "HEAD~1..HEAD", "--fail-on", "callers>1"]).status.code(), Some(0));
    assert_eq!(r.lynx(&["--no-dense", "impact", "HEAD~1..HEAD", "--fail-on", "callers>0"]).status.code(), Some(3));
}

#[test]
fn range_reports_count_the_code_that_passes_a_changed_callback() {
    let r = TestRepo::new();
    // `backoff` is never called by name: `client` passes it as a value, and its test too.
    r.write(
        "net/retry.py",
        "def backoff(n):\n    return 2 ** n\n\n\ndef retry(opts):\n    return opts[\"delay\"](1)\n",
    );
    r.write(
        "net/client.py",
        "from net.retry import backoff, retry\n\n\ndef client():\n    return retry({\"delay\": backoff})\n",
    );
    r.write(
        "tests/test_client.py",
        "from net.retry import backoff\n\n\ndef test_backoff_is_passed():\n    assert [backoff][0](1) == 2\n",
    );
    r.commit_all("base");
    r.write(
        "net/retry.py",
        "def backoff(n):\n    return 3 ** n\n\n\ndef retry(opts):\n    return opts[\"delay\"](1)\n",
    );
    r.commit_all("change");
    let v = r.json(&["--no-dense", "impact", "HEAD~1..HEAD"]);
    let changed =
        v["definitions"].as_array().unwrap().iter().find(|d| d["name"] == "backoff").expect("backoff changed");
    let callers: Vec<(&str, &str)> = changed["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["node"]["name"].as_str().unwrap(), l["relation"].as_str().unwrap()))
        .collect();
    assert!(callers.contains(&("client", "references")), "{v}");
    assert!(v["totals"]["confident_callers"].as_u64().unwrap() >= 1, "{v}");
    assert!(v["totals"]["tests"].as_u64().unwrap() >= 1, "the test that passes it is to re-run: {v}");
    let report = r.text(&["--no-dense", "impact", "HEAD~1..HEAD", "--format", "markdown"]);
    assert!(report.contains("client"), "{report}");
    assert_eq!(r.lynx(&["--no-dense", "impact", "HEAD~1..HEAD", "--fail-on", "callers>0"]).status.code(), Some(3));
}

#[test]
fn search_diff_answers_about_any_branch_without_a_checkout() {
    let r = TestRepo::new();
    calc_project(&r);
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write(
        "src/retry.py",
        "def retry_with_backoff(call):\n    \"\"\"Retry a call with exponential backoff.\"\"\"\n    return call()\n",
    );
    r.write(
        "src/calc.py",
        "def add(a, b):\n    \"\"\"Add two numbers, with backoff on overflow.\"\"\"\n    return a + b\n",
    );
    r.commit_all("feature");
    r.git(&["checkout", "-q", "main"]);
    let at_rev = r.json(&["--no-dense", "search-diff", "backoff", "--base", "main", "--rev", "feature"]);
    let paths: Vec<&str> = at_rev["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"src/retry.py"), "the branch's changes are searched from main: {at_rev}");
    assert_eq!(at_rev["view"]["kind"], "commit", "{at_rev}");
    r.git(&["checkout", "-q", "feature"]);
    let checked_out = r.json(&["--no-dense", "search-diff", "backoff", "--base", "main"]);
    assert_eq!(at_rev["results"], checked_out["results"], "the same answer as with the branch checked out");
    r.git(&["checkout", "-q", "main"]);
    let mut c = common::mcp::Client::start(&r, &[]);
    let v = c.request(
        "tools/call",
        serde_json::json!({"name": "search_diff", "arguments": {"query": "backoff", "base": "main", "rev": "feature"}}),
    );
    let at = |v: &serde_json::Value| -> Vec<(String, u64)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|h| (h["path"].as_str().unwrap().to_string(), h["start_line"].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(at(&v["result"]["structuredContent"]["results"]), at(&at_rev["results"]), "{v}");
    c.close();
}

#[test]
fn search_diff_stays_small_whatever_the_size_of_the_diff() {
    let r = TestRepo::new();
    r.write("README.md", "# Big\n");
    r.commit_all("base");
    r.git(&["checkout", "-q", "-b", "big"]);
    for i in 0..5000 {
        r.write(&format!("gen/m{}/f{i}.py", i % 50), &format!("def generated_{i}():\n    return {i}\n"));
    }
    r.write("src/needle.py", "def find_the_platypus():\n    return 'platypus'\n");
    r.commit_all("five thousand files");
    let out = r.lynx(&["--no-dense", "--json", "search-diff", "platypus", "--base", "main", "--rev", "big", "-k", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.len() < 20_000, "the answer is bounded: {} bytes", out.stdout.len());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["changed"]["files"], 5001, "{}", v["changed"]);
    assert_eq!(v["results"][0]["path"], "src/needle.py");
    assert!(v["files"].as_array().unwrap().len() <= 20);
    let text = r.text(&["--no-dense", "search-diff", "platypus", "--base", "main", "--rev", "big", "-k", "3"]);
    assert!(text.lines().count() < 60, "{} lines", text.lines().count());
    // The rest of the file list, page by page.
    let mut cursor = v["files_cursor"].as_str().expect("a cursor for the rest").to_string();
    let mut seen = v["files"].as_array().unwrap().len();
    let mut pages = 0;
    loop {
        let p =
            r.json(&["--no-dense", "search-diff", "platypus", "--base", "main", "--rev", "big", "--cursor", &cursor]);
        seen += p["files"].as_array().unwrap().len();
        pages += 1;
        match p["files_cursor"].as_str() {
            Some(c) => cursor = c.to_string(),
            None => break,
        }
        assert!(pages < 100);
    }
    assert_eq!(seen, 5001);
}

#[test]
fn index_and_status_count_files_the_same_way() {
    let r = TestRepo::new();
    seed_project(&r, 3);
    // A path-level skip (excluded by config) and a content-level one (over the size cap).
    r.write("lynx.toml", "[index]\nexclude = [\"gen/**\"]\nmax_file_size = 1000\n");
    r.write("gen/out.py", "x = 1\n");
    r.write("big.txt", &"y".repeat(5_000));
    r.commit_all("first");
    let index = r.json(&["--no-dense", "index"]);
    let status = r.json(&["--no-dense", "status"]);
    assert_eq!(index["files_seen"], status["files_seen"], "index {index}\nstatus {status}");
    assert_eq!(index["files_indexed"], status["files_indexed"], "index {index}\nstatus {status}");
    assert!(index["files_seen"].as_u64().unwrap() > index["files_indexed"].as_u64().unwrap(), "{index}");
    let text = r.text(&["--no-dense", "status"]);
    let line = format!("files {} ({} indexed)", status["files_seen"], status["files_indexed"]);
    assert!(text.contains(&line), "{line} in {text}");
}

/// Runs ci/lynx-ci.sh in `dir` with this build's git-lynx, no embeddings and no CI variables.
fn lynx_ci(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/lynx-ci.sh");
    isolate(&mut std::process::Command::new("bash"))
        .arg(script)
        .args(args)
        .current_dir(dir)
        .env("LYNX_BIN", BIN)
        .env("LYNX_CI_DENSE", "0")
        .env_remove("LYNX_BASE")
        .env_remove("GITHUB_BASE_REF")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap()
}

#[test]
fn ci_script_takes_the_remotes_default_branch_as_the_base() {
    // The upstream's default branch is master, not main.
    let upstream = TestRepo::new();
    upstream.git(&["branch", "-m", "master"]);
    upstream.write("m.py", "def alpha():\n    return 1\n\n\ndef beta():\n    return alpha()\n");
    upstream.commit_all("base");
    let clone = tempfile::tempdir().unwrap();
    let work = clone.path().join("work");
    let out = isolate(&mut std::process::Command::new("git"))
        .args(["clone", "-q"])
        .arg(upstream.path())
        .arg(&work)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = TestRepo { dir: clone };
    let git = |args: &[&str]| {
        let out = isolate(&mut std::process::Command::new("git")).args(args).current_dir(&work).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["config", "commit.gpgsign", "false"]);
    git(&["checkout", "-q", "-b", "feature"]);
    r.write("work/m.py", "def alpha():\n    return 2\n\n\ndef beta():\n    return alpha()\n");
    git(&["commit", "-q", "-am", "change alpha"]);

    let out = lynx_ci(&work, &["--report", "impact.md"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}\n{}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr.contains("base origin/master (the default branch of origin)"), "{stderr}");
    let report = std::fs::read_to_string(work.join("impact.md")).unwrap();
    assert!(!report.contains("could not compute"), "{report}");
    assert!(report.contains("alpha") && report.contains("beta"), "the change and its caller: {report}");

    // A CI checkout that did not record refs/remotes/origin/HEAD asks the remote.
    git(&["remote", "set-head", "origin", "--delete"]);
    std::fs::remove_file(work.join("impact.md")).unwrap();
    let out = lynx_ci(&work, &["--report", "impact.md"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.contains("base origin/master"), "{stderr}");
    assert!(!std::fs::read_to_string(work.join("impact.md")).unwrap().contains("could not compute"));
}

#[test]
fn ci_script_without_a_base_fails_and_says_why() {
    let r = TestRepo::new();
    r.write("m.py", "def alpha():\n    return 1\n");
    r.commit_all("base");
    let out = lynx_ci(r.path(), &["--report", "impact.md"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no base to compare with") && stderr.contains("no remote"), "{stderr}");
    // A base that does not exist fails the same way.
    let out = lynx_ci(r.path(), &["--base", "origin/nosuch", "--report", "impact.md"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`origin/nosuch` not found"));
    // --allow-no-base: the report says why, and the job goes on.
    let out = lynx_ci(r.path(), &["--allow-no-base", "--report", "impact.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report = std::fs::read_to_string(r.file("impact.md")).unwrap();
    assert!(report.contains("could not compute") && report.contains("no remote"), "{report}");
}
