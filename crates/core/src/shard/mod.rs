//! Shards: per-segment search structures, derived from one immutable segment and shared by
//! every view that uses any of its rows. A chunk shard makes a chunks segment readable row by
//! row without decoding Parquet, a postings shard is a lexical segment's inverted index, a
//! vector shard a vector segment's rows as `f32`. A view is then only a list of row locations
//! over shards (`view::table`), so assembling one costs work proportional to its file list.
//!
//! Shards live under `.lynx/cache/shards/<2 hex>/<rest>.<kind>`, named by the segment they come
//! from. They are caches: written atomically (temp, fsync, rename), checksummed, and rebuilt
//! from the segment when missing or invalid. Segments stay the truth and the unit of sharing;
//! shards are never exported.
//!
//! Container layout (little-endian): magic `LYNXSHD2`, kind u32, version u32, segment name
//! (u16 length + bytes, padded to 8), section count u32 + pad, then per section (offset u64,
//! length u64, xxh3-64 u64, flags u64), an xxh3-64 of the header so far, the sections (each
//! 8-aligned), and `LYNXEND1`. Every section is checked on open except those flagged
//! `LAZY`, whose items the reader checks one by one when it uses them (chunk texts, against
//! their content hash): a search reads ten texts, not the whole heap.

pub mod chunks;
pub mod history;
pub mod postings;
pub mod vectors;

use anyhow::{Context, Result};
use memmap2::Mmap;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

const MAGIC: &[u8; 8] = b"LYNXSHD2";
const END: &[u8; 8] = b"LYNXEND1";
/// A section checked item by item by its reader instead of as a whole on open.
const LAZY: u64 = 1;

/// What a shard holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Chunks = 1,
    Postings = 2,
    Vectors = 3,
    History = 4,
    /// A view assembled once and kept (`view::kept`); not derived from one segment.
    View = 5,
}

impl Kind {
    pub fn ext(self) -> &'static str {
        match self {
            Kind::Chunks => "chunks",
            Kind::Postings => "postings",
            Kind::Vectors => "vectors",
            Kind::History => "history",
            Kind::View => "view",
        }
    }

    /// Format version of each kind: a shard of another version is rebuilt.
    fn version(self) -> u32 {
        match self {
            Kind::Chunks => 3,
            Kind::Postings => 2,
            Kind::Vectors => 3,
            Kind::History => 1,
            Kind::View => 1,
        }
    }

    pub fn for_layer(layer: &str) -> Option<Kind> {
        match layer {
            crate::layer::CHUNKS => Some(Kind::Chunks),
            crate::layer::LEXICAL => Some(Kind::Postings),
            crate::layer::VECTORS => Some(Kind::Vectors),
            crate::layer::history::HISTORY => Some(Kind::History),
            _ => None,
        }
    }
}

/// Builds the shard of segment `name` (in object directory `dir`) for `kind`, unless a shard
/// of this version is already there.
pub fn build(store: &crate::store::Store, dir: usize, name: &str, kind: Kind) -> Result<()> {
    if File::open(&shard_path(&store.root, kind, name), kind, name).is_ok() {
        return Ok(());
    }
    match kind {
        Kind::Chunks => chunks::build(store, dir, name),
        Kind::Postings => postings::build(store, dir, name),
        Kind::Vectors => vectors::build(store, dir, name),
        Kind::History => history::build(store, dir, name),
        Kind::View => Ok(()),
    }
}

/// Where the shards of a store live.
pub fn shards_dir(lynx_root: &Path) -> PathBuf {
    lynx_root.join("cache").join("shards")
}

/// The file of `kind` derived from segment `name` (`ab/cdef…`).
pub fn shard_path(lynx_root: &Path, kind: Kind, name: &str) -> PathBuf {
    shards_dir(lynx_root).join(format!("{name}.{}", kind.ext()))
}

/// Builds a shard file's bytes from its sections.
pub struct Writer {
    kind: Kind,
    segment: String,
    sections: Vec<(Vec<u8>, u64)>,
}

impl Writer {
    pub fn new(kind: Kind, segment: &str) -> Writer {
        Writer { kind, segment: segment.to_string(), sections: Vec::new() }
    }

    pub fn section(&mut self, bytes: Vec<u8>) {
        self.sections.push((bytes, 0));
    }

    /// A section whose reader checks each item it uses (not checked as a whole on open).
    pub fn section_lazy(&mut self, bytes: Vec<u8>) {
        self.sections.push((bytes, LAZY));
    }

    pub fn section_u32(&mut self, v: &[u32]) {
        self.section(bytemuck::cast_slice(v).to_vec());
    }

    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.kind as u32).to_le_bytes());
        out.extend_from_slice(&self.kind.version().to_le_bytes());
        out.extend_from_slice(&(self.segment.len() as u16).to_le_bytes());
        out.extend_from_slice(self.segment.as_bytes());
        pad8(&mut out);
        out.extend_from_slice(&(self.sections.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        let table_at = out.len();
        let header_len = table_at + self.sections.len() * 32;
        let mut body_at = header_len + 8;
        let mut table = Vec::with_capacity(self.sections.len() * 32);
        for (bytes, flags) in &self.sections {
            body_at = body_at.div_ceil(8) * 8;
            table.extend_from_slice(&(body_at as u64).to_le_bytes());
            table.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            table.extend_from_slice(&twox_hash::XxHash3_64::oneshot(bytes).to_le_bytes());
            table.extend_from_slice(&flags.to_le_bytes());
            body_at += bytes.len();
        }
        out.extend_from_slice(&table);
        let head = twox_hash::XxHash3_64::oneshot(&out);
        out.extend_from_slice(&head.to_le_bytes());
        for (bytes, _) in &self.sections {
            pad8(&mut out);
            out.extend_from_slice(bytes);
        }
        pad8(&mut out);
        out.extend_from_slice(END);
        out
    }

    /// Writes the shard atomically to its place in the cache.
    pub fn write(self, lynx_root: &Path) -> Result<PathBuf> {
        let path = shard_path(lynx_root, self.kind, &self.segment);
        let bytes = self.finish();
        crate::fsutil::write_atomic(&path, &bytes)?;
        Ok(path)
    }
}

fn pad8(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(8) {
        v.push(0);
    }
}

/// A shard's bytes: mapped (short-lived commands: opening costs nothing), or read into memory
/// (long-lived servers: the file can be truncated or overwritten under them — damage, another
/// tool — and a mapping would then fault or change answers; a copy checked once cannot).
/// In memory, the lazy sections are not read at open: their items are read from the file when
/// used (`File::lazy`) and checked by their reader, so opening a shard costs its indexes, not
/// its text heap.
enum Bytes {
    Mapped(Mmap),
    /// 8-aligned words holding `len` bytes; the lazy sections' ranges are left zero, read from
    /// `file` item by item.
    Owned {
        words: Vec<u64>,
        len: usize,
        file: std::fs::File,
    },
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned { words, len, .. } => &bytemuck::cast_slice(words)[..*len],
        }
    }
}

static READ_INTO_MEMORY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes this process read shards into memory instead of mapping them (servers call it once).
pub fn read_into_memory() {
    READ_INTO_MEMORY.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn reads_into_memory() -> bool {
    READ_INTO_MEMORY.load(std::sync::atomic::Ordering::Relaxed)
}

static RELEASE_READ_PAGES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes this process hand the pages of mapped vectors back once it has read them through
/// (`index` reads every vector of a view once, to check and sketch them, and answers nothing
/// after: holding them all would add the vectors' size to its peak memory).
pub fn release_read_pages() {
    RELEASE_READ_PAGES.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn releases_read_pages() -> bool {
    RELEASE_READ_PAGES.load(std::sync::atomic::Ordering::Relaxed)
}

/// The byte ranges of the lazy sections a shard's header announces, if the header lies within
/// `prefix` and the ranges within `len` (anything else is read whole and judged by the checks).
fn lazy_ranges(prefix: &[u8], len: usize) -> Vec<(usize, usize)> {
    let u32_at = |at: usize| -> Option<u32> { Some(u32::from_le_bytes(prefix.get(at..at + 4)?.try_into().ok()?)) };
    let u64_at = |at: usize| -> Option<u64> { Some(u64::from_le_bytes(prefix.get(at..at + 8)?.try_into().ok()?)) };
    let parse = || -> Option<Vec<(usize, usize)>> {
        let name_len = u16::from_le_bytes(prefix.get(16..18)?.try_into().ok()?) as usize;
        let table_at = (18 + name_len).div_ceil(8) * 8 + 8;
        let count = (u32_at(table_at - 8)? as usize).min(64);
        let mut out = Vec::new();
        for i in 0..count {
            let at = table_at + i * 32;
            let (off, n, flags) = (u64_at(at)? as usize, u64_at(at + 8)? as usize, u64_at(at + 24)?);
            if flags & LAZY != 0 && off.checked_add(n)? <= len {
                out.push((off, off + n));
            }
        }
        out.sort_unstable();
        // Overlapping ranges are damage: read everything and let the checks say so.
        out.windows(2).all(|w| w[0].1 <= w[1].0).then_some(out)
    };
    parse().unwrap_or_default()
}

fn load_bytes(f: std::fs::File, path: &Path) -> Result<Bytes> {
    if reads_into_memory() {
        use std::os::unix::fs::FileExt;
        let ctx = || format!("reading shard {}", path.display());
        let len = f.metadata().with_context(ctx)?.len() as usize;
        // Zeroed words cost nothing until written: the lazy ranges are never touched.
        let mut words = vec![0u64; len.div_ceil(8)];
        let buf: &mut [u8] = &mut bytemuck::cast_slice_mut(&mut words)[..len];
        let head = len.min(64 * 1024);
        f.read_exact_at(&mut buf[..head], 0).with_context(ctx)?;
        let mut at = head;
        for (from, to) in lazy_ranges(&buf[..head], len) {
            if from > at {
                f.read_exact_at(&mut buf[at..from], at as u64).with_context(ctx)?;
            }
            at = at.max(to);
        }
        if at < len {
            f.read_exact_at(&mut buf[at..], at as u64).with_context(ctx)?;
        }
        return Ok(Bytes::Owned { words, len, file: f });
    }
    // SAFETY: shards are written once (temp file + rename) and never modified in place; a
    // file replaced under us stays mapped as it was. Servers, which live long enough to meet
    // a file damaged in place, read instead (`read_into_memory`).
    let map = unsafe { Mmap::map(&f) }.with_context(|| format!("mapping shard {}", path.display()))?;
    Ok(Bytes::Mapped(map))
}

/// An opened, validated shard file.
pub struct File {
    map: Bytes,
    sections: Vec<(usize, usize)>,
    pub segment: String,
    pub path: PathBuf,
}

/// Why a shard file cannot be used (it is then rebuilt).
#[derive(Debug)]
pub struct Invalid(pub String);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}

impl File {
    /// Opens and checks a shard: size, magic, header checksum, kind, version, segment name,
    /// section bounds and every non-lazy section's checksum. Every failure is an `Invalid`
    /// error naming the file.
    pub fn open(path: &Path, kind: Kind, segment: &str) -> Result<File> {
        let t = std::time::Instant::now();
        let f = Self::open_checked(path, kind, segment)?;
        tracing::debug!(
            "opened {} shard of {segment} ({} KB) in {:.2} ms",
            kind.ext(),
            f.map.len() / 1024,
            t.elapsed().as_secs_f64() * 1000.0
        );
        Ok(f)
    }

    fn open_checked(path: &Path, kind: Kind, segment: &str) -> Result<File> {
        let f = std::fs::File::open(path).with_context(|| format!("opening shard {}", path.display()))?;
        let map = load_bytes(f, path)?;
        let bad =
            |why: &str| -> anyhow::Error { Invalid(format!("shard {} is invalid: {why}", path.display())).into() };
        let n = map.len();
        if n < 40 || &map[..8] != MAGIC || &map[n - 8..] != END {
            return Err(bad("not a Lynx shard, or truncated"));
        }
        let u32_at = |at: usize| -> Option<u32> { Some(u32::from_le_bytes(map.get(at..at + 4)?.try_into().ok()?)) };
        let u64_at = |at: usize| -> Option<u64> { Some(u64::from_le_bytes(map.get(at..at + 8)?.try_into().ok()?)) };
        let name_len = map
            .get(16..18)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
            .ok_or_else(|| bad("truncated header"))?;
        let table_at = (18 + name_len).div_ceil(8) * 8 + 8;
        let count = u32_at(table_at - 8).ok_or_else(|| bad("truncated header"))? as usize;
        if count > 64 {
            return Err(bad("too many sections"));
        }
        let header_len = table_at + count * 32;
        let head_sum = u64_at(header_len).ok_or_else(|| bad("truncated header"))?;
        if twox_hash::XxHash3_64::oneshot(&map[..header_len]) != head_sum {
            return Err(bad("header checksum mismatch (damaged)"));
        }
        if u32_at(8) != Some(kind as u32) {
            return Err(bad("holds another kind of shard"));
        }
        if u32_at(12) != Some(kind.version()) {
            return Err(bad("written by another version"));
        }
        if map.get(18..18 + name_len) != Some(segment.as_bytes()) {
            return Err(bad("derived from another segment"));
        }
        let body_end = n - 8;
        let mut sections = Vec::with_capacity(count);
        for i in 0..count {
            let at = table_at + i * 32;
            let (off, len, sum, flags) = (u64_at(at), u64_at(at + 8), u64_at(at + 16), u64_at(at + 24));
            let (Some(off), Some(len), Some(sum), Some(flags)) = (off, len, sum, flags) else {
                return Err(bad("truncated section table"));
            };
            let end = off.checked_add(len).ok_or_else(|| bad("section out of bounds"))?;
            if off % 8 != 0 || off < (header_len + 8) as u64 || end > body_end as u64 {
                return Err(bad("section out of bounds"));
            }
            let (off, len) = (off as usize, len as usize);
            if flags & LAZY == 0 && twox_hash::XxHash3_64::oneshot(&map[off..off + len]) != sum {
                return Err(bad(&format!("section {i} checksum mismatch (damaged)")));
            }
            sections.push((off, len));
        }
        // What no section covers is padding, and padding is zero.
        let mut covered: Vec<(usize, usize)> = sections.clone();
        covered.sort_unstable();
        let mut at = header_len + 8;
        for &(off, len) in &covered {
            if off < at || map[at..off].iter().any(|&b| b != 0) {
                return Err(bad("sections overlap or padding is damaged"));
            }
            at = off + len;
        }
        if map[at..body_end].iter().any(|&b| b != 0) {
            return Err(bad("padding is damaged"));
        }
        Ok(File { map, sections, segment: segment.to_string(), path: path.to_path_buf() })
    }

    pub fn bytes(&self, i: usize) -> Result<&[u8]> {
        let &(off, len) =
            self.sections.get(i).ok_or_else(|| Invalid(format!("shard of {} lacks section {i}", self.segment)))?;
        Ok(&self.map[off..off + len])
    }

    /// `range` of lazy section `i`, unchecked (its reader checks each item): borrowed from the
    /// mapping, or read from the file. None when the file no longer holds it (truncated).
    pub fn lazy(&self, i: usize, range: std::ops::Range<usize>) -> Option<std::borrow::Cow<'_, [u8]>> {
        let &(off, len) = self.sections.get(i)?;
        if range.end > len || range.start > range.end {
            return None;
        }
        match &self.map {
            Bytes::Mapped(m) => Some(std::borrow::Cow::Borrowed(&m[off + range.start..off + range.end])),
            Bytes::Owned { file, .. } => {
                use std::os::unix::fs::FileExt;
                let mut buf = vec![0u8; range.len()];
                file.read_exact_at(&mut buf, (off + range.start) as u64).ok()?;
                Some(std::borrow::Cow::Owned(buf))
            }
        }
    }

    pub fn u32s(&self, i: usize) -> Result<&[u32]> {
        bytemuck::try_cast_slice(self.bytes(i)?)
            .map_err(|e| Invalid(format!("shard of {}: section {i}: {e}", self.segment)).into())
    }

    /// On-disk size.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// The shards of one store that this process has open. Views hold their shards; the registry
/// only finds an open one again (a weak reference), so a shard stays mapped exactly as long
/// as some view uses it, and memory follows the views kept, not the views ever answered.
/// Opening a missing or invalid shard builds it from its segment.
#[derive(Default)]
pub struct Registry {
    chunks: Mutex<HashMap<String, Weak<chunks::ChunkShard>>>,
    postings: Mutex<HashMap<String, Weak<postings::PostingsShard>>>,
    vectors: Mutex<HashMap<String, Weak<vectors::VectorShard>>>,
    history: Mutex<HashMap<String, Weak<history::HistoryShard>>>,
}

impl Registry {
    pub fn chunks(&self, store: &crate::store::Store, dir: usize, name: &str) -> Result<Arc<chunks::ChunkShard>> {
        cached(&self.chunks, name, || load(store, dir, name, Kind::Chunks, chunks::ChunkShard::open, chunks::build))
    }

    pub fn postings(
        &self,
        store: &crate::store::Store,
        dir: usize,
        name: &str,
    ) -> Result<Arc<postings::PostingsShard>> {
        cached(&self.postings, name, || {
            load(store, dir, name, Kind::Postings, postings::PostingsShard::open, postings::build)
        })
    }

    pub fn vectors(&self, store: &crate::store::Store, dir: usize, name: &str) -> Result<Arc<vectors::VectorShard>> {
        cached(&self.vectors, name, || {
            load(store, dir, name, Kind::Vectors, vectors::VectorShard::open, vectors::build)
        })
    }

    pub fn history(&self, store: &crate::store::Store, dir: usize, name: &str) -> Result<Arc<history::HistoryShard>> {
        cached(&self.history, name, || {
            load(store, dir, name, Kind::History, history::HistoryShard::open, history::build)
        })
    }

    /// Forgets every opened shard (after gc or repair removed files).
    pub fn clear(&self) {
        self.chunks.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.postings.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.vectors.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.history.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// Shards that can turn out damaged after they were opened (checked item by item).
pub trait Checked {
    fn is_damaged(&self) -> bool {
        false
    }
}

impl Checked for chunks::ChunkShard {
    fn is_damaged(&self) -> bool {
        chunks::ChunkShard::is_damaged(self)
    }
}
impl Checked for postings::PostingsShard {}
impl Checked for vectors::VectorShard {}
impl Checked for history::HistoryShard {}

fn cached<T: Checked>(
    map: &Mutex<HashMap<String, Weak<T>>>,
    name: &str,
    open: impl FnOnce() -> Result<T>,
) -> Result<Arc<T>> {
    if let Some(s) = map.lock().unwrap_or_else(|e| e.into_inner()).get(name).and_then(Weak::upgrade)
        && !s.is_damaged()
    {
        return Ok(s);
    }
    let s = Arc::new(open()?);
    let mut m = map.lock().unwrap_or_else(|e| e.into_inner());
    // Forget the shards nobody holds any more.
    if m.len() > 256 {
        m.retain(|_, w| w.strong_count() > 0);
    }
    m.insert(name.to_string(), Arc::downgrade(&s));
    Ok(s)
}

/// Opens the shard of segment `name`; builds it from the segment when it is missing, and
/// rebuilds it (with a warning) when it is invalid.
fn load<T>(
    store: &crate::store::Store,
    dir: usize,
    name: &str,
    kind: Kind,
    open: fn(&Path, &str) -> Result<T>,
    build: fn(&crate::store::Store, usize, &str) -> Result<()>,
) -> Result<T> {
    let path = shard_path(&store.root, kind, name);
    match open(&path, name) {
        Ok(s) => return Ok(s),
        Err(e) => {
            let missing =
                e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
                    || e.chain().any(|c| {
                        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
                    });
            if !missing {
                tracing::warn!("{e:#}; rebuilding it from its segment");
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    build(store, dir, name)?;
    open(&path, name)
}

/// Checks every shard file under the store's cache: (checked, invalid paths). `repair`
/// removes the invalid ones (they are rebuilt on next use) and shards whose segment is gone.
pub fn check_all(store: &crate::store::Store, repair: bool) -> (usize, Vec<String>) {
    let dir = shards_dir(&store.root);
    let mut checked = 0;
    let mut invalid = Vec::new();
    let Ok(rd) = std::fs::read_dir(&dir) else { return (0, invalid) };
    for sub in rd.flatten() {
        let prefix = sub.file_name().to_string_lossy().into_owned();
        let Ok(files) = std::fs::read_dir(sub.path()) else { continue };
        for f in files.flatten() {
            let fname = f.file_name().to_string_lossy().into_owned();
            if fname.ends_with(crate::fsutil::TMP_SUFFIX) {
                continue;
            }
            let Some((stem, ext)) = fname.rsplit_once('.') else { continue };
            let kind = match ext {
                "chunks" => Kind::Chunks,
                "postings" => Kind::Postings,
                "vectors" => Kind::Vectors,
                "history" => Kind::History,
                _ => continue,
            };
            checked += 1;
            let name = format!("{prefix}/{stem}");
            let valid = match kind {
                Kind::Chunks => chunks::ChunkShard::open(&f.path(), &name).is_ok_and(|s| s.verify_texts()),
                Kind::Postings => postings::PostingsShard::open(&f.path(), &name).is_ok(),
                Kind::Vectors => vectors::VectorShard::open(&f.path(), &name).is_ok(),
                Kind::History => history::HistoryShard::open(&f.path(), &name).is_ok(),
                Kind::View => continue,
            };
            let orphan = store.find_segment(&name).is_none();
            if !valid || (repair && orphan) {
                if !valid {
                    invalid.push(f.path().display().to_string());
                }
                if repair {
                    let _ = std::fs::remove_file(f.path());
                }
            }
        }
    }
    (checked, invalid)
}

/// Removes shards whose segment is in no object directory any more. Returns how many.
pub fn remove_orphans(store: &crate::store::Store) -> usize {
    let mut n = 0;
    let Ok(rd) = std::fs::read_dir(shards_dir(&store.root)) else { return 0 };
    for sub in rd.flatten() {
        let prefix = sub.file_name().to_string_lossy().into_owned();
        let Ok(files) = std::fs::read_dir(sub.path()) else { continue };
        for f in files.flatten() {
            let fname = f.file_name().to_string_lossy().into_owned();
            if fname.ends_with(crate::fsutil::TMP_SUFFIX) {
                continue;
            }
            let stem = fname.split('.').next().unwrap_or("");
            if store.find_segment(&format!("{prefix}/{stem}")).is_none() && std::fs::remove_file(f.path()).is_ok() {
                n += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_roundtrip_and_every_damage_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Writer::new(Kind::Postings, "ab/cd");
        w.section_u32(&[1, 2, 3]);
        w.section(b"hello".to_vec());
        w.section_lazy(b"lazy items".to_vec());
        let bytes = w.finish();
        let lazy_at = bytes.windows(10).position(|w| w == b"lazy items").unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, &bytes).unwrap();
        let f = File::open(&path, Kind::Postings, "ab/cd").unwrap();
        assert_eq!(f.u32s(0).unwrap(), &[1, 2, 3]);
        assert_eq!(f.bytes(1).unwrap(), b"hello");
        assert!(f.bytes(3).is_err());
        assert!(File::open(&path, Kind::Chunks, "ab/cd").is_err());
        assert!(File::open(&path, Kind::Postings, "ab/ce").is_err());
        assert_eq!(f.bytes(2).unwrap(), b"lazy items");
        // Every single-byte flip outside the lazy section and every truncation is refused,
        // never a panic; the lazy section's items are checked by their reader.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            std::fs::write(&path, &b).unwrap();
            let lazy = (lazy_at..lazy_at + 10).contains(&i);
            assert_eq!(File::open(&path, Kind::Postings, "ab/cd").is_err(), !lazy, "flip at {i}");
        }
        for n in 0..bytes.len() {
            std::fs::write(&path, &bytes[..n]).unwrap();
            assert!(File::open(&path, Kind::Postings, "ab/cd").is_err(), "truncation to {n} accepted");
        }
    }
}
