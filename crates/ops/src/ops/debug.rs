//! `debug parse` and `debug chunks`: what the grammar and the chunker make of one file, for
//! people working on language support.

use super::Answer;
use crate::lang::Lang;
use anyhow::Result;
use std::path::Path;

crate::error::errors! {
    /// A file or language the debugging views cannot read.
    pub enum DebugError: Usage {
        Unreadable { path: String, why: String } => "cannot read {path}: {why}",
        UnknownLanguage { given: String } => "unknown language `{given}`",
    }
}

fn read(file: &Path, lang: Option<&str>) -> Result<(Vec<u8>, Lang)> {
    let content = std::fs::read(file)
        .map_err(|e| DebugError::Unreadable { path: file.display().to_string(), why: e.to_string() })?;
    let lang = match lang {
        Some(l) => Lang::from_name(l).ok_or_else(|| DebugError::UnknownLanguage { given: l.to_string() })?,
        None => crate::lang::detect(&file.to_string_lossy(), &content),
    };
    Ok((content, lang))
}

/// The tree-sitter syntax tree of `file`.
pub fn parse(file: &Path, lang: Option<&str>) -> Result<Answer> {
    let (content, lang) = read(file, lang)?;
    let text =
        crate::chunk::grammar::sexp(lang, &content).unwrap_or_else(|| format!("{} has no grammar\n", lang.name()));
    Ok(Answer::new("debug", None, Parsed { language: lang.name() }, text))
}

/// The chunks of `file`: lines, symbol and kind.
pub fn chunks(file: &Path, lang: Option<&str>) -> Result<Answer> {
    let (content, lang) = read(file, lang)?;
    let chunks = crate::chunk::chunk(lang, &crate::encoding::text(&content));
    let mut text = String::new();
    for c in &chunks {
        text.push_str(&format!("{}-{} {} [{}]\n", c.start_line, c.end_line, c.symbol, c.kind));
    }
    let chunks = chunks
        .iter()
        .map(|c| ChunkLine {
            start_line: c.start_line,
            end_line: c.end_line,
            symbol: &c.symbol,
            kind: c.kind.to_string(),
        })
        .collect();
    Ok(Answer::new("debug", None, Chunked { language: lang.name(), chunks }, text))
}

/// The language a file was parsed as (its tree is the text).
#[derive(Debug, serde::Serialize)]
pub struct Parsed {
    pub language: &'static str,
}

/// A file's chunks: lines, symbol and kind.
#[derive(Debug, serde::Serialize)]
pub struct Chunked<'a> {
    pub language: &'static str,
    pub chunks: Vec<ChunkLine<'a>>,
}

#[derive(Debug, serde::Serialize)]
pub struct ChunkLine<'a> {
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: &'a str,
    pub kind: String,
}

results!(Parsed, Chunked<'_> => "chunks");
