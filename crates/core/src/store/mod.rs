//! The object store under `.lynx/objects`: immutable, content-addressed Parquet segments
//! (zstd), each holding one layer's rows for a batch of keys, plus per-(layer, fingerprint)
//! catalogs that say which rows belong to which key. Extra read-only object directories
//! (alternates) are consulted after the local one.

pub mod budget;
pub mod catalog;
pub mod lock;
pub mod pack;
pub mod remote;

use crate::fsutil;
use anyhow::{Context, Result};
use arrow::array::RecordBatch;
use catalog::Catalog;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A row key: a blob id (zero-padded to 32 bytes) plus a language hint byte, or a chunk
/// content hash (16 bytes, zero-padded).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(pub [u8; 33]);

impl Key {
    pub fn blob(oid: &[u8], hint: u8) -> Key {
        let mut k = [0u8; 33];
        k[..oid.len()].copy_from_slice(oid);
        k[32] = hint;
        Key(k)
    }

    pub fn hash(h: &[u8; 16]) -> Key {
        let mut k = [0u8; 33];
        k[..16].copy_from_slice(h);
        Key(k)
    }

    pub fn hint(&self) -> u8 {
        self.0[32]
    }

    /// The first eight bytes as a big-endian number: ordered as the keys are.
    #[inline]
    pub fn prefix(&self) -> u64 {
        u64::from_be_bytes(self.0[..8].try_into().unwrap())
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in &self.0[..20] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "/{}", self.0[32])
    }
}

/// Rows `row..row+count` of segment `seg` (an index into the catalog's segment list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    pub seg: u32,
    pub row: u32,
    pub count: u32,
}

/// Where a key's rows are: object directory (0 = local, then alternates) and location.
#[derive(Debug, Clone, Copy)]
pub struct Found {
    pub dir: usize,
    pub loc: Loc,
}

pub const META_LAYER: &str = "lynx.layer";
pub const META_FINGERPRINT: &str = "lynx.fingerprint";
pub const META_FORMAT: &str = "lynx.format";
const FORMAT_VERSION: &str = "1";

pub struct Store {
    /// `.lynx`
    pub root: PathBuf,
    /// Object directories whose catalogs answer lookups: the local `.lynx/objects` first, then
    /// the alternates the user trusts (`store.trusted`).
    pub dirs: Vec<PathBuf>,
    /// Alternates not marked trusted: their objects are checked and copied into the local store
    /// before use (`index::adopt`), never read in place.
    pub pools: Vec<PathBuf>,
    /// The shared object store indexing downloads from first (`remote::configured`), if any.
    pub remote: Option<String>,
}

/// The catalogs of one (layer, fingerprint) across all object directories.
/// Items found in one segment (see `Catalogs::by_segment`), with where each one's rows are.
pub struct SegmentGroup<T> {
    pub dir: usize,
    pub name: String,
    pub items: Vec<(T, Found)>,
}

impl<T> SegmentGroup<T> {
    /// Each item with its first row and row count in the segment.
    pub fn rows(&self) -> impl Iterator<Item = (&T, usize, usize)> {
        self.items.iter().map(|(t, f)| (t, f.loc.row as usize, f.loc.count as usize))
    }
}

#[derive(Clone, Default)]
pub struct Catalogs {
    pub per_dir: Vec<std::sync::Arc<Catalog>>,
}

impl Catalogs {
    /// Whether `other` was loaded from the same catalog files in the same state (catalogs
    /// are shared per file version, so an unchanged file gives the same one).
    pub fn same_as(&self, other: &Catalogs) -> bool {
        self.per_dir.len() == other.per_dir.len()
            && self
                .per_dir
                .iter()
                .zip(&other.per_dir)
                .all(|(a, b)| std::sync::Arc::ptr_eq(a, b) || (a.entries.is_empty() && b.entries.is_empty()))
    }

    pub fn get(&self, key: &Key) -> Option<Found> {
        self.per_dir.iter().enumerate().find_map(|(dir, c)| c.get(key).map(|loc| Found { dir, loc }))
    }

    pub fn contains(&self, key: &Key) -> bool {
        self.per_dir.iter().any(|c| c.get(key).is_some())
    }

    pub fn segment_name(&self, f: Found) -> &str {
        self.per_dir[f.dir].segment_name(f.loc)
    }

    /// The items whose keys these catalogs hold (and `keep` accepts), grouped by the segment
    /// holding their rows, so that each segment is read once. Groups come in segment order.
    pub fn by_segment<T>(
        &self,
        items: impl IntoIterator<Item = (T, Key)>,
        keep: impl Fn(&Found) -> bool,
    ) -> Vec<SegmentGroup<T>> {
        let mut groups: std::collections::BTreeMap<(usize, u32), Vec<(T, Found)>> = Default::default();
        for (item, key) in items {
            if let Some(f) = self.get(&key).filter(|f| keep(f)) {
                groups.entry((f.dir, f.loc.seg)).or_default().push((item, f));
            }
        }
        groups
            .into_iter()
            .map(|((dir, seg), items)| SegmentGroup {
                dir,
                name: self.per_dir[dir].segments[seg as usize].clone(),
                items,
            })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.per_dir.iter().map(|c| c.entries.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Environment variable listing extra read-only object directories (`:`-separated).
pub const ALTERNATES_ENV: &str = crate::env::LYNX_ALTERNATE_OBJECT_DIRECTORIES;

impl Store {
    /// Opens (creating if needed) the store at `root` (`.lynx`). Alternates listed in
    /// `trusted` are read in place; the others are adoption pools.
    pub fn open(root: &Path, trusted: &[String]) -> Result<Store> {
        let objects = root.join("objects");
        std::fs::create_dir_all(objects.join("catalog"))
            .with_context(|| format!("cannot create the Lynx store at {}", root.display()))?;
        let trusted: Vec<PathBuf> =
            trusted.iter().map(|t| std::fs::canonicalize(t).unwrap_or_else(|_| PathBuf::from(t))).collect();
        // A new store knows it has no catalog yet: without the list, a layer whose catalog is
        // looked up while another layer's first segment is being written (both run at once in
        // a first index) would read as lost and be rebuilt.
        let known = objects.join("catalog").join(KNOWN);
        if !known.exists() && list_segments(&objects).is_ok_and(|s| s.is_empty()) {
            let _ = std::fs::OpenOptions::new().write(true).create_new(true).open(&known);
        }
        let mut dirs = vec![objects.clone()];
        let mut pools = Vec::new();
        for alt in read_alternates(&objects)? {
            if alt == objects || dirs.contains(&alt) || pools.contains(&alt) {
                continue;
            }
            if trusted.contains(&alt) { dirs.push(alt) } else { pools.push(alt) }
        }
        Ok(Store { root: root.to_path_buf(), dirs, pools, remote: None })
    }

    pub fn objects(&self) -> &Path {
        &self.dirs[0]
    }

    /// Reads `others` in place after this store's own directories: the object directories of
    /// the other repositories of the user's workspace, so a blob one of them indexed (a fork's,
    /// a vendored copy's) is neither processed nor stored again. Nothing is written there.
    pub fn read_also(&mut self, others: &[PathBuf]) {
        for d in others {
            let d = std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
            if !self.dirs.contains(&d) && std::fs::canonicalize(&self.dirs[0]).ok().as_ref() != Some(&d) {
                self.pools.retain(|p| *p != d);
                self.dirs.push(d);
            }
        }
    }

    pub fn segment_path(&self, dir: usize, name: &str) -> PathBuf {
        self.dirs[dir].join(format!("{name}.parquet"))
    }

    pub fn catalogs(&self, layer: &str, fingerprint: &str) -> Result<Catalogs> {
        let mut per_dir = Vec::with_capacity(self.dirs.len());
        for (i, d) in self.dirs.iter().enumerate() {
            let path = catalog::catalog_path(d, layer, fingerprint);
            match Catalog::load_shared(&path) {
                Ok(c) if i == 0 && c.entries.is_empty() && !path.exists() && self.catalog_lost(layer, fingerprint) => {
                    tracing::warn!("the {layer} catalog is missing; rebuilding the catalogs from the segments");
                    per_dir.push(std::sync::Arc::new(self.rebuild_catalog(&path)?))
                }
                Ok(c) => per_dir.push(c),
                // A damaged alternate must not stop the local store from working.
                Err(e) if i > 0 => {
                    tracing::warn!("ignoring alternate catalog: {e:#}");
                    per_dir.push(Default::default())
                }
                Err(e) => {
                    tracing::warn!("{e:#}; rebuilding the catalogs from the segments");
                    per_dir.push(std::sync::Arc::new(self.rebuild_catalog(&path)?))
                }
            }
        }
        Ok(Catalogs { per_dir })
    }

    /// Whether the local catalog of (layer, fingerprint) should exist but does not: it was
    /// written once (`catalog/known`), or nothing is known and segments are there.
    fn catalog_lost(&self, layer: &str, fingerprint: &str) -> bool {
        let known = self.objects().join("catalog").join(KNOWN);
        match std::fs::read_to_string(&known) {
            Ok(text) => text.lines().any(|l| l == format!("{layer}-{fingerprint}")),
            Err(_) => list_segments(self.objects()).is_ok_and(|s| !s.is_empty()),
        }
    }

    /// Rebuilds every local catalog from the segments (under the write lock) and loads `path`.
    fn rebuild_catalog(&self, path: &Path) -> Result<Catalog> {
        let _lock = lock::StoreLock::acquire(&self.root, "catalog rebuild")?;
        // Another process may have rebuilt it while this one waited.
        if let Ok(c) = Catalog::load(path)
            && path.exists()
        {
            return Ok(c);
        }
        pack::rebuild_catalogs(self.objects())?;
        Catalog::load(path).context("the rebuilt catalog is unreadable; run `git lynx doctor --repair`")
    }

    /// Serialises `batch` as a zstd Parquet segment named by the blake3 of its bytes and writes
    /// it atomically into the local object directory. Returns the segment name.
    pub fn write_segment(&self, layer: &str, fingerprint: &str, batch: &RecordBatch) -> Result<String> {
        let bytes = encode_segment(layer, fingerprint, batch)?;
        let hex = blake3::hash(&bytes).to_hex();
        let name = format!("{}/{}", &hex[..2], &hex[2..]);
        let path = self.segment_path(0, &name);
        if !path.exists() {
            fsutil::write_atomic(&path, &bytes)?;
        }
        Ok(name)
    }

    /// Records segments in the local catalog of (layer, fingerprint). Takes the store's write
    /// lock for the read-modify-write of the catalog file.
    pub fn commit(&self, layer: &str, fingerprint: &str, added: &[(String, Vec<(Key, u32, u32)>)]) -> Result<()> {
        self.update_catalog(layer, fingerprint, added, false)
    }

    /// Like [`Store::commit`], but the segments' keys replace any entries the catalog has for
    /// them (imported facts, where a newer import supersedes an older one for the same blob).
    pub fn commit_replacing(
        &self,
        layer: &str,
        fingerprint: &str,
        added: &[(String, Vec<(Key, u32, u32)>)],
    ) -> Result<()> {
        self.update_catalog(layer, fingerprint, added, true)
    }

    fn update_catalog(
        &self,
        layer: &str,
        fingerprint: &str,
        added: &[(String, Vec<(Key, u32, u32)>)],
        replace: bool,
    ) -> Result<()> {
        if added.is_empty() {
            return Ok(());
        }
        let _lock = lock::StoreLock::acquire(&self.root, "catalog update")?;
        let path = catalog::catalog_path(self.objects(), layer, fingerprint);
        if !path.exists() {
            note_known(self.objects(), &[format!("{layer}-{fingerprint}")])?;
        }
        let mut cat = Catalog::load(&path)?;
        for (name, keys) in added {
            if replace {
                cat.replace(name, keys);
            } else {
                cat.add(name, keys);
            }
        }
        cat.save(&path)
    }

    /// Empties the local catalog of (layer, fingerprint): its segments are no longer used and
    /// the next `gc` removes them. Returns how many keys it held.
    pub fn clear_catalog(&self, layer: &str, fingerprint: &str) -> Result<usize> {
        let _lock = lock::StoreLock::acquire(&self.root, "catalog update")?;
        let path = catalog::catalog_path(self.objects(), layer, fingerprint);
        let held = Catalog::load(&path)?.entries.len();
        Catalog::default().save(&path)?;
        Ok(held)
    }

    /// The object directory holding segment `name` (any directory: names are content hashes, so
    /// every copy is the same) and its path.
    pub fn find_segment(&self, name: &str) -> Option<(usize, PathBuf)> {
        self.dirs.iter().enumerate().map(|(i, _)| (i, self.segment_path(i, name))).find(|(_, p)| p.exists())
    }

    /// Reads a whole segment. A local segment found damaged is quarantined (moved to
    /// `.lynx/quarantine`, its catalog entries dropped), so the next run processes its blobs
    /// again; the error says so.
    pub fn read_segment(&self, dir: usize, name: &str) -> Result<RecordBatch> {
        self.healing(dir, name, read_segment_file(&self.segment_path(dir, name)))
    }

    /// Reads the named columns of a segment (quarantined when damaged, as `read_segment`).
    pub fn read_segment_columns(&self, dir: usize, name: &str, columns: &[&str]) -> Result<RecordBatch> {
        self.healing(dir, name, read_columns(&self.segment_path(dir, name), columns))
    }

    fn healing<T>(&self, dir: usize, name: &str, r: Result<T>) -> Result<T> {
        match r {
            Err(e) if dir == 0 && e.downcast_ref::<Damaged>().is_some() => {
                let moved = self.quarantine(&[name.to_string()]);
                Err(e.context(match moved {
                    Ok(()) => format!(
                        "quarantined it in {}; run the command again to process its blobs anew",
                        self.root.join("quarantine").display()
                    ),
                    Err(q) => format!("could not quarantine it ({q:#}); run `git lynx doctor --repair`"),
                }))
            }
            r => r,
        }
    }

    /// Moves local segments to `.lynx/quarantine` and drops them from every catalog.
    pub fn quarantine(&self, names: &[String]) -> Result<()> {
        let _lock = lock::StoreLock::acquire(&self.root, "quarantine")?;
        let q = self.root.join("quarantine");
        std::fs::create_dir_all(&q).with_context(|| format!("creating {}", q.display()))?;
        for name in names {
            let _ = std::fs::rename(self.segment_path(0, name), q.join(name.replace('/', "")));
        }
        let dir = self.objects().join("catalog");
        for e in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?.flatten() {
            if e.path().extension().is_some_and(|x| x == "cat")
                && let Ok(mut cat) = Catalog::load(&e.path())
                && cat.segments.iter().any(|s| names.contains(s))
            {
                cat.remove_segments(names);
                cat.save(&e.path())?;
            }
        }
        Ok(())
    }
}

pub fn encode_segment(layer: &str, fingerprint: &str, batch: &RecordBatch) -> Result<Vec<u8>> {
    let mut props = WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?));
    // Vectors and chunk texts are nearly all distinct: a dictionary (and, for vectors, min/max
    // statistics) only costs the writer time — a fifth of embedding with a static model.
    // Vectors barely compress (7%): stored plain, uncompressed, in one page per row group, they
    // lie in the file as the bytes a vector shard would copy, so the shard points there instead.
    if batch.schema().fields().iter().any(|f| f.name() == "vector") {
        let vector = parquet::schema::types::ColumnPath::from("vector");
        props = props
            .set_dictionary_enabled(false)
            .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
            .set_column_compression(vector.clone(), Compression::UNCOMPRESSED)
            .set_column_encoding(vector, parquet::basic::Encoding::PLAIN)
            .set_data_page_size_limit(budget::MAX_PAGE_BYTES / 2)
            .set_data_page_row_count_limit(1 << 20);
    } else {
        props = props.set_column_dictionary_enabled(parquet::schema::types::ColumnPath::from("text"), false);
    }
    let props = props
        .set_key_value_metadata(Some(vec![
            KeyValue::new(META_LAYER.to_string(), layer.to_string()),
            KeyValue::new(META_FINGERPRINT.to_string(), fingerprint.to_string()),
            KeyValue::new(META_FORMAT.to_string(), FORMAT_VERSION.to_string()),
        ]))
        .set_created_by(format!("git-lynx {}", env!("CARGO_PKG_VERSION")))
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props))?;
    w.write(batch)?;
    w.close()?;
    Ok(out)
}

/// The list of catalogs written in an object directory (`catalog/known`), so a lost one is
/// noticed and rebuilt instead of reading as empty.
pub const KNOWN: &str = "known";

/// Adds catalog names (`layer-fingerprint`) to `catalog/known`.
pub fn note_known(objects: &Path, names: &[String]) -> Result<()> {
    let path = objects.join("catalog").join(KNOWN);
    let mut lines: Vec<String> = std::fs::read_to_string(&path).unwrap_or_default().lines().map(String::from).collect();
    let before = lines.len();
    for n in names {
        if !lines.contains(n) {
            lines.push(n.clone());
        }
    }
    if lines.len() != before || !path.exists() {
        fsutil::write_atomic(&path, format!("{}\n", lines.join("\n")).as_bytes())?;
    }
    Ok(())
}

/// A segment whose bytes no longer hash to its name (damaged on disk).
#[derive(Debug)]
pub struct Damaged(pub PathBuf);

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "segment {} is damaged (its bytes no longer match its name)", self.0.display())
    }
}

impl std::error::Error for Damaged {}

/// A segment's bytes, checked against its name when it sits in an object directory's layout
/// (`<2 hex>/<rest>.parquet`): damaged bytes never reach the Parquet decoder.
fn read_verified(path: &Path) -> Result<bytes::Bytes> {
    let bytes = fsutil::read_bounded(path, budget::MAX_SEGMENT_BYTES)
        .with_context(|| format!("opening segment {}", path.display()))?;
    let name = match (
        path.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str()),
        path.file_stem().and_then(|n| n.to_str()),
    ) {
        (Some(d), Some(f))
            if d.len() == 2 && f.len() == 62 && d.bytes().chain(f.bytes()).all(|b| b.is_ascii_hexdigit()) =>
        {
            Some(format!("{d}/{f}"))
        }
        _ => None,
    };
    if let Some(name) = name
        && !pack::verify_name(&name, &bytes)
    {
        return Err(Damaged(path.to_path_buf()).into());
    }
    Ok(bytes.into())
}

/// Runs a decoder over untrusted bytes, turning a panic inside it (the Parquet crate has a few
/// on malformed pages) into an error naming the file.
pub(crate) fn guarded<T>(what: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(SegmentError::Malformed { path: what.display().to_string() }.into()),
    }
}

/// Reads a segment file into one batch, with its (layer, fingerprint).
pub fn read_segment_file(path: &Path) -> Result<RecordBatch> {
    Ok(read_segment_with_meta(path)?.0)
}

pub fn read_segment_with_meta(path: &Path) -> Result<(RecordBatch, String, String)> {
    guarded(path, || read_segment_with_meta_unguarded(path))
}

crate::error::errors! {
    /// A segment file that cannot be read as what it claims to be.
    pub enum SegmentError: Failure {
        Malformed { path: String } => "segment {path} is malformed (its decoder gave up)",
        NoLayer { path: String } => "segment {path} has no Lynx layer metadata",
    }
}

fn read_segment_with_meta_unguarded(path: &Path) -> Result<(RecordBatch, String, String)> {
    let bytes = read_verified(path)?;
    budget::check(&bytes).with_context(|| format!("segment {} is refused", path.display()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .with_context(|| format!("segment {} is not a readable Parquet file", path.display()))?;
    let meta = builder.metadata().file_metadata().key_value_metadata().cloned().unwrap_or_default();
    let get = |k: &str| meta.iter().find(|kv| kv.key == k).and_then(|kv| kv.value.clone()).unwrap_or_default();
    let (layer, fp) = (get(META_LAYER), get(META_FINGERPRINT));
    if layer.is_empty() {
        return Err(SegmentError::NoLayer { path: path.display().to_string() }.into());
    }
    let schema = builder.schema().clone();
    let reader = builder.with_batch_size(64 * 1024).build()?;
    let mut batches = Vec::new();
    for b in reader {
        batches.push(b.with_context(|| format!("decoding segment {}", path.display()))?);
    }
    let batch = arrow::compute::concat_batches(&schema, &batches)?;
    Ok((batch, layer, fp))
}

/// Reads only the named columns of a segment.
pub fn read_columns(path: &Path, names: &[&str]) -> Result<RecordBatch> {
    guarded(path, || read_columns_unguarded(path, names))
}

fn read_columns_unguarded(path: &Path, names: &[&str]) -> Result<RecordBatch> {
    let bytes = read_verified(path)?;
    budget::check(&bytes).with_context(|| format!("segment {} is refused", path.display()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .with_context(|| format!("segment {} is not a readable Parquet file", path.display()))?;
    let mask = parquet::arrow::ProjectionMask::columns(builder.parquet_schema(), names.iter().copied());
    let reader = builder.with_projection(mask).with_batch_size(64 * 1024).build()?;
    let schema = arrow::array::RecordBatchReader::schema(&reader);
    let mut batches: Vec<RecordBatch> = Vec::new();
    for b in reader {
        batches.push(b.with_context(|| format!("decoding segment {}", path.display()))?);
    }
    Ok(arrow::compute::concat_batches(&schema, &batches)?)
}

/// Alternates from `objects/info/alternates` (one path per line, `#` comments, relative paths
/// resolved against the objects directory) and the environment variable.
pub fn read_alternates(objects: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let file = objects.join("info").join("alternates");
    if let Ok(text) = std::fs::read_to_string(&file) {
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let p = PathBuf::from(line);
            out.push(if p.is_absolute() { p } else { objects.join(p) });
        }
    }
    if let Some(env) = crate::env::get(ALTERNATES_ENV) {
        out.extend(std::env::split_paths(&env).filter(|p| !p.as_os_str().is_empty()));
    }
    let mut existing = Vec::new();
    for p in out {
        if p.is_dir() {
            existing.push(p.canonicalize().unwrap_or(p));
        } else {
            tracing::warn!("alternate object directory {} does not exist; ignored", p.display());
        }
    }
    Ok(existing)
}

/// All segment names in an object directory.
pub fn list_segments(objects: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(objects) else { return Ok(out) };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.len() != 2 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        for f in std::fs::read_dir(e.path())?.flatten() {
            let fname = f.file_name().to_string_lossy().into_owned();
            if let Some(stem) = fname.strip_suffix(".parquet") {
                out.push(format!("{name}/{stem}"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Shared handle type for decoded segments.
pub type Segment = Arc<RecordBatch>;
