//! Postings shards: a lexical segment's inverted index. For the chunk-text field and the symbol
//! field: a sorted term dictionary and, per term, the rows holding it (with the term's frequency
//! for text), delta- and varint-encoded; per row, its token counts. BM25 statistics are not
//! stored: they depend on which rows a view holds, so `search::bm25` computes them per view,
//! exactly.

use super::{File, Invalid, Kind, Writer};
use crate::layer::lexical::TermColumns;
use anyhow::Result;
use arrow::array::{Array, RecordBatch};
use std::path::Path;

pub struct PostingsShard {
    file: File,
    rows: usize,
}

/// Section numbers of one field's dictionary.
#[derive(Clone, Copy)]
struct Dict {
    term_offs: usize,
    terms: usize,
    post_offs: usize,
    postings: usize,
    /// Text postings carry a frequency after each row delta.
    with_tf: bool,
}

const CONTENT: Dict = Dict { term_offs: 1, terms: 2, post_offs: 3, postings: 4, with_tf: true };
const SYMBOL: Dict = Dict { term_offs: 5, terms: 6, post_offs: 7, postings: 8, with_tf: false };

impl PostingsShard {
    pub fn open(path: &Path, segment: &str) -> Result<PostingsShard> {
        let file = File::open(path, Kind::Postings, segment)?;
        let bad = |why: &str| -> anyhow::Error { Invalid(format!("postings shard {}: {why}", path.display())).into() };
        let stats = file.u32s(0)?;
        if stats.len() % 2 != 0 {
            return Err(bad("row statistics are incomplete"));
        }
        for d in [CONTENT, SYMBOL] {
            let to = file.u32s(d.term_offs)?;
            let terms = file.bytes(d.terms)?;
            let po = file.u32s(d.post_offs)?;
            let postings = file.bytes(d.postings)?;
            if to.is_empty() || to.len() != po.len() {
                return Err(bad("dictionary tables disagree"));
            }
            // Offsets must start at 0, never decrease and end at their arrays' ends: lookups
            // below then never slice out of bounds.
            let monotonic = |v: &[u32], end: usize| {
                v[0] == 0 && v.windows(2).all(|w| w[0] <= w[1]) && *v.last().unwrap() as usize == end
            };
            if !monotonic(to, terms.len()) || !monotonic(po, postings.len()) {
                return Err(bad("dictionary offsets out of order or out of bounds"));
            }
        }
        Ok(PostingsShard { rows: stats.len() / 2, file })
    }

    /// The segment the shard was derived from.
    pub fn segment(&self) -> &str {
        &self.file.segment
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Token counts of row `r`: (chunk text, symbol).
    pub fn lengths(&self, r: usize) -> (u32, u32) {
        let s = self.file.u32s(0).unwrap_or(&[]);
        match (s.get(2 * r), s.get(2 * r + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => (0, 0),
        }
    }

    /// The encoded postings of `term` (empty when absent).
    fn lookup(&self, d: Dict, term: &str) -> &[u8] {
        let (Ok(to), Ok(terms), Ok(po), Ok(postings)) = (
            self.file.u32s(d.term_offs),
            self.file.bytes(d.terms),
            self.file.u32s(d.post_offs),
            self.file.bytes(d.postings),
        ) else {
            return &[];
        };
        let n = to.len() - 1;
        let term_at = |i: usize| &terms[to[i] as usize..to[i + 1] as usize];
        let (mut lo, mut hi) = (0, n);
        let want = term.as_bytes();
        while lo < hi {
            let mid = (lo + hi) / 2;
            match term_at(mid).cmp(want) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return &postings[po[mid] as usize..po[mid + 1] as usize],
            }
        }
        &[]
    }

    /// Calls `f(row, frequency)` for every row whose chunk text holds `term`.
    pub fn content(&self, term: &str, mut f: impl FnMut(u32, u32)) {
        decode(self.lookup(CONTENT, term), CONTENT.with_tf, &mut f);
    }

    /// Whether `term` is in the text of a row `wanted` accepts (decoding stops at the first).
    pub fn content_any(&self, term: &str, mut wanted: impl FnMut(u32) -> bool) -> bool {
        let mut found = false;
        decode_while(self.lookup(CONTENT, term), CONTENT.with_tf, &mut |row, _| {
            found = wanted(row);
            !found
        });
        found
    }

    /// Calls `f(row, 1)` for every row whose symbol holds `term`.
    pub fn symbol(&self, term: &str, mut f: impl FnMut(u32, u32)) {
        decode(self.lookup(SYMBOL, term), SYMBOL.with_tf, &mut f);
    }

    pub fn bytes_on_disk(&self) -> usize {
        self.file.len()
    }
}

/// LEB128: 7 bits a byte, high bit set on all but the last.
fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*at`; None when truncated or too long (a damaged list ends there).
fn get_varint(b: &[u8], at: &mut usize) -> Option<u32> {
    let mut v: u32 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= ((byte & 0x7f) as u32).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn decode(b: &[u8], with_tf: bool, f: &mut impl FnMut(u32, u32)) {
    decode_while(b, with_tf, &mut |row, tf| {
        f(row, tf);
        true
    });
}

/// Decodes while `f` returns true.
fn decode_while(b: &[u8], with_tf: bool, f: &mut impl FnMut(u32, u32) -> bool) {
    let (mut at, mut row) = (0usize, 0u32);
    let mut first = true;
    while at < b.len() {
        let Some(delta) = get_varint(b, &mut at) else { return };
        row = if first { delta } else { row.saturating_add(delta) };
        first = false;
        let tf = if with_tf {
            match get_varint(b, &mut at) {
                Some(tf) => tf,
                None => return,
            }
        } else {
            1
        };
        if !f(row, tf) {
            return;
        }
    }
}

/// Builds the shard of segment `name` (in object directory `dir`) from the segment.
pub fn build(store: &crate::store::Store, dir: usize, name: &str) -> Result<()> {
    let batch = store.read_segment(dir, name)?;
    write(&store.root, name, &batch)
}

/// Writes the shard of a lexical segment from its decoded rows.
pub fn write(lynx_root: &Path, name: &str, batch: &RecordBatch) -> Result<()> {
    let c = TermColumns::new(batch)?;
    let n = c.key.len();
    let mut stats = Vec::with_capacity(n * 2);
    // Per term: its encoded postings and the last row written (for the deltas).
    let mut content: rustc_hash::FxHashMap<&str, (Vec<u8>, u32)> = Default::default();
    let mut symbol: rustc_hash::FxHashMap<&str, (Vec<u8>, u32)> = Default::default();
    let push = |p: &mut (Vec<u8>, u32), row: u32| {
        let delta = if p.0.is_empty() { row } else { row - p.1 };
        put_varint(&mut p.0, delta);
        p.1 = row;
    };
    for r in 0..n {
        let row = r as u32;
        let mut len = 0u32;
        for (t, tf) in c.terms(r) {
            len = len.saturating_add(tf);
            let p = content.entry(t).or_default();
            push(p, row);
            put_varint(&mut p.0, tf);
        }
        let mut slen = 0u32;
        for t in c.symbol_terms(r) {
            slen += 1;
            push(symbol.entry(t).or_default(), row);
        }
        stats.push(len);
        stats.push(slen);
    }
    let mut w = Writer::new(Kind::Postings, name);
    w.section_u32(&stats);
    for map in [content, symbol] {
        let mut terms: Vec<(&str, Vec<u8>)> = map.into_iter().map(|(t, (p, _))| (t, p)).collect();
        terms.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut term_offs = Vec::with_capacity(terms.len() + 1);
        let mut post_offs = Vec::with_capacity(terms.len() + 1);
        let mut bytes = Vec::new();
        let mut postings = Vec::new();
        term_offs.push(0u32);
        post_offs.push(0u32);
        for (t, p) in &terms {
            bytes.extend_from_slice(t.as_bytes());
            postings.extend_from_slice(p);
            term_offs.push(u32::try_from(bytes.len())?);
            post_offs.push(u32::try_from(postings.len())?);
        }
        w.section_u32(&term_offs);
        w.section(bytes);
        w.section_u32(&post_offs);
        w.section(postings);
    }
    w.write(lynx_root)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_postings_roundtrip_and_stop_at_damage() {
        let mut b = Vec::new();
        for (delta, tf) in [(0u32, 1u32), (5, 300), (70000, 2), (1, u32::MAX)] {
            put_varint(&mut b, delta);
            put_varint(&mut b, tf);
        }
        let mut got = Vec::new();
        decode(&b, true, &mut |r, tf| got.push((r, tf)));
        assert_eq!(got, vec![(0, 1), (5, 300), (70005, 2), (70006, u32::MAX)]);
        // A truncated list yields what precedes the damage, never a panic.
        let mut got = Vec::new();
        decode(&b[..b.len() - 2], true, &mut |r, tf| got.push((r, tf)));
        assert_eq!(got.len(), 3);
        decode(&[0xff; 9], true, &mut |_, _| panic!("no posting in garbage"));
        // Decoding for a yes/no stops at the first wanted row.
        let mut seen = Vec::new();
        decode_while(&b, true, &mut |r, _| {
            seen.push(r);
            r < 5
        });
        assert_eq!(seen, vec![0, 5]);
    }
}
