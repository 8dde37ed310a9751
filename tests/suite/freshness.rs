//! Freshness and many processes: watch (debounced, reconcile at start), the write lock,
//! several servers on one store, and doctor.

use crate::common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

struct Watcher {
    child: Child,
    updates: Receiver<serde_json::Value>,
}

impl Watcher {
    fn start(r: &TestRepo) -> Watcher {
        let mut child =
            r.cmd(&["--no-dense", "--json", "watch"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        Watcher { child, updates: rx }
    }

    fn next(&self, within: Duration) -> Option<serde_json::Value> {
        self.updates.recv_timeout(within).ok()
    }

    fn stop(self) {}
}

/// A failing test must not leave its watcher running.
impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn debounce(r: &TestRepo, ms: u64) {
    std::fs::create_dir_all(r.file(".lynx")).unwrap();
    std::fs::write(r.file(".lynx/config.toml"), format!("[watch]\ndebounce_ms = {ms}\n")).unwrap();
}

#[test]
fn watch_stops_when_the_checkout_is_deleted() {
    let r = TestRepo::new();
    seed_project(&r, 3);
    r.commit_all("init");
    let mut w = Watcher::start(&r);
    assert!(w.next(Duration::from_secs(30)).is_some(), "no reconcile update");
    std::fs::remove_dir_all(r.path()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = w.child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(Instant::now() < deadline, "watch still running 10 s after its checkout was deleted");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn watch_reflects_edits_creates_deletes_renames_and_debounces_bursts() {
    let r = TestRepo::new();
    seed_project(&r, 3);
    r.commit_all("first");
    debounce(&r, 300);
    r.json(&["--no-dense", "index"]);
    // A change made while nothing watched is caught at start.
    r.write("src/offline.py", "def offline_edit():\n    pass\n");
    let w = Watcher::start(&r);
    let first = w.next(Duration::from_secs(30)).expect("reconcile update");
    assert_eq!(first["reason"], "reconcile at start");
    assert_eq!(first["blobs_new"], 1, "{first}");
    let wait = Duration::from_secs(20);

    r.write("src/created.py", "def kangaroo_created():\n    pass\n");
    let u = w.next(wait).expect("update after create");
    assert!(u["blobs_new"].as_u64().unwrap() >= 1, "{u}");
    assert_eq!(r.search_paths(&["--no-dense", "kangaroo_created"]), ["src/created.py"]);

    r.write("src/created.py", "def wallaby_revised():\n    pass\n");
    w.next(wait).expect("update after edit");
    assert_eq!(r.search_paths(&["--no-dense", "wallaby_revised"]), ["src/created.py"]);

    std::fs::rename(r.file("src/created.py"), r.file("src/renamed.py")).unwrap();
    let u = w.next(wait).expect("update after rename");
    assert_eq!(u["blobs_new"], 0, "a rename processes nothing: {u}");
    assert_eq!(r.search_paths(&["--no-dense", "wallaby_revised"]), ["src/renamed.py"]);

    r.remove("src/renamed.py");
    w.next(wait).expect("update after delete");
    assert!(r.search_paths(&["--no-dense", "wallaby_revised"]).is_empty());

    // A burst of 20 saves inside the debounce window: one update.
    for i in 0..20 {
        r.write("src/burst.py", &format!("def burst_{i}():\n    pass\n"));
        std::thread::sleep(Duration::from_millis(20));
    }
    let u = w.next(wait).expect("update after burst");
    assert!(u["reason"].as_str().unwrap().contains("change events"), "{u}");
    assert!(w.next(Duration::from_millis(1500)).is_none(), "the burst caused more than one update");
    assert_eq!(r.search_paths(&["--no-dense", "burst_19"])[0], "src/burst.py");

    // A branch switch (HEAD moves) updates the view too.
    r.git(&["add", "-A"]);
    r.git(&["commit", "-q", "-m", "burst"]);
    w.next(wait); // the index file changed
    r.git(&["checkout", "-q", "HEAD~1"]);
    let started = Instant::now();
    let mut saw = false;
    while started.elapsed() < wait {
        if w.next(Duration::from_millis(500)).is_some() {
            saw = true;
            break;
        }
    }
    assert!(saw, "no update after checkout");
    w.stop();
}

#[test]
fn lock_contention_names_the_holder() {
    let r = TestRepo::new();
    seed_project(&r, 2);
    r.commit_all("first");
    r.json(&["--no-dense", "index"]);
    r.write("src/new.py", "def new_thing():\n    pass\n");
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(r.file(".lynx/lock")).unwrap();
    lock.lock().unwrap();
    std::fs::write(r.file(".lynx/lock.holder"), "pid 4242 (a test holding the lock) since 0").unwrap();
    let out = r.cmd(&["--no-dense", "index"]).env("LYNX_LOCK_TIMEOUT", "0.5").output().unwrap();
    assert_eq!(out.status.code(), Some(75), "documented exit code");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pid 4242") && err.contains("LYNX_LOCK_TIMEOUT"), "{err}");
    lock.unlock().unwrap();
    assert_eq!(r.json(&["--no-dense", "index"])["blobs_new"], 1);
}

#[test]
fn doctor_explains_files_and_repairs_a_corrupt_segment() {
    let r = TestRepo::new();
    seed_project(&r, 4);
    r.write(".gitignore", "build/\n");
    r.write("build/out.py", "x = 1\n");
    r.write("big.txt", &"x".repeat(2_000));
    r.write("lynx.toml", "[index]\nmax_file_size = 1000\n");
    r.commit_all("first");
    r.json(&["--no-dense", "index"]);
    let v = r.json_any(&["--no-dense", "doctor", "--path", "build/out.py"]);
    let msg = v["checks"][0]["message"].as_str().unwrap();
    assert!(msg.contains("ignored") && msg.contains(".gitignore:1") && msg.contains("build/"), "{msg}");
    let v = r.json_any(&["--no-dense", "doctor", "--path", "big.txt"]);
    assert!(v["checks"][0]["message"].as_str().unwrap().contains("size cap"), "{v}");
    let v = r.json_any(&["--no-dense", "doctor", "--path", "src/mod1.py"]);
    assert!(v["checks"][0]["message"].as_str().unwrap().contains("indexed"), "{v}");

    // Corrupt one segment: doctor says so (exit 2), --repair quarantines it and keeps the rest.
    let objects = r.file(".lynx/objects");
    // A chunks segment (the history layer's would be recomputed without any blob processed).
    let seg = std::fs::read_dir(&objects)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().len() == 2)
        .flat_map(|e| std::fs::read_dir(e.path()).unwrap().flatten())
        .map(|e| e.path())
        .find(|p| lynx_core::store::read_segment_with_meta(p).is_ok_and(|(_, layer, _)| layer == "chunks"))
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&seg, bytes).unwrap();
    let out = r.lynx(&["--no-dense", "--json", "doctor"]);
    assert_eq!(out.status.code(), Some(1), "a failed check fails doctor");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["status"] == "error" && c["message"].as_str().unwrap().contains("damaged")),
        "{v}"
    );
    let out = r.lynx(&["--no-dense", "--json", "doctor", "--repair"]);
    assert!(out.status.code().unwrap() <= 1, "{}", String::from_utf8_lossy(&out.stdout));
    assert!(!seg.exists() && r.file(".lynx/quarantine").is_dir());
    // Re-indexing re-processes what the quarantined segment held; search works again.
    let again = r.json(&["--no-dense", "index"]);
    let (new, seen) = (again["blobs_new"].as_u64().unwrap(), again["files_seen"].as_u64().unwrap());
    assert!(new >= 1 && new <= seen, "the quarantined segment's blobs are processed again: {again}");
    assert_eq!(r.search_paths(&["--no-dense", "compute_2"])[0], "src/mod2.py");
    assert_eq!(r.lynx(&["--no-dense", "doctor"]).status.code(), Some(0), "all green after the repair");
}

#[test]
fn two_servers_and_a_cli_share_one_store() {
    use std::io::Write;
    let r = TestRepo::new();
    seed_project(&r, 5);
    r.commit_all("first");
    let start = |r: &TestRepo| {
        let mut c = r
            .cmd(&["--no-dense", "serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = c.stdin.take().unwrap();
        let mut out = BufReader::new(c.stdout.take().unwrap());
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
        (c, stdin, out)
    };
    let ask = |stdin: &mut std::process::ChildStdin,
               out: &mut BufReader<std::process::ChildStdout>,
               id: u32,
               q: &str|
     -> String {
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"search","arguments":{{"query":"{q}"}}}}}}"#).unwrap();
        loop {
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v["result"]["content"][0]["text"].as_str().unwrap_or("").to_string();
            }
        }
    };
    let (mut a, mut a_in, mut a_out) = start(&r);
    let (mut b, mut b_in, mut b_out) = start(&r);
    let first = ask(&mut a_in, &mut a_out, 2, "compute_1");
    assert!(first.contains("src/mod1.py"), "{first}");
    let second = ask(&mut b_in, &mut b_out, 2, "compute_2");
    assert!(second.contains("src/mod2.py"), "{second}");
    // Exactly one of them watches.
    let holder = || std::fs::read_to_string(r.file(".lynx/watch.lock.holder")).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(10);
    while holder().trim().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let first_holder = holder();
    assert!(first_holder.contains("serve"), "{first_holder}");
    // A CLI index while both run.
    r.write("src/cli_added.py", "def platypus_cli():\n    pass\n");
    assert_eq!(r.json(&["--no-dense", "index"])["ok"], true);
    assert!(ask(&mut a_in, &mut a_out, 3, "platypus_cli").contains("src/cli_added.py"));
    assert!(ask(&mut b_in, &mut b_out, 3, "platypus_cli").contains("src/cli_added.py"));
    // The watcher exits: the other server takes over.
    let watcher_pid: u32 = first_holder.split_whitespace().nth(1).unwrap().parse().unwrap();
    let (victim, survivor) = if watcher_pid == a.id() { (&mut a, &mut b) } else { (&mut b, &mut a) };
    victim.kill().unwrap();
    victim.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    let survivor_pid = survivor.id().to_string();
    while !holder().contains(&survivor_pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(holder().contains(&survivor_pid), "the other server took over watching: {}", holder());
    drop((a_in, b_in));
    let _ = a.wait();
    let _ = b.wait();
}
