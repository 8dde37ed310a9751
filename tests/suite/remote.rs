//! `git lynx push` / `fetch` against real git servers on the loopback interface: a `file://`
//! remote, `git daemon` (git://) and `git http-backend` behind a small HTTP server (smart HTTP).
//! A fresh clone that fetches answers as the original does without processing a blob; a second
//! push sends only new segments; a tampered segment is refused; branches and tags stay as
//! they were.

use crate::common;
use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};

fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = isolate(&mut Command::new("git")).args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn lynx_json(dir: &Path, args: &[&str]) -> Value {
    let out = isolate(&mut Command::new(BIN)).arg("--json").args(args).current_dir(dir).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success(), "git lynx {args:?}: {v}");
    v
}

/// Branches and tags of a repository, to show that sharing never touches them.
fn heads_and_tags(dir: &Path) -> String {
    git_in(dir, &["for-each-ref", "refs/heads", "refs/tags", "refs/remotes"])
}

/// A project with a tag, pushed to a bare remote `remote.git` under `root`.
fn publish_project(root: &Path) -> TestRepo {
    let r = TestRepo::new();
    seed_project(&r, 30);
    calc_project(&r);
    r.git(&["tag", "v1"]);
    git_in(root, &["init", "-q", "--bare", "-b", "main", "remote.git"]);
    // Pushing over smart HTTP needs the receive service turned on in the served repository.
    git_in(&root.join("remote.git"), &["config", "http.receivepack", "true"]);
    git_in(&root.join("remote.git"), &["config", "daemon.receivepack", "true"]);
    r.git(&["remote", "add", "origin", &root.join("remote.git").display().to_string()]);
    r.git(&["push", "-q", "origin", "main", "v1"]);
    r
}

/// A small static embedding model made for the tests (vectors are shared too).
fn model() -> String {
    format!("{}/tests/fixtures/models/tiny-static", env!("CARGO_MANIFEST_DIR"))
}

/// Push from `r` to `url`, clone the remote, fetch into the clone: same answers, nothing
/// processed; a second push sends only what is new; refs untouched.
fn share_through(r: &TestRepo, root: &Path, url: &str) {
    let remote_dir = root.join("remote.git");
    let refs_before = heads_and_tags(&remote_dir);
    let m = model();
    let pushed = lynx_json(r.path(), &["--model", &m, "push", url]);
    assert!(pushed["new_segments"].as_u64().unwrap() > 0, "{pushed}");
    let total = pushed["segments"].as_u64().unwrap();
    assert_eq!(heads_and_tags(&remote_dir), refs_before, "push leaves branches and tags alone");
    assert!(git_in(&remote_dir, &["for-each-ref", "refs/lynx/objects"]).contains("refs/lynx/objects"));
    // Nothing new: nothing sent.
    let again = lynx_json(r.path(), &["--model", &m, "push", url]);
    assert_eq!(again["up_to_date"], true, "{again}");

    let clone = root.join(format!("clone-{}", url.len()));
    git_in(root, &["clone", "-q", url, &clone.display().to_string()]);
    let clone_refs = heads_and_tags(&clone);
    let fetched = lynx_json(&clone, &["--model", &m, "fetch", url]);
    assert_eq!(fetched["new_segments"].as_u64(), Some(total), "{fetched}");
    assert_eq!(heads_and_tags(&clone), clone_refs, "fetch leaves branches and tags alone");
    // The model named for the fetch is the clone's from now on: a shell without --model says so.
    let status = lynx_json(&clone, &["status"]);
    assert!(status["dense"]["model_from"].as_str().unwrap_or_default().contains("recorded"), "{status}");
    // The clone needs no processing: its first index finds every blob's objects and vectors.
    let idx = lynx_json(&clone, &["--model", &m, "index"]);
    assert_eq!(
        (idx["blobs_new"].as_u64(), idx["chunks_embedded"].as_u64(), idx["dense"].as_str()),
        (Some(0), Some(0), Some("ready")),
        "{idx}"
    );
    for args in
        [&["--model", &m, "search", "add numbers"][..], &["find-usages", "add"], &["describe-symbol", "Square.area"]]
    {
        let a = lynx_json(r.path(), args);
        let b = lynx_json(&clone, args);
        assert_eq!(a["results"], b["results"], "{args:?} answers the same in the clone");
    }

    // A new revision: the next push sends only the segments of its new blob.
    r.write("src/extra.py", "def quokka_extra():\n    return 'new'\n");
    r.commit_all("extra");
    r.git(&["push", "-q", "origin", "main"]);
    let next = lynx_json(r.path(), &["--model", &m, "push", url]);
    let sent = next["new_segments"].as_u64().unwrap();
    let (first_bytes, next_bytes) = (pushed["new_bytes"].as_u64().unwrap(), next["new_bytes"].as_u64().unwrap());
    // One segment per layer for the one new blob (the first push carried 35 files' worth).
    assert!(
        (1..=5).contains(&sent) && next_bytes < first_bytes,
        "only the new blob's segments: {sent}, {next_bytes} bytes after {first_bytes} ({next})"
    );
    assert_eq!(next["segments"].as_u64().unwrap(), total + sent);
    git_in(&clone, &["pull", "-q", "origin", "main"]);
    let fetched = lynx_json(&clone, &["--model", &m, "fetch", url]);
    assert_eq!(fetched["new_segments"].as_u64(), Some(sent), "{fetched}");
    let idx = lynx_json(&clone, &["--model", &m, "index"]);
    assert_eq!((idx["blobs_new"].as_u64(), idx["chunks_embedded"].as_u64()), (Some(0), Some(0)), "{idx}");
}

#[test]
fn push_and_fetch_over_a_file_remote() {
    let root = tempfile::tempdir().unwrap();
    let r = publish_project(root.path());
    let url = format!("file://{}", root.path().join("remote.git").display());
    share_through(&r, root.path(), &url);
    // --prune keeps only the given revisions' segments, as a new history.
    let pruned = lynx_json(r.path(), &["push", &url, "--prune"]);
    assert_eq!(pruned["pruned"], true);
    let remote = root.path().join("remote.git");
    assert_eq!(
        git_in(&remote, &["rev-list", "--count", "refs/lynx/objects"]).trim(),
        "1",
        "a pruned ref has no history"
    );
}

#[test]
fn a_trusted_fetch_brings_the_commit_facts_and_search_structures_along() {
    let root = tempfile::tempdir().unwrap();
    let r = publish_project(root.path());
    let url = format!("file://{}", root.path().join("remote.git").display());
    lynx_json(r.path(), &["push", &url]);
    let commits: u64 = r.git(&["rev-list", "--count", "HEAD"]).trim().parse().unwrap();

    let trusted = root.path().join("trusted");
    git_in(root.path(), &["clone", "-q", &url, &trusted.display().to_string()]);
    lynx_json(&trusted, &["fetch", "--trust", &url]);
    let shards = trusted.join(".lynx/cache/shards");
    let built = std::fs::read_dir(&shards).map(|d| d.count()).unwrap_or(0);
    assert!(built > 0, "the fetched segments' shards are built by the fetch");
    let idx = lynx_json(&trusted, &["index"]);
    // (A count of nothing is left out of the answer.)
    assert_eq!((idx["blobs_new"].as_u64(), idx["commits_new"].as_u64().unwrap_or(0)), (Some(0), 0), "{idx}");

    // The next commit costs its own facts, not the history's again.
    r.write("src/extra.py", "def quokka_extra():\n    return 'new'\n");
    r.commit_all("extra");
    r.git(&["push", "-q", "origin", "main"]);
    git_in(&trusted, &["pull", "-q", "origin", "main"]);
    let idx = lynx_json(&trusted, &["index"]);
    assert_eq!((idx["blobs_new"].as_u64(), idx["commits_new"].as_u64()), (Some(1), Some(1)), "{idx}");

    // Without --trust nothing can check a commit's facts but computing them: they are left out.
    let checked = root.path().join("checked");
    git_in(root.path(), &["clone", "-q", &url, &checked.display().to_string()]);
    git_in(&checked, &["checkout", "-q", "HEAD~1"]);
    let fetched = lynx_json(&checked, &["fetch", &url]);
    assert_eq!(fetched["import"]["history_segments_left_out"].as_u64(), Some(1), "{fetched}");
    let idx = lynx_json(&checked, &["index"]);
    assert_eq!(idx["commits_new"].as_u64(), Some(commits), "{idx}");
}

#[test]
fn a_tampered_segment_on_the_remote_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let r = publish_project(root.path());
    let remote = root.path().join("remote.git");
    lynx_json(r.path(), &["push", "origin"]);
    // An attacker rewrites the ref with one segment's bytes changed under the same name.
    let evil = root.path().join("evil");
    git_in(root.path(), &["init", "-q", "evil"]);
    git_in(&evil, &["fetch", "-q", &remote.display().to_string(), "refs/lynx/objects"]);
    git_in(&evil, &["checkout", "-q", "FETCH_HEAD"]);
    let seg = std::fs::read_dir(&evil)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().len() == 2)
        .flat_map(|e| std::fs::read_dir(e.path()).unwrap().flatten())
        .next()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&seg).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&seg, bytes).unwrap();
    git_in(&evil, &["commit", "-q", "-am", "tampered"]);
    git_in(&evil, &["push", "-q", "--force", &remote.display().to_string(), "HEAD:refs/lynx/objects"]);

    let clone = root.path().join("victim");
    git_in(root.path(), &["clone", "-q", &remote.display().to_string(), &clone.display().to_string()]);
    let out = isolate(&mut Command::new(BIN)).args(["--json", "fetch"]).current_dir(&clone).output().unwrap();
    assert!(!out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("does not match its hash"), "{v}");
    // Nothing of it was installed: the clone indexes its blobs itself.
    let idx = lynx_json(&clone, &["index"]);
    assert!(idx["blobs_new"].as_u64().unwrap() > 0, "{idx}");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_for(port: u16) {
    for _ in 0..100 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("nothing listens on port {port}");
}

struct Killed(std::process::Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn push_and_fetch_over_git_daemon() {
    let root = tempfile::tempdir().unwrap();
    let r = publish_project(root.path());
    let port = free_port();
    let daemon = isolate(&mut Command::new("git"))
        .args(["daemon", "--export-all", "--enable=receive-pack", "--reuseaddr", "--listen=127.0.0.1"])
        .arg(format!("--port={port}"))
        .arg(format!("--base-path={}", root.path().display()))
        .arg(root.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("git daemon (part of git) runs");
    let _daemon = Killed(daemon);
    wait_for(port);
    share_through(&r, root.path(), &format!("git://127.0.0.1:{port}/remote.git"));
}

/// One request to `git http-backend` (CGI), answered and the connection closed.
fn serve_cgi(mut stream: TcpStream, root: &Path) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("GET").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end().to_string();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |k: &str| headers.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if let Some(n) = header("content-length") {
        body.resize(n.parse().unwrap(), 0);
        reader.read_exact(&mut body).unwrap();
    } else if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).unwrap();
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap(), 16).unwrap();
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (h, var) in [
        ("content-type", "CONTENT_TYPE"),
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
        ("git-protocol", "GIT_PROTOCOL"),
    ] {
        if let Some(v) = header(h) {
            cgi.env(var, v);
        }
    }
    let mut child = cgi.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let raw = out.stdout;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| raw.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)))
        .unwrap_or((raw.len(), 0));
    let head = String::from_utf8_lossy(&raw[..split.0]).into_owned();
    let content = &raw[(split.0 + split.1).min(raw.len())..];
    let mut status = "200 OK".to_string();
    let mut response = Vec::new();
    for h in head.lines() {
        match h.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_string(),
            Some(_) => response.push(h.to_string()),
            None => {}
        }
    }
    let mut reply =
        format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n", content.len()).into_bytes();
    for h in response {
        reply.extend_from_slice(h.as_bytes());
        reply.extend_from_slice(b"\r\n");
    }
    reply.extend_from_slice(b"\r\n");
    reply.extend_from_slice(content);
    let _ = stream.write_all(&reply);
}

#[test]
fn push_and_fetch_over_smart_http() {
    let root = tempfile::tempdir().unwrap();
    let r = publish_project(root.path());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = root.path().to_path_buf();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = served.clone();
            std::thread::spawn(move || serve_cgi(stream, &root));
        }
    });
    share_through(&r, root.path(), &format!("http://127.0.0.1:{port}/remote.git"));
}
