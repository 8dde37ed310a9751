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
    Ok(Answer::new("debug", None, serde_json::json!({ "language": lang.name() }), text))
}

/// The chunks of `file`: lines, symbol and kind.
pub fn chunks(file: &Path, lang: Option<&str>) -> Result<Answer> {
    let (content, lang) = read(file, lang)?;
    let chunks = crate::chunk::chunk(lang, &crate::encoding::text(&content));
    let mut text = String::new();
    for c in &chunks {
        text.push_str(&format!("{}-{} {} [{}]\n", c.start_line, c.end_line, c.symbol, c.kind));
    }
    let list: Vec<serde_json::Value> =
        chunks.iter().map(|c| serde_json::json!({"start_line": c.start_line, "end_line": c.end_line, "symbol": c.symbol, "kind": c.kind.to_string()})).collect();
    Ok(Answer::new("debug", None, serde_json::json!({ "language": lang.name(), "chunks": list }), text))
}
