//! PDF sources: the text of each page (pdf-extract, on lopdf), one Markdown page per PDF page,
//! cited `file.pdf p.N`. A file whose bytes did not change since the previous snapshot is not
//! read again. Encrypted, image-only, malformed, oversized and bomb-like files are skipped with
//! the reason; extraction runs bounded in time and a crashing extractor skips only its file.

use crate::config::{SourceConfig, SourceType};
use crate::docsource::{FileRecord, Page, Problem, Snapshot, TextStore};
use anyhow::Result;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

crate::error::errors! {
    /// A pdf source whose path cannot be read.
    pub enum PdfError: Usage {
        Unreadable { path: String, why: String } => "{path}: {why}",
    }
}

pub const DEFAULT_MAX_FILE_MB: u64 = 100;
pub const DEFAULT_MAX_PAGES: usize = 5000;
/// One compressed stream may inflate to this much, all of a file's together to four times it.
const MAX_STREAM_BYTES: u64 = 64 * 1024 * 1024;
const FILE_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone)]
pub struct Options {
    /// A PDF file or a folder of them.
    pub path: PathBuf,
    pub max_file_bytes: u64,
    pub max_pages: usize,
}

impl Options {
    pub fn from_config(sc: &SourceConfig, base: &Path) -> Options {
        let p = Path::new(&sc.path);
        Options {
            path: if p.is_absolute() { p.to_path_buf() } else { base.join(p) },
            max_file_bytes: sc.max_file_mb.unwrap_or(DEFAULT_MAX_FILE_MB).saturating_mul(1024 * 1024),
            max_pages: sc.max_pages_per_file.unwrap_or(DEFAULT_MAX_PAGES).max(1),
        }
    }
}

/// The PDF files of the source, as (name in citations, file).
fn files(o: &Options) -> Result<Vec<(String, PathBuf)>> {
    let meta = std::fs::metadata(&o.path)
        .map_err(|e| PdfError::Unreadable { path: o.path.display().to_string(), why: e.to_string() })?;
    if meta.is_file() {
        let name = o.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Ok(vec![(name, o.path.clone())]);
    }
    let mut out: Vec<(String, PathBuf)> = walkdir::WalkDir::new(&o.path)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && e.file_name().to_string_lossy().to_ascii_lowercase().ends_with(".pdf"))
        .map(|e| {
            (e.path().strip_prefix(&o.path).unwrap_or(e.path()).to_string_lossy().replace('\\', "/"), e.into_path())
        })
        .collect();
    out.sort();
    Ok(out)
}

/// Extracts every PDF of the source; unchanged files keep their previous pages.
pub fn run(
    o: &Options,
    previous: Option<&Snapshot>,
    texts: &TextStore,
    progress: &crate::progress::Progress,
) -> Result<Snapshot> {
    let mut snap = crate::docsource::empty(SourceType::Pdf);
    let list = files(o)?;
    progress.start("extracting PDFs", list.len() as u64);
    for (name, file) in list {
        progress.inc(1);
        snap.requests += 1;
        let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        if size > o.max_file_bytes {
            snap.skipped.push(Problem {
                target: name,
                reason: format!("larger than {} MiB (max_file_mb)", o.max_file_bytes / (1024 * 1024)),
            });
            continue;
        }
        let bytes = match std::fs::read(&file) {
            Ok(b) => b,
            Err(e) => {
                snap.failures.push(Problem { target: name, reason: format!("unreadable: {e}") });
                continue;
            }
        };
        let hash = blake3::hash(&bytes).to_hex().to_string();
        let prefix = format!("{name}#page=");
        if let Some(prev) = previous.filter(|p| p.files.iter().any(|f| f.file == name && f.hash == hash)) {
            let pages: Vec<Page> = prev
                .pages
                .iter()
                .filter(|p| p.path.starts_with(&prefix))
                .cloned()
                .map(|mut p| {
                    p.how = "unchanged".into();
                    p
                })
                .collect();
            snap.files.push(FileRecord { file: name, hash, pages: pages.len() });
            snap.pages.extend(pages);
            continue;
        }
        match extract_bounded(bytes, o.max_pages) {
            Ok(pages) => {
                let mut n = 0;
                for (i, text) in pages.iter().enumerate() {
                    let text = tidy(text);
                    if text.is_empty() {
                        continue;
                    }
                    let markdown = format!("# {name} — page {}\n\n{text}\n", i + 1);
                    let (blob, new) = texts.put(&markdown)?;
                    snap.new_texts += new as usize;
                    snap.pages.push(Page {
                        path: format!("{prefix}{}", i + 1),
                        url: None,
                        blob,
                        title: format!("{name} p.{}", i + 1),
                        bytes: markdown.len() as u64,
                        etag: None,
                        last_modified: None,
                        links: Vec::new(),
                        how: "extracted".into(),
                    });
                    n += 1;
                }
                snap.files.push(FileRecord { file: name, hash, pages: n });
            }
            Err(reason) => snap.skipped.push(Problem { target: name, reason }),
        }
    }
    progress.finish();
    Ok(snap)
}

/// Page text without trailing spaces and runs of blank lines.
fn tidy(text: &str) -> String {
    let mut out = String::new();
    let mut blank = 0;
    for l in text.lines().map(str::trim_end) {
        if l.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(l);
    }
    out
}

/// `extract` in its own thread: bounded in time, and a panic in the extractor (malformed
/// input) becomes a reason instead of taking the process down.
fn extract_bounded(bytes: Vec<u8>, max_pages: usize) -> std::result::Result<Vec<String>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(|| extract(&bytes, max_pages))
            .unwrap_or_else(|_| Err("malformed PDF (the text extractor failed on it)".into()));
        let _ = tx.send(r);
    });
    rx.recv_timeout(FILE_TIMEOUT)
        .unwrap_or_else(|_| Err(format!("text extraction did not finish within {} s", FILE_TIMEOUT.as_secs())))
}

/// The text of each page, or why the file has none worth indexing.
pub fn extract(bytes: &[u8], max_pages: usize) -> std::result::Result<Vec<String>, String> {
    if !bytes[..bytes.len().min(1024)].windows(5).any(|w| w == b"%PDF-") {
        return Err("not a PDF (no %PDF header)".into());
    }
    let encrypted_marker = || bytes.windows(8).any(|w| w == b"/Encrypt");
    let mut doc = match pdf_extract::Document::load_mem(bytes) {
        Ok(d) => d,
        Err(_) if encrypted_marker() => return Err(ENCRYPTED.into()),
        Err(e) => return Err(format!("malformed PDF ({e})")),
    };
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(ENCRYPTED.into());
    }
    let pages = doc.get_pages();
    if pages.is_empty() {
        return Err("no pages".into());
    }
    if pages.len() > max_pages {
        return Err(format!("{} pages, more than max_pages_per_file ({max_pages})", pages.len()));
    }
    check_streams(&doc)?;
    expand_line_operators(&mut doc);
    let mut out = Vec::with_capacity(pages.len());
    for &n in pages.keys() {
        let mut s = String::new();
        let mut dev = pdf_extract::PlainTextOutput::new(&mut s);
        // A page the extractor cannot read is an empty page; the others still count.
        let _ = pdf_extract::output_doc_page(&doc, &mut dev, n);
        out.push(s);
    }
    if out.iter().map(|p| p.chars().filter(|c| !c.is_whitespace()).count()).sum::<usize>() < 20 {
        return Err("no text layer (scanned or image-only); Lynx does no OCR".into());
    }
    Ok(out)
}

/// `'` and `"` (move to the next line, then show text) rewritten as the `T*` and `Tj` they
/// stand for: the extractor reads only those, and ghostscript draws every line but a page's
/// first with `'`.
fn expand_line_operators(doc: &mut pdf_extract::Document) {
    use pdf_extract::content::{Content, Operation};
    let pages: Vec<pdf_extract::ObjectId> = doc.get_pages().values().copied().collect();
    for page in pages {
        let Ok(bytes) = doc.get_page_content(page) else { continue };
        if !bytes.iter().any(|&b| b == b'\'' || b == b'"') {
            continue;
        }
        let Ok(content) = Content::decode(&bytes) else { continue };
        if !content.operations.iter().any(|o| o.operator == "'" || o.operator == "\"") {
            continue;
        }
        let mut ops = Vec::with_capacity(content.operations.len() + 16);
        for o in content.operations {
            match o.operator.as_str() {
                "'" => {
                    ops.push(Operation::new("T*", vec![]));
                    ops.push(Operation::new("Tj", o.operands));
                }
                "\"" if o.operands.len() == 3 => {
                    let mut it = o.operands.into_iter();
                    let (Some(aw), Some(ac), Some(text)) = (it.next(), it.next(), it.next()) else { continue };
                    ops.push(Operation::new("Tw", vec![aw]));
                    ops.push(Operation::new("Tc", vec![ac]));
                    ops.push(Operation::new("T*", vec![]));
                    ops.push(Operation::new("Tj", vec![text]));
                }
                _ => ops.push(o),
            }
        }
        let Ok(encoded) = (Content { operations: ops }).encode() else { continue };
        // The page's text, now in its first content stream; the others emptied.
        for (i, id) in doc.get_page_contents(page).into_iter().enumerate() {
            if let Ok(pdf_extract::Object::Stream(s)) = doc.get_object_mut(id) {
                s.set_plain_content(if i == 0 { encoded.clone() } else { Vec::new() });
            }
        }
    }
}

const ENCRYPTED: &str = "encrypted (password-protected); Lynx does not decrypt PDFs";

/// Refuses files whose compressed streams inflate beyond the bounds (decompression bombs).
fn check_streams(doc: &pdf_extract::Document) -> std::result::Result<(), String> {
    let mut total = 0u64;
    for obj in doc.objects.values() {
        let pdf_extract::Object::Stream(s) = obj else { continue };
        let flate = s.filters().map(|f| f.iter().any(|f| *f == b"FlateDecode")).unwrap_or(false);
        if !flate {
            continue;
        }
        let mut sink = std::io::sink();
        let n =
            std::io::copy(&mut flate2::read::ZlibDecoder::new(&s.content[..]).take(MAX_STREAM_BYTES + 1), &mut sink)
                .unwrap_or(0);
        total += n;
        if n > MAX_STREAM_BYTES || total > 4 * MAX_STREAM_BYTES {
            return Err(format!(
                "a compressed stream inflates beyond {} MiB (a decompression bomb?)",
                MAX_STREAM_BYTES / (1024 * 1024)
            ));
        }
    }
    Ok(())
}
