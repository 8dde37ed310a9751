//! Views are assembled from shared, per-segment shards: every revision of a history answers
//! exactly (same hits, same scores to the last bit, same order) as a store built for that
//! revision alone, however many other views were assembled before, after `gc`, with its shards
//! removed, and in any process.

use crate::common;
use common::*;
use std::collections::BTreeMap;

fn static_model() -> String {
    format!("{}/tests/fixtures/models/tiny-static", env!("CARGO_MANIFEST_DIR"))
}

/// A small deterministic generator (no dependency on a random crate for test data).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, v: &'a [&'a str]) -> &'a str {
        v[(self.next() as usize) % v.len()]
    }
}

const WORDS: &[&str] = &[
    "parse", "request", "config", "retry", "backoff", "cache", "token", "session", "render", "template", "queue",
    "worker", "schedule", "timeout", "socket", "buffer", "stream", "encode", "decode", "json", "header", "cookie",
    "route", "handler",
];

fn module(rng: &mut Lcg, n: usize) -> String {
    let mut s = String::new();
    for f in 0..n {
        let (a, b, c) = (rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS));
        s.push_str(&format!(
            "def {a}_{b}_{f}(value):\n    \"\"\"{a} the {b} with {c} and {} support.\"\"\"\n    return {c}_{a}(value, {f})\n\n",
            rng.pick(WORDS)
        ));
    }
    s
}

/// A history of `n` commits with additions, edits, deletions and renames. Returns the commits.
fn history(r: &TestRepo, n: usize) -> Vec<String> {
    let mut rng = Lcg(7);
    let mut files: Vec<String> = Vec::new();
    let mut commits = Vec::new();
    for i in 0..6 {
        let path = format!("pkg{}/m{i}.py", i % 3);
        r.write(&path, &module(&mut rng, 4));
        files.push(path);
    }
    commits.push(r.commit_all("start"));
    for c in 1..n {
        // Add one or two files.
        for _ in 0..1 + (rng.next() % 2) {
            let path = format!("pkg{}/n{c}_{}.py", rng.next() % 4, rng.next() % 100);
            let n = 2 + (rng.next() % 4) as usize;
            r.write(&path, &module(&mut rng, n));
            if !files.contains(&path) {
                files.push(path);
            }
        }
        // Edit one.
        let i = (rng.next() as usize) % files.len();
        let extra = module(&mut rng, 1);
        let mut text = std::fs::read_to_string(r.file(&files[i])).unwrap();
        text.push_str(&extra);
        r.write(&files[i].clone(), &text);
        // Delete one now and then, rename one now and then.
        if c % 3 == 0 && files.len() > 4 {
            let i = (rng.next() as usize) % files.len();
            r.remove(&files[i].clone());
            files.remove(i);
        }
        if c % 4 == 1 && files.len() > 2 {
            let i = (rng.next() as usize) % files.len();
            let to = format!("moved/r{c}.py");
            std::fs::create_dir_all(r.file("moved")).unwrap();
            r.git(&["mv", &files[i].clone(), &to]);
            files[i] = to;
        }
        commits.push(r.commit_all(&format!("change {c}")));
    }
    commits
}

type Answers = BTreeMap<String, Vec<(String, u64, u64, String)>>;

/// Every query in every mode at `rev`: (path, start, end, exact score) per hit.
fn answers(dir: &std::path::Path, rev: &str) -> Answers {
    ask_all(dir, rev, false)
}

/// Like `answers`, but a search that reports a damaged cache is asked once more (it rebuilt it).
fn answers_repairing(dir: &std::path::Path, rev: &str) -> Answers {
    ask_all(dir, rev, true)
}

fn ask_all(dir: &std::path::Path, rev: &str, repairing: bool) -> Answers {
    let m = static_model();
    let mut out = Answers::new();
    for q in ["parse request config", "retry backoff timeout", "json cookie header handler", "worker queue schedule"] {
        for mode in ["sparse", "dense", "hybrid"] {
            let mut v = serde_json::Value::Null;
            for attempt in 0..2 {
                let mut c = std::process::Command::new(BIN);
                isolate(&mut c)
                    .current_dir(dir)
                    .args(["--json", "--model", &m, "search", q, "--rev", rev, "--mode", mode, "-k", "8"]);
                let o = c.output().unwrap();
                v = serde_json::from_slice(&o.stdout).expect("one JSON object, also on failure");
                if v["ok"] == true {
                    break;
                }
                let err = v["error"].as_str().unwrap_or("");
                assert!(repairing && attempt == 0 && err.contains("damaged") && err.contains("run it again"), "{v}");
            }
            assert_eq!(v["mode"], mode, "{v}");
            let hits = v["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| {
                    (
                        h["path"].as_str().unwrap().to_string(),
                        h["start_line"].as_u64().unwrap(),
                        h["end_line"].as_u64().unwrap(),
                        // The JSON text of the score: equal strings are equal bits.
                        h["score"].to_string(),
                    )
                })
                .collect();
            out.insert(format!("{mode}: {q}"), hits);
        }
    }
    out
}

#[test]
fn every_revision_answers_like_a_store_built_for_it_alone() {
    let r = TestRepo::new();
    let commits = history(&r, 32);
    let m = static_model();
    // The shared store walks the whole history, newest first then oldest first, so every view
    // is assembled after many others; gc runs halfway; shards are removed once.
    let mut shared: BTreeMap<String, Answers> = BTreeMap::new();
    for (i, c) in commits.iter().rev().enumerate() {
        r.json(&["--model", &m, "index", "--rev", c]);
        if i == commits.len() / 2 {
            r.json(&["gc"]);
        }
        shared.insert(c.clone(), answers(r.path(), c));
    }
    std::fs::remove_dir_all(r.file(".lynx/cache/shards")).unwrap();
    for c in commits.iter().step_by(5) {
        assert_eq!(answers(r.path(), c), shared[c], "{c}: answers changed after the shards were rebuilt");
    }
    // `index --rev` kept each revision's assembled view and dense side; assembled afresh, each
    // answers the same.
    for kind in ["views", "views-dense"] {
        let kept = walkdir::WalkDir::new(r.file(&format!(".lynx/cache/{kind}"))).into_iter().flatten();
        assert!(kept.filter(|e| e.file_type().is_file()).count() >= commits.len() / 2 - 1, "{kind}");
        std::fs::remove_dir_all(r.file(&format!(".lynx/cache/{kind}"))).unwrap();
    }
    for c in commits.iter().skip(2).step_by(5) {
        assert_eq!(answers(r.path(), c), shared[c], "{c}: the view assembled afresh answers unlike the kept one");
    }

    // A second clone: for each revision, a store built for that revision alone.
    let alone = tempfile::tempdir().unwrap();
    let dir = alone.path().join("c");
    let out = std::process::Command::new("git").args(["clone", "-q"]).arg(r.path()).arg(&dir).output().unwrap();
    assert!(out.status.success());
    let mut differ = Vec::new();
    for c in &commits {
        let _ = std::fs::remove_dir_all(dir.join(".lynx"));
        let mut cmd = std::process::Command::new(BIN);
        isolate(&mut cmd).current_dir(&dir).args(["--json", "--model", &m, "index", "--rev", c]);
        assert!(cmd.output().unwrap().status.success());
        let mine = answers(&dir, c);
        assert!(mine.values().any(|h| !h.is_empty()), "the queries find something at {c}");
        if mine != shared[c] {
            differ.push(c.clone());
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} revisions answer differently from a store built for them alone: {differ:?}",
        differ.len(),
        commits.len()
    );
    // The cache holds shards (per segment), history walks, kept views (per commit, one per
    // indexed revision, and the working tree's latest few) and their dense sides, the static model's vocabulary, the
    // working tree's untracked files and its tracked files found unchanged (settled).
    let cache: Vec<String> = std::fs::read_dir(r.file(".lynx/cache"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        cache.iter().all(|n| n == "shards"
            || n == "walks"
            || n == "views"
            || n == "views-dense"
            || n == "worktree-views"
            || n == "vocab"
            || n == "untracked"
            || n == "settled"
            || n == "tokenizers"
            || n.ends_with(".json")
            || n.starts_with("tok")),
        "{cache:?}"
    );
    let walks = walkdir::WalkDir::new(r.file(".lynx/cache/walks"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .count();
    assert!(walks <= commits.len(), "{walks} walks kept for {} revisions", commits.len());
}

/// The files under a folder of the store.
/// The kept view files under the store.
fn kept_views(r: &TestRepo) -> Vec<std::path::PathBuf> {
    r.files_under(".lynx/cache/views")
}

/// The kept working-tree views under the store.
fn kept_worktree_views(r: &TestRepo) -> Vec<std::path::PathBuf> {
    r.files_under(".lynx/cache/worktree-views")
}

/// A sparse search (`args` after the query's command): its hits, and whether the debug log
/// says `marker`.
fn logged_search(r: &TestRepo, args: &[&str], marker: &str) -> (serde_json::Value, bool) {
    let mut all = vec!["--json", "--no-dense", "search"];
    all.extend_from_slice(args);
    let out = r.cmd(&all).env("LYNX_LOG", "lynx=debug").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (v["results"].clone(), String::from_utf8_lossy(&out.stderr).contains(marker))
}

/// A short history with two of its revisions indexed (lexical only), oldest first.
fn two_indexed_revisions(r: &TestRepo) -> (String, String) {
    let commits = history(r, 6);
    let (a, b) = (commits[2].clone(), commits[4].clone());
    r.json(&["--no-dense", "index", "--rev", &a, "--rev", &b]);
    (a, b)
}

/// A sparse search at `rev`: its hits, and whether it read a kept view.
fn search_at(r: &TestRepo, rev: &str) -> (serde_json::Value, bool) {
    logged_search(r, &["retry backoff timeout", "--rev", rev, "-k", "8"], "kept view of")
}

/// A sparse search of the working tree: its hits, and whether it read a kept view.
fn search_worktree(r: &TestRepo, query: &str) -> (serde_json::Value, bool) {
    logged_search(r, &[query, "-k", "8"], "kept view of the working tree")
}

#[test]
fn a_kept_view_is_read_back_and_a_damaged_or_misplaced_one_is_assembled_again() {
    let r = TestRepo::new();
    let (a, b) = &two_indexed_revisions(&r);
    let records = kept_views(&r);
    assert_eq!(records.len(), 2, "one kept view per indexed revision: {records:?}");
    let (kept_a, used) = search_at(&r, a);
    assert!(used, "the first search at an indexed revision reads its kept view");
    assert!(!kept_a.as_array().unwrap().is_empty());
    for p in &records {
        std::fs::remove_file(p).unwrap();
    }
    let (assembled_a, used) = search_at(&r, a);
    assert!(!used);
    assert_eq!(kept_a, assembled_a, "a kept view answers as the assembled one");
    let (assembled_b, _) = search_at(&r, b);

    // Written again by the next `index` (nothing new to process), then damaged: refused,
    // removed, and the answer is the assembled one.
    r.json(&["--no-dense", "index", "--rev", a, "--rev", b]);
    let records = kept_views(&r);
    assert_eq!(records.len(), 2);
    let of = |rev: &str| records.iter().find(|p| p.to_string_lossy().contains(&rev[2..])).unwrap().clone();
    let (rec_a, rec_b) = (of(a), of(b));
    let mut bytes = std::fs::read(&rec_a).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&rec_a, &bytes).unwrap();
    let (damaged_a, used) = search_at(&r, a);
    assert!(!used, "a damaged kept view is not read");
    assert_eq!(damaged_a, assembled_a);
    // Replaced by the view that search assembled, which the next search reads.
    assert_ne!(std::fs::read(&rec_a).unwrap(), bytes, "a damaged kept view is replaced");
    assert_eq!(search_at(&r, a), (assembled_a.clone(), true));

    // One revision's record in another's place is refused (it names its own commit).
    let good_b = std::fs::read(&rec_b).unwrap();
    let b_name = rec_b.file_name().unwrap().to_string_lossy().into_owned();
    let a_name = b_name.replacen(b.as_str(), a.as_str(), 1);
    let misplaced = rec_a.with_file_name(&a_name);
    std::fs::create_dir_all(misplaced.parent().unwrap()).unwrap();
    std::fs::write(&misplaced, &good_b).unwrap();
    let (misplaced_a, used) = search_at(&r, a);
    assert!(!used, "another revision's kept view is not read");
    assert_eq!(misplaced_a, assembled_a);
    assert_ne!(std::fs::read(&misplaced).unwrap(), good_b, "another revision's kept view is replaced");
    assert_eq!(search_at(&r, a), (assembled_a.clone(), true));
    let (kept_b, used) = search_at(&r, b);
    assert!(used);
    assert_eq!(kept_b, assembled_b);

    // `gc` removes kept views (`index` makes them again).
    r.json(&["gc"]);
    assert!(kept_views(&r).is_empty());
}

#[test]
fn a_server_reads_kept_views_before_it_answers() {
    let r = TestRepo::new();
    let (a, _) = &two_indexed_revisions(&r);
    let (expected, _) = search_at(&r, a);
    let first = expected[0]["path"].as_str().expect("a hit at the indexed revision").to_string();

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let mut server = common::mcp::Client::spawn_logging(&r, &["--no-dense", "serve"], &log);
    // Asked at once: the question waits for the server to be ready, and by then both
    // revisions' records are read.
    let (text, is_error) =
        server.call("search", serde_json::json!({"query": "retry backoff timeout", "rev": a, "n_results": 8}));
    assert!(!is_error, "{text}");
    assert!(text.contains(&first), "the answer at {a} names {first}: {text}");
    let log = std::fs::read_to_string(&log).unwrap();
    let records_read =
        |log: &str| log.lines().filter(|l| l.contains("kept view of ") && !l.contains("working tree")).count();
    let ready = log.find("index ready").unwrap_or_else(|| panic!("the server never said it was ready:\n{log}"));
    let preloaded = log
        .find("2 kept views read before the first question")
        .unwrap_or_else(|| panic!("the server did not read the kept views:\n{log}"));
    assert!(preloaded < ready, "the kept views were read after the server was ready:\n{log}");
    assert_eq!(records_read(&log[..ready]), 2, "{log}");
    assert_eq!(records_read(&log), 2, "the first question at an indexed revision read its record again:\n{log}");
    server.close();
}

#[test]
fn the_working_trees_view_is_kept_for_its_content_and_head_only() {
    let r = TestRepo::new();
    history(&r, 4);
    r.write("pkg0/draft.py", "def retry_draft(value):\n    \"\"\"retry the backoff draft\"\"\"\n    return value\n");
    let q = "retry backoff timeout";
    let (first, used) = search_worktree(&r, q);
    assert!(!used, "nothing is kept before the first assembly");
    assert_eq!(kept_worktree_views(&r).len(), 1, "the assembled working tree is kept");
    let (second, used) = search_worktree(&r, q);
    assert!(used, "the same content reads the kept view");
    assert_eq!(first, second, "a kept view answers as the assembled one");

    // An edit is new content: assembled again, and the answer sees the edit.
    r.write("pkg0/draft.py", "def zebra_draft(value):\n    \"\"\"zebra crossing\"\"\"\n    return value\n");
    let (edited, used) = search_worktree(&r, "zebra crossing");
    assert!(!used, "an edited tree is not answered from the record of its old content");
    assert_eq!(edited[0]["path"], "pkg0/draft.py", "{edited}");
    let (again, used) = search_worktree(&r, "zebra crossing");
    assert!(used);
    assert_eq!(edited, again);
    for p in kept_worktree_views(&r) {
        std::fs::remove_file(p).unwrap();
    }
    let (assembled, _) = search_worktree(&r, "zebra crossing");
    assert_eq!(edited, assembled);

    // A damaged record is refused and removed; the answer is the assembled one.
    let records = kept_worktree_views(&r);
    assert_eq!(records.len(), 1);
    let mut bytes = std::fs::read(&records[0]).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&records[0], &bytes).unwrap();
    let (damaged, used) = search_worktree(&r, "zebra crossing");
    assert!(!used, "a damaged record is not read");
    assert_eq!(damaged, assembled);

    // The same files over a new HEAD (its history field differs) are not the same view.
    r.commit_all("zebra crossing drafted");
    let (committed, used) = search_worktree(&r, "zebra crossing");
    assert!(!used, "a record made over another HEAD is not read");
    assert_eq!(committed[0]["path"], "pkg0/draft.py");

    // An edit that keeps the file list takes the history field (which now matches the query:
    // the commit's subject) from the earlier state's record, moved over the new table: the
    // answer is the one a fresh assembly gives, to the last bit of every score.
    let mut two = String::from("def zebra_draft(value):\n    \"\"\"zebra crossing, edited\"\"\"\n    return 1\n\n");
    for i in 0..40 {
        two.push_str(&format!("\ndef helper_{i}(value):\n    total = value + {i}\n    return total * {i}\n"));
    }
    r.write("pkg0/draft.py", &two);
    let (reused, moved) =
        logged_search(&r, &["zebra crossing", "-k", "8", "--explain"], "history field taken from the kept view");
    assert!(moved, "the earlier state's history field is taken");
    for p in kept_worktree_views(&r) {
        std::fs::remove_file(p).unwrap();
    }
    let fresh = r.json(&["--no-dense", "search", "zebra crossing", "-k", "8", "--explain"]);
    assert_eq!(reused, fresh["results"], "a moved history field answers as a built one");
    assert!(
        fresh["results"][0]["explain"]["sparse"]["terms"].to_string().contains("\"history\""),
        "the history field takes part in the answer: {fresh}"
    );

    // Only the latest few states are kept; `gc` removes them.
    for i in 0..6 {
        r.write("pkg1/state.py", &format!("def state_{i}():\n    return {i}\n"));
        search_worktree(&r, q);
    }
    let n = kept_worktree_views(&r).len();
    assert!((1..=4).contains(&n), "{n} working-tree records kept");
    r.json(&["gc"]);
    assert!(kept_worktree_views(&r).is_empty());
}

#[test]
fn identical_files_at_several_paths_count_as_several_documents() {
    let r = TestRepo::new();
    let body = "def vendored_helper(x):\n    \"\"\"zebrafish adapter\"\"\"\n    return x\n";
    r.write("a/copy.py", body);
    r.write("b/copy.py", body);
    r.write("c/other.py", "def other(x):\n    \"\"\"zebrafish only here once\"\"\"\n    return x\n");
    for i in 0..5 {
        r.write(&format!("d/f{i}.py"), &format!("def f{i}():\n    return {i}\n"));
    }
    r.commit_all("init");
    let v = r.json(&["--no-dense", "search", "zebrafish adapter", "-k", "10"]);
    let paths: Vec<&str> = v["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    // Byte-identical chunks are shown once; the copy wins over the one-word match.
    assert_eq!(paths[0], "a/copy.py", "{v}");
    assert!(!paths.contains(&"b/copy.py"), "identical chunks are shown once: {v}");
    assert!(paths.contains(&"c/other.py"));
    // Removing one copy changes the statistics exactly as a store built without it would.
    r.remove("b/copy.py");
    r.commit_all("drop the copy");
    let shared = r.json(&["--no-dense", "search", "zebrafish adapter", "-k", "10"]);
    let _ = std::fs::remove_dir_all(r.file(".lynx"));
    let fresh = r.json(&["--no-dense", "search", "zebrafish adapter", "-k", "10"]);
    assert_eq!(shared["results"], fresh["results"]);
}

#[test]
fn concurrent_readers_an_indexer_and_gc_see_no_errors_and_no_wrong_answers() {
    let r = TestRepo::new();
    let commits = history(&r, 14);
    let m = static_model();
    let (ready, later) = commits.split_at(8);
    for c in ready {
        r.json(&["--model", &m, "index", "--rev", c]);
    }
    let expected: BTreeMap<String, Answers> = ready.iter().map(|c| (c.clone(), answers(r.path(), c))).collect();
    let expected = std::sync::Arc::new(expected);
    let dir = r.path().to_path_buf();
    let mut handles = Vec::new();
    for reader in 0..4usize {
        let (expected, dir, revs) = (expected.clone(), dir.clone(), ready.to_vec());
        handles.push(std::thread::spawn(move || {
            for round in 0..3 {
                let c = &revs[(reader * 2 + round) % revs.len()];
                assert_eq!(answers(&dir, c), expected[c], "reader {reader}: wrong answer at {c}");
            }
        }));
    }
    let (dir_i, m_i, later) = (dir.clone(), m.clone(), later.to_vec());
    handles.push(std::thread::spawn(move || {
        for c in &later {
            let mut cmd = std::process::Command::new(BIN);
            isolate(&mut cmd).current_dir(&dir_i).args(["--json", "--model", &m_i, "index", "--rev", c]);
            let o = cmd.output().unwrap();
            assert!(o.status.success(), "indexer: {}", String::from_utf8_lossy(&o.stderr));
        }
    }));
    let dir_g = dir.clone();
    handles.push(std::thread::spawn(move || {
        for _ in 0..4 {
            let mut cmd = std::process::Command::new(BIN);
            isolate(&mut cmd).current_dir(&dir_g).args(["--json", "gc"]);
            let o = cmd.output().unwrap();
            assert!(o.status.success(), "gc: {}", String::from_utf8_lossy(&o.stderr));
        }
    }));
    for h in handles {
        h.join().unwrap();
    }
    // Afterwards everything answers as before, and the new revisions are there.
    for c in ready.iter().step_by(3) {
        assert_eq!(answers(r.path(), c), expected[c]);
    }
    assert_eq!(r.json(&["--model", &m, "index", "--rev", &commits[13]])["blobs_new"], 0);
}

/// Flips a byte at `at` (a fraction of the file) of every shard of `kind`.
fn damage(r: &TestRepo, ext: &str, at: f64) -> usize {
    let mut n = 0;
    for d in std::fs::read_dir(r.file(".lynx/cache/shards")).unwrap().flatten() {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == ext) {
                let mut b = std::fs::read(f.path()).unwrap();
                let i = ((b.len() as f64 * at) as usize).min(b.len() - 1);
                b[i] ^= 0x5a;
                std::fs::write(f.path(), b).unwrap();
                n += 1;
            }
        }
    }
    n
}

#[test]
fn damaged_or_missing_shards_are_detected_rebuilt_and_reported() {
    let r = TestRepo::new();
    let commits = history(&r, 4);
    let head = commits.last().unwrap().clone();
    let m = static_model();
    r.json(&["--model", &m, "index"]);
    let good = answers(r.path(), &head);
    let mut tried = 0;
    for ext in ["chunks", "postings", "vectors"] {
        for at in [0.0, 0.01, 0.3, 0.6, 0.97, 0.999] {
            tried += 1;
            let hit = damage(&r, ext, at);
            assert!(hit > 0, "no {ext} shard to damage");
            // doctor sees it (texts of chunk shards are checked by doctor too).
            let d = r.json_any(&["--model", &m, "doctor"]);
            let shards = d["checks"].as_array().unwrap().iter().find(|c| c["name"] == "shards").unwrap().clone();
            assert_eq!(shards["status"], "warn", "{ext} at {at}: doctor missed it: {shards}");
            // Every search either answers right (a shard found invalid when opened is rebuilt)
            // or, when it reads a damaged text, says so and removes the shard; asked again, it
            // answers right. Never a panic, never a wrong answer.
            assert_eq!(answers_repairing(r.path(), &head), good, "{ext} at {at}");
            // Damage in texts no answer read is left to doctor, which finds and repairs it.
            let d = r.json_any(&["--model", &m, "doctor", "--repair"]);
            assert!(d["ok"] != false, "{d}");
            let d = r.json_any(&["--model", &m, "doctor"]);
            let shards = d["checks"].as_array().unwrap().iter().find(|c| c["name"] == "shards").unwrap().clone();
            assert_eq!(shards["status"], "ok", "{ext} at {at}: not repaired: {shards}");
            assert_eq!(answers(r.path(), &head), good, "{ext} at {at} after repair");
        }
    }
    // Missing shards are rebuilt; doctor --repair removes damaged ones.
    std::fs::remove_dir_all(r.file(".lynx/cache/shards")).unwrap();
    assert_eq!(answers(r.path(), &head), good);
    damage(&r, "postings", 0.5);
    let d = r.json_any(&["doctor", "--repair"]);
    assert!(d.to_string().contains("shard"), "{d}");
    assert_eq!(answers(r.path(), &head), good);
    eprintln!("shard damage: {tried} kinds of damage tried, all detected and repaired");
}

#[test]
fn revisions_indexed_in_one_run_report_as_runs_one_after_another_and_share_segments() {
    let r = TestRepo::new();
    let commits = history(&r, 6);
    let revs = [commits[1].as_str(), commits[3].as_str(), commits[5].as_str()];
    // What each view reports of itself, without timings and segments.
    let per_view = |report: &serde_json::Value| -> Vec<serde_json::Value> {
        let keys = ["files_seen", "files_indexed", "blobs_new", "blobs_reused", "chunks_written", "skipped"];
        let view = |v: &serde_json::Value| serde_json::json!(keys.map(|k| v[k].clone()));
        match report["views"].as_array() {
            Some(views) => views.iter().map(view).collect(),
            None => vec![view(report)],
        }
    };
    let mut one_by_one = Vec::new();
    let mut segments_one_by_one = 0;
    for rev in revs {
        let report = r.json(&["--no-dense", "index", "--rev", rev]);
        segments_one_by_one += report["segments_written"].as_u64().unwrap();
        one_by_one.extend(per_view(&report));
    }
    let answers: Vec<_> = revs.iter().map(|rev| search_at(&r, rev).0).collect();

    std::fs::remove_dir_all(r.file(".lynx")).unwrap();
    let together = r.json(&["--no-dense", "index", "--rev", revs[0], "--rev", revs[1], "--rev", revs[2]]);
    assert_eq!(per_view(&together), one_by_one, "{together:#}");
    // Each later revision adds blobs: one by one they had segments of their own.
    assert!(one_by_one.iter().all(|v| v[2].as_u64().unwrap() > 0), "{one_by_one:?}");
    let segments = together["segments_written"].as_u64().unwrap();
    assert!(segments < segments_one_by_one, "{segments} segments in one run, {segments_one_by_one} one by one");
    for (rev, answer) in revs.iter().zip(&answers) {
        assert_eq!(&search_at(&r, rev).0, answer, "the same answer at {rev}");
    }
    // In text, shared segments are counted once, for the whole run.
    let text = r.text(&["--no-dense", "index", "--rev", revs[0], "--rev", revs[1]]);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("indexed ")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines.iter().all(|l| !l.contains("segments")), "{text}");
    assert!(text.contains("in all: 0 new blobs, 0 chunks written, 0 embedded, 0 segments"), "{text}");
}
