//! Vector shards: a vector segment's rows as half-precision floats (as the segment stores them),
//! for dense scans over the rows a view holds.
//!
//! A segment written with its vectors uncompressed, in one page per row group, already holds
//! them as one run of bytes per row group: its shard only points there (the segment file's path
//! and length, and per row group the run's offset, row count and checksum), so the vectors are
//! on disk once. Any other segment (compressed, the older list form, pages split) gets a shard
//! holding a copy. Either way a row is `dim` little-endian float16s, checked on open.

use super::{File, Invalid, Kind, Writer};
use crate::embed::F16Row;
use crate::layer::vectors::VectorColumns;
use anyhow::{Context, Result};
use arrow::array::RecordBatch;
use std::path::{Path, PathBuf};

/// The shard holds the vectors.
const COPIED: u32 = 0;
/// The shard points at the vectors in the segment file.
const POINTS: u32 = 1;

pub struct VectorShard {
    file: File,
    data: Rows,
    pub rows: usize,
    pub dim: usize,
}

/// Where a shard's rows are.
enum Rows {
    /// In the shard file (its section 1).
    Copied,
    /// In the mapped segment file: runs as (first row, byte offset), by first row.
    Mapped { map: memmap2::Mmap, runs: Vec<(usize, usize)> },
    /// Read from the segment file into memory (servers: see `shard::read_into_memory`).
    Read(Vec<u8>),
}

impl VectorShard {
    pub fn open(path: &Path, segment: &str) -> Result<VectorShard> {
        let file = File::open(path, Kind::Vectors, segment)?;
        let bad = |why: &str| -> anyhow::Error { Invalid(format!("vector shard {}: {why}", path.display())).into() };
        let (dim, rows, form) = match file.u32s(0)? {
            &[d, r, f] => (d as usize, r as usize, f),
            _ => return Err(bad("bad header")),
        };
        let width = dim.checked_mul(2).filter(|&w| w > 0).ok_or_else(|| bad("dimension 0"))?;
        // Checked arithmetic: a damaged header must not wrap the size checks.
        let size = rows.checked_mul(width).ok_or_else(|| bad("size overflows"))?;
        let data = match form {
            COPIED if file.bytes(1)?.len() == size => Rows::Copied,
            COPIED => return Err(bad("size does not match rows × dimension")),
            POINTS => {
                let target = std::str::from_utf8(file.bytes(1)?).map_err(|_| bad("segment path is not UTF-8"))?;
                let table: &[u64] = bytemuck::try_cast_slice(file.bytes(2)?).map_err(|_| bad("bad run table"))?;
                let Some((&len, runs)) = table.split_first() else { return Err(bad("bad run table")) };
                if !runs.len().is_multiple_of(3) {
                    return Err(bad("bad run table"));
                }
                read_runs(Path::new(target), len, runs, width, size).with_context(|| bad("its segment's vectors"))?
            }
            _ => return Err(bad("unknown form")),
        };
        Ok(VectorShard { file, data, rows, dim })
    }

    /// Row `r`'s vector (empty when out of range).
    pub fn row(&self, r: usize) -> F16Row<'_> {
        let w = 2 * self.dim;
        if r >= self.rows {
            return F16Row::new(&[]);
        }
        let bytes = match &self.data {
            Rows::Copied => self.file.bytes(1).ok().and_then(|b| b.get(r * w..(r + 1) * w)),
            Rows::Read(v) => v.get(r * w..(r + 1) * w),
            Rows::Mapped { map, runs } => {
                let (first, at) = runs[runs.partition_point(|&(first, _)| first <= r) - 1];
                let at = at + (r - first) * w;
                map.get(at..at + w)
            }
        };
        F16Row::new(bytes.unwrap_or(&[]))
    }

    /// Row `r`'s vector as f32.
    pub fn row_f32(&self, r: usize) -> Vec<f32> {
        self.row(r).to_vec()
    }

    /// The shard file's size (a shard that points into its segment holds no vectors).
    pub fn bytes_on_disk(&self) -> usize {
        self.file.len()
    }

    /// Hands the pages of mapped rows back once they were read through, when this process
    /// does so (`shard::release_read_pages`); rows read later come from the file again.
    pub fn release_read_pages(&self) {
        if let Rows::Mapped { map, .. } = &self.data
            && super::releases_read_pages()
        {
            release(map, 0, map.len());
        }
    }

    /// Whether the rows are read from the segment file rather than held by the shard.
    pub fn points_into_segment(&self) -> bool {
        !matches!(self.data, Rows::Copied)
    }
}

/// Drops `len` bytes at `at` of a read-only file mapping from this process's memory.
fn release(map: &memmap2::Mmap, at: usize, len: usize) {
    // SAFETY: the mapping is shared and read-only over a file that is never modified in place:
    // dropped pages are read back from the same bytes if touched again.
    let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, at, len) };
}

/// The runs of a pointing shard, checked: the segment file has the length it had, every run
/// lies inside it, the runs hold `size` bytes, and each run's bytes have the checksum recorded.
fn read_runs(segment: &Path, len: u64, table: &[u64], width: usize, size: usize) -> Result<Rows> {
    let f = std::fs::File::open(segment).with_context(|| format!("opening {}", segment.display()))?;
    if f.metadata()?.len() != len {
        anyhow::bail!("{} changed since the shard was built", segment.display());
    }
    let mut runs = Vec::with_capacity(table.len() / 3);
    let mut first = 0usize;
    for run in table.chunks_exact(3) {
        let (at, rows) = (run[0] as usize, run[1] as usize);
        let end = rows.checked_mul(width).and_then(|n| n.checked_add(at)).filter(|&e| e as u64 <= len);
        anyhow::ensure!(end.is_some(), "a run lies outside {}", segment.display());
        runs.push((first, at, rows));
        first += rows;
    }
    anyhow::ensure!(first.checked_mul(width) == Some(size), "the runs do not hold the shard's rows");
    let check = |bytes: &[u8], i: usize| -> Result<()> {
        anyhow::ensure!(twox_hash::XxHash3_64::oneshot(bytes) == table[3 * i + 2], "run {i} fails its checksum");
        Ok(())
    };
    if super::reads_into_memory() {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; size];
        let mut to = 0;
        for (i, &(_, at, rows)) in runs.iter().enumerate() {
            let part = &mut buf[to..to + rows * width];
            f.read_exact_at(part, at as u64)?;
            check(part, i)?;
            to += rows * width;
        }
        return Ok(Rows::Read(buf));
    }
    // SAFETY: segments are written once (temp file + rename) and never modified in place, and
    // the file's length and each run's checksum were just checked; servers read instead.
    let map = unsafe { memmap2::Mmap::map(&f) }.with_context(|| format!("mapping {}", segment.display()))?;
    for (i, &(_, at, rows)) in runs.iter().enumerate() {
        check(&map[at..at + rows * width], i)?;
        if super::releases_read_pages() {
            release(&map, at, rows * width);
        }
    }
    Ok(Rows::Mapped { map, runs: runs.into_iter().map(|(first, at, _)| (first, at)).collect() })
}

/// Builds the shard of segment `name` (in object directory `dir`) from the segment.
pub fn build(store: &crate::store::Store, dir: usize, name: &str) -> Result<()> {
    let batch = store.read_segment(dir, name)?;
    write(store, dir, name, &batch)
}

/// Writes the shard of vector segment `name` (in object directory `dir`) from its decoded rows:
/// pointing into the segment when its vectors lie there as runs of these very bytes, else a copy.
pub fn write(store: &crate::store::Store, dir: usize, name: &str, batch: &RecordBatch) -> Result<()> {
    let c = VectorColumns::new(batch)?;
    let segment = store.segment_path(dir, name);
    if let Some((path, len, runs)) = c.packed().and_then(|bytes| runs_in(&segment, bytes, c.dim)) {
        let mut w = Writer::new(Kind::Vectors, name);
        w.section_u32(&[c.dim as u32, c.len() as u32, POINTS]);
        w.section(path.to_string_lossy().into_owned().into_bytes());
        let mut table = vec![len];
        table.extend(runs.iter().flatten());
        w.section(bytemuck::cast_slice(&table).to_vec());
        w.write(&store.root)?;
        return Ok(());
    }
    write_bits(&store.root, name, c.dim, &c.bits()).map(|_| ())
}

/// Where a segment file holds `packed` (its vectors, row-major) as plain bytes: per row group
/// the last `rows × width` bytes of the vector column's chunk, when they are exactly those rows'
/// values (one uncompressed page of plain values, no levels). Returns the file's absolute path,
/// its length and per row group (offset, rows, checksum); None when any run differs.
fn runs_in(segment: &Path, packed: &[u8], dim: usize) -> Option<(PathBuf, u64, Vec<[u64; 3]>)> {
    use parquet::file::reader::FileReader;
    let path = segment.canonicalize().ok()?;
    let f = std::fs::File::open(&path).ok()?;
    let len = f.metadata().ok()?.len();
    let reader = parquet::file::reader::SerializedFileReader::new(f.try_clone().ok()?).ok()?;
    let meta = reader.metadata();
    let column = meta.file_metadata().schema_descr().columns().iter().position(|c| c.name() == "vector")?;
    // SAFETY: as in `read_runs`; only compared here.
    let map = unsafe { memmap2::Mmap::map(&f) }.ok()?;
    let width = 2 * dim;
    let (mut first, mut runs) = (0usize, Vec::new());
    for rg in meta.row_groups() {
        let rows = usize::try_from(rg.num_rows()).ok()?;
        let (start, chunk) = rg.column(column).byte_range();
        let end = usize::try_from(start.checked_add(chunk)?).ok()?;
        let at = end.checked_sub(rows.checked_mul(width)?)?;
        let want = packed.get(first * width..(first + rows) * width)?;
        if map.get(at..end)? != want {
            return None;
        }
        runs.push([at as u64, rows as u64, twox_hash::XxHash3_64::oneshot(want)]);
        first += rows;
    }
    (first * width == packed.len()).then_some((path, len, runs))
}

/// Writes a vector shard holding `values` (rows × `dim`, row-major, stored as f16); returns its
/// path.
pub fn write_values(lynx_root: &Path, name: &str, dim: usize, values: &[f32]) -> Result<std::path::PathBuf> {
    let bits: Vec<u16> = values.iter().map(|&v| half::f16::from_f32(v).to_bits()).collect();
    write_bits(lynx_root, name, dim, &bits)
}

fn write_bits(lynx_root: &Path, name: &str, dim: usize, bits: &[u16]) -> Result<std::path::PathBuf> {
    let rows = bits.len() / dim.max(1);
    let mut w = Writer::new(Kind::Vectors, name);
    w.section_u32(&[dim as u32, rows as u32, COPIED]);
    w.section(bytemuck::cast_slice(bits).to_vec());
    w.write(lynx_root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vectors(n: usize, dim: usize) -> Vec<f32> {
        (0..n * dim).map(|i| ((i * 7919 % 1000) as f32 / 500.0) - 1.0).collect()
    }

    #[test]
    fn a_plain_segment_is_pointed_into_and_any_other_is_copied() {
        let tmp = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&tmp.path().join(".lynx"), &[]).unwrap();
        let (n, dim) = (3_000, 24);
        let hashes: Vec<[u8; 16]> =
            (0..n as u32).map(|i| blake3::hash(&i.to_le_bytes()).as_bytes()[..16].try_into().unwrap()).collect();
        let values = vectors(n, dim);
        let (batch, _) = crate::layer::vectors::to_batch(&hashes, &values, dim).unwrap();
        let name = store.write_segment(crate::layer::VECTORS, "fp", &batch).unwrap();
        write(&store, 0, &name, &batch).unwrap();
        let path = super::super::shard_path(&store.root, Kind::Vectors, &name);
        let shard = VectorShard::open(&path, &name).unwrap();
        assert!(shard.points_into_segment());
        assert_eq!((shard.rows, shard.dim), (n, dim));
        // The shard holds no vectors: the segment does.
        assert!(shard.bytes_on_disk() < 512, "{} bytes", shard.bytes_on_disk());
        let f16 = |v: &[f32]| v.iter().map(|&x| half::f16::from_f32(x).to_f32()).collect::<Vec<_>>();
        for r in [0, 1, 1_499, n - 1] {
            assert_eq!(shard.row_f32(r), f16(&values[r * dim..(r + 1) * dim]), "row {r}");
        }
        assert!(shard.row(n).is_empty());

        // A segment whose vectors changed under the shard (same length) is refused on open.
        let segment = store.segment_path(0, &name);
        let mut bytes = std::fs::read(&segment).unwrap();
        let row7: Vec<u8> =
            values[7 * dim..8 * dim].iter().flat_map(|&x| half::f16::from_f32(x).to_le_bytes()).collect();
        let at = bytes.windows(row7.len()).position(|w| w == row7).unwrap();
        drop(shard);
        bytes[at] ^= 0x40;
        std::fs::write(&segment, &bytes).unwrap();
        let e = VectorShard::open(&path, &name).err().expect("a changed segment");
        assert!(format!("{e:#}").contains("checksum"), "{e:#}");

        // Rows whose segment does not hold them as plain bytes get a copy.
        let other = "ab/cdef";
        write(&store, 0, other, &batch).unwrap();
        let copied = VectorShard::open(&super::super::shard_path(&store.root, Kind::Vectors, other), other).unwrap();
        assert!(!copied.points_into_segment() && copied.bytes_on_disk() > n * dim * 2);
        assert_eq!(copied.row_f32(1_499), f16(&values[1_499 * dim..1_500 * dim]));
    }
}
