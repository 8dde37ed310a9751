//! Documentation sources beside the code: crawled documentation sites (`webdoc`) and PDFs
//! (`pdf`). Each page becomes Markdown text stored content-addressed under its git blob id
//! (`.lynx/docs/text`), so it is chunked, embedded and searched through the same layers as
//! code. A crawl or an extraction is a snapshot — a manifest of page path → blob, with what
//! failed and what was skipped — and a snapshot is a view like a commit: a later snapshot
//! processes only pages whose text is new, and earlier ones stay answerable until `gc`.
//!
//! Page paths: a web page is its URL (canonical, no fragment); a PDF page is
//! `file.pdf#page=N`. Both are Markdown to the chunker (`lang::by_path`).
//!
//! This module is the snapshots' store, which views read; taking a snapshot (crawling a site,
//! extracting PDFs) is the `lynx-docs` crate's, so the core never builds an HTML parser, a
//! robots.txt reader or a PDF library.

use crate::config::SourceType;
use crate::repo::{FileEntry, FileList};
use crate::workspace::Workspace;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

crate::error::errors! {
    /// A snapshot id that names no snapshot of a documentation source.
    pub enum SnapshotError: Usage {
        NotASnapshot { id: String, source: String } =>
            "`{id}` is not a snapshot of source `{source}`; `git lynx list-sources` shows them",
        Gone { id: String, source: String } =>
            "source `{source}` has no snapshot `{id}` (gc removes all but the current one)",
    }
}

/// One page of a snapshot.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Page {
    pub path: String,
    /// The URL fetched, when the page is named by another (its canonical URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Git blob id (hex) of the page's Markdown text.
    pub blob: String,
    pub title: String,
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Links found on the page (kept so that a page answered "not modified" still leads on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
    /// How this snapshot got it: `fetched`, `not modified` (a conditional request), `extracted`,
    /// `unchanged` (the same PDF file as before).
    pub how: String,
}

/// Something that was not stored, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Problem {
    pub target: String,
    pub reason: String,
}

/// A PDF file of a snapshot: its content hash, so an unchanged file is not extracted again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileRecord {
    pub file: String,
    pub hash: String,
    pub pages: usize,
}

/// A crawl or an extraction: the pages it holds and what happened on the way.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    pub id: String,
    pub source: String,
    pub kind: SourceType,
    /// Seconds since the Unix epoch.
    pub created: u64,
    pub pages: Vec<Page>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileRecord>,
    pub failures: Vec<Problem>,
    pub skipped: Vec<Problem>,
    /// HTTP requests made (webdoc) or files read (pdf).
    pub requests: usize,
    /// Pages whose text this store had not seen: the only ones indexing will process.
    pub new_texts: usize,
    pub millis: f64,
}

fn root(ws: &Workspace) -> PathBuf {
    ws.store.root.join("docs")
}

fn source_dir(ws: &Workspace, source: &str) -> PathBuf {
    root(ws).join("sources").join(source)
}

/// Page texts, zstd-compressed, one file per blob id.
pub struct TextStore {
    dir: PathBuf,
    hash: gix::hash::Kind,
}

impl TextStore {
    pub fn open(ws: &Workspace) -> TextStore {
        TextStore { dir: root(ws).join("text"), hash: ws.repo.object_hash() }
    }

    fn path(&self, hex: &str) -> PathBuf {
        self.dir.join(&hex[..2]).join(format!("{}.zst", &hex[2..]))
    }

    pub fn contains(&self, hex: &str) -> bool {
        hex.len() > 2 && self.path(hex).exists()
    }

    /// Stores `text` (if new) and returns its blob id and whether it was new.
    pub fn put(&self, text: &str) -> Result<(String, bool)> {
        let id = gix::objs::compute_hash(self.hash, gix::objs::Kind::Blob, text.as_bytes())?.to_string();
        if self.contains(&id) {
            return Ok((id, false));
        }
        let packed = zstd::encode_all(text.as_bytes(), 3)?;
        crate::fsutil::write_atomic(&self.path(&id), &packed)?;
        Ok((id, true))
    }

    pub fn get(&self, hex: &str) -> Result<Vec<u8>> {
        let path = self.path(hex);
        let packed = std::fs::read(&path).with_context(|| format!("reading page text {}", path.display()))?;
        Ok(zstd::decode_all(&packed[..])?)
    }

    /// Every stored blob id (for `gc`).
    fn all(&self) -> Vec<(String, PathBuf)> {
        walkdir::WalkDir::new(&self.dir)
            .min_depth(2)
            .max_depth(2)
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_str()?.strip_suffix(".zst")?.to_string();
                let dir = e.path().parent()?.file_name()?.to_str()?.to_string();
                Some((format!("{dir}{name}"), e.into_path()))
            })
            .collect()
    }
}

/// Snapshot ids of a source, oldest first.
pub fn snapshot_ids(ws: &Workspace, source: &str) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(source_dir(ws, source))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(String::from))
        .collect();
    ids.sort();
    ids
}

/// A snapshot of `source`: the named one, else the current one. None when there is none yet.
pub fn load(ws: &Workspace, source: &str, id: Option<&str>) -> Result<Option<Snapshot>> {
    let dir = source_dir(ws, source);
    let id = match id {
        Some(id) => id.to_string(),
        None => match current(ws, source) {
            Current::Id(id) => id,
            Current::Damaged { newest: Some(id), why } => {
                tracing::warn!(
                    "source `{source}`: {why}; answering from its newest snapshot {id} (`git lynx doctor --repair` records it again)"
                );
                id
            }
            Current::Damaged { newest: None, why } => {
                return Err(anyhow::anyhow!(
                    "source `{source}`: {why}, and no snapshot is left; `git lynx update-source-index {source}` makes a new one"
                ));
            }
            Current::None => return Ok(None),
        },
    };
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(SnapshotError::NotASnapshot { id: id.to_string(), source: source.to_string() }.into());
    }
    let path = dir.join(format!("{id}.json"));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(SnapshotError::Gone { id: id.to_string(), source: source.to_string() }.into());
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    Ok(Some(serde_json::from_str(&text).with_context(|| {
        format!("{} is not a snapshot; `git lynx update-source-index {source}` makes a new one", path.display())
    })?))
}

/// Writes a snapshot and makes it the source's current one (each file replaced whole).
pub fn save(ws: &Workspace, snap: &Snapshot) -> Result<()> {
    let dir = source_dir(ws, &snap.source);
    crate::fsutil::write_atomic(&dir.join(format!("{}.json", snap.id)), &serde_json::to_vec(snap)?)?;
    set_current(&dir, &snap.id)
}

/// What a source's pointer to its current snapshot says.
#[derive(Debug, PartialEq, Eq)]
pub enum Current {
    /// Never fetched or extracted.
    None,
    Id(String),
    /// The pointer is missing or damaged while snapshots exist (or it names one that is gone).
    Damaged {
        newest: Option<String>,
        why: String,
    },
}

/// The pointer holds the id and a check of it, so a damaged pointer is told from a valid one.
fn pointer_text(id: &str) -> String {
    format!("{id} {}\n", &blake3::hash(id.as_bytes()).to_hex()[..16])
}

fn set_current(dir: &Path, id: &str) -> Result<()> {
    crate::fsutil::write_atomic(&dir.join("HEAD"), pointer_text(id).as_bytes())
}

/// The current snapshot of `source`, checked.
pub fn current(ws: &Workspace, source: &str) -> Current {
    let dir = source_dir(ws, source);
    let ids = snapshot_ids(ws, source);
    let newest = ids.last().cloned();
    let damaged = |why: &str| Current::Damaged { newest: newest.clone(), why: why.to_string() };
    let text = match std::fs::read_to_string(dir.join("HEAD")) {
        Ok(t) => t,
        Err(_) if ids.is_empty() => return Current::None,
        Err(_) => return damaged("the pointer to its current snapshot is missing"),
    };
    let id = match text.trim().split_once(' ') {
        Some((id, check)) if pointer_text(id).trim_end() == format!("{id} {check}") => id.to_string(),
        Some(_) => return damaged("the pointer to its current snapshot is damaged"),
        // Written before the pointer carried its check.
        None => text.trim().to_string(),
    };
    if !ids.contains(&id) {
        return damaged(&format!("its current snapshot `{}` is missing", id.escape_debug()));
    }
    Current::Id(id)
}

/// Points a damaged pointer at the newest snapshot again (`doctor --repair`).
pub fn repair_current(ws: &Workspace, source: &str) -> Result<Option<String>> {
    match current(ws, source) {
        Current::Damaged { newest: Some(id), .. } => {
            set_current(&source_dir(ws, source), &id)?;
            Ok(Some(id))
        }
        _ => Ok(None),
    }
}

/// A new snapshot id: sortable by time, unique by content.
pub fn new_id(created: u64, pages: &[Page]) -> String {
    let mut h = blake3::Hasher::new();
    for p in pages {
        h.update(p.path.as_bytes());
        h.update(p.blob.as_bytes());
    }
    h.update(&crate::fsutil::now_nanos().to_le_bytes());
    format!("{created:010}-{}", &h.finalize().to_hex()[..8])
}

/// An empty snapshot for the collectors to fill.
pub fn empty(kind: SourceType) -> Snapshot {
    Snapshot {
        id: String::new(),
        source: String::new(),
        kind,
        created: 0,
        pages: Vec::new(),
        files: Vec::new(),
        failures: Vec::new(),
        skipped: Vec::new(),
        requests: 0,
        new_texts: 0,
        millis: 0.0,
    }
}

/// The files of a snapshot view (the current snapshot unless `id` names one), with the
/// snapshot's id. A source never fetched yet is an empty view labelled `none`.
pub fn listing(ws: &Workspace, source: &str, id: Option<&str>) -> Result<(String, FileList)> {
    let Some(snap) = load(ws, source, id)? else {
        return Ok(("none".into(), FileList { files: Vec::new(), skipped: Vec::new() }));
    };
    let texts = TextStore::open(ws);
    let mut files = Vec::with_capacity(snap.pages.len());
    for p in &snap.pages {
        let content = match texts.get(&p.blob) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("{}: {e:#}; `git lynx update-source-index {source}` fetches it again", p.path);
                continue;
            }
        };
        let blob = crate::repo::parse_oid(&p.blob)?;
        files.push(FileEntry {
            path: p.path.clone(),
            blob,
            size: Some(content.len() as u64),
            content: Some(Arc::new(content)),
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    Ok((snap.id.clone(), FileList { files, skipped: Vec::new() }))
}

/// Whether a view path is a documentation page (a URL or a PDF page).
pub fn is_page_path(path: &str) -> bool {
    crate::lang::is_document_page(path)
}

/// `file.pdf#page=12` → (`file.pdf`, 12).
pub fn pdf_page(path: &str) -> Option<(&str, u32)> {
    let (file, page) = path.rsplit_once("#page=")?;
    file.to_ascii_lowercase().ends_with(".pdf").then_some(())?;
    Some((file, page.parse().ok()?))
}

/// How a hit in a documentation page is cited: `URL#anchor` (the anchor of the section's
/// heading, when the page gave it one) or `file.pdf p.12`. None for code.
pub fn citation(path: &str, chunk_text: &str) -> Option<String> {
    if let Some((file, page)) = pdf_page(path) {
        return Some(format!("{file} p.{page}"));
    }
    if !(path.starts_with("https://") || path.starts_with("http://")) {
        return None;
    }
    let anchor = chunk_text.lines().find(|l| l.starts_with('#')).and_then(heading_anchor);
    Some(match anchor {
        Some(a) => format!("{path}#{a}"),
        None => path.to_string(),
    })
}

/// The `{#id}` of a Markdown heading line.
pub fn heading_anchor(line: &str) -> Option<&str> {
    let inner = line.trim_end().strip_suffix('}')?;
    let (_, id) = inner.rsplit_once(" {#")?;
    (!id.is_empty() && !id.contains(char::is_whitespace)).then_some(id)
}

/// What `gc` keeps of the documentation sources: each source's current snapshot (older ones
/// and page texts no kept snapshot names are removed unless `dry_run`). Returns the kept
/// pages as (path, blob) for the segment sweep, and how many snapshots and texts went.
pub fn gc(ws: &Workspace, dry_run: bool) -> Result<(Vec<(String, String)>, usize, usize)> {
    let dir = root(ws).join("sources");
    let mut kept_pages = Vec::new();
    let mut snapshots_removed = 0;
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let Some(source) = entry.file_name().to_str().map(String::from) else { continue };
        // A damaged pointer keeps the newest snapshot, the one answers use.
        let current = match current(ws, &source) {
            Current::Id(id) => id,
            Current::Damaged { newest, .. } => newest.unwrap_or_default(),
            Current::None => String::new(),
        };
        for id in snapshot_ids(ws, &source) {
            if id == current {
                if let Ok(Some(s)) = load(ws, &source, Some(&id)) {
                    kept_pages.extend(s.pages.into_iter().map(|p| (p.path, p.blob)));
                }
            } else {
                snapshots_removed += 1;
                if !dry_run {
                    let _ = std::fs::remove_file(entry.path().join(format!("{id}.json")));
                }
            }
        }
    }
    let live: std::collections::HashSet<&str> = kept_pages.iter().map(|(_, b)| b.as_str()).collect();
    let mut texts_removed = 0;
    for (hex, path) in TextStore::open(ws).all() {
        if !live.contains(hex.as_str()) {
            texts_removed += 1;
            if !dry_run {
                let _ = std::fs::remove_file(path);
            }
        }
    }
    Ok((kept_pages, snapshots_removed, texts_removed))
}

/// The current snapshot of every documentation source of this store as files for an export
/// (`sources/NAME/ID.json`, `text/ab/cdef….zst`), with the object keys of their pages.
pub fn export_files(ws: &Workspace) -> Result<(Vec<(String, Vec<u8>)>, Vec<crate::store::Key>, usize)> {
    let texts = TextStore::open(ws);
    let mut files = Vec::new();
    let mut keys = Vec::new();
    let mut snapshots = 0;
    for entry in std::fs::read_dir(root(ws).join("sources")).into_iter().flatten().flatten() {
        let Some(source) = entry.file_name().to_str().map(String::from) else { continue };
        let Some(snap) = load(ws, &source, None)? else { continue };
        for p in &snap.pages {
            let Ok(packed) = std::fs::read(texts.path(&p.blob)) else { continue };
            files.push((format!("text/{}/{}.zst", &p.blob[..2], &p.blob[2..]), packed));
            keys.push(crate::store::Key::blob(
                crate::repo::parse_oid(&p.blob)?.as_bytes(),
                crate::repo::lang_hint(&p.path),
            ));
        }
        files.push((format!("sources/{source}/{}.json", snap.id), serde_json::to_vec(&snap)?));
        snapshots += 1;
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files.dedup_by(|a, b| a.0 == b.0);
    Ok((files, keys, snapshots))
}

/// What an import of documentation snapshots did.
#[derive(Debug, Default, Serialize)]
pub struct Imported {
    pub snapshots: usize,
    pub texts: usize,
    /// Files refused, with why.
    pub refused: Vec<String>,
}

/// Largest page text an import decompresses.
const MAX_TEXT_BYTES: u64 = 16 * 1024 * 1024;

/// Installs exported snapshots: each text must hash to its id, each manifest must name a valid
/// source and snapshot and only pages whose texts are here. A snapshot becomes its source's
/// current one only when the source has none yet (else `--rev ID` asks it).
pub fn import_files(ws: &Workspace, files: Vec<(String, Vec<u8>)>) -> Result<Imported> {
    let texts = TextStore::open(ws);
    let mut out = Imported::default();
    let mut manifests = Vec::new();
    for (rel, bytes) in files {
        let parts: Vec<&str> = rel.split('/').collect();
        match parts.as_slice() {
            ["text", dir, file] => {
                let id = format!("{dir}{}", file.strip_suffix(".zst").unwrap_or(""));
                let mut text = Vec::new();
                let decoded = zstd::stream::read::Decoder::new(&bytes[..]).and_then(|d| {
                    std::io::Read::read_to_end(&mut std::io::Read::take(d, MAX_TEXT_BYTES + 1), &mut text)
                });
                let ok = decoded.is_ok()
                    && (text.len() as u64) <= MAX_TEXT_BYTES
                    && gix::objs::compute_hash(texts.hash, gix::objs::Kind::Blob, &text).is_ok_and(|h| h == id);
                if !ok {
                    out.refused.push(format!("{rel}: the text does not match its id"));
                    continue;
                }
                if !texts.contains(&id) {
                    crate::fsutil::write_atomic(&texts.path(&id), &bytes)?;
                    out.texts += 1;
                }
            }
            ["sources", source, file] if file.ends_with(".json") => {
                manifests.push((source.to_string(), file.trim_end_matches(".json").to_string(), bytes))
            }
            _ => out.refused.push(format!("{rel}: not a documentation snapshot file")),
        }
    }
    for (source, id, bytes) in manifests {
        let checked = (|| -> std::result::Result<Snapshot, String> {
            crate::config::check_source_name(&source).map_err(|e| e.to_string())?;
            if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                return Err("not a snapshot id".into());
            }
            let snap: Snapshot = serde_json::from_slice(&bytes).map_err(|e| format!("not a snapshot ({e})"))?;
            if snap.source != source || snap.id != id {
                return Err("its name and content disagree".into());
            }
            if let Some(p) = snap.pages.iter().find(|p| !is_page_path(&p.path) || !texts.contains(&p.blob)) {
                return Err(format!("page {} is not a documentation page with its text", p.path));
            }
            Ok(snap)
        })();
        match checked {
            Ok(snap) => {
                let dir = source_dir(ws, &source);
                crate::fsutil::write_atomic(&dir.join(format!("{id}.json")), &bytes)?;
                if !dir.join("HEAD").exists() {
                    set_current(&dir, &snap.id)?;
                }
                out.snapshots += 1;
            }
            Err(why) => out.refused.push(format!("sources/{source}/{id}.json: {why}")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_of_pages() {
        assert_eq!(citation("guide/manual.pdf#page=12", "text").as_deref(), Some("guide/manual.pdf p.12"));
        assert_eq!(
            citation("https://d.example/guide/retries", "## Backoff {#configuring-backoff}\nbody").as_deref(),
            Some("https://d.example/guide/retries#configuring-backoff")
        );
        assert_eq!(
            citation("https://d.example/guide/retries", "body only").as_deref(),
            Some("https://d.example/guide/retries")
        );
        assert_eq!(citation("src/main.rs", "## x {#y}"), None);
        assert_eq!(citation("notes.pdf.md#page=2", ""), None);
        assert!(is_page_path("http://d.example/") && is_page_path("a/b.PDF#page=3") && !is_page_path("a/b.pdf"));
    }
}
