//! The chunk table of a view: every chunk's file, lines, symbol, kind and text in one
//! memory-mapped file with fixed-size records, so a warm search touches only the rows it
//! returns.

use crate::fsutil;
use crate::lang::Lang;
use crate::store::Key;
use anyhow::{Context, Result, bail};
use memmap2::Mmap;
use std::path::Path;

const MAGIC: &[u8; 8] = b"LYNXVT01";
const FILE_REC: usize = 56;
const CHUNK_REC: usize = 64;

/// Builder: append files and chunks, then `write`.
#[derive(Default)]
pub struct TableBuilder {
    files: Vec<u8>,
    chunks: Vec<u8>,
    heap: Vec<u8>,
    kinds: Vec<String>,
    n_files: u32,
    n_chunks: u32,
}

pub struct ChunkIn<'a> {
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: &'a str,
    pub kind: &'a str,
    pub text: &'a str,
    pub hash: [u8; 16],
}

impl TableBuilder {
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
        r.extend_from_slice(&[0; 8]);
        self.n_chunks += 1;
        self.n_chunks - 1
    }

    pub fn len(&self) -> u32 {
        self.n_chunks
    }

    pub fn is_empty(&self) -> bool {
        self.n_chunks == 0
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        let mut out = Vec::with_capacity(64 + self.files.len() + self.chunks.len() + self.heap.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.n_files.to_le_bytes());
        out.extend_from_slice(&self.n_chunks.to_le_bytes());
        out.extend_from_slice(&(self.kinds.len() as u32).to_le_bytes());
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
        if map.len() < 20 || &map[..8] != MAGIC {
            bail!("{} is not a Lynx chunk table", path.display());
        }
        let n_files = u32_at(&map, 8) as usize;
        let n_chunks = u32_at(&map, 12) as usize;
        let n_kinds = u32_at(&map, 16) as usize;
        let mut at = 20;
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
        Ok(ChunkTable { map, n_files, n_chunks, kinds, files_at, chunks_at, heap_at })
    }

    pub fn len(&self) -> usize {
        self.n_chunks
    }

    pub fn is_empty(&self) -> bool {
        self.n_chunks == 0
    }

    pub fn file_count(&self) -> usize {
        self.n_files
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

    /// The file index of a chunk, without touching the heap.
    pub fn chunk_file(&self, ord: u32) -> u32 {
        u32_at(&self.map, self.chunks_at + ord as usize * CHUNK_REC)
    }

    pub fn chunk_hash(&self, ord: u32) -> [u8; 16] {
        let at = self.chunks_at + ord as usize * CHUNK_REC + 40;
        self.map[at..at + 16].try_into().unwrap()
    }

    pub fn chunk(&self, ord: u32) -> ChunkRef<'_> {
        let at = self.chunks_at + ord as usize * CHUNK_REC;
        let m = &self.map;
        let file = u32_at(m, at);
        let kind = u16::from_le_bytes(m[at + 12..at + 14].try_into().unwrap()) as usize;
        ChunkRef {
            ord,
            file,
            path: self.file_path(file),
            lang: self.file_lang(file),
            start_line: u32_at(m, at + 4),
            end_line: u32_at(m, at + 8),
            symbol: self.heap_str(u64_at(m, at + 16), u32_at(m, at + 24)),
            kind: self.kinds.get(kind).map(String::as_str).unwrap_or(""),
            text: self.heap_str(u64_at(m, at + 32), u32_at(m, at + 28)),
            hash: self.chunk_hash(ord),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = ChunkRef<'_>> {
        (0..self.n_chunks as u32).map(|i| self.chunk(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let mut b = TableBuilder::default();
        let f0 = b.file("src/a.rs", Lang::Rust, Key::blob(&[1; 20], 9));
        let f1 = b.file("b.py", Lang::Python, Key::blob(&[2; 20], 1));
        b.chunk(f0, &ChunkIn { start_line: 1, end_line: 3, symbol: "a", kind: "function", text: "fn a() {}", hash: [5; 16] });
        b.chunk(f1, &ChunkIn { start_line: 4, end_line: 9, symbol: "B.c", kind: "method", text: "def c(): pass", hash: [6; 16] });
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.bin");
        b.write(&p).unwrap();
        let t = ChunkTable::open(&p).unwrap();
        assert_eq!((t.len(), t.file_count()), (2, 2));
        let c = t.chunk(1);
        assert_eq!((c.path, c.symbol, c.kind, c.text, c.start_line, c.end_line), ("b.py", "B.c", "method", "def c(): pass", 4, 9));
        assert_eq!(c.lang, Lang::Python);
        assert_eq!(t.chunk(0).hash, [5; 16]);
        assert_eq!(t.file_key(0), Key::blob(&[1; 20], 9));
    }
}
