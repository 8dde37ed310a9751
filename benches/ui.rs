//! `git lynx ui`: how fast the dashboard and a search answer on a real repository.
//!
//!     cargo bench --bench ui -- /path/to/repo
//!
//! On a throwaway clone, indexed first: the interface is started, then the page itself and the
//! calls each view makes are timed over HTTP on 127.0.0.1 (20 rounds each, after one warm-up):
//! the dashboard (page + overview) and a search (page + revisions + search) at the working
//! tree and at an older commit.

mod common;
use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::time::Instant;

fn get(port: u16, path: &str) -> (u16, usize) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let status = String::from_utf8_lossy(&out[..out.len().min(20)])
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, out.len())
}

fn main() {
    let Some(source) = repo_arg() else {
        eprintln!("usage: cargo bench --bench ui -- /path/to/repo");
        return;
    };
    let head = git(&source, &["rev-parse", "HEAD"]);
    let old = git(&source, &["rev-parse", "HEAD~50"]);
    let (_tmp, dir) = clone_at(&source, &head);
    let files = lynx(&dir, &["--no-dense", "index"], &[]).json["files_indexed"].as_u64().unwrap_or(0);
    lynx(&dir, &["--no-dense", "index", "--rev", &old], &[]);
    let mut child = std::process::Command::new(bin())
        .args(["--no-dense", "ui"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().to_string();
    let port: u16 = url["http://127.0.0.1:".len()..].split('/').next().unwrap().parse().unwrap();
    let token = url.split("token=").nth(1).unwrap().to_string();
    println!("{} files indexed; ui at {url}", files);
    let time = |paths: &[String]| -> Vec<f64> {
        for p in paths {
            let (status, _) = get(port, p);
            assert_eq!(status, 200, "{p}");
        }
        let mut ms: Vec<f64> = (0..20)
            .map(|_| {
                let t = Instant::now();
                for p in paths {
                    get(port, p);
                }
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        ms
    };
    let t = format!("token={token}");
    let file = git(&source, &["ls-files", "*.go", "*.rs", "*.py"]).lines().next().unwrap_or("README.md").to_string();
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("dashboard (page + overview)", vec![format!("/?{t}"), format!("/api/overview?{t}")]),
        (
            "search at the working tree (page + revisions + search)",
            vec![format!("/?{t}"), format!("/api/revisions?{t}"), format!("/api/search?q=parse+configuration&{t}")],
        ),
        (
            "search at HEAD~50",
            vec![
                format!("/?{t}"),
                format!("/api/revisions?{t}"),
                format!("/api/search?q=parse+configuration&rev={old}&{t}"),
            ],
        ),
        ("symbol page", vec![format!("/?{t}"), format!("/api/symbol?name=main&{t}")]),
        ("graph explorer (page + explorer page)", vec![format!("/?{t}"), format!("/graph?symbol=main&{t}")]),
        ("impact of HEAD~3..HEAD", vec![format!("/?{t}"), format!("/api/impact?range=HEAD~3..HEAD&{t}")]),
        ("file view", vec![format!("/?{t}"), format!("/api/file?path={file}&{t}")]),
        ("configuration", vec![format!("/?{t}"), format!("/api/config?{t}")]),
    ];
    for (name, paths) in cases {
        let ms = time(&paths);
        println!(
            "{name}: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
            percentile(&ms, 0.5),
            percentile(&ms, 0.95),
            ms[ms.len() - 1]
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}
