//! Every kind of file under `.lynx`, damaged in several ways: no command panics, no answer is
//! silently wrong (the right answer, possibly after one "damaged, run it again" error, or a
//! clear error), `doctor` detects what it should, `doctor --repair` fixes it. Also the
//! recovery cases: files over the size cap, sparse checkouts, huge `k`, a host that never
//! answers, a vanished repository, a read-only store.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

fn static_model() -> String {
    format!("{}/tests/fixtures/models/tiny-static", env!("CARGO_MANIFEST_DIR"))
}

const QUERIES: &[&str] = &["session token signature", "cache eviction policy", "retry the request"];

fn project(r: &TestRepo) {
    r.write("src/auth.py", "def verify_token(token):\n    \"\"\"Check the session token signature.\"\"\"\n    return token.signature == expected(token)\n\n\ndef expected(token):\n    return sign(token.body)\n");
    r.write("src/cache.py", "class LruCache:\n    \"\"\"A cache with an eviction policy.\"\"\"\n    def get(self, key):\n        return self.items.get(key)\n\n    def evict(self):\n        self.items.popitem()\n");
    r.write(
        "src/http.go",
        "package http\n\n// Retry the request with backoff.\nfunc Retry(req *Request) error {\n\treturn send(req)\n}\n",
    );
    r.write("README.md", "# Demo\n\nA demo of tokens, caches and retries.\n");
    r.commit_all("init");
}

struct Outcome {
    ok: bool,
    panicked: bool,
    json: serde_json::Value,
}

fn run(dir: &Path, args: &[&str]) -> Outcome {
    let mut c = std::process::Command::new(BIN);
    isolate(&mut c).current_dir(dir).arg("--json").args(["--model", &static_model()]).args(args);
    let o = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let panicked = o.status.code() == Some(101) || stderr.contains("panicked at") || o.status.code().is_none();
    let json = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    Outcome { ok: o.status.success(), panicked, json }
}

fn answers(dir: &Path) -> Vec<serde_json::Value> {
    QUERIES.iter().map(|q| run(dir, &["search", q, "-k", "5"]).json["results"].clone()).collect()
}

/// Answers after at most one retry per query (a damaged cache is reported once, then rebuilt);
/// None when a query keeps failing. Panics are counted by the caller.
fn answers_after_retry(dir: &Path, panics: &mut usize) -> Option<Vec<serde_json::Value>> {
    let mut out = Vec::new();
    for q in QUERIES {
        let mut got = None;
        for _ in 0..2 {
            let o = run(dir, &["search", q, "-k", "5"]);
            *panics += o.panicked as usize;
            if o.ok {
                got = Some(o.json["results"].clone());
                break;
            }
            let err = o.json["error"].as_str().unwrap_or("");
            assert!(!err.is_empty(), "a failure without a message: {}", o.json);
        }
        out.push(got?);
    }
    Some(out)
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    let out = std::process::Command::new("cp").arg("-a").arg(from).arg(to).output().unwrap();
    assert!(out.status.success());
}

#[derive(Clone, Copy, Debug)]
enum Damage {
    Delete,
    Empty,
    Truncate,
    Flip(f64),
    Garbage,
}

fn apply(path: &Path, d: Damage) {
    let bytes = std::fs::read(path).unwrap();
    match d {
        Damage::Delete => std::fs::remove_file(path).unwrap(),
        Damage::Empty => std::fs::write(path, b"").unwrap(),
        Damage::Truncate => std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap(),
        Damage::Flip(at) => {
            let mut b = bytes;
            if !b.is_empty() {
                let i = ((b.len() as f64 * at) as usize).min(b.len() - 1);
                b[i] ^= 0x5a;
            }
            std::fs::write(path, b).unwrap();
        }
        Damage::Garbage => std::fs::write(path, b"\x00\xffnot what this file should be\x13\x37").unwrap(),
    }
}

/// What a file under `.lynx` is, for the report.
fn kind_of(rel: &str) -> &'static str {
    if rel.ends_with(".parquet") {
        "segment"
    } else if rel.ends_with(".cat") {
        "catalog"
    } else if rel.ends_with("catalog/known") {
        "catalog list"
    } else if rel.contains("cache/shards") {
        "shard"
    } else if rel.contains("catalog/") && rel.ends_with(".json") {
        "vector layer info"
    } else if rel.ends_with("config.toml") {
        "config"
    } else if rel.contains("lock") {
        "lock"
    } else {
        "other cache"
    }
}

#[test]
fn every_file_under_the_store_damaged_in_every_way() {
    let r = TestRepo::new();
    project(&r);
    std::fs::create_dir_all(r.file(".lynx")).unwrap();
    std::fs::write(r.file(".lynx/config.toml"), "[search]\nk = 5\n").unwrap();
    assert!(run(r.path(), &["index"]).ok);
    let want = answers(r.path());
    assert!(want.iter().all(|a| !a.as_array().unwrap().is_empty()), "{want:?}");
    run(r.path(), &["doctor"]);
    let pristine =
        r.path().parent().unwrap().join(format!("{}-pristine", r.path().file_name().unwrap().to_string_lossy()));
    copy_dir(&r.file(".lynx"), &pristine);
    let (mut tried, mut detected, mut repaired, mut harmless, mut clear_errors, mut panics) = (0, 0, 0, 0, 0, 0);
    let mut by_kind: std::collections::BTreeMap<&str, usize> = Default::default();
    let files: Vec<PathBuf> = files_under(&pristine)
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("quarantine") && !p.to_string_lossy().ends_with("feedback.jsonl"))
        .collect();
    for file in &files {
        let rel = file.strip_prefix(&pristine).unwrap().to_string_lossy().into_owned();
        let kind = kind_of(&rel);
        for damage in [
            Damage::Delete,
            Damage::Empty,
            Damage::Truncate,
            Damage::Flip(0.02),
            Damage::Flip(0.5),
            Damage::Flip(0.98),
            Damage::Garbage,
        ] {
            copy_dir(&pristine, &r.file(".lynx"));
            apply(&r.file(".lynx").join(&rel), damage);
            tried += 1;
            *by_kind.entry(kind).or_default() += 1;
            let doctor = run(r.path(), &["doctor"]);
            panics += doctor.panicked as usize;
            let status = doctor.json["status"].as_str().unwrap_or("error").to_string();
            if kind == "config" {
                // The user's own file: a clear error naming it, from every command, or harmless
                // (an empty file is a valid configuration).
                let s = run(r.path(), &["search", QUERIES[0]]);
                panics += s.panicked as usize;
                if !s.ok {
                    assert!(
                        s.json["error"].as_str().unwrap_or("").contains("config.toml"),
                        "{rel} {damage:?}: {}",
                        s.json
                    );
                    clear_errors += 1;
                } else {
                    harmless += 1;
                }
                continue;
            }
            if status != "ok" {
                detected += 1;
            }
            let repair = run(r.path(), &["doctor", "--repair"]);
            panics += repair.panicked as usize;
            match answers_after_retry(r.path(), &mut panics) {
                Some(got) => {
                    assert_eq!(got, want, "{rel} {damage:?}: a wrong answer after repair");
                    if status != "ok" {
                        repaired += 1;
                    } else {
                        harmless += 1;
                    }
                }
                None => panic!("{rel} {damage:?}: still failing after doctor --repair"),
            }
            // Whatever doctor did not flag must not have changed an answer either.
            if status == "ok" {
                assert!(
                    matches!(kind, "lock" | "other cache" | "vector layer info" | "shard" | "catalog list"),
                    "{rel} {damage:?}: undetected damage of a {kind}"
                );
            }
        }
    }
    assert_eq!(panics, 0, "a command panicked");
    eprintln!(
        "corruption suite: {tried} damaged files ({by_kind:?}); detected by doctor {detected}, repaired {repaired}, harmless {harmless} (answers unchanged), config errors {clear_errors}; panics {panics}"
    );
    assert!(detected >= tried / 2, "doctor detected too little: {detected} of {tried}");
    let _ = std::fs::remove_dir_all(&pristine);
}

#[test]
fn a_file_over_the_size_cap_is_skipped_not_stale() {
    let r = TestRepo::new();
    project(&r);
    r.write("data/huge.py", &"x = 1\n".repeat(400_000));
    r.commit_all("big");
    run(r.path(), &["index"]);
    let st = run(r.path(), &["status"]).json;
    assert_eq!(st["state"], "fresh", "{st}");
    assert_eq!(st["skipped"]["too_large"], 1, "{st}");
    // An unchanged big file is not "deleted" in a diff search.
    std::fs::write(r.file("src/auth.py"), "def verify_token(token):\n    return True\n").unwrap();
    let d = run(r.path(), &["search-diff", "token", "--base", "HEAD"]).json;
    assert!(!d.to_string().contains("huge.py"), "{d}");
}

#[test]
fn a_sparse_checkout_is_not_a_deletion() {
    let r = TestRepo::new();
    project(&r);
    r.write("other/far.py", "def far_away():\n    return 1\n");
    r.commit_all("more");
    r.git(&["sparse-checkout", "set", "src"]);
    assert!(!r.file("other/far.py").exists());
    let v = run(r.path(), &["impact"]).json;
    assert_eq!(v["totals"]["deleted"], 0, "{v}");
    let v = run(r.path(), &["search", "far away"]).json;
    assert!(v.to_string().contains("other/far.py"), "files outside the cone are still searchable: {v}");
}

#[test]
fn a_huge_k_is_clamped_with_a_note() {
    let r = TestRepo::new();
    project(&r);
    let v = run(r.path(), &["search", "token", "-k", "1000000000000000"]);
    assert!(v.ok && !v.panicked, "{}", v.json);
    assert!(v.json["note"].as_str().unwrap_or("").contains("1000"), "{}", v.json);
    // A configured pool that large is refused with a clear message.
    std::fs::create_dir_all(r.file(".lynx")).unwrap();
    std::fs::write(r.file(".lynx/config.toml"), "[search]\npool = 1000000000000\n").unwrap();
    let v = run(r.path(), &["search", "token"]);
    assert!(!v.ok && v.json["error"].as_str().unwrap().contains("search.pool"), "{}", v.json);
}

#[test]
fn a_model_host_that_never_answers_does_not_hang_index() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    // Accepts connections and never answers.
    let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let h = held.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            h.lock().unwrap().push(s);
        }
    });
    let r = TestRepo::new();
    project(&r);
    let t = std::time::Instant::now();
    let mut c = std::process::Command::new(BIN);
    isolate(&mut c)
        .current_dir(r.path())
        .env_remove("HF_HUB_OFFLINE")
        .env("HF_ENDPOINT", &addr)
        .env("LYNX_NET_TIMEOUT", "2")
        .env("HF_HOME", r.file("hf"))
        .args(["--json", "--model", "someone/model", "index"]);
    let o = c.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(o.status.success(), "{v}");
    assert!(t.elapsed() < std::time::Duration::from_secs(60), "index waited {:?}", t.elapsed());
    assert_eq!(v["dense"], "off", "{v}");
    let reason = v["dense_reason"].as_str().unwrap();
    assert!(
        reason.contains("did not answer within 2 s")
            && reason.contains("HF_ENDPOINT")
            && reason.contains("model import"),
        "{v}"
    );
    assert_eq!(v["files_indexed"], 4, "the lexical index is there: {v}");
    // The next index does not wait for the host again: the failure is remembered, and said.
    let t = std::time::Instant::now();
    let o = c.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(t.elapsed() < std::time::Duration::from_secs(2), "index waited again: {:?}", t.elapsed());
    assert!(v["dense_reason"].as_str().unwrap().contains("was not reachable"), "{v}");
}

#[test]
fn a_refused_connection_is_said_as_such() {
    // A port nothing listens on: refused at once, not "did not answer".
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let r = TestRepo::new();
    project(&r);
    let mut c = std::process::Command::new(BIN);
    isolate(&mut c)
        .current_dir(r.path())
        .env_remove("HF_HUB_OFFLINE")
        .env("HF_ENDPOINT", format!("http://127.0.0.1:{port}"))
        .env("HF_HOME", r.file("hf"))
        .args(["--json", "--model", "someone/model", "index"]);
    let o = c.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reason = v["dense_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("refused the connection") || reason.contains("connection to 127.0.0.1 failed"), "{v}");
    assert!(reason.contains("to work offline"), "{v}");
}

#[test]
fn a_vanished_repository_and_a_read_only_store_give_clear_errors() {
    let r = TestRepo::new();
    project(&r);
    run(r.path(), &["index"]);
    // Read-only store: doctor says so, with the path.
    let lynx = r.file(".lynx");
    let mut perms = std::fs::metadata(&lynx).unwrap().permissions();
    use std::os::unix::fs::PermissionsExt;
    perms.set_mode(0o555);
    std::fs::set_permissions(&lynx, perms.clone()).unwrap();
    let probe = lynx.join("probe");
    let writable = std::fs::write(&probe, b"x").is_ok();
    let _ = std::fs::remove_file(&probe);
    if writable {
        eprintln!(
            "the store stays writable for this user (root): the read-only case is checked by doctor's probe only"
        );
    } else {
        let d = run(r.path(), &["doctor"]).json;
        let check = d["checks"].as_array().unwrap().iter().find(|c| c["name"] == "store writable").unwrap().clone();
        assert_eq!(check["status"], "error", "{check}");
        assert!(check["message"].as_str().unwrap().contains(".lynx"), "{check}");
    }
    perms.set_mode(0o755);
    std::fs::set_permissions(&lynx, perms).unwrap();

    // A feedback on a vanished store is refused and re-creates nothing.
    let gone = tempfile::tempdir().unwrap();
    let store = gone.path().join(".lynx");
    let e = lynx_ops::ops::feedback::record(&store.join("feedback.jsonl"), "search", "q", "helpful", "");
    assert!(e.err().expect("refused").to_string().contains("is gone"));
    assert!(!store.exists());
}
