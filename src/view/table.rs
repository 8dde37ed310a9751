//! The chunk table of a view: every chunk's file, lines, symbol, kind, text and token counts
//! in one memory-mapped file with fixed-size records, so a warm search touches only the rows
//! it returns. A table derived from a previous view keeps that view's ordinals (so its BM25
//! documents and dense rows stay valid) and marks what left the view as dead.

use crate::fsutil;
use crate::lang::Lang;
use crate::store::Key;
use anyhow::{Context, Result, bail};
use memmap2::Mmap;
use std::path::Path;

const MAGIC: &[u8; 8] = b"LYNXVT02";
const FILE_REC: usize = 56;
const CHUNK_REC: usize = 64;
/// File index of a dead chunk (its file left the view).
const DEAD: u32 = u32::MAX;
/// Fixed header: magic, counts, live counts, token totals.
const HEADER: usize = 64;

/// Token counts of a chunk's three BM25 fields (text, symbol, path).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub content: u32,
    pub symbol: u16,
    pub path: u16,
}

/// Builder: append files and chunks (or start from a previous table), then `write`.
#[derive(Default)]
pub struct TableBuilder {
    files: Vec<u8>,
    chunks: Vec<u8>,
    heap: Vec<u8>,
    kinds: Vec<String>,
    n_files: u32,
    n_chunks: u32,
    live_files: u32,
    live_chunks: u32,
    totals: [u64; 3],
}

pub struct ChunkIn<'a> {
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: &'a str,
    pub kind: &'a str,
    pub text: &'a str,
    pub hash: [u8; 16],
    pub tokens: Tokens,
}

fn put_u32(v: &mut [u8], at: usize, x: u32) {
    v[at..at + 4].copy_from_slice(&x.to_le_bytes());
}

impl TableBuilder {
    /// Starts from `base`, keeping its ordinals; files for which `keep` is false (and their
    /// chunks) are marked dead.
    pub fn from_base(base: &ChunkTable, keep: impl Fn(u32) -> bool) -> TableBuilder {
        let m = &base.map;
        let mut b = TableBuilder {
            files: m[base.files_at..base.chunks_at].to_vec(),
            chunks: m[base.chunks_at..base.heap_at].to_vec(),
            heap: m[base.heap_at..].to_vec(),
            kinds: base.kinds.clone(),
            n_files: base.n_files as u32,
            n_chunks: base.n_chunks as u32,
            ..Default::default()
        };
        let live_file: Vec<bool> = (0..base.n_files as u32).map(|f| base.is_file_live(f) && keep(f)).collect();
        for (f, live) in live_file.iter().enumerate() {
            if *live {
                b.live_files += 1;
            } else {
                b.files[f * FILE_REC + 13] = 1;
            }
        }
        for ord in 0..base.n_chunks as u32 {
            let file = base.chunk_file(ord);
            if file != DEAD && live_file[file as usize] {
                b.live_chunks += 1;
                let t = base.tokens(ord);
                b.totals[0] += t.content as u64;
                b.totals[1] += t.symbol as u64;
                b.totals[2] += t.path as u64;
            } else {
                put_u32(&mut b.chunks, ord as usize * CHUNK_REC, DEAD);
            }
        }
        b
    }

    fn put(&mut self, s: &str) -> (u64, u32) {
        let off = self.heap.len() as u64;
        self.heap.extend_from_slice(s.as_bytes());
        (off, s.len() as u32)
    }

    /// Adds a file; returns its index.
    pub fn file(&mut self, path: &str, lang: Lang, key: Key) -> u32 {
        let (off, len) = self.put(path);
        self.files.extend_from_slice(&off.to_le_bytes());
        self.files.extend_from_slice(&len.to_le_bytes());
        self.files.push(lang as u8);
        self.files.extend_from_slice(&[0; 3]);
        self.files.extend_from_slice(&key.0);
        self.files.extend_from_slice(&[0; 7]);
        self.n_files += 1;
        self.live_files += 1;
        self.n_files - 1
    }

    /// Adds a chunk of `file`; returns its ordinal.
    pub fn chunk(&mut self, file: u32, c: &ChunkIn) -> u32 {
        let kind = match self.kinds.iter().position(|k| k == c.kind) {
            Some(i) => i,
            None => {
                self.kinds.push(c.kind.to_string());
                self.kinds.len() - 1
            }
        } as u16;
        let (soff, slen) = self.put(c.symbol);
        let (toff, tlen) = self.put(c.text);
        let r = &mut self.chunks;
        r.extend_from_slice(&file.to_le_bytes());
        r.extend_from_slice(&c.start_line.to_le_bytes());
        r.extend_from_slice(&c.end_line.to_le_bytes());
        r.extend_from_slice(&kind.to_le_bytes());
        r.extend_from_slice(&[0; 2]);
        r.extend_from_slice(&soff.to_le_bytes());
        r.extend_from_slice(&slen.to_le_bytes());
        r.extend_from_slice(&tlen.to_le_bytes());
        r.extend_from_slice(&toff.to_le_bytes());
        r.extend_from_slice(&c.hash);
        r.extend_from_slice(&c.tokens.content.to_le_bytes());
        r.extend_from_slice(&c.tokens.symbol.to_le_bytes());
        r.extend_from_slice(&c.tokens.path.to_le_bytes());
        self.n_chunks += 1;
        self.live_chunks += 1;
        self.totals[0] += c.tokens.content as u64;
        self.totals[1] += c.tokens.symbol as u64;
        self.totals[2] += c.tokens.path as u64;
        self.n_chunks - 1
    }

    /// Ordinals so far (dead ones included).
    pub fn len(&self) -> u32 {
        self.n_chunks
    }

    pub fn is_empty(&self) -> bool {
        self.n_chunks == 0
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        let mut out = Vec::with_capacity(HEADER + 256 + self.files.len() + self.chunks.len() + self.heap.len());
        out.extend_from_slice(MAGIC);
        for v in [self.n_files, self.n_chunks, self.live_files, self.live_chunks, self.kinds.len() as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&[0; 4]);
        for t in self.totals {
            out.extend_from_slice(&t.to_le_bytes());
        }
        out.resize(HEADER, 0);
        for k in &self.kinds {
            out.extend_from_slice(&(k.len() as u16).to_le_bytes());
            out.extend_from_slice(k.as_bytes());
        }
        // Align the record tables to 8 bytes.
        while out.len() % 8 != 0 {
            out.push(0);
        }
        out.extend_from_slice(&self.files);
        out.extend_from_slice(&self.chunks);
        out.extend_from_slice(&self.heap);
        fsutil::write_atomic(path, &out)
    }
}

/// A read-only chunk table.
pub struct ChunkTable {
    map: Mmap,
    n_files: usize,
    n_chunks: usize,
    live_files: usize,
    live_chunks: usize,
    /// Token totals of live chunks per field (text, symbol, path): BM25's average lengths.
    pub totals: [u64; 3],
    kinds: Vec<String>,
    files_at: usize,
    chunks_at: usize,
    heap_at: usize,
}

/// One chunk as stored in the table (borrowed).
#[derive(Debug, Clone, Copy)]
pub struct ChunkRef<'a> {
    pub ord: u32,
    pub file: u32,
    pub path: &'a str,
    pub lang: Lang,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: &'a str,
    pub kind: &'a str,
    pub text: &'a str,
    pub hash: [u8; 16],
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

impl ChunkTable {
    pub fn open(path: &Path) -> Result<ChunkTable> {
        let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        // SAFETY: view caches are written once (temp file + rename) and never modified.
        let map = unsafe { Mmap::map(&file)? };
        if map.len() < HEADER || &map[..8] != MAGIC {
            bail!("{} is not a Lynx chunk table (or an older format)", path.display());
        }
        let n_files = u32_at(&map, 8) as usize;
        let n_chunks = u32_at(&map, 12) as usize;
        let live_files = u32_at(&map, 16) as usize;
        let live_chunks = u32_at(&map, 20) as usize;
        let n_kinds = u32_at(&map, 24) as usize;
        let totals = [u64_at(&map, 32), u64_at(&map, 40), u64_at(&map, 48)];
        let mut at = HEADER;
        let mut kinds = Vec::with_capacity(n_kinds);
        for _ in 0..n_kinds {
            let len = u16::from_le_bytes(map[at..at + 2].try_into()?) as usize;
            kinds.push(String::from_utf8_lossy(&map[at + 2..at + 2 + len]).into_owned());
            at += 2 + len;
        }
        at = at.div_ceil(8) * 8;
        let files_at = at;
        let chunks_at = files_at + n_files * FILE_REC;
        let heap_at = chunks_at + n_chunks * CHUNK_REC;
        if heap_at > map.len() {
            bail!("{} is truncated", path.display());
        }
        Ok(ChunkTable { map, n_files, n_chunks, live_files, live_chunks, totals, kinds, files_at, chunks_at, heap_at })
    }

    /// Ordinals (dead ones included): the size of bitsets over chunks.
    pub fn len(&self) -> usize {
        self.n_chunks
    }

    pub fn is_empty(&self) -> bool {
        self.live_chunks == 0
    }

    pub fn live_len(&self) -> usize {
        self.live_chunks
    }

    /// Dead ordinals / all ordinals.
    pub fn dead_ratio(&self) -> f64 {
        if self.n_chunks == 0 { 0.0 } else { 1.0 - self.live_chunks as f64 / self.n_chunks as f64 }
    }

    pub fn is_live(&self, ord: u32) -> bool {
        self.chunk_file(ord) != DEAD
    }

    /// Live chunk ordinals.
    pub fn live(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.n_chunks as u32).filter(|&o| self.is_live(o))
    }

    /// File indices ever added (removed ones included).
    pub fn file_count(&self) -> usize {
        self.n_files
    }

    pub fn live_file_count(&self) -> usize {
        self.live_files
    }

    pub fn is_file_live(&self, file: u32) -> bool {
        self.map[self.files_at + file as usize * FILE_REC + 13] == 0
    }

    /// Live file indices.
    pub fn live_files(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.n_files as u32).filter(|&f| self.is_file_live(f))
    }

    fn heap_str(&self, off: u64, len: u32) -> &str {
        let s = self.heap_at + off as usize;
        std::str::from_utf8(&self.map[s..s + len as usize]).unwrap_or("")
    }

    pub fn file_path(&self, file: u32) -> &str {
        let at = self.files_at + file as usize * FILE_REC;
        self.heap_str(u64_at(&self.map, at), u32_at(&self.map, at + 8))
    }

    pub fn file_lang(&self, file: u32) -> Lang {
        let at = self.files_at + file as usize * FILE_REC;
        Lang::from_code(self.map[at + 12]).unwrap_or(Lang::Text)
    }

    pub fn file_key(&self, file: u32) -> Key {
        let at = self.files_at + file as usize * FILE_REC + 16;
        Key(self.map[at..at + 33].try_into().unwrap())
    }

    /// The file index of a chunk (DEAD for a dead chunk), without touching the heap.
    pub fn chunk_file(&self, ord: u32) -> u32 {
        u32_at(&self.map, self.chunks_at + ord as usize * CHUNK_REC)
    }

    pub fn chunk_hash(&self, ord: u32) -> [u8; 16] {
        let at = self.chunks_at + ord as usize * CHUNK_REC + 40;
        self.map[at..at + 16].try_into().unwrap()
    }

    pub fn tokens(&self, ord: u32) -> Tokens {
        let at = self.chunks_at + ord as usize * CHUNK_REC + 56;
        let m = &self.map;
        Tokens { content: u32_at(m, at), symbol: u16::from_le_bytes([m[at + 4], m[at + 5]]), path: u16::from_le_bytes([m[at + 6], m[at + 7]]) }
    }

    pub fn chunk(&self, ord: u32) -> ChunkRef<'_> {
        let at = self.chunks_at + ord as usize * CHUNK_REC;
        let m = &self.map;
        let file = u32_at(m, at);
        let kind = u16::from_le_bytes(m[at + 12..at + 14].try_into().unwrap()) as usize;
        let live = file != DEAD;
        ChunkRef {
            ord,
            file,
            path: if live { self.file_path(file) } else { "" },
            lang: if live { self.file_lang(file) } else { Lang::Text },
            start_line: u32_at(m, at + 4),
            end_line: u32_at(m, at + 8),
            symbol: self.heap_str(u64_at(m, at + 16), u32_at(m, at + 24)),
            kind: self.kinds.get(kind).map(String::as_str).unwrap_or(""),
            text: self.heap_str(u64_at(m, at + 32), u32_at(m, at + 28)),
            hash: self.chunk_hash(ord),
        }
    }

    /// Live chunks.
    pub fn iter(&self) -> impl Iterator<Item = ChunkRef<'_>> {
        self.live().map(|i| self.chunk(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ci<'a>(s: &'a str, text: &'a str, n: u32) -> ChunkIn<'a> {
        ChunkIn { start_line: 1, end_line: n, symbol: s, kind: "function", text, hash: [n as u8; 16], tokens: Tokens { content: n, symbol: 1, path: 2 } }
    }

    #[test]
    fn roundtrip_and_derivation_keep_ordinals() {
        let mut b = TableBuilder::default();
        let f0 = b.file("src/a.rs", Lang::Rust, Key::blob(&[1; 20], 9));
        let f1 = b.file("b.py", Lang::Python, Key::blob(&[2; 20], 1));
        b.chunk(f0, &ci("a", "fn a() {}", 3));
        b.chunk(f1, &ci("B.c", "def c(): pass", 5));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.bin");
        b.write(&p).unwrap();
        let t = ChunkTable::open(&p).unwrap();
        assert_eq!((t.len(), t.live_len(), t.file_count()), (2, 2, 2));
        let c = t.chunk(1);
        assert_eq!((c.path, c.symbol, c.kind, c.text, c.start_line, c.end_line), ("b.py", "B.c", "function", "def c(): pass", 1, 5));
        assert_eq!(t.totals, [8, 2, 4]);
        // Derive: drop b.py, add c.go; ordinals 0 and 1 keep their meaning.
        let mut d = TableBuilder::from_base(&t, |f| f != f1);
        let f2 = d.file("c.go", Lang::Go, Key::blob(&[3; 20], 8));
        let o = d.chunk(f2, &ci("C", "func C() {}", 7));
        assert_eq!(o, 2);
        let p2 = dir.path().join("t2.bin");
        d.write(&p2).unwrap();
        let t2 = ChunkTable::open(&p2).unwrap();
        assert_eq!((t2.len(), t2.live_len(), t2.live_file_count()), (3, 2, 2));
        assert!(t2.is_live(0) && !t2.is_live(1) && t2.is_live(2));
        assert_eq!(t2.chunk(0).path, "src/a.rs");
        assert_eq!(t2.chunk(2).path, "c.go");
        assert_eq!(t2.totals, [10, 2, 4]);
        assert_eq!(t2.live().collect::<Vec<_>>(), [0, 2]);
        assert!(!t2.is_file_live(f1));
    }
}
