//! The vector layer: one row per distinct chunk content hash, under the embedding model's
//! fingerprint, so identical chunks anywhere (other files, other revisions) share one vector.
//! Stored as half-precision floats (unit vectors lose nothing measurable; see docs/BENCHMARKS.md).

use crate::store::Key;
use anyhow::{Context, Result, bail};
use arrow::array::{
    Array, ArrayRef, FixedSizeBinaryArray, FixedSizeBinaryBuilder, FixedSizeListArray, Float16Array, RecordBatch,
};
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

pub fn schema(dim: usize) -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::FixedSizeBinary(33), false),
        Field::new(
            "vector",
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float16, false)), dim as i32),
            false,
        ),
    ]))
}

/// Rows for `hashes` with their vectors (`hashes.len() × dim`).
pub fn to_batch(hashes: &[[u8; 16]], vectors: &[f32], dim: usize) -> Result<(RecordBatch, Vec<(Key, u32, u32)>)> {
    if vectors.len() != hashes.len() * dim {
        bail!("vector count does not match chunk count");
    }
    let mut key = FixedSizeBinaryBuilder::with_capacity(hashes.len(), 33);
    let mut keys = Vec::with_capacity(hashes.len());
    for (i, h) in hashes.iter().enumerate() {
        let k = Key::hash(h);
        key.append_value(k.0)?;
        keys.push((k, i as u32, 1));
    }
    let values: Float16Array = vectors.iter().map(|&v| half::f16::from_f32(v)).collect::<Vec<_>>().into();
    let list = FixedSizeListArray::try_new(
        Arc::new(Field::new("item", DataType::Float16, false)),
        dim as i32,
        Arc::new(values) as ArrayRef,
        None,
    )?;
    let cols: Vec<ArrayRef> = vec![Arc::new(key.finish()), Arc::new(list)];
    Ok((RecordBatch::try_new(schema(dim), cols)?, keys))
}

/// Typed access to a decoded vector segment.
pub struct VectorColumns<'a> {
    pub key: &'a FixedSizeBinaryArray,
    values: &'a Float16Array,
    pub dim: usize,
}

impl<'a> VectorColumns<'a> {
    pub fn new(batch: &'a RecordBatch) -> Result<Self> {
        let key = batch
            .column_by_name("key")
            .context("vector segment lacks `key`")?
            .as_any()
            .downcast_ref()
            .context("bad `key` type")?;
        let list: &FixedSizeListArray = batch
            .column_by_name("vector")
            .context("vector segment lacks `vector`")?
            .as_any()
            .downcast_ref()
            .context("bad `vector` type")?;
        let dim = list.value_length() as usize;
        let values = list.values().as_any().downcast_ref::<Float16Array>().context("vectors are not float16")?;
        Ok(VectorColumns { key, values, dim })
    }

    /// Writes row `row`'s vector into `out` (length `dim`).
    pub fn read(&self, row: usize, out: &mut [f32]) {
        let vals = &self.values.values()[row * self.dim..(row + 1) * self.dim];
        for (o, v) in out.iter_mut().zip(vals) {
            *o = v.to_f32();
        }
    }

    /// Every row's values as f16 bits, row-major.
    pub fn bits(&self) -> &[u16] {
        let halves: &[half::f16] = self.values.values().as_ref();
        bytemuck::cast_slice(halves)
    }

    pub fn len(&self) -> usize {
        self.key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.key.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_is_close() {
        let v = vec![0.6f32, 0.8, 0.0, -1.0, 0.123_456, 0.5];
        let (batch, keys) = to_batch(&[[1; 16], [2; 16]], &v, 3).unwrap();
        assert_eq!(keys[1], (Key::hash(&[2; 16]), 1, 1));
        let c = VectorColumns::new(&batch).unwrap();
        let mut out = [0f32; 3];
        c.read(1, &mut out);
        assert!((out[2] - 0.5).abs() < 1e-3 && (out[0] + 1.0).abs() < 1e-3 && (out[1] - 0.1235).abs() < 1e-3);
    }
}
