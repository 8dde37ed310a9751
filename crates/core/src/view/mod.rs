//! Views: the index of one revision or of the working tree, as the list of (path, blob) pairs
//! its tree holds, joined with the objects those blobs already have. A view is assembled, not
//! built: its chunk table is a list of row locations in shared, per-segment shards
//! (`table.rs`), its dense side a list of vector locations (`dense.rs`), and whatever depends on
//! the whole view (BM25 statistics, the resolved graph) is computed from those, exactly, when
//! asked. Nothing is written per view, except that `index --rev` keeps the assembled view of
//! each revision it indexed (`kept.rs`), so the first question there reads it back.

pub mod dense;
pub mod history;
pub mod kept;
pub mod table;

use crate::repo::{self, FileEntry, SkipReason, Skipped};
use crate::store::Key;
use crate::workspace::Workspace;
use anyhow::Result;
use gix::ObjectId;
use serde::Serialize;

/// Which view to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewSpec {
    /// HEAD overlaid with staged, unstaged and untracked changes.
    Worktree,
    /// Any revision git can resolve.
    Rev(String),
    /// The staged state (git's index).
    Staged,
    /// A plain folder (a non-git source): files from disk, filtered.
    Folder { root: std::path::PathBuf, extensions: Vec<String>, ignore: Vec<String> },
    /// A snapshot of a documentation source (webdoc or pdf): the current one, or the named one.
    Snapshot { source: String, id: Option<String> },
}

impl ViewSpec {
    pub fn from_option(rev: Option<&str>) -> ViewSpec {
        match rev {
            None | Some("") | Some("worktree") => ViewSpec::Worktree,
            Some(r) => ViewSpec::Rev(r.to_string()),
        }
    }
}

/// How a view names itself in every answer.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct ViewId {
    /// "worktree" or "commit".
    pub kind: &'static str,
    /// Full commit id (for the working tree: HEAD's, when there is one).
    pub commit: Option<String>,
    /// "worktree" or the abbreviated commit id.
    pub label: String,
}

/// A view ready to query: its name and its assembled chunk table.
pub struct ViewData {
    pub id: ViewId,
    /// Hash of the view's content (its (path, key) list and the settings that shape it): views
    /// with the same key answer the same.
    pub key: String,
    pub table: table::ChunkTable,
    pub assembly: table::Assembly,
    /// The history field, built on first use (None: no revision, or history off).
    pub history: std::sync::OnceLock<Option<std::sync::Arc<history::HistoryField>>>,
}

impl ViewData {
    /// Assembles `view` from the store's shards. Blobs without objects are left out (counted
    /// in `assembly.missing`).
    pub fn assemble(ws: &Workspace, view: &View) -> Result<ViewData> {
        let max = ws.config.index.max_file_size;
        let (table, assembly) = table::ChunkTable::assemble(
            &ws.store,
            &ws.shards,
            view.files.iter().map(|f| (f.path.as_str(), f.key)),
            max,
        )?;
        Ok(ViewData { id: view.id.clone(), key: content_key(view, max), table, assembly, history: Default::default() })
    }

    /// Chunk ordinals of a file, in line order.
    pub fn file_chunks(&self, path: &str) -> std::ops::Range<u32> {
        self.table.file_chunks(path)
    }
}

/// The content key of a view: its (path, key) list, the layer fingerprints and the size cap.
pub fn content_key(view: &View, max_size: u64) -> String {
    // A listing never changes once made, and a monorepo's takes milliseconds to hash.
    if let Some((max, key)) = view.content_key.get()
        && *max == max_size
    {
        return key.clone();
    }
    let key = hash_content(view, max_size);
    let _ = view.content_key.set((max_size, key.clone()));
    key
}

fn hash_content(view: &View, max_size: u64) -> String {
    let mut h = blake3::Hasher::new();
    h.update(crate::layer::chunks_fingerprint().as_bytes());
    h.update(crate::layer::lexical_fingerprint().as_bytes());
    h.update(&max_size.to_le_bytes());
    for f in &view.files {
        h.update(f.path.as_bytes());
        h.update(&[0]);
        h.update(&f.key.0);
    }
    h.finalize().to_hex()[..24].to_string()
}

/// A file of a view with its object key.
#[derive(Debug, Clone)]
pub struct ViewFile {
    pub path: String,
    pub blob: ObjectId,
    pub key: Key,
    pub size: Option<u64>,
    pub content: Option<std::sync::Arc<Vec<u8>>>,
}

#[derive(Clone)]
pub struct View {
    pub id: ViewId,
    pub files: Vec<ViewFile>,
    /// Files left out for path-level reasons (content-level reasons are found at indexing).
    pub skipped: Vec<Skipped>,
    /// `content_key` of the listing and the size cap it was made with.
    pub content_key: std::sync::OnceLock<(u64, String)>,
}

impl View {
    /// Lists the files of `spec` (reads no file content except changed working-tree files).
    pub fn open(ws: &Workspace, spec: &ViewSpec) -> Result<View> {
        let max = ws.config.index.max_file_size;
        let (id, list) = match spec {
            ViewSpec::Worktree => {
                let head = ws.repo.head()?;
                let list = ws.repo.worktree_files(max)?;
                (
                    ViewId { kind: "worktree", commit: head.map(|h| repo::hex(&h.commit)), label: "worktree".into() },
                    list,
                )
            }
            ViewSpec::Rev(rev) => {
                let r = ws.repo.resolve(rev)?;
                let hex = repo::hex(&r.commit);
                let list = ws.repo.tree_files(r.tree)?;
                (ViewId { kind: "commit", label: hex[..12].to_string(), commit: Some(hex) }, list)
            }
            ViewSpec::Staged => {
                let head = ws.repo.head()?;
                let list = ws.repo.index_files()?;
                (ViewId { kind: "staged", commit: head.map(|h| repo::hex(&h.commit)), label: "staged".into() }, list)
            }
            ViewSpec::Folder { root, extensions, ignore } => {
                let filter = repo::folder::FolderFilter::new(extensions, ignore)?;
                let list = repo::folder::folder_files(root, &filter, max, ws.repo.object_hash())?;
                (ViewId { kind: "folder", commit: None, label: root.display().to_string() }, list)
            }
            ViewSpec::Snapshot { source, id } => {
                let (label, list) = crate::docsource::listing(ws, source, id.as_deref())?;
                (ViewId { kind: "snapshot", commit: None, label }, list)
            }
        };
        let excludes = repo::exclude_set(&ws.config.index.exclude)?;
        let mut skipped = list.skipped;
        let mut files = Vec::with_capacity(list.files.len());
        for f in list.files {
            if excludes.as_ref().is_some_and(|g| g.is_match(&f.path)) {
                skipped.push(Skipped { path: f.path, reason: SkipReason::Excluded });
                continue;
            }
            files.push(to_view_file(f));
        }
        Ok(View { id, files, skipped, content_key: Default::default() })
    }

    /// Distinct keys of the view's files, in first-seen order.
    pub fn distinct_keys(&self) -> Vec<Key> {
        let mut seen = std::collections::HashSet::with_capacity(self.files.len());
        self.files.iter().filter(|f| seen.insert(f.key)).map(|f| f.key).collect()
    }
}

fn to_view_file(f: FileEntry) -> ViewFile {
    let key = Key::blob(f.blob.as_bytes(), repo::lang_hint(&f.path));
    ViewFile { path: f.path, blob: f.blob, key, size: f.size, content: f.content }
}

/// Sorts the `k` best (score descending, ordinal ascending) to the front and drops the rest.
pub fn top_k(v: &mut Vec<(u32, f32)>, k: usize) {
    let cmp = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if v.len() > k {
        v.select_nth_unstable_by(k - 1, cmp);
        v.truncate(k);
    }
    v.sort_unstable_by(cmp);
}
