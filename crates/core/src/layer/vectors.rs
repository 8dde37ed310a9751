//! The vector layer: one row per distinct chunk content hash, under the embedding model's
//! fingerprint, so identical chunks anywhere (other files, other revisions) share one vector.
//! Stored as half-precision floats (unit vectors lose nothing measurable; see docs/BENCHMARKS.md),
//! one fixed-size binary value per vector (`dim` little-endian float16s). Segments written
//! before that hold a fixed-size list of float16 and are read as well: Parquet writes such a
//! list one two-byte value at a time, which was a fifth of embedding a repository.

use crate::store::Key;
use anyhow::{Context, Result};
use arrow::array::{
    Array, ArrayRef, FixedSizeBinaryArray, FixedSizeBinaryBuilder, FixedSizeListArray, Float16Array, RecordBatch,
};
use arrow::datatypes::{DataType, Field, Schema};
use std::borrow::Cow;
use std::sync::Arc;

crate::error::errors! {
    /// A vector layer whose columns do not hold what they say (damaged or foreign segments), or a
    /// kept dense side that does not fit its view (rebuilt from the objects).
    pub enum VectorError: Failure {
        Count {} => "vector count does not match chunk count",
        Width { width: usize } => "vector column of {width}-byte values: not float16 vectors",
        Bytes { bytes: usize, vectors: usize, width: usize } => "vector column holds {bytes} bytes for {vectors} vectors of {width}",
        Values { values: usize, vectors: usize, dim: usize } => "vector list holds {values} values for {vectors} vectors of {dim}",
        Empty {} => "vectors of dimension 0",
        KeptUnfit { what: &'static str } => "the kept dense side does not fit: {what}",
        Dimension { stored: usize, model: usize } =>
            "stored vectors have dimension {stored} but the model has {model}; the vector layer is inconsistent",
    }
}

pub fn schema(dim: usize) -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::FixedSizeBinary(33), false),
        Field::new("vector", DataType::FixedSizeBinary(2 * dim as i32), false),
    ]))
}

/// Rows for `hashes` with their vectors (`hashes.len() × dim`).
pub fn to_batch(hashes: &[[u8; 16]], vectors: &[f32], dim: usize) -> Result<(RecordBatch, Vec<(Key, u32, u32)>)> {
    if vectors.len() != hashes.len() * dim {
        return Err(VectorError::Count {}.into());
    }
    let mut key = FixedSizeBinaryBuilder::with_capacity(hashes.len(), 33);
    let mut keys = Vec::with_capacity(hashes.len());
    for (i, h) in hashes.iter().enumerate() {
        let k = Key::hash(h);
        key.append_value(k.0)?;
        keys.push((k, i as u32, 1));
    }
    let mut bytes = Vec::with_capacity(vectors.len() * 2);
    for &v in vectors {
        bytes.extend_from_slice(&half::f16::from_f32(v).to_le_bytes());
    }
    let vector = FixedSizeBinaryArray::try_new(2 * dim as i32, bytes.into(), None)?;
    let cols: Vec<ArrayRef> = vec![Arc::new(key.finish()), Arc::new(vector)];
    Ok((RecordBatch::try_new(schema(dim), cols)?, keys))
}

/// Typed access to a decoded vector segment.
pub struct VectorColumns<'a> {
    pub key: &'a FixedSizeBinaryArray,
    values: Values<'a>,
    pub dim: usize,
}

/// The two forms a segment's vectors come in.
enum Values<'a> {
    /// Each vector one binary value of little-endian float16s.
    Packed(&'a [u8]),
    /// A fixed-size list of float16 (segments written before the packed form).
    Listed(&'a Float16Array),
}

impl<'a> VectorColumns<'a> {
    pub fn new(batch: &'a RecordBatch) -> Result<Self> {
        let key = batch
            .column_by_name("key")
            .context("vector segment lacks `key`")?
            .as_any()
            .downcast_ref()
            .context("bad `key` type")?;
        let column = batch.column_by_name("vector").context("vector segment lacks `vector`")?.as_any();
        let (values, dim) = if let Some(packed) = column.downcast_ref::<FixedSizeBinaryArray>() {
            let width = packed.value_length() as usize;
            if width == 0 || !width.is_multiple_of(2) || packed.null_count() > 0 {
                return Err(VectorError::Width { width }.into());
            }
            let data = packed.value_data();
            if data.len() != packed.len() * width {
                return Err(VectorError::Bytes { bytes: data.len(), vectors: packed.len(), width }.into());
            }
            (Values::Packed(data), width / 2)
        } else {
            let list: &FixedSizeListArray = column.downcast_ref().context("bad `vector` type")?;
            let values = list.values().as_any().downcast_ref::<Float16Array>().context("vectors are not float16")?;
            let dim = list.value_length() as usize;
            if values.len() != list.len() * dim {
                return Err(VectorError::Values { values: values.len(), vectors: list.len(), dim }.into());
            }
            (Values::Listed(values), dim)
        };
        if dim == 0 {
            return Err(VectorError::Empty {}.into());
        }
        Ok(VectorColumns { key, values, dim })
    }

    /// Writes row `row`'s vector into `out` (length `dim`).
    pub fn read(&self, row: usize, out: &mut [f32]) {
        match &self.values {
            Values::Packed(bytes) => {
                let vals = &bytes[row * 2 * self.dim..(row + 1) * 2 * self.dim];
                for (o, b) in out.iter_mut().zip(vals.chunks_exact(2)) {
                    *o = half::f16::from_le_bytes([b[0], b[1]]).to_f32();
                }
            }
            Values::Listed(values) => {
                for (o, v) in out.iter_mut().zip(&values.values()[row * self.dim..(row + 1) * self.dim]) {
                    *o = v.to_f32();
                }
            }
        }
    }

    /// Every row's values as little-endian float16 bytes, row-major, when the segment holds
    /// them packed (None for the older list form).
    pub fn packed(&self) -> Option<&[u8]> {
        match &self.values {
            Values::Packed(bytes) => Some(bytes),
            Values::Listed(_) => None,
        }
    }

    /// Every row's values as f16 bits, row-major (borrowed when the column's bytes are aligned).
    pub fn bits(&self) -> Cow<'_, [u16]> {
        match &self.values {
            Values::Packed(bytes) => match bytemuck::try_cast_slice::<u8, u16>(bytes) {
                Ok(bits) if cfg!(target_endian = "little") => Cow::Borrowed(bits),
                _ => Cow::Owned(bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()),
            },
            Values::Listed(values) => {
                let halves: &[half::f16] = values.values().as_ref();
                Cow::Borrowed(bytemuck::cast_slice(halves))
            }
        }
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

    /// A segment of the earlier form (a fixed-size list of float16) reads as the packed one.
    #[test]
    fn both_forms_read_alike() {
        let v = vec![0.6f32, 0.8, 0.0, -1.0, 0.123_456, 0.5];
        let (packed, _) = to_batch(&[[1; 16], [2; 16]], &v, 3).unwrap();
        let values: Float16Array = v.iter().map(|&x| half::f16::from_f32(x)).collect::<Vec<_>>().into();
        let item = Arc::new(Field::new("item", DataType::Float16, false));
        let list = FixedSizeListArray::try_new(item.clone(), 3, Arc::new(values) as ArrayRef, None).unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("key", DataType::FixedSizeBinary(33), false),
            Field::new("vector", DataType::FixedSizeList(item, 3), false),
        ]));
        let listed = RecordBatch::try_new(schema, vec![packed.column(0).clone(), Arc::new(list)]).unwrap();
        let (a, b) = (VectorColumns::new(&packed).unwrap(), VectorColumns::new(&listed).unwrap());
        assert_eq!((a.dim, b.dim), (3, 3));
        assert_eq!(a.bits(), b.bits());
        let (mut x, mut y) = ([0f32; 3], [0f32; 3]);
        for row in 0..2 {
            a.read(row, &mut x);
            b.read(row, &mut y);
            assert_eq!(x, y);
        }
    }

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
