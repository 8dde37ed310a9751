//! PDF sources: the text of each page (pdf-extract, on lopdf), one Markdown page per PDF page,
//! cited `file.pdf p.N`. A file whose bytes did not change since the previous snapshot is not
//! read again. Encrypted, image-only, malformed, oversized and bomb-like files are skipped with
//! the reason, and the rest of the source is read.
//!
//! A PDF is untrusted input (a committed `lynx.toml` may name one in the repository), and its
//! streams are compressed: a few megabytes of file can hold gigabytes of zeros. Two fences:
//!
//! - every stream is decoded here under a budget (`pdf_stream`: each filter of a chain stops at
//!   its limit), per stream and per file, with the objects counted, while lopdf loads the file
//!   (object streams included, before lopdf expands them); the extractor is handed the decoded
//!   bytes and never inflates anything itself;
//! - on Unix the extraction runs in a forked child process with an address-space limit
//!   (RLIMIT_AS) and a deadline, and is killed when the deadline passes. What the budget cannot
//!   reach (lopdf decodes cross-reference streams, and the object streams of encrypted files,
//!   while parsing) ends there as an allocation failure of the child; and no thread of a
//!   timed-out extraction keeps running in `serve` (a thread cannot be stopped; a process can).
//!   A fork, not a re-run of the binary: the library needs no entry point in the command line,
//!   and the child starts with the file already in memory (docs/SECURITY.md has the numbers).
//!
//! The limits come from the user's own configuration only (`[docs]`).

use crate::config::{SourceConfig, SourceType};
use crate::docsource::{FileRecord, Page, Problem, Snapshot, TextStore};
use crate::pdf_stream::{self, DecodeError, Params};
use anyhow::Result;
use pdf_extract::{Object, Stream};
use std::cell::RefCell;
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
const MIB: u64 = 1024 * 1024;
/// One stream decodes to at most this much.
const MAX_STREAM_BYTES: u64 = 64 * MIB;
/// An object stream to an eighth of it: its many small objects each become a parsed value
/// several times the size of its text.
const OBJECT_STREAM_SHARE: u64 = 8;
/// All of a file's streams together.
const MAX_FILE_DECODED: u64 = 256 * MIB;
/// Objects in a file, those inside object streams included.
const MAX_OBJECTS: u64 = 1_000_000;

/// What reading one PDF may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes one stream may decode to.
    pub stream_bytes: u64,
    /// Bytes all of a file's streams may decode to together.
    pub file_bytes: u64,
    pub objects: u64,
    /// Memory (address space) the extraction of one file may add to what the process had.
    pub memory: u64,
    /// Time the extraction of one file may take.
    pub timeout: Duration,
}

impl Limits {
    /// Limits for a memory allowance (MiB) and a deadline; the decoding budgets shrink with a
    /// small allowance, so that a bomb meets the budget (a clear reason) before the allowance.
    pub fn new(memory_mb: u64, timeout: Duration) -> Limits {
        let memory = memory_mb.max(1).saturating_mul(MIB);
        Limits {
            stream_bytes: (memory / 16).min(MAX_STREAM_BYTES),
            file_bytes: (memory / 8).min(MAX_FILE_DECODED),
            objects: MAX_OBJECTS,
            memory,
            timeout,
        }
    }

    /// The user's `[docs]` settings (a committed file cannot set them).
    pub fn from_config(cfg: &crate::config::Config) -> Result<Limits> {
        use crate::config::ConfigError::Setting;
        let (mb, secs) = (cfg.docs.pdf_memory_mb, cfg.docs.pdf_timeout_seconds);
        if !(64..=1 << 20).contains(&mb) {
            let rule = format!("from 64 to 1048576 (MiB; got {mb})");
            return Err(Setting { key: "docs.pdf_memory_mb".into(), rule }.into());
        }
        if !(secs.is_finite() && (0.1..=86_400.0).contains(&secs)) {
            let rule = format!("a number of seconds from 0.1 to 86400 (got {secs})");
            return Err(Setting { key: "docs.pdf_timeout_seconds".into(), rule }.into());
        }
        Ok(Limits::new(mb, Duration::from_secs_f64(secs)))
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new(
            crate::config::DEFAULT_PDF_MEMORY_MB,
            Duration::from_secs_f64(crate::config::DEFAULT_PDF_TIMEOUT_SECONDS),
        )
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    /// A PDF file or a folder of them.
    pub path: PathBuf,
    pub max_file_bytes: u64,
    pub max_pages: usize,
    pub limits: Limits,
}

impl Options {
    /// A source's settings; `limits` come from the user's configuration, not the source's.
    pub fn from_config(sc: &SourceConfig, base: &Path, limits: Limits) -> Options {
        let p = Path::new(&sc.path);
        Options {
            path: if p.is_absolute() { p.to_path_buf() } else { base.join(p) },
            max_file_bytes: sc.max_file_mb.unwrap_or(DEFAULT_MAX_FILE_MB).saturating_mul(1024 * 1024),
            max_pages: sc.max_pages_per_file.unwrap_or(DEFAULT_MAX_PAGES).max(1),
            limits,
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
        match extract_isolated(&bytes, o.max_pages, &o.limits) {
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
            Err(reason) => {
                tracing::warn!("{name}: not extracted: {reason}");
                snap.skipped.push(Problem { target: name, reason });
            }
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

/// The text of each page, or why the file has none worth indexing: in a child process where
/// there are processes to fork (module comment), else in a thread bounded in time.
fn extract_isolated(bytes: &[u8], max_pages: usize, limits: &Limits) -> std::result::Result<Vec<String>, String> {
    #[cfg(unix)]
    {
        let (r, usage) = worker::run(bytes, max_pages, limits);
        tracing::debug!(max_rss_kib = usage.max_rss_kib, cpu_ms = usage.cpu.as_millis() as u64, "PDF extraction");
        r
    }
    #[cfg(not(unix))]
    extract_in_thread(bytes.to_vec(), max_pages, *limits)
}

/// `extract` in its own thread, for systems without fork: bounded in time (the thread itself
/// runs on after a timeout), and a panic in the extractor becomes a reason.
#[cfg(not(unix))]
fn extract_in_thread(bytes: Vec<u8>, max_pages: usize, limits: Limits) -> std::result::Result<Vec<String>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r =
            std::panic::catch_unwind(|| extract(&bytes, max_pages, &limits)).unwrap_or_else(|_| Err(MALFORMED.into()));
        let _ = tx.send(r);
    });
    rx.recv_timeout(limits.timeout).unwrap_or_else(|_| Err(timed_out(&limits)))
}

const MALFORMED: &str = "malformed PDF (the text extractor failed on it)";

fn timed_out(limits: &Limits) -> String {
    format!(
        "text extraction did not finish within {} s and was stopped (docs.pdf_timeout_seconds)",
        limits.timeout.as_secs_f64()
    )
}

/// The text of each page, or why the file has none worth indexing. Runs in the calling
/// process: `run` calls it through `extract_isolated`. Every stream is decoded under the
/// budget of `limits` before the extractor sees it.
pub fn extract(bytes: &[u8], max_pages: usize, limits: &Limits) -> std::result::Result<Vec<String>, String> {
    if !bytes[..bytes.len().min(1024)].windows(5).any(|w| w == b"%PDF-") {
        return Err("not a PDF (no %PDF header)".into());
    }
    let encrypted_marker = || bytes.windows(8).any(|w| w == b"/Encrypt");
    BUDGET.with(|b| *b.borrow_mut() = Some(Budget::new(*limits)));
    let options = pdf_extract::LoadOptions { filter: Some(within_budget), ..Default::default() };
    let loaded = pdf_extract::Document::load_mem_with_options(bytes, options);
    let mut budget = BUDGET.with(|b| b.borrow_mut().take()).unwrap_or_else(|| Budget::new(*limits));
    if let Some(why) = budget.refused.take() {
        return Err(why);
    }
    let mut doc = match loaded {
        Ok(d) => d,
        Err(_) if encrypted_marker() => return Err(ENCRYPTED.into()),
        Err(e) => return Err(format!("malformed PDF ({e})")),
    };
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(ENCRYPTED.into());
    }
    // What loading did not pass through the budget: the streams of an encrypted file (lopdf
    // decrypts them without the filter), streams read again after loading.
    for obj in doc.objects.values_mut() {
        if let Object::Stream(s) = obj {
            budget.decode(s)?;
        }
    }
    let pages = doc.get_pages();
    if pages.is_empty() {
        return Err("no pages".into());
    }
    if pages.len() > max_pages {
        return Err(format!("{} pages, more than max_pages_per_file ({max_pages})", pages.len()));
    }
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

thread_local! {
    /// The budget of the file this thread is loading: lopdf's object filter is a plain
    /// function, called on the loading thread (lopdf is built without its parallel loader).
    static BUDGET: RefCell<Option<Budget>> = const { RefCell::new(None) };
}

/// What one file has used of its limits so far.
struct Budget {
    limits: Limits,
    decoded: u64,
    objects: u64,
    /// Why the file is refused (the first limit passed).
    refused: Option<String>,
}

impl Budget {
    fn new(limits: Limits) -> Budget {
        Budget { limits, decoded: 0, objects: 0, refused: None }
    }

    fn count(&mut self, n: u64) -> std::result::Result<(), String> {
        self.objects += n;
        if self.objects > self.limits.objects {
            return Err(format!("more than {} objects (an object bomb?)", self.limits.objects));
        }
        Ok(())
    }

    /// Replaces a stream's encoded bytes by its decoded ones, within the budget; a stream
    /// nothing here reads (an image, a cross-reference stream, an unknown filter) is emptied.
    fn decode(&mut self, s: &mut Stream) -> std::result::Result<(), String> {
        let filters: Vec<Vec<u8>> = match s.filters() {
            Ok(f) if !f.is_empty() => f.iter().map(|f| f.to_vec()).collect(),
            // No filter: the bytes are in the file already, and counted by its size.
            _ => return Ok(()),
        };
        let image = s.dict.get(b"Subtype").and_then(Object::as_name).is_ok_and(|n| n == b"Image");
        if image || s.dict.has_type(b"XRef") {
            s.set_plain_content(Vec::new());
            return Ok(());
        }
        let object_stream = s.dict.has_type(b"ObjStm");
        let cap = if object_stream { self.limits.stream_bytes / OBJECT_STREAM_SHARE } else { self.limits.stream_bytes };
        let left = self.limits.file_bytes.saturating_sub(self.decoded);
        let limit = cap.min(left);
        let names: Vec<&[u8]> = filters.iter().map(Vec::as_slice).collect();
        match pdf_stream::decode(&names, &decode_params(s, names.len()), &s.content, limit as usize) {
            Ok(out) => {
                self.decoded += out.len() as u64;
                if object_stream {
                    // lopdf parses one object per pair of numbers before `/First`.
                    let first = s.dict.get(b"First").and_then(Object::as_i64).unwrap_or(0).clamp(0, out.len() as i64);
                    let numbers = out[..first as usize].split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty());
                    self.count(numbers.count() as u64 / 2)?;
                }
                s.set_plain_content(out);
                Ok(())
            }
            Err(DecodeError::TooLarge) if limit < cap => Err(format!(
                "its compressed streams inflate beyond {} MiB together (a decompression bomb?)",
                self.limits.file_bytes / MIB
            )),
            Err(DecodeError::TooLarge) => {
                Err(format!("a compressed stream inflates beyond {} MiB (a decompression bomb?)", cap.div_ceil(MIB)))
            }
            Err(DecodeError::Unsupported(_) | DecodeError::Corrupt(_)) => {
                s.set_plain_content(Vec::new());
                Ok(())
            }
        }
    }
}

/// A stream's `/DecodeParms` per filter: one dictionary applies to every filter (as lopdf
/// reads it), an array gives each its own.
fn decode_params(s: &Stream, n: usize) -> Vec<Option<Params>> {
    let read = |o: &Object| {
        let d = o.as_dict().ok()?;
        let int = |k: &[u8], default: i64| d.get(k).and_then(Object::as_i64).unwrap_or(default);
        let p = Params::default();
        Some(Params {
            predictor: int(b"Predictor", p.predictor),
            colors: int(b"Colors", p.colors),
            bits_per_component: int(b"BitsPerComponent", p.bits_per_component),
            columns: int(b"Columns", p.columns),
            early_change: int(b"EarlyChange", 1) != 0,
        })
    };
    match s.dict.get(b"DecodeParms") {
        Ok(Object::Array(a)) => (0..n).map(|i| a.get(i).and_then(read)).collect(),
        Ok(o) => vec![read(o); n],
        Err(_) => vec![None; n],
    }
}

/// lopdf's object filter: each object as it is read, before an object stream is expanded.
/// Streams are decoded within the budget; past a limit every further object is dropped and
/// the file is refused once loading returns. lopdf uses the object it passed in (changed in
/// place) for objects of the file, and the one returned for objects of an object stream
/// (never streams).
fn within_budget(id: pdf_extract::ObjectId, obj: &mut Object) -> Option<(pdf_extract::ObjectId, Object)> {
    BUDGET.with(|b| {
        let mut b = b.borrow_mut();
        let b = b.as_mut()?;
        if b.refused.is_some() {
            return None;
        }
        let r = b.count(1).and_then(|()| match obj {
            Object::Stream(s) => b.decode(s),
            _ => Ok(()),
        });
        match r {
            Ok(()) if matches!(obj, Object::Stream(_)) => Some((id, Object::Null)),
            Ok(()) => Some((id, obj.clone())),
            Err(why) => {
                b.refused = Some(why);
                None
            }
        }
    })
}

/// One extraction in a forked child process (see the module comment).
#[cfg(unix)]
pub mod worker {
    use super::{Limits, MALFORMED, MIB, extract, timed_out};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::time::{Duration, Instant};

    /// What the child used.
    #[derive(Debug, Default, Clone, Copy)]
    pub struct Usage {
        /// Peak resident set, KiB.
        pub max_rss_kib: i64,
        /// User and system CPU time.
        pub cpu: Duration,
    }

    type Outcome = std::result::Result<Vec<String>, String>;

    pub fn run(bytes: &[u8], max_pages: usize, limits: &Limits) -> (Outcome, Usage) {
        let failed = |what: &str| {
            (
                Err(format!("cannot start the extraction worker ({what}: {})", std::io::Error::last_os_error())),
                Usage::default(),
            )
        };
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe writes two new descriptors into the array.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return failed("pipe");
        }
        // SAFETY: both descriptors were just created and are owned here alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        for fd in [&read, &write] {
            // Not inherited by the programs other threads start meanwhile.
            // SAFETY: sets a flag of a descriptor owned here.
            unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
        }
        let started = Instant::now();
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the child runs the extraction alone and leaves with _exit, never returning
        // into the caller. It uses no lock another thread could hold at the fork but the
        // allocator's (no logging, no stdio); a child stuck on one is killed at the deadline.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return failed("fork");
        }
        if pid == 0 {
            drop(read);
            let code = child(write.as_raw_fd(), parent, bytes, max_pages, limits);
            // SAFETY: ends the child without running the parent's destructors or atexit hooks.
            unsafe { libc::_exit(code) }
        }
        drop(write);
        collect(read, pid, started + limits.timeout, limits)
    }

    fn child(out: RawFd, parent: libc::pid_t, bytes: &[u8], max_pages: usize, limits: &Limits) -> libc::c_int {
        // SAFETY: system calls on descriptors and limits of this (child) process only.
        unsafe {
            // stdout is `serve`'s JSON-RPC channel: nothing of the child's may reach it.
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if null >= 0 {
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
            }
            // Gone with the process that waits for it.
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                return 1;
            }
            let cpu = limits.timeout.as_secs() + 2;
            libc::setrlimit(libc::RLIMIT_CPU, &libc::rlimit { rlim_cur: cpu as _, rlim_max: (cpu + 1) as _ });
            if let Some(now) = address_space() {
                let cap = now.saturating_add(limits.memory);
                libc::setrlimit(libc::RLIMIT_AS, &libc::rlimit { rlim_cur: cap as _, rlim_max: cap as _ });
            }
        }
        std::panic::set_hook(Box::new(|_| {}));
        let before = resident();
        let r =
            std::panic::catch_unwind(|| extract(bytes, max_pages, limits)).unwrap_or_else(|_| Err(MALFORMED.into()));
        // A refused allocation is often an error, not an abort (`read_to_end` reserves with
        // `try_reserve`): a failure after the child's memory neared its limit says so.
        let r = match r {
            Err(_) if peak().saturating_sub(before.unwrap_or(u64::MAX)) >= limits.memory / 5 * 2 => Err(memory(limits)),
            r => r,
        };
        if write_all(out, &encode(&r)) { 0 } else { 1 }
    }

    /// This process's resident set now, in bytes.
    fn resident() -> Option<u64> {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        Some(pages.saturating_mul(page_size()))
    }

    /// This process's peak resident set, in bytes.
    fn peak() -> u64 {
        // SAFETY: an all-zero rusage is a valid value for getrusage to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: fills the local.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        (ru.ru_maxrss.max(0) as u64).saturating_mul(1024)
    }

    fn page_size() -> u64 {
        // SAFETY: sysconf has no preconditions.
        (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as u64
    }

    /// This process's address space now, in bytes.
    fn address_space() -> Option<u64> {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
        Some(pages.saturating_mul(page_size()))
    }

    fn write_all(fd: RawFd, mut data: &[u8]) -> bool {
        while !data.is_empty() {
            // SAFETY: writes from a live slice to a descriptor this process owns.
            let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
            if n > 0 {
                data = &data[n as usize..];
            } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            } else {
                return false;
            }
        }
        true
    }

    /// The answer framed: its length, then 0 and the pages (each with its length) or 1 and
    /// the reason.
    fn encode(r: &Outcome) -> Vec<u8> {
        let mut m = vec![0u8; 8];
        let put = |m: &mut Vec<u8>, s: &[u8]| {
            m.extend_from_slice(&(s.len() as u64).to_le_bytes());
            m.extend_from_slice(s);
        };
        match r {
            Ok(pages) => {
                m.push(0);
                m.extend_from_slice(&(pages.len() as u64).to_le_bytes());
                for p in pages {
                    put(&mut m, p.as_bytes());
                }
            }
            Err(why) => {
                m.push(1);
                put(&mut m, why.as_bytes());
            }
        }
        let len = (m.len() - 8) as u64;
        m[..8].copy_from_slice(&len.to_le_bytes());
        m
    }

    /// Whether all of the framed answer arrived.
    fn complete(buf: &[u8]) -> bool {
        buf.get(..8).is_some_and(|l| (buf.len() - 8) as u64 >= u64::from_le_bytes(l.try_into().unwrap_or_default()))
    }

    /// The answer, once all of it arrived.
    fn decode(buf: &[u8]) -> Option<Outcome> {
        let len = u64::from_le_bytes(buf.get(..8)?.try_into().ok()?) as usize;
        let mut r = Frame(buf.get(8..8usize.checked_add(len)?)?);
        match r.bytes(1)?[0] {
            0 => {
                let n = r.u64()?;
                let mut pages = Vec::new();
                for _ in 0..n {
                    pages.push(r.string()?);
                }
                Some(Ok(pages))
            }
            _ => Some(Err(r.string()?)),
        }
    }

    struct Frame<'a>(&'a [u8]);

    impl<'a> Frame<'a> {
        fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
            if self.0.len() < n {
                return None;
            }
            let (a, b) = self.0.split_at(n);
            self.0 = b;
            Some(a)
        }

        fn u64(&mut self) -> Option<u64> {
            Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
        }

        fn string(&mut self) -> Option<String> {
            let n = usize::try_from(self.u64()?).ok()?;
            Some(String::from_utf8_lossy(self.bytes(n)?).into_owned())
        }
    }

    /// Reaps the child: its wait status and usage, or None while it runs (`block`: waits).
    fn reap(pid: libc::pid_t, block: bool) -> Option<(libc::c_int, Usage)> {
        loop {
            let mut status = 0;
            // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: waits for our own child, writing into the two locals.
            let r = unsafe { libc::wait4(pid, &mut status, if block { 0 } else { libc::WNOHANG }, &mut ru) };
            if r == pid {
                let t = |tv: libc::timeval| Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
                let usage = Usage { max_rss_kib: ru.ru_maxrss as i64, cpu: t(ru.ru_utime) + t(ru.ru_stime) };
                return Some((status, usage));
            }
            if r == 0 {
                return None;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                // Reaped elsewhere: nothing more to learn.
                return Some((0, Usage::default()));
            }
        }
    }

    fn kill(pid: libc::pid_t) -> Usage {
        // SAFETY: signals our own child, which has not been reaped yet.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        reap(pid, true).map(|(_, u)| u).unwrap_or_default()
    }

    /// Reads the child's answer until it is complete or the deadline passes (then the child is
    /// killed), and reaps the child.
    fn collect(read: OwnedFd, pid: libc::pid_t, deadline: Instant, limits: &Limits) -> (Outcome, Usage) {
        let fd = read.as_raw_fd();
        // SAFETY: flags of a descriptor owned here.
        unsafe { libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK) };
        let mut buf = Vec::new();
        let mut chunk = vec![0u8; 1 << 16];
        let mut exited = None;
        loop {
            let mut eof = false;
            loop {
                // SAFETY: reads into a live buffer of the given length.
                let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
                if n > 0 {
                    buf.extend_from_slice(&chunk[..n as usize]);
                    continue;
                }
                if n == 0 {
                    eof = true;
                } else if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if buf.len() as u64 > limits.memory {
                return (Err(memory(limits)), kill(pid));
            }
            if eof || exited.is_some() || complete(&buf) {
                break;
            }
            match reap(pid, false) {
                // Read what it wrote before it ended, once more.
                Some(e) => exited = Some(e),
                None => {
                    let now = Instant::now();
                    if now >= deadline {
                        return (Err(timed_out(limits)), kill(pid));
                    }
                    let wait = (deadline - now).min(Duration::from_millis(50));
                    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
                    // SAFETY: polls one descriptor owned here.
                    unsafe { libc::poll(&mut p, 1, wait.as_millis().max(1) as libc::c_int) };
                }
            }
        }
        // The child wrote its answer or closed its end: it is leaving.
        let (status, usage) = exited.or_else(|| reap(pid, true)).unwrap_or_default();
        if let Some(r) = decode(&buf) {
            return (r, usage);
        }
        let why = if libc::WIFSIGNALED(status) {
            match libc::WTERMSIG(status) {
                libc::SIGXCPU => timed_out(limits),
                // An allocation refused under the address-space limit aborts.
                libc::SIGABRT => memory(limits),
                sig => format!("the text extractor crashed on it (signal {sig})"),
            }
        } else {
            MALFORMED.to_string()
        };
        (Err(why), usage)
    }

    fn memory(limits: &Limits) -> String {
        format!(
            "reading it needed more than the {} MiB of memory allowed (docs.pdf_memory_mb; a decompression bomb?)",
            limits.memory / MIB
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::content::{Content, Operation};
    use pdf_extract::{Document, dictionary};
    use std::io::Write;

    pub(super) fn zlib(data: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(data).unwrap();
        z.finish().unwrap()
    }

    /// zlib of `prefix` and `mib` MiB of zeros, compressed a MiB at a time.
    fn bomb(prefix: &[u8], mib: usize) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(prefix).unwrap();
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..mib {
            z.write_all(&chunk).unwrap();
        }
        z.finish().unwrap()
    }

    pub(super) fn a85(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len() * 5 / 4 + 8);
        for c in data.chunks(4) {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            let mut v = u32::from_be_bytes(b) as u64;
            let mut digits = [0u8; 5];
            for d in digits.iter_mut().rev() {
                *d = (v % 85) as u8 + b'!';
                v /= 85;
            }
            out.extend_from_slice(&digits[..c.len() + 1]);
        }
        out.extend_from_slice(b"~>");
        out
    }

    /// A one-page PDF drawing `ops`, with `extra` objects beside it.
    fn pdf(ops: Vec<Operation>, extra: Vec<Object>) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica"});
        let resources = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font}});
        let content = doc.add_object(Stream::new(dictionary! {}, Content { operations: ops }.encode().unwrap()));
        let page = doc.add_object(dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => content});
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1, "Resources" => resources, "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()]}),
        );
        let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
        doc.trailer.set("Root", catalog);
        for o in extra {
            doc.add_object(o);
        }
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    fn text(line: &str) -> Vec<Operation> {
        vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 12.into()]),
            Operation::new("Td", vec![72.into(), 720.into()]),
            Operation::new("Tj", vec![Object::string_literal(line)]),
            Operation::new("ET", vec![]),
        ]
    }

    fn stream(filters: &[&str], content: Vec<u8>) -> Object {
        let names: Vec<Object> = filters.iter().map(|f| Object::Name(f.as_bytes().to_vec())).collect();
        Object::Stream(Stream::new(dictionary! {"Filter" => names}, content).with_compression(false))
    }

    #[test]
    fn a_plain_pdf_is_read_in_the_worker() {
        let file = pdf(text("The heron valve opens at dawn every day"), vec![stream(&["FlateDecode"], zlib(b"x"))]);
        let (r, usage) = worker::run(&file, 10, &Limits::default());
        assert!(r.as_ref().is_ok_and(|p| p[0].contains("heron valve")), "{r:?}");
        assert!(usage.max_rss_kib > 0, "{usage:?}");
    }

    /// Each shape holds 512 MiB of zeros in under a megabyte; none may inflate past the budget.
    #[test]
    fn decompression_bombs_of_every_shape_are_refused_within_the_budget() {
        let zeros = bomb(b"", 512);
        assert!(zeros.len() < 1 << 20, "{}", zeros.len());
        // lopdf writes no object streams: this one is written as another type, renamed below.
        let objstm = Stream::new(
            dictionary! {"Type" => "ObjSxm", "N" => 1, "First" => 4, "Filter" => "FlateDecode"},
            bomb(b"9 0 ", 512),
        )
        .with_compression(false);
        let mut broken_header = zeros.clone();
        broken_header[..2].copy_from_slice(b"\0\0");
        let shapes = [
            ("raw flate", stream(&["FlateDecode"], zeros.clone())),
            ("filter chain", stream(&["FlateDecode", "FlateDecode"], zlib(&zeros))),
            ("ASCII85 and flate", stream(&["ASCII85Decode", "FlateDecode"], a85(&zeros))),
            ("object stream", Object::Stream(objstm)),
            ("broken zlib header", stream(&["FlateDecode"], broken_header)),
        ];
        for (shape, obj) in shapes {
            let mut file = pdf(text("A harmless looking page about pumps"), vec![obj]);
            if let Some(at) = file.windows(7).position(|w| w == b"/ObjSxm") {
                file[at..at + 7].copy_from_slice(b"/ObjStm");
            }
            let t = std::time::Instant::now();
            let (r, usage) = worker::run(&file, 10, &Limits::default());
            let why = r.expect_err(shape);
            assert!(why.contains("decompression bomb"), "{shape}: {why}");
            assert!(usage.max_rss_kib < 512 * 1024, "{shape}: {usage:?}");
            assert!(t.elapsed() < Duration::from_secs(20), "{shape}: {:?}", t.elapsed());
        }
    }

    /// A cross-reference stream is inflated by lopdf while it parses, before any budget: the
    /// worker's memory limit stops it.
    #[test]
    fn what_the_budget_cannot_reach_meets_the_memory_limit() {
        let zeros = bomb(b"", 768);
        let mut f = b"%PDF-1.5\n".to_vec();
        let at = f.len();
        f.extend_from_slice(
            format!(
                "1 0 obj\n<< /Type /XRef /Size 2 /W [1 4 2] /Filter /FlateDecode /Length {} >>\nstream\n",
                zeros.len()
            )
            .as_bytes(),
        );
        f.extend_from_slice(&zeros);
        f.extend_from_slice(format!("\nendstream\nendobj\nstartxref\n{at}\n%%EOF\n").as_bytes());
        let limits = Limits::new(128, Duration::from_secs(60));
        let (r, usage) = worker::run(&f, 10, &limits);
        let why = r.unwrap_err();
        assert!(why.contains("128 MiB of memory"), "{why}");
        assert!(usage.max_rss_kib < 512 * 1024, "{usage:?}");
    }

    /// Two million text operators over 2000 pages: seconds of work, within every budget.
    fn slow_pdf() -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica"});
        let resources = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font}});
        let mut body = b"BT /F1 12 Tf 72 720 Td ".to_vec();
        for i in 0..1000 {
            body.extend_from_slice(format!("(w{}) Tj 0 -1 Td ", i % 10).as_bytes());
        }
        body.extend_from_slice(b"ET");
        let content =
            doc.add_object(Stream::new(dictionary! {"Filter" => "FlateDecode"}, zlib(&body)).with_compression(false));
        let kids: Vec<Object> = (0..2000)
            .map(|_| doc.add_object(dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => content}).into())
            .collect();
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => kids, "Count" => 2000, "Resources" => resources, "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()]}),
        );
        let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
        doc.trailer.set("Root", catalog);
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    #[test]
    fn an_extraction_past_its_deadline_is_killed() {
        let file = slow_pdf();
        let limits = Limits::new(2048, Duration::from_millis(300));
        let t = std::time::Instant::now();
        let (r, usage) = worker::run(&file, 5000, &limits);
        let why = r.unwrap_err();
        assert!(why.contains("did not finish within 0.3 s"), "{why}");
        // Stopped at the deadline, and reaped: its CPU time is all it will ever use.
        assert!(t.elapsed() < Duration::from_millis(1300), "{:?}", t.elapsed());
        assert!(usage.cpu < Duration::from_millis(1000), "{usage:?}");
    }
}

/// The bounded decoder (`pdf_stream`); its tests live here because tests/fuzz.rs compiles
/// that file on its own.
#[cfg(test)]
mod stream_tests {
    use super::tests::{a85, zlib};
    use crate::pdf_stream::*;

    #[test]
    fn every_filter_of_a_chain_decodes_within_the_limit() {
        let text = b"BT /F1 12 Tf 72 720 Td (hello) Tj ET ".repeat(100);
        let once = zlib(&text);
        assert_eq!(decode(&[b"FlateDecode"], &[], &once, 1 << 20).unwrap(), text);
        let twice = zlib(&once);
        assert_eq!(decode(&[b"FlateDecode", b"FlateDecode"], &[], &twice, 1 << 20).unwrap(), text);
        let armoured = a85(&once);
        assert_eq!(decode(&[b"ASCII85Decode", b"FlateDecode"], &[], &armoured, 1 << 20).unwrap(), text);
        assert_eq!(decode(&[b"AHx"], &[], b"48 65 6c6C6f>", 100).unwrap(), b"Hello");
        assert_eq!(
            decode(&[b"RunLengthDecode"], &[], &[2, b'a', b'b', b'c', 253, b'x', 128], 100).unwrap(),
            b"abcxxxx"
        );
        // A broken zlib header: read as raw deflate, as lopdf does.
        let mut broken = once.clone();
        broken[0] = 0;
        assert_eq!(decode(&[b"FlateDecode"], &[], &broken, 1 << 20).unwrap(), text);
        assert!(matches!(decode(&[b"DCTDecode"], &[], b"x", 10), Err(DecodeError::Unsupported(_))));
    }

    #[test]
    fn a_bomb_stops_at_the_limit_in_any_layer() {
        let zeros = vec![0u8; 64 << 20];
        let bomb = zlib(&zeros);
        assert!(bomb.len() < 1 << 20);
        let limit = 1 << 20;
        assert_eq!(decode(&[b"FlateDecode"], &[], &bomb, limit), Err(DecodeError::TooLarge));
        // The outer layer is small; the inner one is the bomb.
        let chain = zlib(&bomb);
        assert_eq!(decode(&[b"FlateDecode", b"FlateDecode"], &[], &chain, limit), Err(DecodeError::TooLarge));
        let armoured = a85(&bomb);
        assert_eq!(decode(&[b"ASCII85Decode", b"FlateDecode"], &[], &armoured, limit), Err(DecodeError::TooLarge));
        let mut raw = bomb.clone();
        raw[0] = 0;
        assert_eq!(decode(&[b"FlateDecode"], &[], &raw, limit), Err(DecodeError::TooLarge));
        assert_eq!(decode(&[b"A85"], &[], &b"z".repeat(1000), 100), Err(DecodeError::TooLarge));
        assert_eq!(decode(&[b"RL"], &[], &[129, 0].repeat(1000), 1000), Err(DecodeError::TooLarge));
    }

    /// The textbook LZW encoder, PDF's flavour: early change, so the first 10-bit code follows
    /// the creation of entry 511.
    fn lzw_encode(data: &[u8]) -> Vec<u8> {
        use std::collections::HashMap;
        let mut dict: HashMap<Vec<u8>, u32> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let (mut out, mut acc, mut nbits) = (Vec::new(), 0u64, 0u32);
        let mut emit = |code: u32, width: u32, out: &mut Vec<u8>| {
            acc = (acc << width) | code as u64;
            nbits += width;
            while nbits >= 8 {
                out.push((acc >> (nbits - 8)) as u8);
                nbits -= 8;
            }
        };
        let (mut next, mut width) = (258u32, 9u32);
        emit(256, 9, &mut out);
        let mut w: Vec<u8> = Vec::new();
        for &c in data {
            let mut wc = w.clone();
            wc.push(c);
            if dict.contains_key(&wc) {
                w = wc;
                continue;
            }
            emit(dict[&w], width, &mut out);
            if next < 4096 {
                dict.insert(wc, next);
                width = match next {
                    ..511 => 9,
                    511..1023 => 10,
                    1023..2047 => 11,
                    _ => 12,
                };
                next += 1;
            }
            w = vec![c];
        }
        if !w.is_empty() {
            emit(dict[&w], width, &mut out);
        }
        emit(257, width, &mut out);
        if nbits > 0 {
            out.push((acc << (8 - nbits)) as u8);
        }
        out
    }

    #[test]
    fn lzw_round_trips_and_is_bounded() {
        // The PDF specification's example (7.4.4.2).
        let spec = [0x80, 0x0b, 0x60, 0x50, 0x22, 0x0c, 0x0c, 0x85, 0x01];
        assert_eq!(decode(&[b"LZWDecode"], &[], &spec, 100).unwrap(), b"-----A---B");
        let text = b"TOBEORNOTTOBEORTOBEORNOT#".repeat(50);
        let packed = lzw_encode(&text);
        assert_eq!(decode(&[b"LZWDecode"], &[], &packed, 1 << 20).unwrap(), text);
        let zeros = vec![0u8; 1 << 20];
        let packed = lzw_encode(&zeros);
        assert_eq!(decode(&[b"LZWDecode"], &[], &packed, 1000), Err(DecodeError::TooLarge));
    }

    #[test]
    fn png_predictors_are_undone() {
        // Two rows of 3 bytes: "up" filter on the second.
        let p = Params { predictor: 12, columns: 3, ..Params::default() };
        let data = zlib(&[0, 1, 2, 3, 2, 1, 1, 1]);
        assert_eq!(decode(&[b"FlateDecode"], &[Some(p)], &data, 100).unwrap(), [1, 2, 3, 2, 3, 4]);
    }
}
