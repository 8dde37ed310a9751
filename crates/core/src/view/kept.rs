//! Kept views: a revision's view assembled once — by `index --rev`, which has just made its
//! objects complete — and written under `.lynx/cache/views`, so the first question at that
//! revision, in any process, reads one checked file instead of listing the tree, assembling the
//! chunk table from the catalogs and building the history field. A record holds the listing,
//! the table (row locations over shards, named by their segments) and the history field; it is
//! a cache: named by the commit and a fingerprint of everything that shapes the view (layer
//! fingerprints, size cap, excludes, history settings, and the repository's state outside any
//! commit: its own and the global attributes files, the shallow boundary, grafts, replace
//! refs), checked section by section and number by number when read, refused — and assembled
//! again — when anything in it does not hold or a segment it names is gone. A commit's tree
//! never changes, and what else shapes its view is in the name, so a record never goes stale;
//! `gc` removes them all, and at most `KEEP` (`KEEP_BYTES`) are kept.

use super::history::HistoryField;
use super::table::{self, ChunkTable};
use super::{View, ViewData, ViewFile, ViewId};
use crate::repo::{SkipReason, Skipped};
use crate::shard::{File, Kind, Writer};
use crate::store::Key;
use crate::workspace::Workspace;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// Records kept: one per indexed revision, the most recently written, within a disk budget (a
/// monorepo's record is tens of megabytes).
const KEEP: usize = 64;
const KEEP_BYTES: u64 = 512 << 20;
/// Working-tree records kept: every edit makes a new state, and only the latest few are asked
/// again.
const KEEP_WORKTREE: usize = 4;

const HEADER: usize = 0;
const LIST_AT: usize = 1;
const LIST_PATHS: usize = 2;
const LIST_BLOBS: usize = 3;
const LIST_SIZES: usize = 4;
const LIST_SKIPPED: usize = 5;
const MISSING: usize = 6;
const TABLE: usize = 7;
const HISTORY: usize = TABLE + table::SECTIONS;

#[derive(Serialize, Deserialize)]
struct Header {
    commit: String,
    label: String,
    id_len: usize,
    /// The view's content key (`view::content_key`).
    key: String,
    chunk_segments: Vec<String>,
    lex_segments: Vec<String>,
    skipped: usize,
    /// The history field's (total, commits), when the record holds one.
    history: Option<(u64, usize)>,
    /// The table's `paths_key`.
    #[serde(default)]
    paths: String,
}

/// Where the record of `commit` lives, under the settings of `ws`.
fn record(ws: &Workspace, commit: &str) -> (PathBuf, String) {
    let name = format!("{commit}-{}", fingerprint(ws));
    let path = ws.store.root.join("cache").join("views").join(&commit[..2.min(commit.len())]).join(&name);
    (path, name)
}

/// Where the record of the working tree's view of content `key` over `head` lives.
fn worktree_record(ws: &Workspace, key: &str, head: &str) -> (PathBuf, String) {
    let mut h = blake3::Hasher::new();
    h.update(b"worktree view\0");
    h.update(key.as_bytes());
    h.update(&[0]);
    h.update(head.as_bytes());
    let name = format!("{}-{}", &h.finalize().to_hex()[..32], fingerprint(ws));
    (ws.store.root.join("cache").join("worktree-views").join(&name), name)
}

/// Everything besides the commit that shapes a view and its history field.
fn fingerprint(ws: &Workspace) -> String {
    let (i, s) = (&ws.config.index, &ws.config.search);
    let mut h = blake3::Hasher::new();
    h.update(b"kept view 1\0");
    for fp in
        [crate::layer::chunks_fingerprint(), crate::layer::lexical_fingerprint(), crate::layer::history::fingerprint()]
    {
        h.update(fp.as_bytes());
        h.update(&[0]);
    }
    h.update(&i.max_file_size.to_le_bytes());
    for e in &i.exclude {
        h.update(e.as_bytes());
        h.update(&[0]);
    }
    let history = history_on(ws);
    h.update(&[history as u8]);
    h.update(&(s.history_commits as u64).to_le_bytes());
    h.update(&(s.history_per_file as u64).to_le_bytes());
    repository_state(ws, &mut h);
    h.finalize().to_hex()[..16].to_string()
}

/// What the repository's own state, outside any commit, makes of a commit's view and its
/// history field: the attributes files git reads besides `.gitattributes` (`info/attributes`,
/// the global one), the shallow boundary, grafts and replace refs. A change to any of them
/// names every record anew, so none assembled before it is answered from.
fn repository_state(ws: &Workspace, h: &mut blake3::Hasher) {
    let repo = ws.repo.local();
    let common = repo.common_dir();
    let mut files = vec![
        common.join("info").join("attributes"),
        common.join("info").join("grafts"),
        repo.shallow_file().unwrap_or_else(|_| common.join("shallow")),
    ];
    if let Some(p) = repo.config_snapshot().trusted_path("core.attributesFile").ok().flatten() {
        files.push(p);
    }
    if let Some(config) = crate::env::path(crate::env::XDG_CONFIG_HOME)
        .filter(|p| p.is_absolute())
        .or_else(|| crate::env::home().map(|h| h.join(".config")))
    {
        files.push(config.join("git").join("attributes"));
    }
    for f in &files {
        h.update(f.as_os_str().as_encoded_bytes());
        match std::fs::read(f) {
            Ok(bytes) => {
                h.update(&(bytes.len() as u64).to_le_bytes());
                h.update(&bytes);
            }
            Err(_) => {
                h.update(b"\0absent");
            }
        }
    }
    let replaced = repo.references().ok();
    if let Some(refs) = &replaced
        && let Ok(iter) = refs.prefixed("refs/replace/")
    {
        for r in iter.flatten() {
            h.update(r.name().as_bstr());
            h.update(&[0]);
            if let Some(id) = r.target().try_id() {
                h.update(id.as_bytes());
            }
        }
    }
}

/// Whether views at revisions have a history field under these settings.
pub fn history_on(ws: &Workspace) -> bool {
    let s = &ws.config.search;
    (s.history > 0.0 || s.recency > 0.0) && s.history_commits > 0
}

/// Whether a record of `commit` exists under the current settings.
pub fn exists(ws: &Workspace, commit: &str) -> bool {
    record(ws, commit).0.is_file()
}

/// Writes the record of a view at a commit (atomically), then drops the oldest beyond `KEEP`.
pub fn write(ws: &Workspace, view: &View, data: &ViewData, history: Option<&HistoryField>) -> Result<()> {
    let commit = view.id.commit.as_deref().context("only a commit's view is kept")?;
    let (path, name) = record(ws, commit);
    let bytes = encode(view, data, history, &name, true)?;
    crate::fsutil::write_atomic(&path, &bytes)?;
    prune(&ws.store.root.join("cache").join("views"), 2, KEEP);
    Ok(())
}

/// Writes the record of the working tree's view (its table and history field, no listing: the
/// tree is listed anyway to know its content), then drops the oldest beyond `KEEP_WORKTREE`.
pub fn write_worktree(ws: &Workspace, view: &View, data: &ViewData, history: Option<&HistoryField>) -> Result<()> {
    let head = view.id.commit.as_deref().context("a working tree without a commit is not kept")?;
    let (path, name) = worktree_record(ws, &data.key, head);
    let bytes = encode(view, data, history, &name, false)?;
    write_unsynced(&path, &bytes)?;
    prune(path.parent().context("a record has a directory")?, 1, KEEP_WORKTREE);
    Ok(())
}

/// Writes a record through a temporary file and a rename, not fsynced: every section is
/// checksummed, so a torn record is refused, and losing one costs one assembly.
fn write_unsynced(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("a record has a directory")?;
    std::fs::create_dir_all(dir)?;
    let tmp = crate::fsutil::temp_path_for(path);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    Ok(())
}

/// A record's bytes; the listing's sections are left empty unless `listing`.
fn encode(view: &View, data: &ViewData, history: Option<&HistoryField>, name: &str, listing: bool) -> Result<Vec<u8>> {
    let commit = view.id.commit.as_deref().context("only a view with a commit is kept")?;
    let (chunk_segments, lex_segments) = data.table.segments();
    let header = Header {
        commit: commit.to_string(),
        label: view.id.label.clone(),
        id_len: view.files.first().map_or(20, |f| f.blob.as_bytes().len()),
        key: data.key.clone(),
        chunk_segments,
        lex_segments,
        skipped: data.assembly.skipped,
        history: history.map(|h| (h.total, h.commits)),
        paths: data.table.paths_key(),
    };
    let mut w = Writer::new(Kind::View, name);
    w.section(serde_json::to_vec(&header)?);
    let files: &[ViewFile] = if listing { &view.files } else { &[] };
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let (at, heap) = table::string_table(&paths);
    w.section_u32(&at);
    w.section(heap);
    w.section(files.iter().flat_map(|f| f.blob.as_bytes().to_vec()).collect());
    w.section(files.iter().flat_map(|f| f.size.unwrap_or(u64::MAX).to_le_bytes()).collect());
    let skipped: Vec<(&str, &str)> =
        if listing { view.skipped.iter().map(|s| (s.path.as_str(), s.reason.name())).collect() } else { Vec::new() };
    w.section(serde_json::to_vec(&skipped)?);
    w.section(data.assembly.missing_keys.iter().flat_map(|k| k.0).collect());
    data.table.encode(&mut w);
    if let Some(h) = history {
        h.encode(&mut w);
    }
    Ok(w.finish())
}

/// The commits of the most recently written records under the current settings, newest
/// first, as many as fit in `max` records and `max_bytes` (what a server reads before it is
/// asked).
pub fn recent(ws: &Workspace, max: usize, max_bytes: u64) -> Vec<String> {
    let suffix = format!("-{}", fingerprint(ws));
    let mut all: Vec<(std::time::SystemTime, u64, String)> =
        walkdir::WalkDir::new(ws.store.root.join("cache").join("views"))
            .min_depth(2)
            .max_depth(2)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| {
                let commit = e.file_name().to_str()?.strip_suffix(&suffix)?.to_string();
                if commit.is_empty() || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), commit))
            })
            .collect();
    all.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut bytes = 0u64;
    all.into_iter()
        .take(max)
        .take_while(|(_, len, _)| {
            bytes += len;
            bytes <= max_bytes
        })
        .map(|(_, _, commit)| commit)
        .collect()
}

/// The kept view of `commit`, when a record under the current settings exists and holds
/// together; a record that does not is removed (the view is then assembled as usual).
pub fn load(ws: &Workspace, commit: &str) -> Option<(View, ViewData)> {
    let (path, name) = record(ws, commit);
    if !path.is_file() {
        return None;
    }
    let t = std::time::Instant::now();
    used(&path, t, read(ws, &path, &name, commit), |kept| {
        format!("kept view of {} files, {} chunks", kept.0.files.len(), kept.1.table.len())
    })
}

/// What reading a record gave: said with its time when it was read, removed when it was not
/// (it is assembled again, and written again where that is the rule).
fn used<T>(
    path: &std::path::Path,
    start: std::time::Instant,
    read: Result<T>,
    what: impl FnOnce(&T) -> String,
) -> Option<T> {
    match read {
        Ok(kept) => {
            tracing::debug!("{} read in {:.2} ms", what(&kept), start.elapsed().as_secs_f64() * 1000.0);
            Some(kept)
        }
        Err(e) => {
            tracing::debug!("kept view {} not used: {e:#}", path.display());
            let _ = std::fs::remove_file(path);
            None
        }
    }
}

/// The kept table and history field of the working tree's `view` (of content `key`), when the
/// record of that content over the same HEAD exists and holds together; a record that does not
/// is removed.
pub fn load_worktree(ws: &Workspace, view: &View, key: &str) -> Option<ViewData> {
    let head = view.id.commit.as_deref()?;
    let (path, name) = worktree_record(ws, key, head);
    if !path.is_file() {
        return None;
    }
    let t = std::time::Instant::now();
    let read = || -> Result<ViewData> {
        let file = File::open(&path, Kind::View, &name)?;
        let header: Header = serde_json::from_slice(file.bytes(HEADER)?)?;
        if header.commit != head || header.key != key {
            return Err(KeptError::Unfit { what: "written for another working tree" }.into());
        }
        let (table, history) = read_table(ws, &file, &header)?;
        let missing_keys = read_missing(&file)?;
        let assembly = table::Assembly { missing: missing_keys.len(), missing_keys, skipped: header.skipped };
        let data = ViewData { id: view.id.clone(), key: header.key, table, assembly, history: Default::default() };
        if let Some(h) = history
            && history_on(ws)
        {
            let _ = data.history.set(Some(h));
        }
        Ok(data)
    };
    used(&path, t, read(), |data| format!("kept view of the working tree, {} chunks,", data.table.len()))
}

/// The history field of an earlier working-tree state over the same HEAD and the same files
/// (an edit changes contents, rarely the file list), moved over `table`; None when no kept
/// record has one.
pub fn worktree_history(ws: &Workspace, head: &str, table: &ChunkTable) -> Option<HistoryField> {
    if !history_on(ws) {
        return None;
    }
    let dir = ws.store.root.join("cache").join("worktree-views");
    let suffix = format!("-{}", fingerprint(ws));
    let mut records: Vec<(std::time::SystemTime, PathBuf, String)> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let fresh = name.ends_with(&suffix) && !name.starts_with('.');
            fresh.then(|| Some((e.metadata().ok()?.modified().ok()?, e.path(), name)))?
        })
        .collect();
    records.sort_by_key(|r| std::cmp::Reverse(r.0));
    let paths = table.paths_key();
    records.into_iter().find_map(|(_, path, name)| {
        let file = File::open(&path, Kind::View, &name).ok()?;
        let header: Header = serde_json::from_slice(file.bytes(HEADER).ok()?).ok()?;
        let (_, commits) = header.history?;
        if header.commit != head || header.paths != paths {
            return None;
        }
        let field = HistoryField::decode(&file, HISTORY, table.file_count(), 0, commits).ok()?;
        tracing::debug!("history field taken from the kept view of an earlier working tree");
        Some(field.over(table))
    })
}

crate::error::errors! {
    /// A kept file that does not fit what it is read for (another tree, commit or model, or
    /// damaged): it is rebuilt from the objects.
    pub enum KeptError: Failure {
        Unfit { what: &'static str } => "the kept file does not fit: {what}",
    }
}

fn read(ws: &Workspace, path: &std::path::Path, name: &str, commit: &str) -> Result<(View, ViewData)> {
    let file = File::open(path, Kind::View, name)?;
    let bad = |what: &'static str| anyhow::Error::from(KeptError::Unfit { what });
    let header: Header = serde_json::from_slice(file.bytes(HEADER)?)?;
    if header.commit != commit || header.id_len == 0 || header.id_len > 64 {
        return Err(bad("written for another commit"));
    }
    // The listing on one core, the shards, table and history field on the other.
    let (listing, assembled) = rayon::join(|| read_listing(&file, &header), || read_table(ws, &file, &header));
    let ((files, skipped, missing_keys), (table, history)) = (listing?, assembled?);
    let id = ViewId { kind: "commit", commit: Some(header.commit), label: header.label };
    let view = View { id: id.clone(), files, skipped, content_key: Default::default() };
    let assembly = table::Assembly { missing: missing_keys.len(), missing_keys, skipped: header.skipped };
    let data = ViewData { id, key: header.key, table, assembly, history: Default::default() };
    if let Some(h) = history
        && history_on(ws)
    {
        let _ = data.history.set(Some(h));
    }
    Ok((view, data))
}

type Listing = (Vec<ViewFile>, Vec<Skipped>, Vec<Key>);

/// The files, the path-level skips and the keys without objects.
fn read_listing(file: &File, header: &Header) -> Result<Listing> {
    let bad = |what: &'static str| anyhow::Error::from(KeptError::Unfit { what });
    let paths = table::strings(file.u32s(LIST_AT)?, file.bytes(LIST_PATHS)?).ok_or_else(|| bad("listing paths"))?;
    let blobs = file.bytes(LIST_BLOBS)?;
    let sizes = file.bytes(LIST_SIZES)?;
    if blobs.len() != paths.len() * header.id_len || sizes.len() != paths.len() * 8 {
        return Err(bad("listing tables disagree"));
    }
    let mut files = Vec::with_capacity(paths.len());
    for (i, path) in paths.into_iter().enumerate() {
        let blob = gix::ObjectId::try_from(&blobs[i * header.id_len..(i + 1) * header.id_len])?;
        let size = u64::from_le_bytes(sizes[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        let key = Key::blob(blob.as_bytes(), crate::repo::lang_hint(&path));
        files.push(ViewFile { path, blob, key, size: (size != u64::MAX).then_some(size), content: None });
    }
    let skipped: Vec<(String, String)> = serde_json::from_slice(file.bytes(LIST_SKIPPED)?)?;
    let skipped = skipped
        .into_iter()
        .map(|(path, r)| Some(Skipped { path, reason: SkipReason::from_name(&r)? }))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("unknown skip reason"))?;
    Ok((files, skipped, read_missing(file)?))
}

/// The keys of the view without objects.
fn read_missing(file: &File) -> Result<Vec<Key>> {
    let missing = file.bytes(MISSING)?;
    if missing.len() % 33 != 0 {
        return Err(KeptError::Unfit { what: "missing keys" }.into());
    }
    Ok(missing.chunks_exact(33).map(|k| Key(k.try_into().expect("33 bytes"))).collect())
}

/// The chunk table over its shards (opened, or built from their segments), and the history field.
fn read_table(ws: &Workspace, file: &File, header: &Header) -> Result<(ChunkTable, Option<Arc<HistoryField>>)> {
    let open = |name: &String| {
        ws.store.find_segment(name).map(|(dir, _)| dir).with_context(|| format!("segment {name} is gone"))
    };
    // Opening a shard a server has not opened yet copies and checks megabytes: both cores.
    use rayon::prelude::*;
    let (chunk_shards, lex_shards) = rayon::join(
        || {
            header
                .chunk_segments
                .par_iter()
                .map(|n| ws.shards.chunks(&ws.store, open(n)?, n))
                .collect::<Result<Vec<_>>>()
        },
        || {
            header
                .lex_segments
                .par_iter()
                .map(|n| ws.shards.postings(&ws.store, open(n)?, n))
                .collect::<Result<Vec<_>>>()
        },
    );
    let table = ChunkTable::decode(file, TABLE, chunk_shards?, lex_shards?)?;
    let history = match header.history {
        Some((total, commits)) => {
            Some(Arc::new(HistoryField::decode(file, HISTORY, table.file_count(), total, commits)?))
        }
        None => None,
    };
    Ok((table, history))
}

/// A revision's dense side for one model, kept beside its view: where each chunk's vector is
/// (by segment name and row) and the sign sketch, so a question in a new process neither looks
/// every chunk up in the vector catalog nor sketches every row again. Only a complete side is
/// kept — one with a vector for every chunk, which nothing added later can change — and it is
/// refused when a segment it names is gone or anything in it does not fit the view.
#[derive(Serialize, Deserialize)]
struct DenseHeader {
    commit: String,
    /// The view's content key: the record fits that view's chunk table only.
    view: String,
    model: String,
    dim: usize,
    live: usize,
    segments: Vec<String>,
    /// Words per row of the sketch (0: none, the view is searched exactly).
    sketch_words: usize,
}

const DENSE_HEADER: usize = 0;
const DENSE_LOCS: usize = 1;
const DENSE_CENTER: usize = 2;
const DENSE_BITS: usize = 3;

fn dense_record(ws: &Workspace, commit: &str, model: &str) -> (PathBuf, String) {
    let name = format!("{commit}-{}-{model}", fingerprint(ws));
    let path = ws.store.root.join("cache").join("views-dense").join(&commit[..2.min(commit.len())]).join(&name);
    (path, name)
}

/// Keeps the dense side of a commit's view when it is complete (false when it is not).
pub fn write_dense(ws: &Workspace, data: &ViewData, dense: &super::dense::DenseView) -> Result<bool> {
    let Some(commit) = data.id.commit.as_deref().filter(|_| data.id.kind == "commit") else { return Ok(false) };
    if dense.live == 0 || dense.covered != dense.live {
        return Ok(false);
    }
    let parts = dense.kept_parts();
    let (path, name) = dense_record(ws, commit, &dense.fingerprint);
    let header = DenseHeader {
        commit: commit.to_string(),
        view: data.key.clone(),
        model: dense.fingerprint.clone(),
        dim: dense.dim,
        live: dense.live,
        segments: parts.segments.to_vec(),
        sketch_words: parts.sketch.map_or(0, |s| s.0),
    };
    let mut w = Writer::new(Kind::View, &name);
    w.section(serde_json::to_vec(&header)?);
    w.section_u32(&parts.locs);
    let (center, bits) = parts.sketch.map_or((&[][..], &[][..]), |(_, c, b)| (c, b));
    w.section(bytemuck::cast_slice(center).to_vec());
    w.section(bytemuck::cast_slice(bits).to_vec());
    write_unsynced(&path, &w.finish())?;
    prune(&ws.store.root.join("cache").join("views-dense"), 2, KEEP);
    Ok(true)
}

/// The kept dense side of a commit's view under model `fingerprint`, when one exists and fits
/// (`data` is the view's own); a record that does not is removed.
pub fn load_dense(ws: &Workspace, data: &ViewData, fingerprint: &str, dim: usize) -> Option<super::dense::DenseView> {
    let commit = data.id.commit.as_deref().filter(|_| data.id.kind == "commit")?;
    let (path, name) = dense_record(ws, commit, fingerprint);
    if !path.is_file() {
        return None;
    }
    let t = std::time::Instant::now();
    used(&path, t, read_dense(ws, &path, &name, commit, data, fingerprint, dim), |d| {
        format!("kept dense side of {} chunks", d.live)
    })
}

fn read_dense(
    ws: &Workspace,
    path: &std::path::Path,
    name: &str,
    commit: &str,
    data: &ViewData,
    fingerprint: &str,
    dim: usize,
) -> Result<super::dense::DenseView> {
    let file = File::open(path, Kind::View, name)?;
    let header: DenseHeader = serde_json::from_slice(file.bytes(DENSE_HEADER)?)?;
    anyhow::ensure!(
        header.commit == commit
            && header.view == data.key
            && header.model == fingerprint
            && header.dim == dim
            && header.live == data.table.len(),
        "written for another view or model"
    );
    let locs = file.u32s(DENSE_LOCS)?;
    anyhow::ensure!(locs.len() == 2 * header.live, "locations do not cover the view");
    // Opening a shard checks its vectors: both cores.
    use rayon::prelude::*;
    let shards = header
        .segments
        .par_iter()
        .map(|n| {
            let (dir, _) = ws.store.find_segment(n).with_context(|| format!("segment {n} is gone"))?;
            ws.shards.vectors(&ws.store, dir, n)
        })
        .collect::<Result<Vec<_>>>()?;
    let sketch = (header.sketch_words > 0).then(|| -> Result<_> {
        let center =
            file.bytes(DENSE_CENTER)?.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")));
        let bits = file.bytes(DENSE_BITS)?.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
        let (center, bits): (Vec<f32>, Vec<u64>) = (center.collect(), bits.collect());
        Ok((header.sketch_words, center, bits))
    });
    super::dense::DenseView::from_kept(fingerprint, dim, shards, header.segments, locs, sketch.transpose()?)
}

/// Removes the oldest records beyond `keep`, or beyond `KEEP_BYTES` in all (the newest stays).
fn prune(dir: &std::path::Path, depth: usize, keep: usize) {
    let mut all: Vec<(std::time::SystemTime, u64, PathBuf)> = walkdir::WalkDir::new(dir)
        .min_depth(depth)
        .max_depth(depth)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && !e.file_name().to_string_lossy().ends_with(crate::fsutil::TMP_SUFFIX))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.into_path()))
        })
        .collect();
    all.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut bytes = 0u64;
    for (i, (_, len, path)) in all.iter().enumerate() {
        bytes += len;
        if i > 0 && (i >= keep || bytes > KEEP_BYTES) {
            let _ = std::fs::remove_file(path);
        }
    }
}
