//! Helpers shared by the benchmarks: timing, percentiles, running the release binary on a
//! throwaway clone of a real repository.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

pub const BUILT: &str = env!("CARGO_BIN_EXE_git-lynx");

/// The binary measured: `LYNX_BENCH_BIN` (e.g. an older build, for before/after numbers) or
/// the one cargo just built.
pub fn bin() -> String {
    std::env::var("LYNX_BENCH_BIN").unwrap_or_else(|_| BUILT.to_string())
}

pub fn percentile(sorted_ms: &[f64], p: f64) -> f64 {
    if sorted_ms.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted_ms.len() as f64 - 1.0) * p).round() as usize;
    sorted_ms[idx.min(sorted_ms.len() - 1)]
}

/// The median (the mean of the middle two for an even count).
pub fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A fresh clone of `source` at `rev` in a temp dir (shares objects, own .lynx).
pub fn clone_at(source: &Path, rev: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    let out = Command::new("git")
        .args(["clone", "-q", "--shared", "--no-checkout", source.to_str().unwrap(), dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "clone: {}", String::from_utf8_lossy(&out.stderr));
    // Large files missing from snapshots must not stop the checkout.
    let _ =
        Command::new("git").args(["-c", "advice.detachedHead=false", "checkout", "-q", rev]).current_dir(&dir).output();
    (tmp, dir)
}

pub struct Run {
    pub ms: f64,
    pub json: serde_json::Value,
}

pub fn lynx(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(bin());
    c.arg("--json").arg("-q").args(args).current_dir(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    let t = Instant::now();
    let out = c.output().unwrap();
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!("git lynx {args:?}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    assert_eq!(json["ok"], true, "{json}");
    Run { ms, json }
}

pub fn du(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                total += m.len();
            }
        }
    }
    total
}

/// The benchmark repository: `LYNX_BENCH_REPO` or the first argument after `--`.
pub fn repo_arg() -> Option<PathBuf> {
    std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .or_else(|| std::env::var("LYNX_BENCH_REPO").ok().map(PathBuf::from))
}

/// A `git lynx serve` child driven over stdio like an agent.
pub struct Server {
    pub child: std::process::Child,
    pub stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Server {
    pub fn start(dir: &std::path::Path, model: &[&str]) -> Server {
        let mut child = Command::new(bin())
            .args(model)
            .args(["serve", "--profile", "full"])
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // LYNX_BENCH_SERVER_LOG=<file> keeps the server's log (with LYNX_LOG=debug, its step timings).
            .stderr(match std::env::var_os("LYNX_BENCH_SERVER_LOG") {
                Some(path) => std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap().into(),
                None => Stdio::null(),
            })
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Server { child, stdin, out, id: 0 }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}))
            .unwrap();
        loop {
            let mut line = String::new();
            self.out.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == self.id {
                return v;
            }
        }
    }

    pub fn init(&mut self) {
        self.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}));
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    }

    pub fn call(&mut self, tool: &str, args: Value) -> f64 {
        let t = Instant::now();
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert_eq!(v["result"]["isError"], false, "{v}");
        t.elapsed().as_secs_f64() * 1000.0
    }
}

/// Resident memory of a process (current, peak) in MB, from /proc.
pub fn rss_mb(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    (field("VmRSS:"), field("VmHWM:"))
}
