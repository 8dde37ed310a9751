//! Documentation sources: how fast a site is crawled from a local server and PDF pages are
//! extracted.
//!
//!     cargo bench --bench docsources -- [--pages N] [--pdfs N]
//!
//! Reports, in a throwaway repository:
//! - crawl: N generated pages (default 400, ~3 KB of prose, code and a table each, linked as a
//!   tree) served on 127.0.0.1 without delay: pages/s of the crawl alone (fetch, extract,
//!   store), and of `source add` end to end (crawl + chunk + index);
//! - re-crawl with nothing changed (every page answers 304): pages/s;
//! - PDF: N generated files (default 20) of 25 pages each: pages/s of the extraction.

mod common;
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Page `i` of the site: prose, a code block, a table, links to its children `2i+1`, `2i+2`.
fn page(i: usize, n: usize) -> String {
    let links: String = [2 * i + 1, 2 * i + 2]
        .iter()
        .filter(|&&c| c < n)
        .map(|c| format!("<li><a href=\"p{c}.html\">Page {c}</a></li>"))
        .collect();
    let prose: String = (0..6)
        .map(|k| format!("<p>Section {k} of page {i} explains how request {k} is retried, cached and logged by worker {}, with the limits that apply.</p>", (i * 7 + k) % 13))
        .collect();
    format!(
        "<html><head><title>Page {i}</title></head><body><nav>menu</nav><main><h1 id=\"p{i}\">Page {i}</h1>{prose}\
         <h2 id=\"usage\">Usage</h2><pre><code class=\"language-python\">client.fetch({i}, retries=3)\nclient.close()</code></pre>\
         <table><tr><th>Option</th><th>Default</th></tr><tr><td>timeout_{i}</td><td>{i} s</td></tr></table><ul>{links}</ul></main></body></html>"
    )
}

/// Serves `/docs/pN.html` for N < n with ETags (304 on a match), everything else 404.
fn serve(n: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut tagged = false;
                loop {
                    let mut l = String::new();
                    if reader.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
                        break;
                    }
                    tagged |= l.to_ascii_lowercase().starts_with("if-none-match");
                }
                let target = first.split_whitespace().nth(1).unwrap_or("/");
                let i = target
                    .strip_prefix("/docs/p")
                    .and_then(|r| r.strip_suffix(".html"))
                    .and_then(|x| x.parse::<usize>().ok())
                    .filter(|&i| i < n);
                let (status, body) = match i {
                    Some(_) if tagged => (304, String::new()),
                    Some(i) => (200, page(i, n)),
                    None => (404, String::new()),
                };
                let head = format!(
                    "HTTP/1.1 {status} X\r\nConnection: close\r\nContent-Type: text/html\r\nETag: \"v1\"\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body.as_bytes());
            });
        }
    });
    base
}

fn pdf(file: usize, pages: usize) -> Vec<u8> {
    use pdf_extract::content::{Content, Operation};
    use pdf_extract::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica"});
    let resources = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font}});
    let mut kids: Vec<Object> = Vec::new();
    for p in 0..pages {
        let mut ops = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 10.into()]),
            Operation::new("Td", vec![50.into(), 780.into()]),
        ];
        for line in 0..40 {
            ops.push(Operation::new("Td", vec![0.into(), (-14).into()]));
            ops.push(Operation::new(
                "Tj",
                vec![Object::string_literal(format!(
                    "Manual {file} page {p} line {line}: inspect valve {} and record the pressure.",
                    line * 3 + p
                ))],
            ));
        }
        ops.push(Operation::new("ET", vec![]));
        let content = doc.add_object(Stream::new(dictionary! {}, Content { operations: ops }.encode().unwrap()));
        kids.push(doc.add_object(dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => content}).into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(pages_id, Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources, "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()]}));
    let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

fn main() {
    let n = arg("--pages", 400);
    let n_pdfs = arg("--pdfs", 20);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("app.py"), "def main():\n    pass\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "first"]);

    let base = serve(n);
    let start = format!("{base}/docs/p0.html");
    let max = n.to_string();
    let added = lynx(
        &dir,
        &[
            "--no-dense",
            "source",
            "add",
            "site",
            &start,
            "--type",
            "webdoc",
            "--delay",
            "0",
            "--max-pages",
            &max,
            "--max-depth",
            "64",
        ],
        &[],
    );
    let snap = &added.json["fetched"]["reports"][0]["snapshot"];
    let pages = snap["pages"].as_u64().unwrap_or(0) as f64;
    let crawl_ms = snap["millis"].as_f64().unwrap_or(f64::NAN);
    println!(
        "crawl: {pages} pages in {crawl_ms:.0} ms = {:.0} pages/s (fetch, extract, store)",
        pages / (crawl_ms / 1000.0)
    );
    println!(
        "source add end to end (crawl + chunk + index): {:.0} ms = {:.0} pages/s",
        added.ms,
        pages / (added.ms / 1000.0)
    );
    let again = lynx(&dir, &["--no-dense", "update-source-index", "site"], &[]);
    let snap = &again.json["reports"][0]["snapshot"];
    let ms = snap["millis"].as_f64().unwrap_or(f64::NAN);
    println!(
        "re-crawl, nothing changed (304s): {} pages in {ms:.0} ms = {:.0} pages/s; new texts {}",
        snap["pages"],
        pages / (ms / 1000.0),
        snap["new_texts"]
    );

    let pdfs = dir.join("pdfs");
    std::fs::create_dir_all(&pdfs).unwrap();
    let per = 25;
    for f in 0..n_pdfs {
        std::fs::write(pdfs.join(format!("manual-{f}.pdf")), pdf(f, per)).unwrap();
    }
    let added = lynx(&dir, &["--no-dense", "source", "add", "manuals", "pdfs", "--type", "pdf"], &[]);
    let snap = &added.json["fetched"]["reports"][0]["snapshot"];
    let pages = snap["pages"].as_u64().unwrap_or(0) as f64;
    let ms = snap["millis"].as_f64().unwrap_or(f64::NAN);
    println!(
        "pdf: {pages} pages from {n_pdfs} files in {ms:.0} ms = {:.0} pages/s (extraction); end to end {:.0} ms",
        pages / (ms / 1000.0),
        added.ms
    );
}
