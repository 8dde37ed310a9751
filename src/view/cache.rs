//! Building and opening a view's derived data under `.lynx/cache/views/<key>/`: the chunk
//! table and the BM25 index. The key is a hash of the view's (path, object key) list and the
//! layer fingerprints, so the same tree gives the same cache on any machine, and a lost cache
//! is rebuilt from objects.

use super::table::{ChunkIn, ChunkTable, TableBuilder};
use super::{View, ViewId};
use crate::analyze;
use crate::fsutil;
use crate::layer::chunks::{ChunkColumns, Status};
use crate::layer::lexical::TermColumns;
use crate::layer::{self};
use crate::lang::Lang;
use crate::progress::Progress;
use crate::repo::SkipReason;
use crate::search::bm25::{Bm25, Bm25Writer};
use crate::store::{Catalogs, Found, Key, Store};
use crate::workspace::Workspace;
use crate::layer::column as typed;
use anyhow::{Context, Result};
use arrow::array::{RecordBatch, StringArray, UInt8Array, UInt64Array};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Kept view caches (least recently used ones beyond this are removed).
const MAX_CACHED_VIEWS: usize = 16;

/// Stored facts about a processed blob.
#[derive(Debug, Clone, Copy)]
pub struct BlobSummary {
    pub status: Status,
    pub size: u64,
    pub lang: Lang,
}

impl BlobSummary {
    pub fn skip_reason(&self, max_size: u64) -> Option<SkipReason> {
        match self.status {
            Status::Binary => Some(SkipReason::Binary),
            Status::LfsPointer => Some(SkipReason::LfsPointer),
            Status::Text if self.size > max_size => Some(SkipReason::TooLarge),
            Status::Text => None,
        }
    }
}

/// Status, size and language of `keys` that have chunk objects, reading only those columns.
pub fn blob_summaries(store: &Store, cat: &Catalogs, keys: &[Key]) -> Result<HashMap<Key, BlobSummary>> {
    let mut by_segment: HashMap<(usize, String), Vec<(Key, Found)>> = HashMap::new();
    for k in keys {
        if let Some(f) = cat.get(k) {
            by_segment.entry((f.dir, cat.segment_name(f).to_string())).or_default().push((*k, f));
        }
    }
    let mut out = HashMap::with_capacity(keys.len());
    for ((dir, name), wanted) in by_segment {
        let batch = read_columns(&store.segment_path(dir, &name), &["key", "status", "lang", "size"])?;
        let status: &UInt8Array = typed(&batch, "status")?;
        let lang: &StringArray = typed(&batch, "lang")?;
        let size: &UInt64Array = typed(&batch, "size")?;
        for (k, f) in wanted {
            let row = f.loc.row as usize;
            if row >= batch.num_rows() {
                anyhow::bail!("catalog points past the end of segment {name}; run `git lynx doctor --repair`");
            }
            let st = match status.value(row) {
                1 => Status::Binary,
                2 => Status::LfsPointer,
                _ => Status::Text,
            };
            out.insert(k, BlobSummary { status: st, size: size.value(row), lang: Lang::from_name(lang.value(row)).unwrap_or(Lang::Text) });
        }
    }
    Ok(out)
}


/// Reads only the named columns of a segment.
pub fn read_columns(path: &Path, names: &[&str]) -> Result<RecordBatch> {
    let file = std::fs::File::open(path).with_context(|| format!("opening segment {}", path.display()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .with_context(|| format!("segment {} is not a readable Parquet file", path.display()))?;
    let mask = ProjectionMask::columns(builder.parquet_schema(), names.iter().copied());
    let reader = builder.with_projection(mask).with_batch_size(64 * 1024).build()?;
    let schema = arrow::array::RecordBatchReader::schema(&reader);
    let batches: Vec<RecordBatch> = reader.collect::<std::result::Result<_, _>>()?;
    Ok(arrow::compute::concat_batches(&schema, &batches)?)
}

/// A view's derived data, ready to query.
pub struct ViewData {
    pub id: ViewId,
    pub key: String,
    pub dir: PathBuf,
    pub table: ChunkTable,
    pub bm25: Bm25,
    by_file: std::sync::OnceLock<HashMap<String, Vec<u32>>>,
}

impl ViewData {
    /// Live chunk ordinals of a file, in line order (an index built on first use).
    pub fn file_chunks(&self, path: &str) -> &[u32] {
        let index = self.by_file.get_or_init(|| {
            let mut m: HashMap<String, Vec<u32>> = HashMap::new();
            for o in self.table.live() {
                let c = self.table.chunk(o);
                m.entry(c.path.to_string()).or_default().push(o);
            }
            for v in m.values_mut() {
                v.sort_by_key(|&o| self.table.chunk(o).start_line);
            }
            m
        });
        index.get(path).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// The cache key of a view's content.
pub fn cache_key(view: &View, max_size: u64) -> String {
    let mut h = blake3::Hasher::new();
    h.update(layer::chunks_fingerprint().as_bytes());
    h.update(layer::lexical_fingerprint().as_bytes());
    h.update(&max_size.to_le_bytes());
    for f in &view.files {
        h.update(f.path.as_bytes());
        h.update(&[0]);
        h.update(&f.key.0);
    }
    h.finalize().to_hex()[..24].to_string()
}

pub fn views_dir(store: &Store) -> PathBuf {
    store.root.join("cache").join("views")
}

/// Opens the cached data of `view`, building it from objects when missing. The view's blobs
/// must already be indexed (missing ones are left out).
pub fn open(ws: &Workspace, view: &View, progress: &Progress) -> Result<ViewData> {
    let max = ws.config.index.max_file_size;
    let key = cache_key(view, max);
    let dir = views_dir(&ws.store).join(&key);
    if !dir.join("complete").exists() {
        build(ws, view, &dir, progress)?;
        evict(&views_dir(&ws.store), &key);
    } else {
        let _ = std::fs::File::create(dir.join("used"));
    }
    Ok(ViewData {
        id: view.id.clone(),
        key,
        table: ChunkTable::open(&dir.join("chunks.bin"))?,
        bm25: Bm25::open(&dir.join("bm25"))?,
        dir,
        by_file: Default::default(),
    })
}

/// What the cache of a view was built with: a base must match it exactly.
fn fingerprint_line(max_size: u64) -> String {
    format!("{} {} {max_size}", layer::chunks_fingerprint(), layer::lexical_fingerprint())
}

/// A previous view's cache to derive from: the recent cache sharing the most files with
/// `view` (same path and blob), when it shares most of them.
fn pick_base(views: &Path, view: &View, max_size: u64) -> Option<(PathBuf, ChunkTable)> {
    let want = fingerprint_line(max_size);
    let mut dirs: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(views)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("complete").exists() && std::fs::read_to_string(p.join("fingerprints")).is_ok_and(|f| f == want))
        .map(|p| (std::fs::metadata(p.join("used")).or_else(|_| std::fs::metadata(p.join("complete"))).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH), p))
        .collect();
    dirs.sort_by(|a, b| b.0.cmp(&a.0));
    let files: HashMap<&str, Key> = view.files.iter().map(|f| (f.path.as_str(), f.key)).collect();
    let mut best: Option<(usize, PathBuf, ChunkTable)> = None;
    for (_, d) in dirs.into_iter().take(4) {
        let Ok(t) = ChunkTable::open(&d.join("chunks.bin")) else { continue };
        if t.dead_ratio() > 0.3 {
            continue;
        }
        let shared = t.live_files().filter(|&f| files.get(t.file_path(f)) == Some(&t.file_key(f))).count();
        if best.as_ref().is_none_or(|(n, _, _)| shared > *n) {
            best = Some((shared, d, t));
        }
    }
    let (shared, d, t) = best?;
    // Worth it when most of the view is already there.
    (shared * 2 >= view.files.len().max(1) && shared > 0).then_some((d, t))
}

fn build(ws: &Workspace, view: &View, dir: &Path, progress: &Progress) -> Result<()> {
    let store = &ws.store;
    let max = ws.config.index.max_file_size;
    let chunk_cat = store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
    let lex_cat = store.catalogs(layer::LEXICAL, &layer::lexical_fingerprint())?;
    let base = pick_base(&views_dir(store), view, max);

    // Files the base already holds (same path and blob) are kept as they are.
    let (mut table, kept): (TableBuilder, std::collections::HashSet<&str>) = match &base {
        Some((_, bt)) => {
            let files: HashMap<&str, Key> = view.files.iter().map(|f| (f.path.as_str(), f.key)).collect();
            let keep = |f: u32| files.get(bt.file_path(f)) == Some(&bt.file_key(f));
            let base_files: HashMap<&str, Key> = bt.live_files().map(|f| (bt.file_path(f), bt.file_key(f))).collect();
            let kept: std::collections::HashSet<&str> =
                view.files.iter().filter(|vf| base_files.get(vf.path.as_str()) == Some(&vf.key)).map(|vf| vf.path.as_str()).collect();
            (TableBuilder::from_base(bt, keep), kept)
        }
        None => (TableBuilder::default(), Default::default()),
    };

    // Load each needed segment once.
    let mut segments: HashMap<(usize, String), Arc<RecordBatch>> = HashMap::new();
    let mut located = Vec::with_capacity(view.files.len());
    for f in &view.files {
        if kept.contains(f.path.as_str()) {
            continue;
        }
        let (Some(c), Some(l)) = (chunk_cat.get(&f.key), lex_cat.get(&f.key)) else { continue };
        let cs = (c.dir, chunk_cat.segment_name(c).to_string());
        let ls = (l.dir, lex_cat.segment_name(l).to_string());
        for s in [&cs, &ls] {
            if !segments.contains_key(s) {
                let batch = crate::store::read_segment_file(&store.segment_path(s.0, &s.1))?;
                segments.insert(s.clone(), Arc::new(batch));
            }
        }
        located.push((f, c, cs, l, ls));
    }

    let parent = dir.parent().context("cache directory has no parent")?;
    std::fs::create_dir_all(parent)?;
    let tmp = fsutil::temp_path_for(dir);
    std::fs::create_dir_all(tmp.join("bm25"))?;
    let result = (|| -> Result<()> {
        progress.start("assembling view", located.len() as u64);
        let mut bm25 = match &base {
            Some((bdir, bt)) => {
                // Ordinals the base had live that this view drops.
                let dead: Vec<u32> = bt.live().filter(|&o| !kept.contains(bt.file_path(bt.chunk_file(o)))).collect();
                std::fs::write(tmp.join("base"), bdir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())?;
                Bm25Writer::derive(&tmp.join("bm25"), &bdir.join("bm25"), &dead)?
            }
            None => Bm25Writer::create(&tmp.join("bm25"))?,
        };
        for (f, c, cs, l, ls) in &located {
            progress.inc(1);
            let cb = &segments[cs];
            let lb = &segments[ls];
            let cc = ChunkColumns::new(cb)?;
            let lc = TermColumns::new(lb)?;
            let row0 = c.loc.row as usize;
            if cc.status(row0) != Status::Text || cc.size.value(row0) > max {
                continue;
            }
            let file = table.file(&f.path, cc.lang(row0), f.key);
            let path_terms = analyze::tokens(&analyze::path_text(&f.path));
            let lrow0 = l.loc.row as usize;
            for i in 0..c.loc.count as usize {
                let row = row0 + i;
                if !cc.is_chunk(row) {
                    continue;
                }
                let lrow = lrow0 + i;
                let (terms, sym) = if i < l.loc.count as usize && lc.ord.value(lrow) == cc.ord.value(row) {
                    (Some(lc.terms(lrow)), Some(lc.symbol_terms(lrow)))
                } else {
                    (None, None)
                };
                let ord = table.len();
                let tokens = bm25.add(ord, terms.into_iter().flatten(), sym.into_iter().flatten(), &path_terms)?;
                table.chunk(
                    file,
                    &ChunkIn {
                        start_line: cc.start_line.value(row),
                        end_line: cc.end_line.value(row),
                        symbol: cc.symbol.value(row),
                        kind: cc.kind.value(row),
                        text: cc.text.value(row),
                        hash: cc.hash(row),
                        tokens,
                    },
                );
            }
        }
        bm25.finish()?;
        table.write(&tmp.join("chunks.bin"))?;
        std::fs::write(tmp.join("fingerprints"), fingerprint_line(max))?;
        std::fs::write(tmp.join("complete"), view.id.label.as_bytes())?;
        progress.finish();
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if std::fs::rename(&tmp, dir).is_err() {
        // Another process finished the same view first; its copy is equivalent.
        let _ = std::fs::remove_dir_all(&tmp);
        if !dir.join("complete").exists() {
            anyhow::bail!("could not install view cache at {}", dir.display());
        }
    }
    Ok(())
}

/// Removes the least recently used view caches beyond the limit (never `keep`).
fn evict(views: &Path, keep: &str) {
    let Ok(rd) = std::fs::read_dir(views) else { return };
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = rd
        .flatten()
        .filter(|e| e.file_name() != keep && e.path().join("complete").exists())
        .map(|e| {
            let used = std::fs::metadata(e.path().join("used")).or_else(|_| std::fs::metadata(e.path().join("complete")));
            (used.and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH), e.path())
        })
        .collect();
    if entries.len() < MAX_CACHED_VIEWS {
        return;
    }
    entries.sort();
    let excess = entries.len() + 1 - MAX_CACHED_VIEWS;
    for (_, p) in entries.into_iter().take(excess) {
        let _ = std::fs::remove_dir_all(p);
    }
}

