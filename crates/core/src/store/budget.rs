//! What a segment may cost to decode, checked before the Parquet decoder allocates anything.
//!
//! A segment's bytes can come from anywhere (a pack, a remote, an alternate, a damaged disk).
//! Compression and dictionary encoding let a small file describe an enormous one: a 50 KB file
//! whose one dictionary value, repeated by every row, materialises to gigabytes; a page header
//! that claims two gigabytes, which the decoder would reserve before checking anything. So every
//! segment is walked here first, from its footer and page headers (read with a small Thrift
//! compact-protocol reader, never trusting a length it has not bounded): every page's sizes must
//! lie inside its column chunk and under [`MAX_PAGE_BYTES`], dictionary pages are opened (at
//! most that many bytes) to learn their longest value, and the bytes the columns can expand to
//! — values, offsets, repeated dictionary entries — must stay under [`MAX_EXPANDED_BYTES`].
//! A segment over any bound is refused with the reason; nothing has been decoded by then.

use anyhow::Result;
use bytes::Bytes;
use parquet::basic::{Compression, Type as PhysicalType};
use parquet::file::metadata::ParquetMetaDataReader;

/// A segment file's size limit: Lynx writes a segment per indexing batch (`index.batch_mb` of
/// source, at most 512 MiB), so nothing it writes comes near.
pub const MAX_SEGMENT_BYTES: u64 = 1 << 30;
/// One page, decompressed. Lynx's writer cuts pages at about 1 MiB.
pub const MAX_PAGE_BYTES: usize = 64 << 20;
/// Everything a segment's columns may expand to in memory.
pub const MAX_EXPANDED_BYTES: u64 = 2 << 30;
const MAX_ROW_GROUPS: usize = 4096;
const MAX_COLUMNS: usize = 64;

crate::error::errors! {
    /// Why a segment's bytes are refused before anything is decoded: a forged, damaged or
    /// foreign file (its reader re-fetches or indexes locally; a local one is quarantined).
    pub enum Refused: Failure {
        TooLarge { bytes: usize, limit: u64 } => "the file is {bytes} bytes, over the {limit}-byte limit of a segment",
        NotParquet { why: String } => "not a readable Parquet file ({why})",
        TooMany { count: usize, what: &'static str, limit: usize } => "{count} {what} (at most {limit})",
        Codec { codec: String } => "a column compressed with {codec} (Lynx writes zstd)",
        Bomb { what: &'static str, limit: u64 } =>
            "{what} would expand to more than {limit} bytes in memory (a decompression bomb?)",
        PageTooLarge { bytes: usize, limit: usize } => "a page of {bytes} bytes decompressed (at most {limit})",
        Encoding { encoding: i32 } => "a page in encoding {encoding} (Lynx writes plain, dictionary and RLE pages only)",
        Dictionary { why: String } => "a dictionary page does not decompress within its stated size ({why})",
        Malformed { what: &'static str } => "{what}",
        Header { what: &'static str } => "a page header {what}",
        FieldType { ty: u8 } => "a page header with an unknown field type {ty}",
    }
}

/// Checks that decoding `bytes` stays within the bounds above.
pub fn check(bytes: &Bytes) -> Result<()> {
    if bytes.len() as u64 > MAX_SEGMENT_BYTES {
        return Err(Refused::TooLarge { bytes: bytes.len(), limit: MAX_SEGMENT_BYTES }.into());
    }
    let meta =
        ParquetMetaDataReader::new().parse_and_finish(bytes).map_err(|e| Refused::NotParquet { why: e.to_string() })?;
    if meta.num_row_groups() > MAX_ROW_GROUPS {
        return Err(Refused::TooMany { count: meta.num_row_groups(), what: "row groups", limit: MAX_ROW_GROUPS }.into());
    }
    let mut expanded = 0u64;
    for rg in meta.row_groups() {
        if rg.columns().len() > MAX_COLUMNS {
            return Err(Refused::TooMany { count: rg.columns().len(), what: "columns", limit: MAX_COLUMNS }.into());
        }
        for col in rg.columns() {
            let codec = col.compression();
            if !matches!(codec, Compression::UNCOMPRESSED | Compression::ZSTD(_)) {
                return Err(Refused::Codec { codec: format!("{codec:?}") }.into());
            }
            let start = col.dictionary_page_offset().filter(|&o| o > 0).unwrap_or(col.data_page_offset());
            let len = col.compressed_size();
            let end = start.checked_add(len);
            match end {
                Some(end) if start >= 4 && len >= 0 && end as u64 <= bytes.len() as u64 => {}
                _ => return Err(Refused::Malformed { what: "a column chunk lies outside the file" }.into()),
            }
            let width = match col.column_type() {
                PhysicalType::FIXED_LEN_BYTE_ARRAY => col.column_descr().type_length().max(0) as u64,
                PhysicalType::BYTE_ARRAY => 0,
                _ => 8,
            };
            let is_bytes = col.column_type() == PhysicalType::BYTE_ARRAY;
            expanded = expanded.saturating_add(chunk_expansion(
                &bytes[start as usize..(start + len) as usize],
                codec,
                width,
                is_bytes,
            )?);
            if expanded > MAX_EXPANDED_BYTES {
                return Err(Refused::Bomb { what: "its columns", limit: MAX_EXPANDED_BYTES }.into());
            }
        }
    }
    Ok(())
}

/// The bytes one column chunk's pages can expand to, every page header checked.
fn chunk_expansion(chunk: &[u8], codec: Compression, width: u64, is_bytes: bool) -> Result<u64> {
    let mut at = 0usize;
    let mut total = 0u64;
    // Longest dictionary value (plus its offset), once the dictionary page is read.
    let mut dict_value: Option<u64> = None;
    while at < chunk.len() {
        let (h, header_len) = read_page_header(&chunk[at..])?;
        at += header_len;
        if h.compressed < 0 || h.uncompressed < 0 || h.num_values < 0 {
            return Err(Refused::Malformed { what: "a page header with negative sizes" }.into());
        }
        let (compressed, uncompressed) = (h.compressed as usize, h.uncompressed as usize);
        if compressed > chunk.len() - at {
            return Err(Refused::Malformed { what: "a page runs past its column chunk" }.into());
        }
        if uncompressed > MAX_PAGE_BYTES {
            return Err(Refused::PageTooLarge { bytes: uncompressed, limit: MAX_PAGE_BYTES }.into());
        }
        let data = &chunk[at..at + compressed];
        at += compressed;
        let values = h.num_values as u64;
        // Only the encodings Lynx's writer uses reach a decoder (PLAIN, PLAIN_DICTIONARY, RLE,
        // RLE_DICTIONARY): the others have decoders a hostile page can make panic.
        if matches!(h.kind, 0 | 2 | 3) && !matches!(h.encoding, 0 | 2 | 3 | 8) {
            return Err(Refused::Encoding { encoding: h.encoding }.into());
        }
        match h.kind {
            // Dictionary page.
            2 => {
                let longest = if is_bytes { longest_plain_value(data, codec, uncompressed)? } else { width.max(8) };
                dict_value = Some(longest + 4);
                total = total.saturating_add(uncompressed as u64);
            }
            // Data pages (v1, v2).
            0 | 3 => {
                let per_value = match (h.encoding, dict_value) {
                    // Dictionary indices: each value becomes a copy of an entry.
                    (2 | 8, Some(v)) => v,
                    (2 | 8, None) => {
                        return Err(
                            Refused::Malformed { what: "a dictionary-encoded page without a dictionary" }.into()
                        );
                    }
                    _ if is_bytes => 4,
                    _ => width.max(1),
                };
                total = total
                    .saturating_add(uncompressed as u64)
                    .saturating_add(values.saturating_mul(per_value))
                    .saturating_add(values.saturating_mul(4));
            }
            // Index pages and anything else carry no values.
            _ => {}
        }
        if total > MAX_EXPANDED_BYTES {
            return Err(Refused::Bomb { what: "a column", limit: MAX_EXPANDED_BYTES }.into());
        }
    }
    Ok(total)
}

/// The longest value of a plain-encoded byte-array dictionary page.
fn longest_plain_value(data: &[u8], codec: Compression, uncompressed: usize) -> Result<u64> {
    let plain: std::borrow::Cow<[u8]> = match codec {
        Compression::UNCOMPRESSED => std::borrow::Cow::Borrowed(data),
        _ => std::borrow::Cow::Owned(
            zstd::bulk::decompress(data, uncompressed).map_err(|e| Refused::Dictionary { why: e.to_string() })?,
        ),
    };
    let (mut at, mut longest) = (0usize, 0u64);
    while at + 4 <= plain.len() {
        let n = u32::from_le_bytes(plain[at..at + 4].try_into().expect("four bytes")) as usize;
        at += 4;
        if n > plain.len() - at {
            return Err(Refused::Malformed { what: "a dictionary value runs past its page" }.into());
        }
        longest = longest.max(n as u64);
        at += n;
    }
    Ok(longest)
}

/// What the checks need of a page header.
#[derive(Debug, Default)]
struct PageHeader {
    /// 0 data, 1 index, 2 dictionary, 3 data v2.
    kind: i32,
    uncompressed: i32,
    compressed: i32,
    num_values: i32,
    encoding: i32,
}

/// Reads a Thrift compact-protocol `PageHeader`; returns it and its length in bytes.
fn read_page_header(buf: &[u8]) -> Result<(PageHeader, usize)> {
    let mut r = Compact { buf, at: 0 };
    let mut h = PageHeader { kind: -1, uncompressed: -1, compressed: -1, ..Default::default() };
    r.read_struct(0, &mut |r, id, ty| {
        match (id, ty) {
            (1, 5) => h.kind = r.i32()?,
            (2, 5) => h.uncompressed = r.i32()?,
            (3, 5) => h.compressed = r.i32()?,
            // DataPageHeader / DictionaryPageHeader: num_values 1, encoding 2.
            (5 | 7, 12) => r.read_struct(1, &mut |r, id, ty| {
                match (id, ty) {
                    (1, 5) => h.num_values = r.i32()?,
                    (2, 5) => h.encoding = r.i32()?,
                    _ => r.skip(ty, 1)?,
                }
                Ok(())
            })?,
            // DataPageHeaderV2: num_values 1, encoding 4.
            (8, 12) => r.read_struct(1, &mut |r, id, ty| {
                match (id, ty) {
                    (1, 5) => h.num_values = r.i32()?,
                    (4, 5) => h.encoding = r.i32()?,
                    _ => r.skip(ty, 1)?,
                }
                Ok(())
            })?,
            _ => r.skip(ty, 0)?,
        }
        Ok(())
    })?;
    if h.kind < 0 || h.uncompressed < 0 || h.compressed < 0 {
        return Err(Refused::Header { what: "lacks its type or sizes" }.into());
    }
    Ok((h, r.at))
}

/// A reader of Thrift's compact protocol over a byte slice: every read is bounds-checked and
/// nesting is limited, so a hostile header fails instead of allocating or recursing.
struct Compact<'a> {
    buf: &'a [u8],
    at: usize,
}

const MAX_NESTING: usize = 16;

impl Compact<'_> {
    fn byte(&mut self) -> Result<u8> {
        let b = *self.buf.get(self.at).ok_or(Refused::Header { what: "is truncated" })?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err(Refused::Header { what: "holds an overlong number" }.into());
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Refused::Header { what: "holds an overlong number" }.into())
    }

    fn zigzag(&mut self) -> Result<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32> {
        i32::try_from(self.zigzag()?).map_err(|_| Refused::Header { what: "holds a number out of range" }.into())
    }

    fn advance(&mut self, n: u64) -> Result<()> {
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.buf.len() - self.at)
            .ok_or(Refused::Header { what: "is truncated" })?;
        self.at += n;
        Ok(())
    }

    /// Reads the fields of a struct, calling `field(reader, id, type)` for each.
    fn read_struct(&mut self, depth: usize, field: &mut dyn FnMut(&mut Self, i16, u8) -> Result<()>) -> Result<()> {
        if depth > MAX_NESTING {
            return Err(Refused::Header { what: "is nested too deeply" }.into());
        }
        let mut last: i16 = 0;
        loop {
            let b = self.byte()?;
            if b == 0 {
                return Ok(());
            }
            let ty = b & 0x0f;
            let delta = b >> 4;
            let id = if delta == 0 {
                i16::try_from(self.zigzag()?).map_err(|_| Refused::Header { what: "holds a bad field id" })?
            } else {
                last.wrapping_add(i16::from(delta))
            };
            last = id;
            field(self, id, ty)?;
        }
    }

    /// Skips one value of compact type `ty`.
    fn skip(&mut self, ty: u8, depth: usize) -> Result<()> {
        if depth > MAX_NESTING {
            return Err(Refused::Header { what: "is nested too deeply" }.into());
        }
        match ty {
            // Booleans carried in the field header.
            1 | 2 => Ok(()),
            3 => self.advance(1),
            4..=6 => self.varint().map(drop),
            7 => self.advance(8),
            8 => {
                let n = self.varint()?;
                self.advance(n)
            }
            9 | 10 => {
                let h = self.byte()?;
                let n = if h >> 4 == 15 { self.varint()? } else { u64::from(h >> 4) };
                let elem = h & 0x0f;
                if n > self.buf.len() as u64 {
                    return Err(Refused::Header { what: "holds a list longer than the header" }.into());
                }
                for _ in 0..n {
                    // A list of booleans holds one byte per element.
                    if elem == 1 || elem == 2 { self.advance(1)? } else { self.skip(elem, depth + 1)? }
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                if n > self.buf.len() as u64 {
                    return Err(Refused::Header { what: "holds a map longer than the header" }.into());
                }
                let kv = self.byte()?;
                for _ in 0..n {
                    self.skip(kv >> 4, depth + 1)?;
                    self.skip(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            12 => self.read_struct(depth + 1, &mut |r, _, ty| r.skip(ty, depth + 1)),
            13 => self.advance(16),
            _ => Err(Refused::FieldType { ty }.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, ArrayRef, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    fn segment(values: Vec<String>) -> Bytes {
        let schema = Arc::new(Schema::new(vec![Field::new("text", DataType::Utf8, false)]));
        let col: ArrayRef = Arc::new(StringArray::from(values));
        let batch = arrow::array::RecordBatch::try_new(schema, vec![col]).unwrap();
        crate::store::encode_segment("chunks", "test", &batch).unwrap().into()
    }

    #[test]
    fn ordinary_segments_pass() {
        let values: Vec<String> = (0..5000).map(|i| format!("fn f{i}() {{ return {i}; }}\n")).collect();
        check(&segment(values)).unwrap();
    }

    #[test]
    fn a_repeated_dictionary_value_is_refused_before_decoding() {
        // One 512 KiB value repeated by every row: 8 GiB once decoded as plain strings, a
        // small file (written from a dictionary array, so this test never holds 8 GiB).
        let keys = arrow::array::Int32Array::from(vec![0; 16 * 1024]);
        let values = StringArray::from(vec!["x".repeat(512 << 10)]);
        let dict =
            arrow::array::DictionaryArray::<arrow::datatypes::Int32Type>::try_new(keys, Arc::new(values)).unwrap();
        // (A column the writer keeps a dictionary for: Lynx writes `text` without one, an
        // attacker's file need not.)
        let schema = Arc::new(Schema::new(vec![Field::new("body", dict.data_type().clone(), false)]));
        let batch = arrow::array::RecordBatch::try_new(schema, vec![Arc::new(dict) as ArrayRef]).unwrap();
        let bytes: Bytes = crate::store::encode_segment("chunks", "test", &batch).unwrap().into();
        assert!(bytes.len() < 4 << 20, "the bomb is small on disk: {}", bytes.len());
        let e = check(&bytes).unwrap_err().to_string();
        assert!(e.contains("expand"), "{e}");
    }

    #[test]
    fn garbage_and_truncation_are_errors() {
        let good = segment(vec!["a".into(), "b".into()]);
        for cut in [0, 4, good.len() / 2, good.len() - 9] {
            assert!(check(&good.slice(..cut)).is_err());
        }
        let e = check(&Bytes::from_static(b"PAR1 not at all a parquet file PAR1")).unwrap_err();
        // A refusal is typed, so a caller can tell it from an I/O failure, through any context.
        let e = e.context("segment ab/cd is refused");
        assert!(matches!(crate::error::find::<Refused>(&e), Some(Refused::NotParquet { .. })), "{e:#}");
    }
}
