//! Chunking: a file's text cut into retrievable pieces with symbols and exact line ranges.
//!
//! Grammar languages get one chunk per function / method / class member (qualified symbol
//! names, 1-based inclusive lines); the lines between definitions at one level are gathered
//! into chunks of their own (`header` at file level, the container's symbol inside a class).
//! Everything else is cut into overlapping line windows (Markdown by section).

pub mod data;
pub mod defs;
pub mod facts;
pub mod grammar;
pub mod outline;

use crate::lang::Lang;
use outline::{Def, NoVisitor};

/// Bump whenever chunk boundaries, symbols or kinds for a given input change.
pub const CHUNKER_VERSION: u32 = 5;
/// Chunks longer than this are split into `#partN` pieces.
pub const MAX_CHUNK_CHARS: usize = 8_000;
/// Line windows for text without a grammar.
const WINDOW_LINES: usize = 60;
const WINDOW_OVERLAP: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Qualified symbol (`Namespace.Class.method`), a Markdown heading, or empty.
    pub symbol: String,
    pub kind: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
}

/// Chunks of one file's content (already known to be text).
pub fn chunk(lang: Lang, src: &str) -> Vec<Chunk> {
    if src.trim().is_empty() {
        return Vec::new();
    }
    if lang.has_grammar() {
        let parsed = grammar::masked(lang, src);
        if let Some(tree) = grammar::parse(lang, parsed.as_bytes()) {
            let defs = outline::outline(lang, &tree, parsed.as_bytes(), &mut NoVisitor);
            return chunks_from_defs(src, &defs);
        }
    }
    match lang {
        Lang::Markdown => markdown_sections(src),
        _ => windows(src, 1, &lines_of(src), "", "text"),
    }
}

fn lines_of(src: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(src.len() / 32 + 1);
    let mut start = 0;
    for (i, b) in src.bytes().enumerate() {
        if b == b'\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    if start < src.len() {
        out.push((start, src.len()));
    }
    out
}

/// Chunks from an outline: definitions become chunks, the rest of each level's lines are
/// gathered into chunks of the level's owner.
pub fn chunks_from_defs(src: &str, defs: &[Def]) -> Vec<Chunk> {
    let lines = lines_of(src);
    if lines.is_empty() {
        return Vec::new();
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); defs.len()];
    let mut top = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        match d.parent {
            Some(p) => children[p].push(i),
            None => top.push(i),
        }
    }
    let mut out = Vec::new();
    let emitter = Emitter { src, lines: &lines, defs, children: &children };
    emitter.level(0, lines.len() - 1, &top, "", "header", &mut out);
    out.sort_by_key(|c| (c.start_line, c.end_line));
    out
}

struct Emitter<'a> {
    src: &'a str,
    lines: &'a [(usize, usize)],
    defs: &'a [Def],
    children: &'a [Vec<usize>],
}

impl Emitter<'_> {
    /// Emits rows `lo..=hi` owned by (`symbol`, `kind`), whose direct sub-definitions are `kids`.
    fn level(&self, lo: usize, hi: usize, kids: &[usize], symbol: &str, kind: &str, out: &mut Vec<Chunk>) {
        let mut row = lo;
        let mut gap_start = lo;
        for &k in kids {
            let d = &self.defs[k];
            let start = d.start_row.max(row);
            let end = d.end_row.min(hi);
            if start > end {
                continue;
            }
            if gap_start < start {
                self.gap(gap_start, start - 1, symbol, kind, out);
            }
            if d.container && !self.children[k].is_empty() {
                let members = &self.children[k];
                // `impl Foo {` alone says nothing its members' symbols do not.
                let first_member = members.iter().map(|&m| self.defs[m].start_row).min().unwrap_or(end);
                let lo = if d.kind == defs::Kind::Impl && first_member == start + 1 { start + 1 } else { start };
                self.level(lo, end, members, &d.qualified, d.kind.name(), out);
            } else {
                self.emit(start, end, &d.qualified, d.kind.name(), out);
            }
            row = end + 1;
            gap_start = row;
        }
        if gap_start <= hi {
            self.gap(gap_start, hi, symbol, kind, out);
        }
    }

    /// Lines between definitions: trimmed of blank edges, kept when they hold anything but
    /// punctuation.
    fn gap(&self, mut lo: usize, mut hi: usize, symbol: &str, kind: &str, out: &mut Vec<Chunk>) {
        let blank = |r: usize| self.line(r).trim().is_empty();
        while lo <= hi && blank(lo) {
            lo += 1;
        }
        while hi > lo && blank(hi) {
            hi -= 1;
        }
        if lo > hi {
            return;
        }
        let has_content = (lo..=hi).any(|r| !is_trivial_line(self.line(r)));
        if has_content {
            self.emit(lo, hi, symbol, kind, out);
        }
    }

    fn line(&self, row: usize) -> &str {
        let (s, e) = self.lines[row];
        &self.src[s..e]
    }

    fn emit(&self, lo: usize, hi: usize, symbol: &str, kind: &str, out: &mut Vec<Chunk>) {
        let text = &self.src[self.lines[lo].0..self.lines[hi].1];
        if text.len() <= MAX_CHUNK_CHARS {
            out.push(Chunk {
                symbol: symbol.to_string(),
                kind: kind.to_string(),
                start_line: lo as u32 + 1,
                end_line: hi as u32 + 1,
                text: text.to_string(),
            });
            return;
        }
        // Oversized: consecutive line runs of at most MAX_CHUNK_CHARS, named `symbol#partN`.
        let mut part = 1;
        let mut start = lo;
        while start <= hi {
            let mut end = start;
            while end < hi && self.lines[end + 1].1 - self.lines[start].0 <= MAX_CHUNK_CHARS {
                end += 1;
            }
            let text = &self.src[self.lines[start].0..self.lines[end].1];
            out.push(Chunk {
                symbol: format!("{symbol}#part{part}"),
                kind: kind.to_string(),
                start_line: start as u32 + 1,
                end_line: end as u32 + 1,
                text: truncate_chars(text, MAX_CHUNK_CHARS * 4).to_string(),
            });
            part += 1;
            start = end + 1;
        }
    }
}

/// Lines that only close a block (`}`, `end`, `@end`, `fi`…) carry nothing worth retrieving.
fn is_trivial_line(line: &str) -> bool {
    let t = line.trim().trim_end_matches(';');
    // `}  // namespace geo`: closing punctuation followed only by a comment.
    let rest = t.trim_start_matches(|c: char| "}])();, ".contains(c));
    if rest.len() < t.len() && (rest.is_empty() || rest.starts_with("//") || rest.starts_with("/*")) {
        return true;
    }
    !t.chars().any(|c| c.is_alphanumeric()) || matches!(t, "end" | "@end" | "fi" | "done" | "esac" | "endif" | "end if")
}

fn truncate_chars(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Overlapping windows over `lines` (rows numbered from `first_line`), each at most
/// WINDOW_LINES lines and MAX_CHUNK_CHARS characters.
fn windows(src: &str, first_line: u32, lines: &[(usize, usize)], symbol: &str, kind: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    let n = lines.len();
    let mut start = 0;
    while start < n {
        let mut end = start;
        while end + 1 < n && end + 1 - start < WINDOW_LINES && lines[end + 1].1 - lines[start].0 <= MAX_CHUNK_CHARS {
            end += 1;
        }
        let text = &src[lines[start].0..lines[end].1];
        if text.chars().any(|c| c.is_alphanumeric()) {
            out.push(Chunk {
                symbol: symbol.to_string(),
                kind: kind.to_string(),
                start_line: first_line + start as u32,
                end_line: first_line + end as u32,
                text: truncate_chars(text, MAX_CHUNK_CHARS * 4).to_string(),
            });
        }
        if end + 1 >= n {
            break;
        }
        let advance = (end + 1 - start).saturating_sub(WINDOW_OVERLAP).max(1);
        start += advance;
    }
    out
}

/// Markdown: one chunk per heading section (symbol = heading path `Guide > Install`), long
/// sections windowed.
fn markdown_sections(src: &str) -> Vec<Chunk> {
    let lines = lines_of(src);
    let mut starts: Vec<(usize, String)> = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut in_fence = false;
    for (row, &(s, e)) in lines.iter().enumerate() {
        let line = &src[s..e];
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let level = line.bytes().take_while(|&b| b == b'#').count();
        if (1..=6).contains(&level) && line[level..].starts_with(' ') {
            let mut title = line[level..].trim().trim_end_matches('#').trim();
            // `## Title {#anchor}`: the anchor is for citations, not part of the title.
            if let Some((t, _)) = title.strip_suffix('}').and_then(|t| t.rsplit_once(" {#")) {
                title = t.trim_end();
            }
            let title = title.to_string();
            while stack.last().is_some_and(|(l, _)| *l >= level) {
                stack.pop();
            }
            stack.push((level, title));
            let path: Vec<&str> = stack.iter().map(|(_, t)| t.as_str()).collect();
            starts.push((row, path.join(" > ")));
        }
    }
    if starts.first().is_none_or(|(r, _)| *r > 0) {
        starts.insert(0, (0, String::new()));
    }
    let mut out = Vec::new();
    for (i, (row, title)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(lines.len(), |(r, _)| *r);
        out.extend(windows(src, *row as u32 + 1, &lines[*row..end], title, "section"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_definitions_split_into_parts() {
        let body: String = (0..600).map(|i| format!("    x{i} = compute({i})  # padding padding\n")).collect();
        let src = format!("def huge():\n{body}    return x1\n\n\ndef small():\n    pass\n");
        let chunks = chunk(Lang::Python, &src);
        let parts: Vec<&Chunk> = chunks.iter().filter(|c| c.symbol.starts_with("huge#part")).collect();
        assert!(parts.len() >= 3, "{}", parts.len());
        assert_eq!(parts[0].symbol, "huge#part1");
        assert_eq!(parts[0].start_line, 1);
        assert_eq!(parts.last().unwrap().end_line, 602);
        for w in parts.windows(2) {
            assert_eq!(w[1].start_line, w[0].end_line + 1);
        }
        assert!(parts.iter().all(|p| p.text.len() <= MAX_CHUNK_CHARS));
        assert_eq!(chunks.last().unwrap().symbol, "small");
    }

    #[test]
    fn markdown_by_section_and_text_windows_overlap() {
        let md = "intro line\n\n# Guide\ntext\n## Install\nrun it\n```\n# not a heading\n```\n# Other\nmore\n";
        let got: Vec<(String, u32, u32)> =
            chunk(Lang::Markdown, md).into_iter().map(|c| (c.symbol, c.start_line, c.end_line)).collect();
        assert_eq!(
            got,
            vec![("".into(), 1, 2), ("Guide".into(), 3, 4), ("Guide > Install".into(), 5, 9), ("Other".into(), 10, 11)]
        );
        let text: String = (1..=130).map(|i| format!("line {i}\n")).collect();
        let w = chunk(Lang::Text, &text);
        assert_eq!((w[0].start_line, w[0].end_line), (1, 60));
        assert_eq!((w[1].start_line, w[1].end_line), (51, 110));
        assert_eq!(w.last().unwrap().end_line, 130);
    }

    #[test]
    fn empty_and_blank_files_have_no_chunks() {
        assert!(chunk(Lang::Rust, "").is_empty());
        assert!(chunk(Lang::Text, "\n\n  \n").is_empty());
    }
}
