//! The chunk table of a view: its files and, per chunk ordinal, where the chunk's row is in the
//! shared chunk and postings shards. Assembling it reads no segment and writes nothing: it costs
//! catalog lookups and shard opens, in proportion to the view's file list. Ordinals follow the
//! view's file order and each file's chunk order, so the same file list gives the same table
//! however and wherever it is assembled.

use crate::analyze;
use crate::lang::Lang;
use crate::layer;
use crate::layer::chunks::Status;
use crate::shard::Registry;
use crate::shard::chunks::ChunkShard;
use crate::shard::postings::PostingsShard;
use crate::store::{Found, Key, Store};
use anyhow::Result;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// No ordinal (a shard row outside the view).
pub const NONE: u32 = u32::MAX;

struct FileRec {
    /// The path, in `paths`.
    path: (u32, u32),
    key: Key,
    lang: Lang,
    /// Ordinals `first..first + count` are this file's chunks, in line order.
    first: u32,
    count: u32,
    /// The path's analysed terms: `term_ids[terms.0..terms.0 + terms.1]`.
    terms: (u32, u32),
}

#[derive(Clone, Copy)]
struct Loc {
    file: u32,
    cshard: u32,
    crow: u32,
}

/// Token counts of a chunk's three BM25 fields (text, symbol, path).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub content: u32,
    pub symbol: u32,
    pub path: u32,
}

pub struct ChunkTable {
    files: Vec<FileRec>,
    /// Every file path, back to back (one allocation, not one per file).
    paths: String,
    /// Path terms: ids into `terms`, per file in order.
    term_ids: Vec<u32>,
    terms: Vec<String>,
    locs: Vec<Loc>,
    tokens: Vec<Tokens>,
    chunk_shards: Vec<Arc<ChunkShard>>,
    pub(crate) lex_shards: Vec<Arc<PostingsShard>>,
    /// Per postings shard: row → the first ordinal holding it (NONE when outside the view).
    pub(crate) lex_ords: Vec<Vec<u32>>,
    /// Further ordinals holding the same row (identical blobs at several paths), chained.
    pub(crate) same_row: Vec<u32>,
    /// Token totals of the view's chunks per field (text, symbol, path): BM25's average lengths.
    pub totals: [u64; 3],
    by_path: OnceLock<HashMap<String, u32>>,
    /// Path term → its id in `terms`.
    term_at: rustc_hash::FxHashMap<String, u32>,
    /// Path field postings per term id: (file, occurrences in the path).
    path_index: OnceLock<Vec<Vec<(u32, u32)>>>,
}

/// One chunk of a view (borrowed from its shard).
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
    pub hash: [u8; 16],
    shard: &'a ChunkShard,
    row: u32,
}

impl<'a> ChunkRef<'a> {
    /// The chunk's text, checked against its content hash when read (ranking never reads it):
    /// a text that fails is refused with the error the answer reading it fails with.
    pub fn text(&self) -> Result<&'a str, crate::shard::chunks::Damaged> {
        self.shard.text(self.row as usize)
    }
}

/// What assembling found about the view's blobs.
#[derive(Debug, Default, Clone)]
pub struct Assembly {
    /// Files whose blobs have no chunk or lexical objects (not indexed yet, or never stored:
    /// over the size cap, unreadable).
    pub missing: usize,
    /// Their keys.
    pub missing_keys: Vec<Key>,
    /// Files left out for their content (binary, LFS pointer, over the size cap).
    pub skipped: usize,
}

impl ChunkTable {
    /// The keys among `keys` without chunk or lexical objects (catalog lookups only: what
    /// `assemble` would find missing, without opening a shard).
    pub fn missing(store: &Store, keys: impl IntoIterator<Item = Key>) -> Result<Vec<Key>> {
        let chunk_cat = store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
        let lex_cat = store.catalogs(layer::LEXICAL, &layer::lexical_fingerprint())?;
        Ok(keys.into_iter().filter(|k| chunk_cat.get(k).is_none() || lex_cat.get(k).is_none()).collect())
    }

    /// Assembles the table of `files` (path, key) from the shards of their segments. Blobs that
    /// are not text, or over `max_size`, are left out; so are blobs without objects.
    pub fn assemble<'a>(
        store: &Store,
        shards: &Registry,
        files: impl IntoIterator<Item = (&'a str, Key)>,
        max_size: u64,
    ) -> Result<(ChunkTable, Assembly)> {
        let chunk_cat = store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
        let lex_cat = store.catalogs(layer::LEXICAL, &layer::lexical_fingerprint())?;
        let mut t = ChunkTable {
            files: Vec::new(),
            paths: String::new(),
            term_ids: Vec::new(),
            terms: Vec::new(),
            term_at: Default::default(),
            locs: Vec::new(),
            tokens: Vec::new(),
            chunk_shards: Vec::new(),
            lex_shards: Vec::new(),
            lex_ords: Vec::new(),
            same_row: Vec::new(),
            totals: [0; 3],
            by_path: OnceLock::new(),
            path_index: OnceLock::new(),
        };
        let mut report = Assembly::default();
        // First the catalog lookups, so the tables below are allocated once, at their size.
        let mut found = Vec::new();
        let mut rows = 0usize;
        for (path, key) in files {
            match (chunk_cat.get(&key), lex_cat.get(&key)) {
                (Some(c), Some(l)) => {
                    rows += c.loc.count as usize;
                    found.push((path, key, c, l));
                }
                _ => {
                    report.missing += 1;
                    report.missing_keys.push(key);
                }
            }
        }
        t.locs.reserve_exact(rows);
        t.tokens.reserve_exact(rows);
        t.same_row.reserve_exact(rows);
        t.files.reserve_exact(found.len());
        let mut cshard_at: HashMap<(usize, u32), u32> = HashMap::new();
        let mut lshard_at: HashMap<(usize, u32), u32> = HashMap::new();
        // Paths share directories: each component is analysed once.
        let mut component_terms: rustc_hash::FxHashMap<&str, (u32, u32)> = Default::default();
        let mut component_ids: Vec<u32> = Vec::new();
        t.paths.reserve(found.iter().map(|f| f.0.len()).sum());
        for (path, key, c, l) in found {
            let ci = shard_index(&mut cshard_at, &mut t.chunk_shards, (c.dir, c.loc.seg), || {
                shards.chunks(store, c.dir, chunk_cat.segment_name(c))
            })?;
            let li = shard_index(&mut lshard_at, &mut t.lex_shards, (l.dir, l.loc.seg), || {
                shards.postings(store, l.dir, lex_cat.segment_name(l))
            })?;
            if t.lex_ords.len() < t.lex_shards.len() {
                t.lex_ords.push(vec![NONE; t.lex_shards[li as usize].rows()]);
            }
            let cs = &t.chunk_shards[ci as usize];
            let ls = &t.lex_shards[li as usize];
            if !rows_fit(c, cs.rows()) || !rows_fit(l, ls.rows()) || c.loc.count != l.loc.count {
                tracing::warn!(
                    "the catalog entry of {path} does not match its segments; run `git lynx doctor --repair`"
                );
                report.missing += 1;
                report.missing_keys.push(key);
                continue;
            }
            let head = cs.meta(c.loc.row as usize);
            if head.status != Status::Text || head.size > max_size {
                report.skipped += 1;
                continue;
            }
            let terms_start = t.term_ids.len() as u32;
            for component in path.split(['/', '.', '-', '\\']).filter(|c| !c.is_empty()) {
                let (at, n) = *component_terms.entry(component).or_insert_with(|| {
                    let at = component_ids.len() as u32;
                    analyze::tokenize(component, |w| {
                        let id = match t.term_at.get(w) {
                            Some(&id) => id,
                            None => {
                                let id = t.terms.len() as u32;
                                t.terms.push(w.to_string());
                                t.term_at.insert(w.to_string(), id);
                                id
                            }
                        };
                        component_ids.push(id);
                    });
                    (at, component_ids.len() as u32 - at)
                });
                t.term_ids.extend_from_slice(&component_ids[at as usize..(at + n) as usize]);
            }
            let path_len = t.term_ids.len() as u32 - terms_start;
            let file = t.files.len() as u32;
            let first = t.locs.len() as u32;
            for i in 0..c.loc.count {
                let crow = c.loc.row + i;
                if cs.meta(crow as usize).ord < 0 {
                    continue;
                }
                let lrow = (l.loc.row + i) as usize;
                let ord = t.locs.len() as u32;
                let (content, symbol) = ls.lengths(lrow);
                let tok = Tokens { content, symbol, path: path_len };
                t.totals[0] += tok.content as u64;
                t.totals[1] += tok.symbol as u64;
                t.totals[2] += tok.path as u64;
                t.tokens.push(tok);
                t.locs.push(Loc { file, cshard: ci, crow });
                t.same_row.push(NONE);
                let slot = &mut t.lex_ords[li as usize][lrow];
                if *slot == NONE {
                    *slot = ord;
                } else {
                    // Chain after the first holder of this row.
                    let mut at = *slot;
                    while t.same_row[at as usize] != NONE {
                        at = t.same_row[at as usize];
                    }
                    t.same_row[at as usize] = ord;
                }
            }
            let count = t.locs.len() as u32 - first;
            let path_at = (t.paths.len() as u32, path.len() as u32);
            t.paths.push_str(path);
            t.files.push(FileRec { path: path_at, key, lang: head.lang, first, count, terms: (terms_start, path_len) });
        }
        Ok((t, report))
    }

    /// Chunks in the view.
    pub fn len(&self) -> usize {
        self.locs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.locs.is_empty()
    }

    /// Every chunk ordinal.
    pub fn live(&self) -> std::ops::Range<u32> {
        0..self.locs.len() as u32
    }

    /// Whether a chunk shard this table reads turned out damaged (the table must be assembled
    /// again: the shard is rebuilt from its segment).
    pub fn is_damaged(&self) -> bool {
        self.chunk_shards.iter().any(|s| s.is_damaged())
    }

    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    pub fn live_files(&self) -> std::ops::Range<u32> {
        0..self.files.len() as u32
    }

    pub fn file_path(&self, file: u32) -> &str {
        let (at, len) = self.files[file as usize].path;
        &self.paths[at as usize..(at + len) as usize]
    }

    pub fn file_lang(&self, file: u32) -> Lang {
        self.files[file as usize].lang
    }

    pub fn file_key(&self, file: u32) -> Key {
        self.files[file as usize].key
    }

    /// The chunk ordinals of file index `file`, in line order.
    pub fn file_ords(&self, file: u32) -> std::ops::Range<u32> {
        let f = &self.files[file as usize];
        f.first..f.first + f.count
    }

    pub fn chunk_file(&self, ord: u32) -> u32 {
        self.locs[ord as usize].file
    }

    pub fn tokens(&self, ord: u32) -> Tokens {
        self.tokens[ord as usize]
    }

    pub fn chunk_hash(&self, ord: u32) -> [u8; 16] {
        let l = self.locs[ord as usize];
        self.chunk_shards[l.cshard as usize].meta(l.crow as usize).hash
    }

    pub fn chunk(&self, ord: u32) -> ChunkRef<'_> {
        let l = self.locs[ord as usize];
        let f = &self.files[l.file as usize];
        let shard = &self.chunk_shards[l.cshard as usize];
        let r = shard.row_unchecked(l.crow as usize);
        ChunkRef {
            ord,
            file: l.file,
            path: self.file_path(l.file),
            lang: f.lang,
            start_line: r.start_line,
            end_line: r.end_line,
            symbol: r.symbol,
            kind: r.kind,
            shard,
            row: l.crow,
            hash: r.hash,
        }
    }

    /// Every chunk, in ordinal order.
    pub fn iter(&self) -> impl Iterator<Item = ChunkRef<'_>> {
        self.live().map(|o| self.chunk(o))
    }

    /// Builds what the first question would build (the path lookup and the path field's
    /// postings), for a server that prepares views before they are asked.
    pub fn prepare(&self) {
        let _ = self.file_of("");
        let _ = self.path_postings("");
    }

    /// The file index of `path`.
    pub fn file_of(&self, path: &str) -> Option<u32> {
        self.by_path
            .get_or_init(|| (0..self.files.len() as u32).map(|i| (self.file_path(i).to_string(), i)).collect())
            .get(path)
            .copied()
    }

    /// Chunk ordinals of a file, in line order (empty when the file is not in the view).
    pub fn file_chunks(&self, path: &str) -> std::ops::Range<u32> {
        match self.file_of(path) {
            Some(f) => self.file_ords(f),
            None => 0..0,
        }
    }

    /// Files whose path holds `term`, with its number of occurrences.
    pub fn path_postings(&self, term: &str) -> &[(u32, u32)] {
        let index = self.path_index.get_or_init(|| {
            let mut by_id: Vec<Vec<(u32, u32)>> = vec![Vec::new(); self.terms.len()];
            for (i, f) in self.files.iter().enumerate() {
                for &id in &self.term_ids[f.terms.0 as usize..(f.terms.0 + f.terms.1) as usize] {
                    let e = &mut by_id[id as usize];
                    match e.last_mut() {
                        Some((file, n)) if *file == i as u32 => *n += 1,
                        _ => e.push((i as u32, 1)),
                    }
                }
            }
            by_id
        });
        match self.term_at.get(term) {
            Some(&id) => &index[id as usize],
            None => &[],
        }
    }

    /// A hash of the table's file paths in order: tables with the same one have the same files
    /// at the same indexes (whatever their contents).
    pub fn paths_key(&self) -> String {
        let mut h = blake3::Hasher::new();
        for f in &self.files {
            h.update(&f.path.1.to_le_bytes());
        }
        h.update(self.paths.as_bytes());
        h.finalize().to_hex()[..32].to_string()
    }

    /// Chunks per file (for statistics over files).
    pub fn file_chunk_count(&self, file: u32) -> u32 {
        self.files[file as usize].count
    }
}

fn rows_fit(f: Found, rows: usize) -> bool {
    (f.loc.row as u64 + f.loc.count as u64) <= rows as u64 && f.loc.count > 0
}

/// The index of a segment's shard in `list` (the segment named by its object directory and its
/// number in that directory's catalog), opening it on first use.
fn shard_index<T>(
    at: &mut HashMap<(usize, u32), u32>,
    list: &mut Vec<Arc<T>>,
    seg: (usize, u32),
    open: impl FnOnce() -> Result<Arc<T>>,
) -> Result<u32> {
    if let Some(&i) = at.get(&seg) {
        return Ok(i);
    }
    list.push(open()?);
    let i = (list.len() - 1) as u32;
    at.insert(seg, i);
    Ok(i)
}

/// A set of chunk ordinals (the candidates a path filter allows).
#[derive(Debug, Clone)]
pub struct Allowed {
    bits: Vec<u64>,
}

impl Allowed {
    pub fn new(n: usize) -> Allowed {
        Allowed { bits: vec![0; n.div_ceil(64)] }
    }

    pub fn insert(&mut self, o: u32) {
        if let Some(w) = self.bits.get_mut(o as usize / 64) {
            *w |= 1 << (o % 64);
        }
    }

    pub fn contains(&self, o: u32) -> bool {
        self.bits.get(o as usize / 64).is_some_and(|w| w & (1 << (o % 64)) != 0)
    }

    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }
}

/// Section numbers of a chunk table inside a kept view (`view::kept`), from its first one.
const T_FILES: usize = 0;
const T_KEYS: usize = 1;
const T_LANGS: usize = 2;
const T_PATHS: usize = 3;
const T_TERM_IDS: usize = 4;
const T_TERM_AT: usize = 5;
const T_TERMS: usize = 6;
const T_LOCS: usize = 7;
const T_TOKENS: usize = 8;
const T_LEX_ORDS: usize = 9;
const T_SAME_ROW: usize = 10;
/// Sections a table takes.
pub const SECTIONS: usize = 11;

impl ChunkTable {
    /// The segments whose chunk shards and postings shards the table reads, in the order its
    /// locations number them.
    pub fn segments(&self) -> (Vec<String>, Vec<String>) {
        (
            self.chunk_shards.iter().map(|s| s.segment().to_string()).collect(),
            self.lex_shards.iter().map(|s| s.segment().to_string()).collect(),
        )
    }

    /// Appends the table as `SECTIONS` sections (its shards are named apart, by `segments`).
    pub fn encode(&self, w: &mut crate::shard::Writer) {
        let mut files = Vec::with_capacity(self.files.len() * 6);
        let mut keys = Vec::with_capacity(self.files.len() * 33);
        let mut langs = Vec::with_capacity(self.files.len());
        for f in &self.files {
            files.extend_from_slice(&[f.path.0, f.path.1, f.first, f.count, f.terms.0, f.terms.1]);
            keys.extend_from_slice(&f.key.0);
            langs.push(f.lang as u8);
        }
        w.section_u32(&files);
        w.section(keys);
        w.section(langs);
        w.section(self.paths.as_bytes().to_vec());
        w.section_u32(&self.term_ids);
        let (at, heap) = string_table(&self.terms);
        w.section_u32(&at);
        w.section(heap);
        w.section_u32(&self.locs.iter().flat_map(|l| [l.file, l.cshard, l.crow]).collect::<Vec<_>>());
        w.section_u32(&self.tokens.iter().flat_map(|t| [t.content, t.symbol, t.path]).collect::<Vec<_>>());
        w.section_u32(&self.lex_ords.concat());
        w.section_u32(&self.same_row);
    }

    /// A table written by `encode`, over the shards `segments` named (opened again). Every
    /// number is checked against what it indexes, so a damaged or forged record is refused,
    /// never read out of bounds; a chain of identical rows must run forward, so it ends.
    pub fn decode(
        file: &crate::shard::File,
        at: usize,
        chunk_shards: Vec<Arc<ChunkShard>>,
        lex_shards: Vec<Arc<PostingsShard>>,
    ) -> Result<ChunkTable> {
        let bad = |why: &str| anyhow::anyhow!("kept view {}: {why}", file.path.display());
        let raw_files = file.u32s(at + T_FILES)?;
        let keys = file.bytes(at + T_KEYS)?;
        let langs = file.bytes(at + T_LANGS)?;
        let paths = std::str::from_utf8(file.bytes(at + T_PATHS)?).map_err(|_| bad("paths are not UTF-8"))?;
        let term_ids = file.u32s(at + T_TERM_IDS)?;
        let terms = strings(file.u32s(at + T_TERM_AT)?, file.bytes(at + T_TERMS)?).ok_or_else(|| bad("terms"))?;
        let raw_locs = file.u32s(at + T_LOCS)?;
        let raw_tokens = file.u32s(at + T_TOKENS)?;
        let lex_flat = file.u32s(at + T_LEX_ORDS)?;
        let same_row = file.u32s(at + T_SAME_ROW)?;
        let n = raw_files.len() / 6;
        let chunks = raw_locs.len() / 3;
        if raw_files.len() % 6 != 0 || keys.len() != n * 33 || langs.len() != n {
            return Err(bad("file tables disagree"));
        }
        if raw_locs.len() % 3 != 0 || raw_tokens.len() != raw_locs.len() || same_row.len() != chunks {
            return Err(bad("chunk tables disagree"));
        }
        let mut files = Vec::with_capacity(n);
        for (i, f) in raw_files.chunks_exact(6).enumerate() {
            let lang = Lang::from_code(langs[i]).ok_or_else(|| bad("unknown language"))?;
            let (p0, p1) = (f[0] as usize, f[0] as usize + f[1] as usize);
            if p1 > paths.len() || !paths.is_char_boundary(p0) || !paths.is_char_boundary(p1) {
                return Err(bad("a path is out of bounds"));
            }
            if f[2] as u64 + f[3] as u64 > chunks as u64 || f[4] as u64 + f[5] as u64 > term_ids.len() as u64 {
                return Err(bad("a file's chunks or terms are out of bounds"));
            }
            let key = Key(keys[i * 33..(i + 1) * 33].try_into().expect("33 bytes"));
            files.push(FileRec { path: (f[0], f[1]), key, lang, first: f[2], count: f[3], terms: (f[4], f[5]) });
        }
        if term_ids.iter().any(|&t| t as usize >= terms.len()) {
            return Err(bad("a path term is out of bounds"));
        }
        let mut locs = Vec::with_capacity(chunks);
        for l in raw_locs.chunks_exact(3) {
            let shard = chunk_shards.get(l[1] as usize).ok_or_else(|| bad("a chunk shard is out of bounds"))?;
            if l[0] as usize >= n || l[2] as usize >= shard.rows() {
                return Err(bad("a chunk location is out of bounds"));
            }
            locs.push(Loc { file: l[0], cshard: l[1], crow: l[2] });
        }
        let tokens: Vec<Tokens> =
            raw_tokens.chunks_exact(3).map(|t| Tokens { content: t[0], symbol: t[1], path: t[2] }).collect();
        let mut totals = [0u64; 3];
        for t in &tokens {
            totals[0] += t.content as u64;
            totals[1] += t.symbol as u64;
            totals[2] += t.path as u64;
        }
        if lex_shards.iter().map(|s| s.rows()).sum::<usize>() != lex_flat.len() {
            return Err(bad("postings rows do not match their shards"));
        }
        if lex_flat.iter().any(|&o| o != NONE && o as usize >= chunks) {
            return Err(bad("a postings row points outside the table"));
        }
        if same_row.iter().enumerate().any(|(i, &o)| o != NONE && (o as usize >= chunks || o as usize <= i)) {
            return Err(bad("a chain of identical rows is out of order"));
        }
        let mut lex_ords = Vec::with_capacity(lex_shards.len());
        let mut from = 0;
        for s in &lex_shards {
            lex_ords.push(lex_flat[from..from + s.rows()].to_vec());
            from += s.rows();
        }
        let term_at = terms.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        Ok(ChunkTable {
            files,
            paths: paths.to_string(),
            term_ids: term_ids.to_vec(),
            terms,
            locs,
            tokens,
            chunk_shards,
            lex_shards,
            lex_ords,
            same_row: same_row.to_vec(),
            totals,
            by_path: OnceLock::new(),
            term_at,
            path_index: OnceLock::new(),
        })
    }
}

/// Strings as offsets (one more than strings, from 0) into one heap.
pub fn string_table(list: &[String]) -> (Vec<u32>, Vec<u8>) {
    let mut at = Vec::with_capacity(list.len() + 1);
    let mut heap = Vec::with_capacity(list.iter().map(String::len).sum());
    at.push(0);
    for s in list {
        heap.extend_from_slice(s.as_bytes());
        at.push(heap.len() as u32);
    }
    (at, heap)
}

/// The strings of a `string_table`; None when its offsets or text do not hold together.
pub fn strings(at: &[u32], heap: &[u8]) -> Option<Vec<String>> {
    if at.first() != Some(&0) || *at.last()? as usize != heap.len() {
        return None;
    }
    at.windows(2)
        .map(|w| {
            let s = heap.get(w[0] as usize..w[1] as usize)?;
            std::str::from_utf8(s).ok().map(str::to_string)
        })
        .collect()
}
