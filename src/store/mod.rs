//! The object store under `.lynx/objects`: immutable, content-addressed Parquet segments
//! (zstd), each holding one layer's rows for a batch of keys, plus per-(layer, fingerprint)
//! catalogs that say which rows belong to which key. Extra read-only object directories
//! (alternates) are consulted after the local one.

pub mod catalog;
pub mod lock;
pub mod pack;

use crate::fsutil;
use anyhow::{Context, Result, bail};
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
    /// Object directories: the local `.lynx/objects` first, then read-only alternates.
    pub dirs: Vec<PathBuf>,
}

/// The catalogs of one (layer, fingerprint) across all object directories.
pub struct Catalogs {
    pub per_dir: Vec<Catalog>,
}

impl Catalogs {
    pub fn get(&self, key: &Key) -> Option<Found> {
        self.per_dir.iter().enumerate().find_map(|(dir, c)| c.get(key).map(|loc| Found { dir, loc }))
    }

    pub fn contains(&self, key: &Key) -> bool {
        self.per_dir.iter().any(|c| c.get(key).is_some())
    }

    pub fn segment_name(&self, f: Found) -> &str {
        self.per_dir[f.dir].segment_name(f.loc)
    }

    pub fn len(&self) -> usize {
        self.per_dir.iter().map(|c| c.entries.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Environment variable listing extra read-only object directories (`:`-separated).
pub const ALTERNATES_ENV: &str = "LYNX_ALTERNATE_OBJECT_DIRECTORIES";

impl Store {
    /// Opens (creating if needed) the store at `root` (`.lynx`).
    pub fn open(root: &Path) -> Result<Store> {
        let objects = root.join("objects");
        std::fs::create_dir_all(objects.join("catalog"))
            .with_context(|| format!("cannot create the Lynx store at {}", root.display()))?;
        let mut dirs = vec![objects.clone()];
        for alt in read_alternates(&objects)? {
            if alt != objects && !dirs.contains(&alt) {
                dirs.push(alt);
            }
        }
        Ok(Store { root: root.to_path_buf(), dirs })
    }

    pub fn objects(&self) -> &Path {
        &self.dirs[0]
    }

    pub fn segment_path(&self, dir: usize, name: &str) -> PathBuf {
        self.dirs[dir].join(format!("{name}.parquet"))
    }

    pub fn catalogs(&self, layer: &str, fingerprint: &str) -> Result<Catalogs> {
        let mut per_dir = Vec::with_capacity(self.dirs.len());
        for (i, d) in self.dirs.iter().enumerate() {
            let path = catalog::catalog_path(d, layer, fingerprint);
            match Catalog::load(&path) {
                Ok(c) => per_dir.push(c),
                // A damaged alternate must not stop the local store from working.
                Err(e) if i > 0 => {
                    tracing::warn!("ignoring alternate catalog: {e:#}");
                    per_dir.push(Catalog::default())
                }
                Err(e) => return Err(e.context("run `git lynx doctor --repair` to rebuild the catalog")),
            }
        }
        Ok(Catalogs { per_dir })
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
        if added.is_empty() {
            return Ok(());
        }
        let _lock = lock::StoreLock::acquire(&self.root, "catalog update")?;
        let path = catalog::catalog_path(self.objects(), layer, fingerprint);
        let mut cat = Catalog::load(&path)?;
        for (name, keys) in added {
            cat.add(name, keys);
        }
        cat.save(&path)
    }

    /// The object directory holding segment `name` (any directory: names are content hashes, so
    /// every copy is the same) and its path.
    pub fn find_segment(&self, name: &str) -> Option<(usize, PathBuf)> {
        self.dirs.iter().enumerate().map(|(i, _)| (i, self.segment_path(i, name))).find(|(_, p)| p.exists())
    }

    /// Reads a whole segment.
    pub fn read_segment(&self, dir: usize, name: &str) -> Result<RecordBatch> {
        let path = self.segment_path(dir, name);
        read_segment_file(&path)
    }
}

pub fn encode_segment(layer: &str, fingerprint: &str, batch: &RecordBatch) -> Result<Vec<u8>> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?))
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

/// Reads a segment file into one batch, with its (layer, fingerprint).
pub fn read_segment_file(path: &Path) -> Result<RecordBatch> {
    Ok(read_segment_with_meta(path)?.0)
}

pub fn read_segment_with_meta(path: &Path) -> Result<(RecordBatch, String, String)> {
    let file = std::fs::File::open(path).with_context(|| format!("opening segment {}", path.display()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .with_context(|| format!("segment {} is not a readable Parquet file", path.display()))?;
    let meta = builder.metadata().file_metadata().key_value_metadata().cloned().unwrap_or_default();
    let get = |k: &str| meta.iter().find(|kv| kv.key == k).and_then(|kv| kv.value.clone()).unwrap_or_default();
    let (layer, fp) = (get(META_LAYER), get(META_FINGERPRINT));
    if layer.is_empty() {
        bail!("segment {} has no Lynx layer metadata", path.display());
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
    let file = std::fs::File::open(path).with_context(|| format!("opening segment {}", path.display()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
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
    if let Ok(env) = std::env::var(ALTERNATES_ENV) {
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
