//! A shared object store as a remote cache: `push --objects` from one clone, then a fresh clone
//! with an empty `.lynx` and the store configured indexes without processing a blob and answers
//! as the pusher does. Against a real S3-compatible server on the loopback interface
//! (`LYNX_TEST_S3_ENDPOINT`, started by `.ci/run`; required in CI through `LYNX_REQUIRE_S3`)
//! and a `file://` directory (everywhere): concurrent pushes, a forged or oversized segment, a
//! push cut off before its catalog or killed while uploading, an unreachable server or one that
//! stops mid-download, and a committed `lynx.toml` naming a store.

use crate::common;
use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where the tests' S3 server is, and the environment its client needs.
struct S3 {
    endpoint: String,
}

impl S3 {
    /// The server `.ci/run` started, or None (the test is skipped, or fails in CI).
    fn get() -> Option<S3> {
        let endpoint = std::env::var("LYNX_TEST_S3_ENDPOINT").ok().filter(|e| !e.is_empty());
        if !prerequisite(
            "s3",
            endpoint.is_some(),
            "set LYNX_TEST_S3_ENDPOINT to an S3-compatible server (.ci/run starts moto_server)",
        ) {
            return None;
        }
        Some(S3 { endpoint: endpoint.unwrap() })
    }

    /// Creates a bucket of its own for one test (a plain PUT: the test server does not check
    /// signatures) and returns its URL.
    fn bucket(&self, name: &str) -> String {
        // Unique per run: a server left running keeps the buckets of earlier runs.
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let name = format!("{name}-{}-{nanos}", std::process::id());
        let host = self.endpoint.trim_start_matches("http://").trim_end_matches('/');
        let mut s = std::net::TcpStream::connect(host).expect("the S3 test server answers");
        write!(s, "PUT /{name} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "creating bucket {name}: {answer}");
        format!("s3://{name}/lynx")
    }

    fn env(&self) -> Vec<(String, String)> {
        env_for(&self.endpoint)
    }

    /// The keys the bucket of `url` holds (one listing page, enough for a test's store).
    fn keys(&self, url: &str) -> Vec<String> {
        let bucket = url.trim_start_matches("s3://").split('/').next().unwrap();
        let host = self.endpoint.trim_start_matches("http://").trim_end_matches('/');
        let mut s = TcpStream::connect(host).unwrap();
        write!(s, "GET /{bucket}?list-type=2 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "listing {bucket}: {answer}");
        assert!(!answer.contains("<IsTruncated>true"), "{answer}");
        answer.split("<Key>").skip(1).map(|k| k.split("</Key>").next().unwrap().to_string()).collect()
    }
}

/// What the proxy does with a request.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Verdict {
    Forward,
    /// Held unanswered until the client goes away: an upload that never finishes.
    Stall,
    /// The server stops: every connection closed, nothing listening any more.
    Stop,
}

type Rule = Box<dyn Fn(&str, &str) -> Verdict + Send + Sync>;

/// An HTTP proxy on 127.0.0.1 in front of the S3 test server, whose rule decides each request's
/// fate from its method and target. One request per connection (it answers `Connection:
/// close`), so every request is seen.
struct Proxy {
    endpoint: String,
    state: Arc<ProxyState>,
}

struct ProxyState {
    upstream: String,
    rule: Rule,
    /// (method, target) of the requests answered by the server.
    forwarded: Mutex<Vec<(String, String)>>,
    stalled: AtomicUsize,
    stopped: AtomicBool,
    connections: Mutex<Vec<TcpStream>>,
}

impl Proxy {
    fn start(upstream: &str, rule: impl Fn(&str, &str) -> Verdict + Send + Sync + 'static) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(ProxyState {
            upstream: upstream.trim_start_matches("http://").trim_end_matches('/').to_string(),
            rule: Box::new(rule),
            forwarded: Mutex::new(Vec::new()),
            stalled: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
            connections: Mutex::new(Vec::new()),
        });
        let st = state.clone();
        // Polled, so that stopping closes the listening socket (connections are then refused).
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            while !st.stopped.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((c, _)) => {
                        c.set_nonblocking(false).unwrap();
                        st.connections.lock().unwrap().push(c.try_clone().unwrap());
                        let st = st.clone();
                        std::thread::spawn(move || st.serve(c));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Proxy { endpoint, state }
    }

    /// How many answered requests match `method` and have `part` in their target.
    fn answered(&self, method: &str, part: &str) -> usize {
        self.state.forwarded.lock().unwrap().iter().filter(|(m, t)| m == method && t.contains(part)).count()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.stop();
    }
}

/// A request or response head with `Connection: close` in place of its own connection headers.
fn close_after(head: &str) -> String {
    let mut lines: Vec<&str> = head.split("\r\n").filter(|l| !l.is_empty()).collect();
    lines.retain(|l| {
        let name = l.split(':').next().unwrap_or("").trim().to_ascii_lowercase();
        name != "connection" && name != "keep-alive"
    });
    format!("{}\r\nConnection: close\r\n\r\n", lines.join("\r\n"))
}

/// Reads up to the end of the head: (head, the bytes read past it). None when the peer closed.
fn read_head(c: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Some((String::from_utf8_lossy(&buf).into_owned(), rest));
        }
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

impl ProxyState {
    fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        for c in self.connections.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }

    fn serve(&self, mut client: TcpStream) {
        let Some((head, mut body)) = read_head(&mut client) else { return };
        let mut words = head.split_whitespace();
        let (method, target) = (words.next().unwrap_or("").to_string(), words.next().unwrap_or("").to_string());
        let length: usize = head
            .split("\r\n")
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
            .unwrap_or(0);
        assert!(!head.to_ascii_lowercase().contains("transfer-encoding: chunked"), "the proxy needs lengths: {head}");
        while body.len() < length {
            let mut chunk = vec![0u8; length - body.len()];
            match client.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => body.extend_from_slice(&chunk[..n]),
            }
        }
        match (self.rule)(&method, &target) {
            _ if self.stopped.load(Ordering::SeqCst) => {}
            Verdict::Stop => self.stop(),
            Verdict::Stall => {
                self.stalled.fetch_add(1, Ordering::SeqCst);
                // Until the client closes its end (it was killed).
                let _ = client.read(&mut [0u8; 1]);
            }
            Verdict::Forward => {
                let mut up = TcpStream::connect(&self.upstream).unwrap();
                up.write_all(close_after(&head).as_bytes()).unwrap();
                up.write_all(&body).unwrap();
                let mut answer = Vec::new();
                up.read_to_end(&mut answer).unwrap();
                let end = answer.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head") + 4;
                let head = close_after(&String::from_utf8_lossy(&answer[..end]));
                if client.write_all(head.as_bytes()).and_then(|_| client.write_all(&answer[end..])).is_ok() {
                    self.forwarded.lock().unwrap().push((method, target));
                }
            }
        }
    }
}

/// Static test credentials, the endpoint and plain HTTP: the client's standard chain.
fn env_for(endpoint: &str) -> Vec<(String, String)> {
    [
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_ALLOW_HTTP", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Runs git-lynx with `--json` in `dir`, with the store (when given) in LYNX_OBJECTS_URL.
fn run(dir: &Path, store: Option<&str>, env: &[(String, String)], args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    isolate(&mut c).arg("--json").args(args).current_dir(dir);
    if let Some(url) = store {
        c.env("LYNX_OBJECTS_URL", url);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn json(dir: &Path, store: Option<&str>, env: &[(String, String)], args: &[&str]) -> (Value, String) {
    let out = run(dir, store, env, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    assert!(out.status.success(), "git lynx {args:?}: {v}\n{stderr}");
    (v, stderr)
}

/// The project CI indexes and pushes.
fn project() -> TestRepo {
    let r = TestRepo::new();
    seed_project(&r, 30);
    calc_project(&r);
    r
}

/// A fresh clone of `r` (nothing in `.lynx`).
fn clone_of(r: &TestRepo, root: &Path, name: &str) -> std::path::PathBuf {
    let to = root.join(name);
    let out = isolate(&mut Command::new("git"))
        .args(["clone", "-q", &r.path().display().to_string(), &to.display().to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    to
}

/// Questions whose answers the pusher and the reader must share.
const QUESTIONS: [&[&str]; 3] = [&["search", "add numbers"], &["search", "handler request"], &["find-usages", "add"]];

fn same_answers(a: &Path, b: &Path) {
    for q in QUESTIONS {
        let (x, _) = json(a, None, &[], q);
        let (y, _) = json(b, None, &[], q);
        assert!(x["results"].as_array().is_some_and(|r| !r.is_empty()), "{q:?}: {x}");
        assert_eq!(x["results"], y["results"], "{q:?} answers the same");
    }
}

/// CI pushes; a fresh clone with the store configured indexes nothing itself and answers the
/// same; a second push uploads nothing.
fn share_through(url: &str, env: &[(String, String)]) {
    let root = tempfile::tempdir().unwrap();
    let ci = project();
    let (idx, _) = json(ci.path(), None, env, &["index"]);
    assert!(idx["blobs_new"].as_u64().unwrap() > 30, "{idx}");
    let (pushed, _) = json(ci.path(), None, env, &["push", "--objects", url]);
    assert!(pushed["uploaded"].as_u64().unwrap() > 0 && pushed["shards"].as_u64().unwrap() > 0, "{pushed}");
    assert_eq!(pushed["uploaded"], pushed["segments"], "a new store receives every segment: {pushed}");
    let (again, _) = json(ci.path(), None, env, &["push", "--objects", url]);
    assert_eq!((again["uploaded"].as_u64(), again["shards"].as_u64()), (Some(0), Some(0)), "{again}");

    let laptop = clone_of(&ci, root.path(), "laptop");
    let (idx, stderr) = json(&laptop, Some(url), env, &["index"]);
    assert_eq!(idx["blobs_new"].as_u64(), Some(0), "nothing computed on the laptop: {idx}\n{stderr}");
    assert!(idx["blobs_fetched"].as_u64().unwrap() > 30, "{idx}");
    let remote = &idx["remote"];
    assert_eq!(remote["misses"].as_u64(), Some(0), "{idx}");
    assert!(remote["bytes"].as_u64().unwrap() > 0 && remote["error"].is_null(), "{idx}");
    same_answers(ci.path(), &laptop);
    // `status` names the store and where it was set.
    let out = run(&laptop, Some(url), env, &["status"]);
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["objects_store"]["url"].as_str(), Some(url), "{status}");
    assert_eq!(status["objects_store"]["from"].as_str(), Some("LYNX_OBJECTS_URL"), "{status}");

    // A new revision: only its new blob's segments go up, and the next reader gets them.
    ci.write("src/extra.py", "def quokka_extra():\n    return 'marsupial'\n");
    ci.commit_all("extra");
    let (next, _) = json(ci.path(), None, env, &["push", "--objects", url]);
    let sent = next["uploaded"].as_u64().unwrap();
    assert!((1..=4).contains(&sent), "only the new blob's segments: {next}");
    let out = isolate(&mut Command::new("git")).args(["pull", "-q"]).current_dir(&laptop).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (idx, _) = json(&laptop, Some(url), env, &["index"]);
    assert_eq!((idx["blobs_new"].as_u64(), idx["blobs_fetched"].as_u64()), (Some(0), Some(1)), "{idx}");
}

#[test]
fn a_directory_store_shares_the_index() {
    let store = tempfile::tempdir().unwrap();
    share_through(&format!("file://{}", store.path().display()), &[]);
}

#[test]
fn an_s3_store_shares_the_index() {
    let Some(s3) = S3::get() else { return };
    share_through(&s3.bucket("share"), &s3.env());
}

/// Two pushes of overlapping objects at once both succeed, and a reader then finds every blob
/// of both.
fn concurrent_pushes(url: &str, env: &[(String, String)]) {
    let root = tempfile::tempdir().unwrap();
    let a = project();
    let b_dir = clone_of(&a, root.path(), "b");
    std::fs::write(b_dir.join("src/only_b.py"), "def wombat_only_b():\n    return 'b'\n").unwrap();
    let out = isolate(&mut Command::new("git")).args(["add", "-A"]).current_dir(&b_dir).output().unwrap();
    assert!(out.status.success());
    let out = isolate(&mut Command::new("git")).args(["commit", "-q", "-m", "b"]).current_dir(&b_dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    json(a.path(), None, env, &["index"]);
    json(&b_dir, None, env, &["index"]);
    let spawn = |dir: &Path| {
        let mut c = Command::new(BIN);
        isolate(&mut c).args(["--json", "push", "--objects", url]).current_dir(dir);
        c.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
    };
    let (pa, pb) = (spawn(a.path()), spawn(&b_dir));
    for p in [pa, pb] {
        let out = p.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["uploaded"].as_u64().unwrap() + v["skipped"].as_u64().unwrap(), v["segments"].as_u64().unwrap());
    }
    let out = isolate(&mut Command::new("git"))
        .args(["clone", "-q", &b_dir.display().to_string(), "reader"])
        .current_dir(root.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let (idx, stderr) = json(&root.path().join("reader"), Some(url), env, &["index"]);
    assert_eq!(idx["blobs_new"].as_u64(), Some(0), "both pushes' objects are found: {idx}\n{stderr}");
    same_answers(&b_dir, &root.path().join("reader"));
}

#[test]
fn concurrent_pushes_to_a_directory_store_are_both_kept() {
    let store = tempfile::tempdir().unwrap();
    concurrent_pushes(&format!("file://{}", store.path().display()), &[]);
}

#[test]
fn concurrent_pushes_to_an_s3_store_are_both_kept() {
    let Some(s3) = S3::get() else { return };
    concurrent_pushes(&s3.bucket("concurrent"), &s3.env());
}

/// The store's segment files (`segments/ab/….parquet`).
fn segment_files(store: &Path) -> Vec<std::path::PathBuf> {
    files_under(&store.join("segments")).into_iter().filter(|p| p.extension().is_some_and(|e| e == "parquet")).collect()
}

#[test]
fn a_forged_segment_is_refused_and_its_blobs_indexed_here() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    let url = format!("file://{}", store.display());
    let ci = project();
    json(ci.path(), None, &[], &["push", "--objects", &url]);
    // Every segment's bytes changed under its name (a chunk segment among them): each one is
    // refused, and the laptop computes what they held.
    let files = segment_files(&store);
    assert!(files.len() >= 3, "{files:?}");
    for f in &files {
        let mut bytes = std::fs::read(f).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x5a;
        std::fs::write(f, bytes).unwrap();
    }
    let laptop = clone_of(&ci, root.path(), "laptop");
    let (idx, stderr) = json(&laptop, Some(&url), &[], &["index"]);
    assert!(idx["blobs_new"].as_u64().unwrap() > 30, "{idx}");
    assert_eq!(idx["remote"]["segments"].as_u64(), Some(0), "{idx}");
    let refused = idx["remote"]["refused"].as_array().unwrap();
    // Chunks, terms and graph of every blob (the history segment is not asked for).
    assert!(refused.len() >= 3, "{idx}");
    assert!(refused[0].as_str().unwrap().contains("do not hash to its name"), "{idx}");
    assert!(stderr.contains("refusing segment"), "{stderr}");
    same_answers(ci.path(), &laptop);
}

#[test]
fn a_push_cut_off_before_its_catalog_is_not_used_and_a_new_push_completes_it() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    let url = format!("file://{}", store.display());
    let ci = project();
    json(ci.path(), None, &[], &["push", "--objects", &url]);
    // What a push killed after its uploads leaves: segments, and no catalog shard, manifest or
    // commit pointer naming them (those are written after every segment, in that order).
    for dir in ["catalog", "manifests", "commits"] {
        std::fs::remove_dir_all(store.join(dir)).unwrap();
    }
    let laptop = clone_of(&ci, root.path(), "laptop");
    let (idx, _) = json(&laptop, Some(&url), &[], &["index"]);
    assert!(idx["blobs_new"].as_u64().unwrap() > 30, "nothing partial is used: {idx}");
    assert_eq!(idx["remote"]["hits"].as_u64(), Some(0), "{idx}");
    // The next push finds its segments there and writes the catalog.
    let (pushed, _) = json(ci.path(), None, &[], &["push", "--objects", &url]);
    assert_eq!(pushed["uploaded"].as_u64(), Some(0), "{pushed}");
    assert!(pushed["shards"].as_u64().unwrap() > 0, "{pushed}");
    let fresh = clone_of(&ci, root.path(), "fresh");
    let (idx, _) = json(&fresh, Some(&url), &[], &["index"]);
    assert_eq!(idx["blobs_new"].as_u64(), Some(0), "{idx}");
}

#[test]
fn an_unreachable_store_is_a_warning_and_local_indexing() {
    // Nothing listens on this port: the connection is refused at once.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let env = env_for(&format!("http://127.0.0.1:{port}"));
    let root = tempfile::tempdir().unwrap();
    let ci = project();
    let laptop = clone_of(&ci, root.path(), "laptop");
    let t = std::time::Instant::now();
    let (idx, stderr) = json(&laptop, Some("s3://nowhere/lynx"), &env, &["index"]);
    assert!(t.elapsed().as_secs() < 60, "an unreachable store costs seconds: {:?}", t.elapsed());
    assert!(idx["blobs_new"].as_u64().unwrap() > 30, "{idx}");
    assert!(idx["remote"]["error"].is_string(), "{idx}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("could not be read")).collect();
    assert_eq!(warnings.len(), 1, "one line: {stderr}");
    same_answers(ci.path(), &laptop);
    // Pushing there is an error that names the store.
    let out = run(ci.path(), None, &env, &["push", "--objects", "s3://nowhere/lynx"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("s3://nowhere/lynx"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn unsupported_schemes_name_the_supported_ones() {
    let r = project();
    for url in ["gs://bucket/x", "az://container/x", "ftp://host/x"] {
        let out = run(r.path(), None, &[], &["push", "--objects", url]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success() && text.contains("s3://") && text.contains("file://"), "{url}: {text}");
    }
    // No store anywhere: the error says how to name one.
    let out = run(r.path(), None, &[], &["push", "--objects"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("LYNX_OBJECTS_URL"));
}

#[test]
fn a_committed_lynx_toml_cannot_choose_the_store() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    let url = format!("file://{}", store.display());
    let ci = project();
    json(ci.path(), None, &[], &["push", "--objects", &url]);
    ci.write("lynx.toml", &format!("[store]\nobjects_url = \"{url}\"\n"));
    ci.commit_all("a store named by the repository");
    let laptop = clone_of(&ci, root.path(), "laptop");
    let (idx, stderr) = json(&laptop, None, &[], &["index"]);
    assert!(idx["remote"].is_null() && idx["blobs_fetched"].is_null(), "{idx}");
    assert!(idx["blobs_new"].as_u64().unwrap() > 30, "{idx}");
    assert!(stderr.contains("lynx.toml") && stderr.contains("`store` is ignored"), "{stderr}");
    // The user accepts it in their own configuration: then it is used.
    let other = clone_of(&ci, root.path(), "accepted");
    std::fs::create_dir_all(other.join(".lynx")).unwrap();
    std::fs::write(other.join(".lynx/config.toml"), format!("[store]\nobjects_url = \"{url}\"\n")).unwrap();
    let (idx, _) = json(&other, None, &[], &["index"]);
    assert!(idx["blobs_new"].as_u64().unwrap() <= 1, "only lynx.toml itself may be new: {idx}");
    assert!(idx["blobs_fetched"].as_u64().unwrap() > 30, "{idx}");
}

#[test]
fn vectors_travel_for_the_model_the_reader_uses() {
    let root = tempfile::tempdir().unwrap();
    let url = format!("file://{}", root.path().join("store").display());
    let model = format!("{}/tests/fixtures/models/tiny-static", env!("CARGO_MANIFEST_DIR"));
    let ci = project();
    let (pushed, _) = json(ci.path(), None, &[], &["--model", &model, "push", "--objects", &url]);
    assert!(pushed["uploaded"].as_u64().unwrap() >= 4, "chunks, terms, graph and vectors: {pushed}");
    let laptop = clone_of(&ci, root.path(), "laptop");
    let (idx, stderr) = json(&laptop, Some(&url), &[], &["--model", &model, "index"]);
    assert_eq!(
        (idx["blobs_new"].as_u64(), idx["chunks_embedded"].as_u64(), idx["dense"].as_str()),
        (Some(0), Some(0), Some("ready")),
        "nothing computed, vectors included: {idx}\n{stderr}"
    );
    // The vectors' round is counted with the blobs' one.
    assert!(idx["remote"]["segments"].as_u64().unwrap() >= 4, "{idx}");
    let q = ["--model", model.as_str(), "search", "add two numbers"];
    let (a, _) = json(ci.path(), None, &[], &q);
    let (b, _) = json(&laptop, None, &[], &q);
    assert_eq!(a["results"], b["results"]);
}

/// Content for a file whose git blob id starts with `digit` (so its catalog entries land in one
/// group of the store's catalog).
fn content_in_group(r: &TestRepo, digit: char, n: usize) -> String {
    for salt in 0.. {
        let text = format!("def numbat_{n}_{salt}():\n    return {n}\n");
        let mut c = isolate(&mut Command::new("git"))
            .args(["hash-object", "--stdin"])
            .current_dir(r.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        let id = String::from_utf8(c.wait_with_output().unwrap().stdout).unwrap();
        if id.starts_with(digit) {
            return text;
        }
    }
    unreachable!()
}

#[test]
fn many_pushes_to_one_catalog_group_are_compacted_and_nothing_is_lost() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    let url = format!("file://{}", store.display());
    let ci = project();
    json(ci.path(), None, &[], &["push", "--objects", &url]);
    // Ten pushes, each adding a blob to the chunk catalog's group `a`.
    for n in 0..10 {
        ci.write(&format!("src/numbat{n}.py"), &content_in_group(&ci, 'a', n));
        ci.commit_all(&format!("numbat {n}"));
        let (pushed, _) = json(ci.path(), None, &[], &["push", "--objects", &url]);
        assert!(pushed["shards"].as_u64().unwrap() >= 1, "{pushed}");
    }
    let group = store
        .join("catalog")
        .read_dir()
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("chunks-"));
    let shards = files_under(&group.unwrap().path().join("a"));
    assert!(shards.len() >= 11, "one shard a push: {shards:?}");
    // The newest shards hold the whole group once readers would read too many.
    let sizes: Vec<u64> = shards.iter().map(|p| std::fs::metadata(p).unwrap().len()).collect();
    let biggest = shards[sizes.iter().enumerate().max_by_key(|(_, s)| **s).unwrap().0].clone();
    let gen_of = |p: &Path| p.file_name().unwrap().to_string_lossy()[..8].parse::<u32>().unwrap();
    assert!(gen_of(&biggest) >= 9, "a compacting shard was written late: {shards:?}");
    let laptop = clone_of(&ci, root.path(), "laptop");
    let (idx, _) = json(&laptop, Some(&url), &[], &["index"]);
    assert_eq!(idx["blobs_new"].as_u64(), Some(0), "{idx}");
    let (hits, _) = json(&laptop, None, &[], &["search", "numbat_9"]);
    assert!(hits["results"].to_string().contains("numbat9.py"), "{hits}");
}

/// `serve` indexes through the same path: a fresh clone's server answers its first question
/// from segments downloaded from the store (their names are the pusher's, which this clone
/// could not have written: the pusher's segments also hold a file the clone never had).
#[cfg(feature = "mcp")]
#[test]
fn a_server_indexes_from_the_store() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    let url = format!("file://{}", store.display());
    let ci = project();
    ci.write("scratch_only_on_ci.py", "def platypus():\n    return 'ci'\n");
    json(ci.path(), None, &[], &["index"]);
    ci.remove("scratch_only_on_ci.py");
    json(ci.path(), None, &[], &["push", "--objects", &url]);
    let pushed: Vec<String> = segment_files(&store)
        .iter()
        .map(|p| p.strip_prefix(store.join("segments")).unwrap().display().to_string())
        .collect();
    let laptop = TestRepo { dir: tempfile::tempdir().unwrap() };
    let out = isolate(&mut Command::new("git"))
        .args(["clone", "-q", &ci.path().display().to_string(), "."])
        .current_dir(laptop.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    laptop.write(".lynx/config.toml", &format!("[store]\nobjects_url = \"{url}\"\n"));
    let mut c = common::mcp::Client::start(&laptop, &["--no-watch"]);
    let (answer, err) = c.call("search", serde_json::json!({"query": "add two numbers"}));
    assert!(!err && answer.contains("src/calc.py"), "{answer}");
    assert!(c.close().success());
    let local = laptop.path().join(".lynx/objects");
    let fetched = pushed.iter().filter(|name| local.join(name).exists()).count();
    assert!(fetched >= 3, "the server used the pushed segments ({fetched} of {pushed:?})");
}

#[test]
fn a_segment_the_store_lost_is_computed_here_and_the_rest_is_used() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    let url = format!("file://{}", store.display());
    let ci = project();
    json(ci.path(), None, &[], &["push", "--objects", &url]);
    // The chunk segment a catalog shard names, gone from the store (a download that fails
    // half-way is the same to the reader: that object cannot be had).
    let lost = chunk_segment(&store);
    std::fs::remove_file(store.join("segments").join(format!("{lost}.parquet"))).unwrap();
    let laptop = clone_of(&ci, root.path(), "laptop");
    let (idx, stderr) = json(&laptop, Some(&url), &[], &["index"]);
    let refused = idx["remote"]["refused"].as_array().unwrap();
    assert!(refused.len() == 1 && refused[0].as_str().unwrap().starts_with(&lost), "{idx}");
    assert!(stderr.contains("refusing segment"), "{stderr}");
    // The other layers came from the store; the chunks are computed here.
    assert!(idx["remote"]["segments"].as_u64().unwrap() >= 2, "{idx}");
    assert!(idx["blobs_new"].as_u64().unwrap() > 30, "{idx}");
    same_answers(ci.path(), &laptop);
}

/// A chunk segment the catalog of a directory store names (`ab/cdef…`).
fn chunk_segment(store: &Path) -> String {
    let chunks = store
        .join("catalog")
        .read_dir()
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("chunks-"))
        .unwrap();
    let shard = files_under(&chunks.path())[0].clone();
    let body: Value = serde_json::from_slice(&zstd::decode_all(std::fs::File::open(&shard).unwrap()).unwrap()).unwrap();
    body["segments"].as_object().unwrap().keys().next().unwrap().clone()
}

#[test]
fn an_oversized_segment_is_refused_and_its_blobs_indexed_here() {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("store");
    let url = format!("file://{}", store.display());
    let ci = project();
    json(ci.path(), None, &[], &["push", "--objects", &url]);
    // The chunk segment, one byte over the size bound under its own name (sparse: no GiB is
    // written, and the reader must refuse it from its size, before reading it).
    let big = chunk_segment(&store);
    let file =
        std::fs::OpenOptions::new().write(true).open(store.join("segments").join(format!("{big}.parquet"))).unwrap();
    file.set_len((1 << 30) + 1).unwrap();
    drop(file);
    let laptop = clone_of(&ci, root.path(), "laptop");
    let t = Instant::now();
    let (idx, stderr) = json(&laptop, Some(&url), &[], &["index"]);
    assert!(t.elapsed() < Duration::from_secs(120), "{:?}", t.elapsed());
    let refused = idx["remote"]["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{idx}");
    let why = refused[0].as_str().unwrap();
    assert!(why.starts_with(&big) && why.contains("over the limit"), "{idx}");
    assert!(stderr.contains("refusing segment") && stderr.contains(&big), "{stderr}");
    assert!(idx["remote"]["error"].is_null(), "one object refused is not a store failure: {idx}");
    // The other layers came from the store; the chunks are computed here.
    assert!(idx["remote"]["segments"].as_u64().unwrap() >= 2, "{idx}");
    assert!(idx["blobs_new"].as_u64().unwrap() > 30, "{idx}");
    for f in files_under(&laptop.join(".lynx")) {
        assert!(std::fs::metadata(&f).unwrap().len() < 64 << 20, "nothing of it kept here: {}", f.display());
    }
    same_answers(ci.path(), &laptop);
}

/// Whether `target` (a request's path and query) is a segment's.
fn is_segment(target: &str) -> bool {
    target.contains("/segments/")
}

#[test]
fn a_push_killed_while_uploading_leaves_nothing_a_reader_uses_and_a_new_push_completes_it() {
    let Some(s3) = S3::get() else { return };
    let url = s3.bucket("killed");
    let env = s3.env();
    let root = tempfile::tempdir().unwrap();
    let ci = project();
    json(ci.path(), None, &env, &["index"]);
    // The first segment upload reaches the server; the others hang there, as on a slow link.
    let admitted = AtomicUsize::new(0);
    let proxy = Proxy::start(&s3.endpoint, move |method, target| {
        match method == "PUT" && is_segment(target) && admitted.fetch_add(1, Ordering::SeqCst) > 0 {
            true => Verdict::Stall,
            false => Verdict::Forward,
        }
    });
    let mut push = Command::new(BIN);
    isolate(&mut push).args(["--json", "push", "--objects", &url]).current_dir(ci.path());
    push.envs(env_for(&proxy.endpoint)).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = push.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while proxy.answered("PUT", "/segments/") < 1 || proxy.state.stalled.load(Ordering::SeqCst) < 1 {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "the push ended ({status}) before it was caught uploading: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(Instant::now() < deadline, "the push never reached its uploads");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
    drop(proxy);
    // What it left: a segment, and no catalog shard.
    let keys = s3.keys(&url);
    assert_eq!(keys.iter().filter(|k| is_segment(&format!("/{k}"))).count(), 1, "{keys:?}");
    assert!(!keys.iter().any(|k| k.contains("catalog/")), "{keys:?}");

    // A reader on a fresh clone uses none of it: it indexes here and answers as a local index.
    let laptop = clone_of(&ci, root.path(), "laptop");
    let (idx, stderr) = json(&laptop, Some(&url), &env, &["index"]);
    assert!(idx["blobs_new"].as_u64().unwrap() > 30, "nothing partial is used: {idx}");
    let remote = &idx["remote"];
    assert_eq!((remote["hits"].as_u64(), remote["segments"].as_u64()), (Some(0), Some(0)), "{idx}");
    assert!(remote["error"].is_null() && remote["refused"].is_null(), "{idx}\n{stderr}");
    same_answers(ci.path(), &laptop);

    // The push again completes: the segment already there is not sent twice, the rest and the
    // catalog go up, and the next fresh clone computes nothing.
    let (pushed, _) = json(ci.path(), None, &env, &["push", "--objects", &url]);
    let (segments, uploaded) = (pushed["segments"].as_u64().unwrap(), pushed["uploaded"].as_u64().unwrap());
    assert!(uploaded >= 1 && uploaded < segments, "{pushed}");
    assert_eq!(uploaded + pushed["skipped"].as_u64().unwrap(), segments, "{pushed}");
    assert!(pushed["shards"].as_u64().unwrap() > 0, "{pushed}");
    let fresh = clone_of(&ci, root.path(), "fresh");
    let (idx, stderr) = json(&fresh, Some(&url), &env, &["index"]);
    assert_eq!(idx["blobs_new"].as_u64(), Some(0), "{idx}\n{stderr}");
    same_answers(ci.path(), &fresh);
}

#[test]
fn a_server_that_stops_mid_download_is_one_warning_and_local_indexing() {
    let Some(s3) = S3::get() else { return };
    let url = s3.bucket("stops");
    let root = tempfile::tempdir().unwrap();
    let ci = project();
    json(ci.path(), None, &s3.env(), &["push", "--objects", &url]);
    // The server answers the catalog, then goes away at the first segment download.
    let proxy = Proxy::start(&s3.endpoint, |method, target| match method == "GET" && is_segment(target) {
        true => Verdict::Stop,
        false => Verdict::Forward,
    });
    let laptop = clone_of(&ci, root.path(), "laptop");
    let t = Instant::now();
    let (idx, stderr) = json(&laptop, Some(&url), &env_for(&proxy.endpoint), &["index"]);
    assert!(t.elapsed() < Duration::from_secs(90), "a stopped server costs seconds: {:?}", t.elapsed());
    assert!(proxy.state.stopped.load(Ordering::SeqCst), "the download was reached");
    // The commit's manifest (or the catalog) was read first: the store named what it holds.
    assert!(proxy.answered("GET", "manifests") + proxy.answered("GET", "catalog") >= 1, "read first");
    let remote = &idx["remote"];
    assert!(remote["asked"].as_u64().unwrap() > 30, "{idx}");
    assert_eq!(remote["segments"].as_u64(), Some(0), "{idx}");
    assert!(remote["error"].is_string(), "{idx}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        warnings.len() == 1 && warnings[0].contains("could not be read") && warnings[0].contains(&url),
        "one line: {stderr}"
    );
    assert!(idx["blobs_new"].as_u64().unwrap() > 30, "{idx}");
    same_answers(ci.path(), &laptop);
}

/// `objects gc` on a store keeps what the newest push (and those within `--keep-days`) reach:
/// a revision's own segments that only an expired push named go, the catalog stops naming
/// them, and a reader at the kept revision still computes nothing while one at the expired
/// revision computes only what was removed. `list` gives the store's object names (below the
/// URL's prefix).
fn collect_garbage(url: &str, env: &[(String, String)], list: &dyn Fn() -> Vec<String>) {
    let root = tempfile::tempdir().unwrap();
    let ci = project();
    json(ci.path(), None, env, &["push", "--objects", url]);
    ci.write("src/old.py", "def wombat_burrow():\n    return 'dig'\n");
    ci.commit_all("old");
    let (second, _) = json(ci.path(), None, env, &["push", "--objects", url]);
    assert!(second["manifest"].as_str().is_some_and(|m| m.starts_with("manifests/")), "{second}");
    ci.git(&["rm", "-q", "src/old.py"]);
    ci.write("src/new.py", "def koala_sleep():\n    return 'tree'\n");
    ci.commit_all("new");
    json(ci.path(), None, env, &["push", "--objects", url]);
    let segments = |names: &[String]| names.iter().filter(|n| n.starts_with("segments/")).count();
    let before = list();
    assert_eq!(before.iter().filter(|n| n.starts_with("manifests/")).count(), 3, "{before:?}");

    // A dry run says what would go and removes nothing.
    let args = ["objects", "gc", url, "--keep-days", "0", "--grace-hours", "0"];
    let (dry, _) = json(ci.path(), None, env, &[&args[..], &["--dry-run"]].concat());
    let would = dry["segments_removed"].as_u64().unwrap();
    assert!(would >= 1, "the old file's own segments: {dry}");
    assert_eq!(list(), before, "a dry run removes nothing");
    let (gc, _) = json(ci.path(), None, env, &args);
    assert_eq!(gc["segments_removed"].as_u64(), Some(would), "{gc}");
    assert_eq!((gc["manifests_kept"].as_u64(), gc["manifests_removed"].as_u64()), (Some(1), Some(2)), "{gc}");
    assert!(gc["shards_rewritten"].as_u64().unwrap() >= 1, "{gc}");
    let after = list();
    assert_eq!(segments(&after), segments(&before) - would as usize, "{after:?}");
    assert_eq!(after.iter().filter(|n| n.starts_with("manifests/")).count(), 1);

    // The kept revision comes whole from the store.
    let laptop = clone_of(&ci, root.path(), "laptop");
    let (idx, stderr) = json(&laptop, Some(url), env, &["index"]);
    assert_eq!(idx["blobs_new"].as_u64(), Some(0), "{idx}\n{stderr}");
    same_answers(ci.path(), &laptop);
    // At the expired revision only the removed file is computed, and no shard names a segment
    // that is gone (nothing refused).
    let (old, stderr) = json(&laptop, Some(url), env, &["index", "--rev", "HEAD~1"]);
    assert_eq!(old["blobs_new"].as_u64(), Some(1), "{old}\n{stderr}");
    assert!(old["remote"]["refused"].is_null(), "{old}");
}

#[test]
fn gc_of_a_directory_store_keeps_what_kept_pushes_reach() {
    let store = tempfile::tempdir().unwrap();
    let url = format!("file://{}", store.path().display());
    let list = || {
        let mut names: Vec<String> = files_under(store.path())
            .iter()
            .map(|p| p.strip_prefix(store.path()).unwrap().display().to_string())
            .collect();
        names.sort();
        names
    };
    collect_garbage(&url, &[], &list);
    // A store whose manifests are gone (pushed by an older version) says nothing tells it what
    // to keep, and removes nothing.
    std::fs::remove_dir_all(store.path().join("manifests")).unwrap();
    let kept = list();
    let repo = project();
    let out = run(repo.path(), None, &[], &["objects", "gc", &url, "--keep-days", "0", "--grace-hours", "0"]);
    assert!(!out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("holds no manifest"), "{v}");
    assert_eq!(list(), kept);
}

#[test]
fn gc_of_an_s3_store_keeps_what_kept_pushes_reach() {
    let Some(s3) = S3::get() else { return };
    let url = s3.bucket("gc");
    let list = || {
        let mut names: Vec<String> =
            s3.keys(&url).into_iter().filter_map(|k| k.strip_prefix("lynx/").map(String::from)).collect();
        names.sort();
        names
    };
    collect_garbage(&url, &s3.env(), &list);
}
