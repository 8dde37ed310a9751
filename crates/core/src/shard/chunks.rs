//! Chunk shards: a chunks segment's rows as fixed-size records plus string heaps, so a view
//! reads the lines, symbol and text of any row without decoding Parquet. The text heap is the
//! bulk of the file: it is stored as zstd blocks of about 32 KiB of consecutive texts (a
//! search reads ten texts, so it decompresses ten small blocks; whole, the heap would be three
//! to four times the size), each block decompressed once when a text in it is first read, and
//! every text is checked against its chunk's content hash when read; a mismatch (or a block
//! that does not decompress) marks the shard damaged (it is removed and rebuilt) and is
//! reported as an error, never shown.

use super::{File, Invalid, Kind, Writer};
use crate::lang::Lang;
use crate::layer::chunks::{ChunkColumns, Status};
use anyhow::Result;

crate::error::errors! {
    /// A chunk shard that cannot be built within its 32-bit offsets.
    pub enum ShardError: Failure {
        TooLarge { what: String } => "{what} is too large for a chunk shard",
    }
}
use arrow::array::RecordBatch;
use std::path::Path;

/// status u8, lang u8, kind u16, ord i32, start u32, end u32, size u64, symbol (off u32,
/// len u32) in the symbol heap, text (off u32, len u32) in the text heap, hash [u8; 16].
const REC: usize = 56;

/// Sections: records, kinds, symbol heap, compressed text blocks (lazy), block table. A
/// record's text (offset, length) is into the uncompressed heap; the block table holds each
/// block's uncompressed start then its compressed start, as u32 pairs, and a last pair with
/// both totals.
const RECORDS: usize = 0;
const KINDS: usize = 1;
const SYMBOLS: usize = 2;
const TEXTS: usize = 3;
const BLOCKS: usize = 4;
/// Uncompressed bytes per text block (a longer text is a block of its own).
const BLOCK: usize = 32 * 1024;
/// zstd level of the text blocks: the fastest, as the shard is written on the indexing path.
const LEVEL: i32 = 1;

pub struct ChunkShard {
    file: File,
    rows: usize,
    kinds: Vec<String>,
    damaged: std::sync::atomic::AtomicBool,
    /// (uncompressed start, compressed start) of each text block, and the totals last.
    blocks: Vec<(u32, u32)>,
    /// Each text block, decompressed when a text in it is first read.
    loaded: Vec<std::sync::OnceLock<Option<Box<[u8]>>>>,
}

impl std::fmt::Debug for ChunkShard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChunkShard({})", self.file.segment)
    }
}

pub use crate::error::Damaged;

/// A row's fixed fields.
#[derive(Debug, Clone, Copy)]
pub struct Meta {
    pub status: Status,
    pub lang: Lang,
    pub ord: i32,
    pub size: u64,
    pub hash: [u8; 16],
}

/// One row of a chunk shard.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub status: Status,
    pub lang: Lang,
    pub kind: &'a str,
    /// The chunk's ordinal within its blob; -1 for the one row of a blob without chunks.
    pub ord: i32,
    pub start_line: u32,
    pub end_line: u32,
    /// Size of the whole blob.
    pub size: u64,
    pub symbol: &'a str,
    pub hash: [u8; 16],
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The string a record points at in `heap` (offsets checked against the heap at open).
fn heap_str<'h>(heap: &'h [u8], rec: &[u8], at: usize) -> Option<&'h str> {
    let (off, len) = (u32_at(rec, at) as usize, u32_at(rec, at + 4) as usize);
    std::str::from_utf8(heap.get(off..off + len)?).ok()
}

impl ChunkShard {
    pub fn open(path: &Path, segment: &str) -> Result<ChunkShard> {
        let file = File::open(path, Kind::Chunks, segment)?;
        let recs = file.bytes(RECORDS)?;
        let kinds_raw = file.bytes(KINDS)?;
        let symbols_len = file.bytes(SYMBOLS)?.len() as u64;
        let bad = |why: &str| -> anyhow::Error { Invalid(format!("chunk shard {}: {why}", path.display())).into() };
        let table = file.u32s(BLOCKS)?;
        let blocks: Vec<(u32, u32)> = table.chunks_exact(2).map(|p| (p[0], p[1])).collect();
        // Starts never decrease, begin at 0 and end at the heaps' ends: every block range below
        // is in bounds.
        let ordered = table.len() % 2 == 0
            && blocks.first() == Some(&(0, 0))
            && blocks.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
            && blocks.last().is_some_and(|l| l.1 as usize == file.bytes(TEXTS).map_or(0, <[u8]>::len));
        if !ordered {
            return Err(bad("text block table out of order or out of bounds"));
        }
        let texts_len = blocks.last().map_or(0, |l| l.0 as u64);
        if recs.len() % REC != 0 {
            return Err(bad("record table has a partial record"));
        }
        let mut kinds = Vec::new();
        let mut at = 0;
        while at < kinds_raw.len() {
            let len = kinds_raw
                .get(at..at + 2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
                .ok_or_else(|| bad("kinds table"))?;
            let s = kinds_raw.get(at + 2..at + 2 + len).ok_or_else(|| bad("kinds table"))?;
            kinds.push(std::str::from_utf8(s).map_err(|_| bad("kind is not UTF-8"))?.to_string());
            at += 2 + len;
        }
        let rows = recs.len() / REC;
        // Every reference into the heap and the kinds table is checked once here, so the
        // accessors below cannot go out of bounds.
        for r in 0..rows {
            let rec = &recs[r * REC..(r + 1) * REC];
            if u16::from_le_bytes([rec[2], rec[3]]) as usize >= kinds.len().max(1) && !kinds.is_empty() {
                return Err(bad("kind index out of range"));
            }
            for (at, heap_len) in [(24, symbols_len), (32, texts_len)] {
                let (off, len) = (u32_at(rec, at) as u64, u32_at(rec, at + 4) as u64);
                if off + len > heap_len {
                    return Err(bad("string out of bounds"));
                }
            }
            // A text lies within one block.
            let (off, len) = (u32_at(rec, 32), u32_at(rec, 36));
            let b = blocks.partition_point(|&(u, _)| u <= off).saturating_sub(1);
            if len > 0 && blocks.get(b + 1).is_none_or(|next| off + len > next.0) {
                return Err(bad("text spans text blocks"));
            }
        }
        let loaded = (0..blocks.len().saturating_sub(1)).map(|_| std::sync::OnceLock::new()).collect();
        Ok(ChunkShard { file, rows, kinds, damaged: Default::default(), blocks, loaded })
    }

    /// The segment the shard was derived from.
    pub fn segment(&self) -> &str {
        &self.file.segment
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Row `i` (callers pass rows from the catalog; an out-of-range row is an error).
    pub fn row(&self, i: usize) -> Result<Row<'_>> {
        if i >= self.rows {
            return Err(Invalid(format!("row {i} is past the end of chunk shard {}", self.file.segment)).into());
        }
        Ok(self.row_unchecked(i))
    }

    /// Checks every text against its content hash (the whole-file check `doctor` runs; a search
    /// checks only the texts it reads).
    pub fn verify_texts(&self) -> bool {
        (0..self.rows).all(|i| self.checked_text(i).is_some())
    }

    /// Row `i`'s text if it matches its content hash (`ord < 0`: the one row of a blob
    /// without chunks, which has no text to check).
    fn checked_text(&self, i: usize) -> Option<&str> {
        let recs = self.file.bytes(RECORDS).ok()?;
        let rec = &recs[i * REC..(i + 1) * REC];
        let ord = i32::from_le_bytes(rec[4..8].try_into().unwrap());
        let (off, len) = (u32_at(rec, 32) as usize, u32_at(rec, 36) as usize);
        let hash: [u8; 16] = rec[40..56].try_into().unwrap();
        if len == 0 {
            return (ord < 0 || crate::layer::chunk_hash("") == hash).then_some("");
        }
        let b = self.blocks.partition_point(|&(u, _)| u as usize <= off).saturating_sub(1);
        let block = self.block(b)?;
        let start = off - self.blocks[b].0 as usize;
        let text = std::str::from_utf8(block.get(start..start + len)?).ok()?;
        (ord < 0 || crate::layer::chunk_hash(text) == hash).then_some(text)
    }

    /// Text block `b`, decompressed (once); None when it does not decompress to its size.
    fn block(&self, b: usize) -> Option<&[u8]> {
        let (cell, (u0, c0), (u1, c1)) = (self.loaded.get(b)?, self.blocks[b], *self.blocks.get(b + 1)?);
        cell.get_or_init(|| {
            let packed = self.file.lazy(TEXTS, c0 as usize..c1 as usize)?;
            let size = (u1 - u0) as usize;
            let plain = zstd::bulk::decompress(&packed, size).ok()?;
            (plain.len() == size).then(|| plain.into_boxed_slice())
        })
        .as_deref()
    }

    /// Whether a text of this shard failed its check (the shard must be rebuilt).
    pub fn is_damaged(&self) -> bool {
        self.damaged.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn mark_damaged(&self) {
        if !self.damaged.swap(true, std::sync::atomic::Ordering::Relaxed) {
            tracing::error!(
                "chunk shard {} is damaged (a text does not match its hash); removed, it is rebuilt from its segment",
                self.file.path.display()
            );
            let _ = std::fs::remove_file(&self.file.path);
        }
    }

    /// Row `i`'s fixed fields (no strings decoded), known to be in range.
    pub fn meta(&self, i: usize) -> Meta {
        let recs = self.file.bytes(RECORDS).unwrap_or(&[]);
        let rec = &recs[i * REC..(i + 1) * REC];
        Meta {
            status: Status::from_u8(rec[0]),
            lang: Lang::from_code(rec[1]).unwrap_or(Lang::Text),
            ord: i32::from_le_bytes(rec[4..8].try_into().unwrap()),
            size: u64::from_le_bytes(rec[16..24].try_into().unwrap()),
            hash: rec[40..56].try_into().unwrap(),
        }
    }

    /// Row `i`, known to be in range (its text is read apart, with `text`).
    pub fn row_unchecked(&self, i: usize) -> Row<'_> {
        let recs = self.file.bytes(RECORDS).unwrap_or(&[]);
        let symbols = self.file.bytes(SYMBOLS).unwrap_or(&[]);
        let rec = &recs[i * REC..(i + 1) * REC];
        Row {
            status: Status::from_u8(rec[0]),
            lang: Lang::from_code(rec[1]).unwrap_or(Lang::Text),
            kind: self.kinds.get(u16::from_le_bytes([rec[2], rec[3]]) as usize).map(String::as_str).unwrap_or(""),
            ord: i32::from_le_bytes(rec[4..8].try_into().unwrap()),
            start_line: u32_at(rec, 8),
            end_line: u32_at(rec, 12),
            size: u64::from_le_bytes(rec[16..24].try_into().unwrap()),
            symbol: heap_str(symbols, rec, 24).unwrap_or(""),
            hash: rec[40..56].try_into().unwrap(),
        }
    }

    /// Row `i`'s text (in range), checked against its content hash. A damaged text is never
    /// shown: it marks the shard damaged and reads as the error that says so.
    pub fn text(&self, i: usize) -> Result<&str, Damaged> {
        self.checked_text(i).ok_or_else(|| {
            self.mark_damaged();
            Damaged { shard: self.file.path.display().to_string() }
        })
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

/// Writes the shard of a chunks segment from its decoded rows.
pub fn write(lynx_root: &Path, name: &str, batch: &RecordBatch) -> Result<()> {
    let c = ChunkColumns::new(batch)?;
    let n = c.len();
    let mut recs = Vec::with_capacity(n * REC);
    let mut symbols: Vec<u8> = Vec::new();
    let mut texts: Vec<u8> = Vec::new();
    let mut kinds: Vec<String> = Vec::new();
    // Where each text block starts in the uncompressed heap: texts never straddle two.
    let mut block_starts: Vec<usize> = vec![0];
    let put = |heap: &mut Vec<u8>, s: &str| -> Result<(u32, u32)> {
        let off = u32::try_from(heap.len()).map_err(|_| ShardError::TooLarge { what: format!("segment {name}") })?;
        heap.extend_from_slice(s.as_bytes());
        Ok((off, s.len() as u32))
    };
    for r in 0..n {
        let kind = c.kind.value(r);
        let k = match kinds.iter().position(|x| x == kind) {
            Some(i) => i,
            None => {
                kinds.push(kind.to_string());
                kinds.len() - 1
            }
        } as u16;
        recs.push(c.status.value(r));
        recs.push(c.lang(r) as u8);
        recs.extend_from_slice(&k.to_le_bytes());
        recs.extend_from_slice(&c.ord.value(r).to_le_bytes());
        recs.extend_from_slice(&c.start_line.value(r).to_le_bytes());
        recs.extend_from_slice(&c.end_line.value(r).to_le_bytes());
        recs.extend_from_slice(&c.size.value(r).to_le_bytes());
        let (so, sl) = put(&mut symbols, c.symbol.value(r))?;
        let text = c.text.value(r);
        if texts.len() - block_starts.last().unwrap() + text.len() > BLOCK
            && texts.len() > *block_starts.last().unwrap()
        {
            block_starts.push(texts.len());
        }
        let (to, tl) = put(&mut texts, text)?;
        for v in [so, sl, to, tl] {
            recs.extend_from_slice(&v.to_le_bytes());
        }
        recs.extend_from_slice(&c.hash(r));
    }
    let mut kinds_raw = Vec::new();
    for k in &kinds {
        kinds_raw.extend_from_slice(&(k.len() as u16).to_le_bytes());
        kinds_raw.extend_from_slice(k.as_bytes());
    }
    let mut w = Writer::new(Kind::Chunks, name);
    w.section(recs);
    w.section(kinds_raw);
    w.section(symbols);
    let (packed, table) = pack_texts(&texts, &block_starts)?;
    w.section_lazy(packed);
    w.section_u32(&table);
    w.write(lynx_root)?;
    Ok(())
}

/// The text heap as zstd blocks starting at `starts`, and the block table (see `BLOCKS`).
fn pack_texts(texts: &[u8], starts: &[usize]) -> Result<(Vec<u8>, Vec<u32>)> {
    use rayon::prelude::*;
    let mut bounds: Vec<usize> = starts.to_vec();
    bounds.push(texts.len());
    bounds.dedup();
    let blocks: Vec<Vec<u8>> = bounds
        .par_windows(2)
        .map(|w| zstd::bulk::compress(&texts[w[0]..w[1]], LEVEL))
        .collect::<std::io::Result<_>>()?;
    let mut packed = Vec::with_capacity(blocks.iter().map(Vec::len).sum());
    let mut table = Vec::with_capacity(bounds.len() * 2);
    for (b, block) in blocks.iter().enumerate() {
        table.extend([bounds[b] as u32, packed.len() as u32]);
        packed.extend_from_slice(block);
    }
    let total = u32::try_from(packed.len()).map_err(|_| ShardError::TooLarge { what: "the text heap".into() })?;
    table.extend([texts.len() as u32, total]);
    Ok((packed, table))
}

/// Stored facts about a processed blob.
#[derive(Debug, Clone, Copy)]
pub struct BlobSummary {
    pub status: Status,
    pub size: u64,
    pub lang: Lang,
}

impl BlobSummary {
    pub fn skip_reason(&self, max_size: u64) -> Option<crate::repo::SkipReason> {
        use crate::repo::SkipReason;
        match self.status {
            Status::Binary => Some(SkipReason::Binary),
            Status::LfsPointer => Some(SkipReason::LfsPointer),
            Status::Text if self.size > max_size => Some(SkipReason::TooLarge),
            Status::Text => None,
        }
    }
}

/// Status, size and language of the `keys` that have chunk objects, from their shards.
pub fn summaries(
    store: &crate::store::Store,
    shards: &super::Registry,
    cat: &crate::store::Catalogs,
    keys: &[crate::store::Key],
) -> Result<std::collections::HashMap<crate::store::Key, BlobSummary>> {
    let mut out = std::collections::HashMap::with_capacity(keys.len());
    // Held for the whole loop: the registry keeps a shard open only while someone holds it.
    let mut open: std::collections::HashMap<(usize, u32), std::sync::Arc<ChunkShard>> = Default::default();
    for k in keys {
        let Some(f) = cat.get(k) else { continue };
        let shard = match open.get(&(f.dir, f.loc.seg)) {
            Some(s) => s.clone(),
            None => {
                let s = shards.chunks(store, f.dir, cat.segment_name(f))?;
                open.insert((f.dir, f.loc.seg), s.clone());
                s
            }
        };
        if f.loc.row as usize >= shard.rows() {
            return Err(
                crate::store::catalog::CatalogError::PastEnd { segment: cat.segment_name(f).to_string() }.into()
            );
        }
        let r = shard.meta(f.loc.row as usize);
        out.insert(*k, BlobSummary { status: r.status, size: r.size, lang: r.lang });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::Chunk;
    use crate::layer::chunks::{BlobChunks, to_batch};

    fn blob(n: u8, texts: &[String]) -> BlobChunks {
        let chunks: Vec<Chunk> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| Chunk {
                symbol: format!("s{n}_{i}"),
                kind: "function".into(),
                start_line: i as u32 + 1,
                end_line: i as u32 + 1,
                text: t.clone(),
            })
            .collect();
        let hashes = texts.iter().map(|t| crate::layer::chunk_hash(t)).collect();
        BlobChunks {
            key: crate::store::Key::blob(&[n; 20], 0),
            status: Status::Text,
            lang: Lang::Python,
            size: 10,
            chunks,
            hashes,
            encoding: String::new(),
        }
    }

    #[test]
    fn texts_read_back_from_blocks_and_damage_is_reported() {
        // Texts below, at and far above a block, and a blob without chunks.
        let texts: Vec<String> =
            (0..300).map(|i| format!("def f_{i}(x):\n    return x * {i}\n").repeat(1 + (i * 37) % 90)).collect();
        let big = vec!["y = 1\n".repeat(30_000)];
        let blobs = vec![blob(1, &texts), blob(2, &big), blob(3, &[])];
        let (batch, _) = to_batch(&blobs).unwrap();
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "ab/cd", &batch).unwrap();
        let path = super::super::shard_path(dir.path(), Kind::Chunks, "ab/cd");
        let raw: usize = texts.iter().chain(&big).map(String::len).sum();
        let on_disk = std::fs::metadata(&path).unwrap().len() as usize;
        assert!(on_disk * 3 < raw, "{on_disk} bytes on disk for {raw} bytes of text");
        let shard = ChunkShard::open(&path, "ab/cd").unwrap();
        assert!(shard.blocks.len() > 4, "{} blocks", shard.blocks.len());
        let want: Vec<&str> = texts.iter().chain(&big).map(String::as_str).chain([""]).collect();
        assert_eq!(shard.rows(), want.len());
        for (i, w) in want.iter().enumerate().rev() {
            assert_eq!(shard.text(i), Ok(*w), "row {i}");
        }
        assert!(shard.verify_texts() && !shard.is_damaged());
        // A flipped byte in the compressed heap: the texts of that block are refused, the
        // shard is damaged, the others still read.
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.windows(4).position(|w| w == [0x28, 0xb5, 0x2f, 0xfd]).unwrap() + 40;
        bytes[at] ^= 0x55;
        std::fs::write(&path, &bytes).unwrap();
        let shard = ChunkShard::open(&path, "ab/cd").unwrap();
        // Each read of a damaged text gives the error naming the shard, never the text (nor
        // an empty one); the texts of intact blocks still read.
        let read: Vec<Result<&str, Damaged>> = (0..want.len()).map(|i| shard.text(i)).collect();
        let mine = Damaged { shard: path.display().to_string() };
        let refused = read.iter().filter(|r| r.is_err()).count();
        assert!(refused > 0 && shard.is_damaged(), "{refused} texts refused");
        assert!(
            read.iter().zip(&want).all(|(r, w)| r == &Ok(*w) || r == &Err(mine.clone())),
            "a damaged text was shown"
        );
        assert_eq!(read[want.len() - 2], Ok(big[0].as_str()));
        assert!(!path.exists(), "the damaged shard is removed");
        let again = read.iter().position(Result::is_err).unwrap();
        assert_eq!(shard.text(again), Err(mine.clone()), "read again, the text is refused again");
        assert!(mine.to_string().contains(&mine.shard) && mine.to_string().contains("run it again"));
    }
}
