//! The precise-graph layer: per blob, what a SCIP index (made by a real compiler-backed
//! indexer: scip-python, scip-typescript, rust-analyzer, scip-java…) says about that file —
//! the symbols it defines, calls, imports and references, and the types it implements. Keyed
//! like the graph-facts layer (blob id + language hint), so an index imported once serves every
//! revision holding the same blob; the symbols are joined across files when a view's graph is
//! built (`graph::precise`).

use crate::layer::column as col;
use crate::store::Key;
use anyhow::Result;
use arrow::array::{
    ArrayRef, FixedSizeBinaryArray, FixedSizeBinaryBuilder, RecordBatch, StringArray, UInt8Array, UInt32Array,
};
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

pub const SCIP: &str = "scip";
/// Bump when what a row holds changes.
const VERSION: u32 = 1;

pub fn fingerprint() -> String {
    crate::fsutil::short_hash(&[SCIP.as_bytes(), &VERSION.to_le_bytes()])
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occ {
    /// The file defines the symbol (`line`..=`end_line`: its whole definition when known).
    Def = 0,
    /// A reference followed by an argument list: a call (or a construction).
    Call = 1,
    /// A reference on an import statement.
    Import = 2,
    /// The symbol (`symbol`) implements or extends `other`.
    Implements = 4,
    /// The blob was in the index but had no occurrences (kept so it counts as precise).
    Empty = 255,
}

impl Occ {
    fn from_u8(v: u8) -> Option<Occ> {
        Some(match v {
            0 => Occ::Def,
            1 => Occ::Call,
            2 => Occ::Import,
            4 => Occ::Implements,
            255 => Occ::Empty,
            _ => return None,
        })
    }
}

/// One occurrence or relationship of a file. Lines are 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub occ: Occ,
    pub symbol: String,
    pub other: String,
    pub line: u32,
    pub end_line: u32,
}

/// What one SCIP document says about one blob.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreciseFacts {
    pub rows: Vec<Row>,
}

pub struct BlobRows {
    pub key: Key,
    pub facts: PreciseFacts,
}

pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::FixedSizeBinary(33), false),
        Field::new("occ", DataType::UInt8, false),
        Field::new("symbol", DataType::Utf8, false),
        Field::new("other", DataType::Utf8, false),
        Field::new("line", DataType::UInt32, false),
        Field::new("end_line", DataType::UInt32, false),
    ]))
}

pub fn to_batch(blobs: &[BlobRows]) -> Result<(RecordBatch, Vec<(Key, u32, u32)>)> {
    let mut key = FixedSizeBinaryBuilder::new(33);
    let (mut occ, mut symbol, mut other, mut line, mut end) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut keys = Vec::with_capacity(blobs.len());
    let empty = [Row { occ: Occ::Empty, symbol: String::new(), other: String::new(), line: 0, end_line: 0 }];
    for b in blobs {
        let start = occ.len() as u32;
        let rows: &[Row] = if b.facts.rows.is_empty() { &empty } else { &b.facts.rows };
        for r in rows {
            key.append_value(b.key.0)?;
            occ.push(r.occ as u8);
            symbol.push(r.symbol.as_str());
            other.push(r.other.as_str());
            line.push(r.line);
            end.push(r.end_line);
        }
        keys.push((b.key, start, occ.len() as u32 - start));
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(key.finish()),
        Arc::new(UInt8Array::from(occ)),
        Arc::new(StringArray::from(symbol)),
        Arc::new(StringArray::from(other)),
        Arc::new(UInt32Array::from(line)),
        Arc::new(UInt32Array::from(end)),
    ];
    Ok((RecordBatch::try_new(schema(), cols)?, keys))
}

/// The rows `row..row+count` of a decoded segment (one blob's).
pub fn read(batch: &RecordBatch, row: usize, count: usize) -> Result<PreciseFacts> {
    let _key: &FixedSizeBinaryArray = col(batch, "key")?;
    let occ: &UInt8Array = col(batch, "occ")?;
    let symbol: &StringArray = col(batch, "symbol")?;
    let other: &StringArray = col(batch, "other")?;
    let line: &UInt32Array = col(batch, "line")?;
    let end: &UInt32Array = col(batch, "end_line")?;
    if row + count > batch.num_rows() {
        anyhow::bail!("precise-graph rows {row}+{count} out of range");
    }
    let mut rows = Vec::with_capacity(count);
    for i in row..row + count {
        let kind = Occ::from_u8(occ.value(i))
            .ok_or_else(|| anyhow::anyhow!("unknown occurrence kind {} in a precise-graph segment", occ.value(i)))?;
        if kind == Occ::Empty {
            continue;
        }
        rows.push(Row {
            occ: kind,
            symbol: symbol.value(i).to_string(),
            other: other.value(i).to_string(),
            line: line.value(i),
            end_line: end.value(i),
        });
    }
    Ok(PreciseFacts { rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_keeps_rows_and_empty_blobs() {
        let a = PreciseFacts {
            rows: vec![
                Row {
                    occ: Occ::Def,
                    symbol: "s py demo 1 `m`/Store#".into(),
                    other: String::new(),
                    line: 1,
                    end_line: 9,
                },
                Row {
                    occ: Occ::Implements,
                    symbol: "s py demo 1 `m`/Cache#".into(),
                    other: "s py demo 1 `m`/Store#".into(),
                    line: 11,
                    end_line: 11,
                },
            ],
        };
        let blobs = vec![
            BlobRows { key: Key::blob(&[1; 20], 1), facts: a.clone() },
            BlobRows { key: Key::blob(&[2; 20], 1), facts: PreciseFacts::default() },
        ];
        let (batch, keys) = to_batch(&blobs).unwrap();
        assert_eq!(keys, vec![(blobs[0].key, 0, 2), (blobs[1].key, 2, 1)]);
        assert_eq!(read(&batch, 0, 2).unwrap(), a);
        assert_eq!(read(&batch, 2, 1).unwrap(), PreciseFacts::default());
        assert!(read(&batch, 2, 2).is_err());
    }
}
