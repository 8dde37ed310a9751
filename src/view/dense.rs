//! A view's dense matrix: one unit vector per chunk ordinal (zeros where the vector is not
//! computed yet), memory-mapped from the view cache, plus exact top-k search over it.

use super::table::ChunkTable;
use crate::fsutil;
use crate::layer::{self, vectors::VectorColumns};
use crate::store::{Key, Store};
use anyhow::{Context, Result, bail};
use memmap2::Mmap;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"LYNXDN02";
const HEADER: usize = 32;

pub struct DenseMatrix {
    map: Mmap,
    /// Rows (ordinals, dead ones included).
    pub n: usize,
    pub dim: usize,
    /// Live chunks with a vector, and live chunks.
    pub covered: usize,
    pub live: usize,
    pub fingerprint: String,
}

pub fn path_for(view_dir: &Path, fingerprint: &str) -> PathBuf {
    view_dir.join(format!("dense-{fingerprint}.bin"))
}

/// Builds the matrix for `table` from the vector layer of `fingerprint`, copying the rows a
/// base view's matrix already has (same ordinals) instead of reading them again.
pub fn build(store: &Store, table: &ChunkTable, fingerprint: &str, dim: usize, path: &Path, base: Option<&DenseMatrix>) -> Result<()> {
    let cat = store.catalogs(layer::VECTORS, fingerprint)?;
    let n = table.len();
    let mut data = vec![0f32; n * dim];
    let mut flags = vec![0u8; n];
    let mut by_segment: HashMap<(usize, String), Vec<(usize, u32)>> = HashMap::new();
    for ord in table.live() {
        let o = ord as usize;
        if let Some(b) = base.filter(|b| o < b.n && b.dim == dim && b.has(ord)) {
            data[o * dim..(o + 1) * dim].copy_from_slice(b.row(ord));
            flags[o] = 1;
            continue;
        }
        if let Some(f) = cat.get(&Key::hash(&table.chunk_hash(ord))) {
            by_segment.entry((f.dir, cat.segment_name(f).to_string())).or_default().push((o, f.loc.row));
        }
    }
    for ((dir, name), rows) in by_segment {
        let batch = crate::store::read_segment_file(&store.segment_path(dir, &name))?;
        let cols = VectorColumns::new(&batch)?;
        if cols.dim != dim {
            bail!("stored vectors have dimension {} but the model has {dim}; the vector layer is inconsistent", cols.dim);
        }
        for (ord, row) in rows {
            cols.read(row as usize, &mut data[ord * dim..(ord + 1) * dim]);
            flags[ord] = 1;
        }
    }
    write_matrix(path, dim, &data, &flags, table.live_len())
}

/// Writes a matrix file: `data` is `flags.len() × dim` row-major; rows with flag 0 have no vector.
pub fn write_matrix(path: &Path, dim: usize, data: &[f32], flags: &[u8], live: usize) -> Result<()> {
    let n = flags.len();
    let covered = flags.iter().filter(|&&f| f == 1).count();
    let mut out = Vec::with_capacity(HEADER + data.len() * 4 + n);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    out.extend_from_slice(&(covered as u32).to_le_bytes());
    out.extend_from_slice(&(live as u32).to_le_bytes());
    out.resize(HEADER, 0);
    for v in data {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(flags);
    fsutil::write_atomic(path, &out)
}

impl DenseMatrix {
    pub fn open(path: &Path, fingerprint: &str) -> Result<DenseMatrix> {
        let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        // SAFETY: written once via temp file + rename, never modified in place.
        let map = unsafe { Mmap::map(&file)? };
        if map.len() < HEADER || &map[..8] != MAGIC {
            bail!("{} is not a Lynx dense matrix", path.display());
        }
        let n = u32::from_le_bytes(map[8..12].try_into()?) as usize;
        let dim = u32::from_le_bytes(map[12..16].try_into()?) as usize;
        let covered = u32::from_le_bytes(map[16..20].try_into()?) as usize;
        let live = u32::from_le_bytes(map[20..24].try_into()?) as usize;
        if map.len() != HEADER + n * dim * 4 + n {
            bail!("{} is truncated", path.display());
        }
        Ok(DenseMatrix { map, n, dim, covered, live, fingerprint: fingerprint.to_string() })
    }

    fn rows(&self) -> &[f32] {
        let bytes = &self.map[HEADER..HEADER + self.n * self.dim * 4];
        // SAFETY: the mapping is page-aligned and HEADER is a multiple of 4, so the f32 view is
        // aligned; the length was checked in `open`.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const f32, self.n * self.dim) }
    }

    pub fn has(&self, ord: u32) -> bool {
        self.map[HEADER + self.n * self.dim * 4 + ord as usize] == 1
    }

    pub fn row(&self, ord: u32) -> &[f32] {
        &self.rows()[ord as usize * self.dim..(ord as usize + 1) * self.dim]
    }

    /// Exact top `k` by cosine (dot product of unit vectors), among `allowed` ordinals.
    pub fn search(&self, q: &[f32], k: usize, allowed: Option<&Arc<tantivy::BitSet>>) -> Vec<(u32, f32)> {
        if k == 0 || q.len() != self.dim || self.n == 0 {
            return Vec::new();
        }
        let rows = self.rows();
        let dim = self.dim;
        let dot = crate::embed::dot_fn();
        let block = 4096;
        let mut best: Vec<(u32, f32)> = (0..self.n.div_ceil(block))
            .into_par_iter()
            .map(|b| {
                let start = b * block;
                let end = (start + block).min(self.n);
                let mut scored: Vec<(u32, f32)> = Vec::with_capacity(end - start);
                for ord in start..end {
                    if !self.has(ord as u32) || allowed.is_some_and(|a| !a.contains(ord as u32)) {
                        continue;
                    }
                    scored.push((ord as u32, dot(q, &rows[ord * dim..(ord + 1) * dim])));
                }
                keep_top(&mut scored, k);
                scored
            })
            .reduce(Vec::new, |mut a, b| {
                a.extend(b);
                keep_top(&mut a, k);
                a
            });
        best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        best
    }
}

/// Truncates `v` to its `k` best scores (unordered), in linear time.
fn keep_top(v: &mut Vec<(u32, f32)>, k: usize) {
    if v.len() > k {
        v.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(k);
    }
}
