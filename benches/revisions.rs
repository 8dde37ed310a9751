//! The first and second answer at an indexed revision, with the history field on, as history
//! grows: synthetic repositories of 1,000, 10,000 and 100,000 commits (2,000 files, each commit
//! changing one to three of them, made with `git fast-import`), and optionally a real one.
//! Revisions spread over each history are indexed first (`index --rev`), never asked; then a
//! search at each is timed twice from the CLI (process start to answer) and twice inside one
//! `serve`, asked at once and asked after the server has been idle for 2 s (when it has read
//! the most recently kept views); `--servers N` pools the answers of N servers of each kind, and
//! each row counts the questions whose first answer came within 1.2× of the second there.
//!
//!     cargo bench --bench revisions [-- /path/to/real/repo] [--sizes 1000,10000,100000] [--servers 5]

mod common;
use common::*;
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

const FILES: usize = 2000;
const WORDS: &[&str] = &[
    "retry", "backoff", "parser", "config", "handler", "cache", "queue", "client", "storage", "metrics", "index",
    "token", "session", "buffer", "schema",
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn file_text(i: usize, version: usize) -> String {
    let a = WORDS[i % WORDS.len()];
    let b = WORDS[(i / WORDS.len()) % WORDS.len()];
    format!(
        "def {a}_{b}_{i}(value):\n    \"\"\"The {a} step of the {b} module, revision {version}.\"\"\"\n    return value * {version} + {i}\n\n\ndef helper_{i}_{version}(x):\n    return {a}_{b}_{i}(x) - 1\n"
    )
}

/// A linear history of `commits` commits in a new repository.
fn synthetic(dir: &Path, commits: usize) {
    git(dir, &["init", "-q", "-b", "main"]);
    let mut child = std::process::Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut w = std::io::BufWriter::new(child.stdin.take().unwrap());
    let mut rng = Rng(0x5eed_1000 + commits as u64);
    let mut version = vec![0usize; FILES];
    for c in 0..commits {
        let msg = if c == 0 {
            "initial import".to_string()
        } else {
            format!(
                "{} the {} of module {}",
                ["fix", "speed up", "refactor", "document", "test"][rng.below(5)],
                WORDS[rng.below(WORDS.len())],
                rng.below(FILES)
            )
        };
        writeln!(
            w,
            "commit refs/heads/main\ncommitter Bench <bench@example.com> {} +0000\ndata {}\n{msg}",
            1_600_000_000 + c * 60,
            msg.len()
        )
        .unwrap();
        let changed: Vec<usize> =
            if c == 0 { (0..FILES).collect() } else { (0..1 + rng.below(3)).map(|_| rng.below(FILES)).collect() };
        for f in changed {
            version[f] += 1;
            let text = file_text(f, version[f]);
            writeln!(w, "M 100644 inline src/m{}/f{f}.py\ndata {}\n{text}", f % 40, text.len()).unwrap();
        }
        writeln!(w).unwrap();
    }
    drop(w);
    assert!(child.wait().unwrap().success(), "fast-import failed");
    git(dir, &["-c", "advice.detachedHead=false", "checkout", "-q", "main"]);
}

/// Revisions spread over the first-parent history (tip excluded).
fn spread(dir: &Path, n: usize) -> Vec<String> {
    let all: Vec<String> = git(dir, &["rev-list", "--first-parent", "HEAD"]).lines().map(String::from).collect();
    (1..=n).map(|i| all[(all.len() - 1) * i / (n + 1)].clone()).collect()
}

/// `servers`: how many fresh servers answer the five revisions (their answers pooled: at
/// sub-millisecond answers one server's five are too few to tell variants apart).
fn measure(label: &str, dir: &Path, commits: usize, servers: usize) -> serde_json::Value {
    let revs = spread(dir, 5);
    let mut index_args = vec!["--no-dense", "index"];
    for r in &revs {
        index_args.extend(["--rev", r.as_str()]);
    }
    let t = Instant::now();
    lynx(dir, &index_args, &[]);
    let index_s = t.elapsed().as_secs_f64();
    let _ = std::process::Command::new("sync").status();
    let (mut cli_first, mut cli_second) = (Vec::new(), Vec::new());
    for r in &revs {
        cli_first.push(lynx(dir, &["--no-dense", "search", "retry backoff handler", "--rev", r, "-k", "5"], &[]).ms);
        cli_second.push(lynx(dir, &["--no-dense", "search", "retry backoff handler", "--rev", r, "-k", "5"], &[]).ms);
    }
    // The working tree is indexed too, so the server answers idle (not while indexing it), and
    // what indexing wrote is on disk: answers are not timed against the kernel's writeback.
    lynx(dir, &["--no-dense", "index"], &[]);
    let _ = std::process::Command::new("sync").status();
    let (mut serve_first, mut serve_second, mut idle_first, mut idle_second) = (vec![], vec![], vec![], vec![]);
    for _ in 0..servers {
        let (first, second) = serve(dir, &revs, 0);
        serve_first.extend(first);
        serve_second.extend(second);
        // An agent's questions come seconds after the server starts; meanwhile it reads the
        // most recently kept views.
        let (first, second) = serve(dir, &revs, 2);
        idle_first.extend(first);
        idle_second.extend(second);
    }
    let within = |first: &[f64], second: &[f64]| first.iter().zip(second).filter(|(f, s)| **f <= 1.2 * **s).count();
    let (at_once_within, idle_within) = (within(&serve_first, &serve_second), within(&idle_first, &idle_second));
    let n = serve_first.len();
    for v in [&mut cli_first, &mut cli_second, &mut serve_first, &mut serve_second, &mut idle_first, &mut idle_second] {
        v.sort_by(|a, b| a.total_cmp(b));
    }
    println!(
        "{label:>28} {commits:>7} commits: CLI first {:>6.1} ms (max {:>6.1}), second {:>6.1} ms · serve first {:>5.1} ms (max {:>5.1}), second {:>5.1} ms · after 2 s idle first {:>5.2} ms (max {:>5.2}), second {:>5.2} ms · first ≤ 1.2× second: {at_once_within}/{n} at once, {idle_within}/{n} after idle · index of 5 revisions {index_s:.1} s",
        median(&cli_first),
        cli_first.last().unwrap(),
        median(&cli_second),
        median(&serve_first),
        serve_first.last().unwrap(),
        median(&serve_second),
        median(&idle_first),
        idle_first.last().unwrap(),
        median(&idle_second),
    );
    json!({"repository": label, "commits": commits, "cli_first_ms": median(&cli_first), "cli_first_max_ms": cli_first.last(), "cli_second_ms": median(&cli_second),
        "serve_first_ms": median(&serve_first), "serve_first_max_ms": serve_first.last(), "serve_second_ms": median(&serve_second),
        "idle_serve_first_ms": median(&idle_first), "idle_serve_first_max_ms": idle_first.last(), "idle_serve_second_ms": median(&idle_second),
        "serve_first_within_1_2": at_once_within, "idle_serve_first_within_1_2": idle_within, "questions": n, "index_s": index_s})
}

/// A first and a second search at each of `revs` inside one new server, asked `idle` seconds
/// after its first answer.
fn serve(dir: &Path, revs: &[String], idle: u64) -> (Vec<f64>, Vec<f64>) {
    let mut s = Server::start(dir, &["--no-dense"]);
    s.init();
    s.call("search", json!({"query": "warm up"}));
    std::thread::sleep(std::time::Duration::from_secs(idle));
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for r in revs {
        first.push(s.call("search", json!({"query": "retry backoff handler", "rev": r, "n_results": 5})));
        second.push(s.call("search", json!({"query": "parser cache queue", "rev": r, "n_results": 5})));
    }
    drop(s.stdin);
    let _ = s.child.wait();
    (first, second)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<usize> = args
        .iter()
        .position(|a| a == "--sizes")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    let servers: usize = args
        .iter()
        .position(|a| a == "--servers")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1);
    let mut rows = Vec::new();
    for n in sizes {
        let tmp = tempfile::tempdir().unwrap();
        let t = Instant::now();
        synthetic(tmp.path(), n);
        eprintln!("made a {n}-commit repository in {:.1} s", t.elapsed().as_secs_f64());
        rows.push(measure("synthetic", tmp.path(), n, servers));
    }
    if let Some(real) = args.iter().find(|a| !a.starts_with('-') && Path::new(a).join(".git").exists()) {
        let source = Path::new(real);
        let head = git(source, &["rev-parse", "HEAD"]);
        let (_tmp, dir) = clone_at(source, &head);
        let commits: usize = git(&dir, &["rev-list", "--count", "HEAD"]).parse().unwrap_or(0);
        rows.push(measure(&source.file_name().unwrap().to_string_lossy(), &dir, commits, servers));
    }
    println!("{}", serde_json::to_string(&rows).unwrap());
}
