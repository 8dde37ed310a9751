//! Vector shards: a vector segment's rows as half-precision floats (as the segment stores them),
//! memory-mapped, for dense scans over the rows a view holds.

use super::{File, Invalid, Kind, Writer};
use crate::layer::vectors::VectorColumns;
use anyhow::Result;
use arrow::array::RecordBatch;
use std::path::Path;

pub struct VectorShard {
    file: File,
    pub rows: usize,
    pub dim: usize,
}

impl VectorShard {
    pub fn open(path: &Path, segment: &str) -> Result<VectorShard> {
        let file = File::open(path, Kind::Vectors, segment)?;
        let head = file.u32s(0)?;
        let values: &[u16] = bytemuck::try_cast_slice(file.bytes(1)?)
            .map_err(|e| Invalid(format!("vector shard {}: {e}", path.display())))?;
        let bad = |why: &str| -> anyhow::Error { Invalid(format!("vector shard {}: {why}", path.display())).into() };
        let (&dim, &rows) = match head {
            [d, r] => (d, r),
            _ => return Err(bad("bad header")),
        };
        let (dim, rows) = (dim as usize, rows as usize);
        // Checked arithmetic: a damaged header must not wrap the size check.
        if dim == 0 || rows.checked_mul(dim) != Some(values.len()) {
            return Err(bad("size does not match rows × dimension"));
        }
        Ok(VectorShard { file, rows, dim })
    }

    /// Row `r`'s vector as f16 bits (empty when out of range).
    pub fn row(&self, r: usize) -> &[u16] {
        let v: &[u16] = self.file.bytes(1).ok().and_then(|b| bytemuck::try_cast_slice(b).ok()).unwrap_or(&[]);
        v.get(r * self.dim..(r + 1) * self.dim).unwrap_or(&[])
    }

    /// Row `r`'s vector as f32.
    pub fn row_f32(&self, r: usize) -> Vec<f32> {
        self.row(r).iter().map(|&h| half::f16::from_bits(h).to_f32()).collect()
    }

    pub fn bytes_on_disk(&self) -> usize {
        self.file.len()
    }
}

/// Builds the shard of segment `name` (in object directory `dir`) from the segment.
pub fn build(store: &crate::store::Store, dir: usize, name: &str) -> Result<()> {
    let batch = store.read_segment(dir, name)?;
    write(&store.root, name, &batch)
}

/// Writes the shard of a vector segment from its decoded rows.
pub fn write(lynx_root: &Path, name: &str, batch: &RecordBatch) -> Result<()> {
    let c = VectorColumns::new(batch)?;
    write_bits(lynx_root, name, c.dim, &c.bits()).map(|_| ())
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
    w.section_u32(&[dim as u32, rows as u32]);
    w.section(bytemuck::cast_slice(bits).to_vec());
    w.write(lynx_root)
}
