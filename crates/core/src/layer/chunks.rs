//! The chunks layer: per blob, its status (text, binary, LFS pointer), language, size, text
//! encoding and
//! chunks (symbol, kind, lines, text, content hash). A blob without chunks still has one row
//! (ordinal -1) so that it is known to be processed.

use crate::chunk::Chunk;
use crate::lang::Lang;
use crate::layer::column as col;
use crate::store::Key;
use anyhow::Result;
use arrow::array::{
    Array, ArrayRef, FixedSizeBinaryArray, FixedSizeBinaryBuilder, Int32Array, RecordBatch, StringArray, StringBuilder,
    UInt8Array, UInt32Array, UInt64Array,
};
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

/// What a processed blob turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Text = 0,
    Binary = 1,
    LfsPointer = 2,
}

impl Status {
    pub fn from_u8(v: u8) -> Status {
        match v {
            1 => Status::Binary,
            2 => Status::LfsPointer,
            _ => Status::Text,
        }
    }
}

/// The processed form of one blob.
#[derive(Debug, Clone)]
pub struct BlobChunks {
    pub key: Key,
    pub status: Status,
    pub lang: Lang,
    pub size: u64,
    pub chunks: Vec<Chunk>,
    pub hashes: Vec<[u8; 16]>,
    /// The text encoding the blob was decoded from; empty for UTF-8.
    pub encoding: String,
}

pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::FixedSizeBinary(33), false),
        Field::new("status", DataType::UInt8, false),
        Field::new("lang", DataType::Utf8, false),
        Field::new("size", DataType::UInt64, false),
        Field::new("ord", DataType::Int32, false),
        Field::new("start_line", DataType::UInt32, false),
        Field::new("end_line", DataType::UInt32, false),
        Field::new("symbol", DataType::Utf8, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("hash", DataType::FixedSizeBinary(16), false),
        Field::new("encoding", DataType::Utf8, false),
    ]))
}

/// Rows for `blobs` (in order) and each key's (first row, row count).
pub fn to_batch(blobs: &[BlobChunks]) -> Result<(RecordBatch, Vec<(Key, u32, u32)>)> {
    let rows: usize = blobs.iter().map(|b| b.chunks.len().max(1)).sum();
    let mut key = FixedSizeBinaryBuilder::with_capacity(rows, 33);
    let mut status = Vec::with_capacity(rows);
    let mut lang = StringBuilder::with_capacity(rows, rows * 6);
    let mut size = Vec::with_capacity(rows);
    let mut ord = Vec::with_capacity(rows);
    let mut start = Vec::with_capacity(rows);
    let mut end = Vec::with_capacity(rows);
    let mut symbol = StringBuilder::new();
    let mut kind = StringBuilder::new();
    let mut text = StringBuilder::new();
    let mut hash = FixedSizeBinaryBuilder::with_capacity(rows, 16);
    let mut encoding = StringBuilder::new();
    let mut keys = Vec::with_capacity(blobs.len());
    let mut row = 0u32;
    for b in blobs {
        let n = b.chunks.len().max(1) as u32;
        keys.push((b.key, row, n));
        row += n;
        if b.chunks.is_empty() {
            key.append_value(b.key.0)?;
            status.push(b.status as u8);
            lang.append_value(b.lang.name());
            size.push(b.size);
            ord.push(-1);
            start.push(0);
            end.push(0);
            symbol.append_value("");
            kind.append_value("");
            text.append_value("");
            hash.append_value([0u8; 16])?;
            encoding.append_value(&b.encoding);
            continue;
        }
        for (i, c) in b.chunks.iter().enumerate() {
            key.append_value(b.key.0)?;
            status.push(b.status as u8);
            lang.append_value(b.lang.name());
            size.push(b.size);
            ord.push(i as i32);
            start.push(c.start_line);
            end.push(c.end_line);
            symbol.append_value(&c.symbol);
            kind.append_value(&c.kind);
            text.append_value(&c.text);
            hash.append_value(b.hashes[i])?;
            encoding.append_value(&b.encoding);
        }
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(key.finish()),
        Arc::new(UInt8Array::from(status)),
        Arc::new(lang.finish()),
        Arc::new(UInt64Array::from(size)),
        Arc::new(Int32Array::from(ord)),
        Arc::new(UInt32Array::from(start)),
        Arc::new(UInt32Array::from(end)),
        Arc::new(symbol.finish()),
        Arc::new(kind.finish()),
        Arc::new(text.finish()),
        Arc::new(hash.finish()),
        Arc::new(encoding.finish()),
    ];
    Ok((RecordBatch::try_new(schema(), cols)?, keys))
}

/// Typed column access to a decoded chunks segment.
pub struct ChunkColumns<'a> {
    pub key: &'a FixedSizeBinaryArray,
    pub status: &'a UInt8Array,
    pub lang: &'a StringArray,
    pub size: &'a UInt64Array,
    pub ord: &'a Int32Array,
    pub start_line: &'a UInt32Array,
    pub end_line: &'a UInt32Array,
    pub symbol: &'a StringArray,
    pub kind: &'a StringArray,
    pub text: &'a StringArray,
    pub hash: &'a FixedSizeBinaryArray,
    pub encoding: &'a StringArray,
}

impl<'a> ChunkColumns<'a> {
    pub fn new(batch: &'a RecordBatch) -> Result<Self> {
        Ok(ChunkColumns {
            key: col(batch, "key")?,
            status: col(batch, "status")?,
            lang: col(batch, "lang")?,
            size: col(batch, "size")?,
            ord: col(batch, "ord")?,
            start_line: col(batch, "start_line")?,
            end_line: col(batch, "end_line")?,
            symbol: col(batch, "symbol")?,
            kind: col(batch, "kind")?,
            text: col(batch, "text")?,
            hash: col(batch, "hash")?,
            encoding: col(batch, "encoding")?,
        })
    }

    pub fn status(&self, row: usize) -> Status {
        Status::from_u8(self.status.value(row))
    }

    pub fn lang(&self, row: usize) -> Lang {
        Lang::from_name(self.lang.value(row)).unwrap_or(Lang::Text)
    }

    pub fn hash(&self, row: usize) -> [u8; 16] {
        self.hash.value(row).try_into().unwrap_or([0; 16])
    }

    pub fn is_chunk(&self, row: usize) -> bool {
        self.ord.value(row) >= 0
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
    fn batch_roundtrip_through_parquet() {
        let chunk = |s: &str, a, b| Chunk {
            symbol: s.into(),
            kind: "function".into(),
            start_line: a,
            end_line: b,
            text: format!("fn {s}() {{}}"),
        };
        let blobs = vec![
            BlobChunks {
                key: Key::blob(&[1; 20], 9),
                status: Status::Text,
                lang: Lang::Rust,
                size: 30,
                chunks: vec![chunk("a", 1, 2), chunk("b", 3, 4)],
                hashes: vec![[1; 16], [2; 16]],
                encoding: String::new(),
            },
            BlobChunks {
                key: Key::blob(&[2; 20], 255),
                status: Status::Binary,
                lang: Lang::Text,
                size: 9,
                chunks: vec![],
                hashes: vec![],
                encoding: "Big5".into(),
            },
        ];
        let (batch, keys) = to_batch(&blobs).unwrap();
        assert_eq!(keys, vec![(blobs[0].key, 0, 2), (blobs[1].key, 2, 1)]);
        let bytes = crate::store::encode_segment("chunks", "fp", &batch).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.parquet");
        std::fs::write(&path, bytes).unwrap();
        let (back, layer, fp) = crate::store::read_segment_with_meta(&path).unwrap();
        assert_eq!((layer.as_str(), fp.as_str()), ("chunks", "fp"));
        let c = ChunkColumns::new(&back).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c.symbol.value(1), "b");
        assert_eq!(c.end_line.value(1), 4);
        assert_eq!(c.status(2), Status::Binary);
        assert!(!c.is_chunk(2));
        assert_eq!(c.hash(0), [1; 16]);
        assert_eq!(c.lang(0), Lang::Rust);
        assert_eq!((c.encoding.value(0), c.encoding.value(2)), ("", "Big5"));
    }
}
