//! PDF stream filters decoded under a byte limit: every filter of a chain stops as soon as its
//! output would pass the limit, so a few megabytes of file cannot become gigabytes of memory
//! (a zlib stream of zeros inflates about a thousandfold, and a chain multiplies the factors).
//! The text extractor's own decoders (lopdf) read to the end whatever the size; the PDF reader
//! hands them only what was decoded here (`pdf.rs`).
//!
//! Depends on std and flate2 alone, so the fuzzing harness (tests/fuzz.rs) compiles this file
//! as it is.

use std::io::Read;

/// A filter's `/DecodeParms` as far as decoding reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub predictor: i64,
    pub colors: i64,
    pub bits_per_component: i64,
    pub columns: i64,
    /// LZW: the code width grows one code early (the default).
    pub early_change: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params { predictor: 1, colors: 1, bits_per_component: 8, columns: 1, early_change: true }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The output would pass the limit.
    TooLarge,
    /// A filter not decoded here (images: DCT, JPX, CCITT fax, JBIG2; Crypt).
    Unsupported(String),
    /// Input no filter can make sense of.
    Corrupt(&'static str),
}

/// `input` through `filters` in order, each with its parameters (missing ones: defaults), no
/// stage's output longer than `limit` bytes.
pub fn decode(
    filters: &[&[u8]],
    params: &[Option<Params>],
    input: &[u8],
    limit: usize,
) -> Result<Vec<u8>, DecodeError> {
    let mut data: Option<Vec<u8>> = None;
    for (i, f) in filters.iter().enumerate() {
        let p = params.get(i).copied().flatten().unwrap_or_default();
        let src: &[u8] = data.as_deref().unwrap_or(input);
        let out = match *f {
            b"FlateDecode" | b"Fl" => predict(inflate(src, limit)?, &p)?,
            b"LZWDecode" | b"LZW" => predict(lzw(src, p.early_change, limit)?, &p)?,
            b"ASCII85Decode" | b"A85" => ascii85(src, limit)?,
            b"ASCIIHexDecode" | b"AHx" => ascii_hex(src, limit)?,
            b"RunLengthDecode" | b"RL" => run_length(src, limit)?,
            other => return Err(DecodeError::Unsupported(String::from_utf8_lossy(other).into_owned())),
        };
        data = Some(out);
    }
    Ok(data.unwrap_or_else(|| input.to_vec()))
}

/// zlib, read at most `limit + 1` bytes far. As lopdf does, a stream whose zlib header is
/// broken is read as raw deflate after it, and a truncated one keeps what it inflated.
fn inflate(input: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    let cap = limit as u64 + 1;
    let r = flate2::read::ZlibDecoder::new(input).take(cap).read_to_end(&mut out);
    if r.is_err() && out.is_empty() && input.len() > 2 {
        out.clear();
        let _ = flate2::read::DeflateDecoder::new(&input[2..]).take(cap).read_to_end(&mut out);
    }
    if out.len() > limit {
        return Err(DecodeError::TooLarge);
    }
    Ok(out)
}

/// Pushes `bytes` unless that passes the limit.
fn push(out: &mut Vec<u8>, bytes: &[u8], limit: usize) -> Result<(), DecodeError> {
    if out.len() + bytes.len() > limit {
        return Err(DecodeError::TooLarge);
    }
    out.extend_from_slice(bytes);
    Ok(())
}

/// LZW as PDF writes it: most significant bit first, 9 to 12 bit codes, 256 clears the table,
/// 257 ends the data. A bad code ends the data too (what came before it is kept).
fn lzw(input: &[u8], early_change: bool, limit: usize) -> Result<Vec<u8>, DecodeError> {
    const CLEAR: usize = 256;
    const EOD: usize = 257;
    // Each entry: (prefix entry or usize::MAX, last byte, length).
    let mut table: Vec<(usize, u8, usize)> = Vec::with_capacity(4096);
    let reset = |t: &mut Vec<(usize, u8, usize)>| {
        t.clear();
        t.extend((0..=255u8).map(|b| (usize::MAX, b, 1)));
        t.push((usize::MAX, 0, 0));
        t.push((usize::MAX, 0, 0));
    };
    reset(&mut table);
    let mut out = Vec::new();
    let mut entry = Vec::new();
    let (mut acc, mut nbits) = (0u32, 0u32);
    let mut width = 9u32;
    let mut prev: Option<usize> = None;
    let mut bytes = input.iter();
    loop {
        while nbits < width {
            let Some(&b) = bytes.next() else { return Ok(out) };
            acc = (acc << 8) | b as u32;
            nbits += 8;
        }
        let code = ((acc >> (nbits - width)) & ((1 << width) - 1)) as usize;
        nbits -= width;
        acc &= (1u32 << nbits) - 1;
        if code == CLEAR {
            reset(&mut table);
            width = 9;
            prev = None;
            continue;
        }
        if code == EOD {
            return Ok(out);
        }
        // The string of `code`: known, or (the one case LZW allows) the previous one plus
        // its own first byte.
        let first_of = |t: &[(usize, u8, usize)], mut c: usize| {
            while t[c].0 != usize::MAX {
                c = t[c].0;
            }
            t[c].1
        };
        let known = code < table.len() && table[code].2 > 0;
        let new_entry = match (known, prev) {
            (true, p) => p.map(|p| (p, first_of(&table, code))),
            (false, Some(p)) if code == table.len() => Some((p, first_of(&table, p))),
            _ => return Ok(out),
        };
        if let Some((p, f)) = new_entry
            && table.len() < 4096
        {
            let len = table[p].2 + 1;
            table.push((p, f, len));
        }
        // Write the string of `code` (now in the table either way).
        let len = table[code].2;
        if out.len() + len > limit {
            return Err(DecodeError::TooLarge);
        }
        entry.clear();
        let mut c = code;
        while c != usize::MAX {
            entry.push(table[c].1);
            c = table[c].0;
        }
        entry.reverse();
        out.extend_from_slice(&entry);
        prev = Some(code);
        let next = table.len() + usize::from(early_change);
        width = match next {
            ..512 => 9,
            512..1024 => 10,
            1024..2048 => 11,
            _ => 12,
        };
    }
}

fn ascii85(input: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    let (mut group, mut n) = (0u64, 0usize);
    for &c in input {
        match c {
            b'~' => break,
            b'z' if n == 0 => push(&mut out, &[0; 4], limit)?,
            b'!'..=b'u' => {
                group = group * 85 + (c - b'!') as u64;
                n += 1;
                if n == 5 {
                    let v = u32::try_from(group).map_err(|_| DecodeError::Corrupt("ASCII85 group out of range"))?;
                    push(&mut out, &v.to_be_bytes(), limit)?;
                    (group, n) = (0, 0);
                }
            }
            c if c.is_ascii_whitespace() => {}
            // As lopdf: anything else ends the data.
            _ => break,
        }
    }
    if n > 1 {
        for _ in n..5 {
            group = group * 85 + 84;
        }
        let v = u32::try_from(group).map_err(|_| DecodeError::Corrupt("ASCII85 group out of range"))?;
        push(&mut out, &v.to_be_bytes()[..n - 1], limit)?;
    }
    Ok(out)
}

fn ascii_hex(input: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    let mut high: Option<u8> = None;
    for &c in input {
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            b'>' => break,
            c if c.is_ascii_whitespace() => continue,
            _ => return Err(DecodeError::Corrupt("not ASCII hex")),
        };
        match high.take() {
            Some(h) => push(&mut out, &[h << 4 | v], limit)?,
            None => high = Some(v),
        }
    }
    if let Some(h) = high {
        push(&mut out, &[h << 4], limit)?;
    }
    Ok(out)
}

fn run_length(input: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < input.len() {
        let n = input[i] as usize;
        i += 1;
        match n {
            128 => break,
            0..128 => {
                let end = (i + n + 1).min(input.len());
                push(&mut out, &input[i..end], limit)?;
                i = end;
            }
            _ => {
                let Some(&b) = input.get(i) else { break };
                let count = 257 - n;
                if out.len() + count > limit {
                    return Err(DecodeError::TooLarge);
                }
                out.resize(out.len() + count, b);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// PNG predictors (10–15) undone row by row; other predictors leave the data as it is, as
/// lopdf does. The output is never longer than the input.
fn predict(data: Vec<u8>, p: &Params) -> Result<Vec<u8>, DecodeError> {
    if !(10..=15).contains(&p.predictor) {
        return Ok(data);
    }
    let bad = DecodeError::Corrupt("predictor parameters out of range");
    let (colors, bits, columns) = (p.colors.max(1), p.bits_per_component.max(1), p.columns.max(1));
    if colors > 32 || bits > 16 || columns > 1 << 24 {
        return Err(bad);
    }
    let bpp = ((colors * bits) as usize).div_ceil(8).max(1);
    let row = ((colors * bits * columns) as usize).div_ceil(8);
    let mut out = Vec::with_capacity(data.len());
    let mut prior = vec![0u8; row];
    let mut cur = vec![0u8; row];
    for chunk in data.chunks(row + 1) {
        if chunk.len() < 2 {
            break;
        }
        let (kind, raw) = (chunk[0], &chunk[1..]);
        let n = raw.len();
        cur[..n].copy_from_slice(raw);
        for i in 0..n {
            let left = if i >= bpp { cur[i - bpp] } else { 0 };
            let up = prior[i];
            let up_left = if i >= bpp { prior[i - bpp] } else { 0 };
            cur[i] = cur[i].wrapping_add(match kind {
                1 => left,
                2 => up,
                3 => ((left as u16 + up as u16) / 2) as u8,
                4 => paeth(left, up, up_left),
                _ => 0,
            });
        }
        out.extend_from_slice(&cur[..n]);
        std::mem::swap(&mut prior, &mut cur);
    }
    Ok(out)
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = a as i16 + b as i16 - c as i16;
    let (pa, pb, pc) = ((p - a as i16).abs(), (p - b as i16).abs(), (p - c as i16).abs());
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}
