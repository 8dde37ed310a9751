//! The lexical layer: per chunk, the analysed terms of its text (with frequencies) and of its
//! symbol, so that building a view's BM25 index never re-tokenises anything.

use crate::analyze;
use crate::layer::column as col;
use crate::store::Key;
use anyhow::{Context, Result};
use arrow::array::{
    Array, ArrayRef, FixedSizeBinaryArray, FixedSizeBinaryBuilder, Int32Array, ListArray, ListBuilder, RecordBatch,
    StringArray, StringBuilder, UInt32Array, UInt32Builder,
};
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

/// Analysed terms of one chunk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkTerms {
    /// Distinct content terms in first-seen order, with their frequencies.
    pub terms: Vec<(String, u32)>,
    /// Symbol terms (distinct).
    pub symbol: Vec<String>,
}

impl ChunkTerms {
    pub fn analyse(text: &str, symbol: &str) -> ChunkTerms {
        // Insertion-ordered counts: one allocation per distinct term.
        let mut counts: indexmap::IndexMap<String, u32, rustc_hash::FxBuildHasher> = Default::default();
        analyze::tokenize(text, |t| match counts.get_mut(t) {
            Some(n) => *n += 1,
            None => {
                counts.insert(t.to_string(), 1);
            }
        });
        let terms: Vec<(String, u32)> = counts.into_iter().collect();
        let mut symbol_terms: Vec<String> = Vec::new();
        analyze::tokenize(symbol, |t| {
            if !symbol_terms.iter().any(|s| s == t) {
                symbol_terms.push(t.to_string());
            }
        });
        ChunkTerms { terms, symbol: symbol_terms }
    }

    pub fn length(&self) -> u32 {
        self.terms.iter().map(|(_, n)| n).sum()
    }
}

/// One blob's lexical rows (one per chunk, in chunk order).
#[derive(Debug, Clone)]
pub struct BlobTerms {
    pub key: Key,
    pub chunks: Vec<ChunkTerms>,
}

pub fn schema() -> Arc<Schema> {
    let item =
        |name: &str, dt: DataType| Field::new(name, DataType::List(Arc::new(Field::new("item", dt, false))), false);
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::FixedSizeBinary(33), false),
        Field::new("ord", DataType::Int32, false),
        item("terms", DataType::Utf8),
        item("tfs", DataType::UInt32),
        item("symbol_terms", DataType::Utf8),
    ]))
}

pub fn to_batch(blobs: &[BlobTerms]) -> Result<(RecordBatch, Vec<(Key, u32, u32)>)> {
    let field = |dt: DataType| Arc::new(Field::new("item", dt, false));
    let mut key = FixedSizeBinaryBuilder::new(33);
    let mut ord = Vec::new();
    let mut terms = ListBuilder::new(StringBuilder::new()).with_field(field(DataType::Utf8));
    let mut tfs = ListBuilder::new(UInt32Builder::new()).with_field(field(DataType::UInt32));
    let mut sym = ListBuilder::new(StringBuilder::new()).with_field(field(DataType::Utf8));
    let mut keys = Vec::with_capacity(blobs.len());
    let mut row = 0u32;
    for b in blobs {
        // A blob without chunks keeps one empty row so it counts as processed.
        let n = b.chunks.len().max(1) as u32;
        keys.push((b.key, row, n));
        row += n;
        if b.chunks.is_empty() {
            key.append_value(b.key.0)?;
            ord.push(-1);
            terms.append(true);
            tfs.append(true);
            sym.append(true);
        }
        for (i, c) in b.chunks.iter().enumerate() {
            key.append_value(b.key.0)?;
            ord.push(i as i32);
            for (t, n) in &c.terms {
                terms.values().append_value(t);
                tfs.values().append_value(*n);
            }
            terms.append(true);
            tfs.append(true);
            for s in &c.symbol {
                sym.values().append_value(s);
            }
            sym.append(true);
        }
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(key.finish()),
        Arc::new(Int32Array::from(ord)),
        Arc::new(terms.finish()),
        Arc::new(tfs.finish()),
        Arc::new(sym.finish()),
    ];
    Ok((RecordBatch::try_new(schema(), cols)?, keys))
}

/// Typed access to a decoded lexical segment.
pub struct TermColumns<'a> {
    pub key: &'a FixedSizeBinaryArray,
    pub ord: &'a Int32Array,
    terms: &'a ListArray,
    terms_values: &'a StringArray,
    tfs_values: &'a UInt32Array,
    sym: &'a ListArray,
    sym_values: &'a StringArray,
}

impl<'a> TermColumns<'a> {
    pub fn new(batch: &'a RecordBatch) -> Result<Self> {
        let terms: &ListArray = col(batch, "terms")?;
        let tfs: &ListArray = col(batch, "tfs")?;
        let sym: &ListArray = col(batch, "symbol_terms")?;
        Ok(TermColumns {
            key: col(batch, "key")?,
            ord: col(batch, "ord")?,
            terms,
            terms_values: terms.values().as_any().downcast_ref().context("terms are not strings")?,
            tfs_values: tfs.values().as_any().downcast_ref().context("tfs are not u32")?,
            sym,
            sym_values: sym.values().as_any().downcast_ref().context("symbol terms are not strings")?,
        })
    }

    /// (term, frequency) pairs of a row.
    pub fn terms(&self, row: usize) -> impl Iterator<Item = (&'a str, u32)> + 'a {
        let offs = self.terms.value_offsets();
        let (s, e) = (offs[row] as usize, offs[row + 1] as usize);
        let (tv, fv) = (self.terms_values, self.tfs_values);
        (s..e).map(move |i| (tv.value(i), fv.value(i)))
    }

    pub fn symbol_terms(&self, row: usize) -> impl Iterator<Item = &'a str> + 'a {
        let offs = self.sym.value_offsets();
        let (s, e) = (offs[row] as usize, offs[row + 1] as usize);
        let sv = self.sym_values;
        (s..e).map(move |i| sv.value(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analyse_and_roundtrip() {
        let t = ChunkTerms::analyse("fn parseJson(s) { parseJson(s) }", "Parser.parseJson");
        assert_eq!(t.terms[0], ("fn".to_string(), 1));
        assert!(t.terms.contains(&("parsejson".to_string(), 2)));
        assert!(t.terms.contains(&("json".to_string(), 2)));
        assert_eq!(t.symbol, ["parser", "parsejson", "parse", "json"]);
        let blobs = vec![
            BlobTerms { key: Key::blob(&[7; 20], 1), chunks: vec![t.clone()] },
            BlobTerms { key: Key::blob(&[8; 20], 1), chunks: vec![] },
        ];
        let (batch, keys) = to_batch(&blobs).unwrap();
        assert_eq!(keys[1], (blobs[1].key, 1, 1));
        let c = TermColumns::new(&batch).unwrap();
        let back: Vec<(String, u32)> = c.terms(0).map(|(a, b)| (a.to_string(), b)).collect();
        assert_eq!(back, t.terms);
        assert_eq!(c.symbol_terms(0).collect::<Vec<_>>(), t.symbol);
        assert_eq!(c.terms(1).count(), 0);
    }
}
