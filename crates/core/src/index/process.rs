//! Processing one blob: content checks, language, chunks and lexical terms.

use crate::chunk::facts::{Extractor, Facts};
use crate::chunk::{self, grammar, outline};
use crate::lang::{self, Lang};
use crate::layer::chunks::{BlobChunks, Status};
use crate::layer::graph::BlobFacts;
use crate::layer::lexical::{BlobTerms, ChunkTerms};
use crate::repo::{self, SkipReason};
use crate::store::Key;

pub struct Processed {
    pub chunks: BlobChunks,
    pub terms: BlobTerms,
    pub facts: BlobFacts,
}

pub enum Outcome {
    Done(Processed),
    /// Not stored (depends on settings, e.g. the size cap).
    Skipped(Key, SkipReason),
}

/// Everything derived from one blob's content. Pure: same input, same output.
pub fn process(key: Key, path: &str, content: &[u8]) -> Processed {
    process_with(key, path, content, true)
}

/// `graph`: also extract graph facts (one parse serves both).
pub fn process_with(key: Key, path: &str, content: &[u8], graph: bool) -> Processed {
    let lang = match Lang::from_code(key.hint()) {
        Some(l) => l,
        None => lang::detect(path, content),
    };
    process_as(key, lang, content, graph)
}

/// The same, for a blob whose language is already known.
pub fn process_as(key: Key, lang: Lang, content: &[u8], graph: bool) -> Processed {
    let size = content.len() as u64;
    let status = match repo::content_skip(content) {
        Some(SkipReason::LfsPointer) => Some(Status::LfsPointer),
        Some(_) => Some(Status::Binary),
        None => None,
    };
    if let Some(status) = status {
        return Processed {
            chunks: BlobChunks {
                key,
                status,
                lang: Lang::Text,
                size,
                chunks: Vec::new(),
                hashes: Vec::new(),
                encoding: String::new(),
            },
            terms: BlobTerms { key, chunks: Vec::new() },
            facts: BlobFacts { key, facts: Facts::default() },
        };
    }
    let (text, encoding) = crate::encoding::decode(content);
    let (chunks, facts) = analysed_or_windows(key, &text, || {
        if graph { chunks_and_facts(lang, &text) } else { (chunk::chunk(lang, &text), Facts::default()) }
    });
    let hashes = chunks.iter().map(|c| crate::layer::chunk_hash(&c.text)).collect();
    let terms = chunks.iter().map(|c| ChunkTerms::analyse(&c.text, &c.symbol)).collect();
    Processed {
        chunks: BlobChunks {
            key,
            status: Status::Text,
            lang,
            size,
            chunks,
            hashes,
            encoding: encoding.unwrap_or_default().to_string(),
        },
        terms: BlobTerms { key, chunks: terms },
        facts: BlobFacts { key, facts },
    }
}

/// The chunks and facts `analyse` makes of a blob, or, when one of the analysers gives up on it
/// (a bug: one file must never stop an index, a search or a server), the blob as plain-text
/// windows without facts, with a warning naming it. Deterministic like the analysers.
fn analysed_or_windows(
    key: Key,
    text: &str,
    analyse: impl FnOnce() -> (Vec<chunk::Chunk>, Facts),
) -> (Vec<chunk::Chunk>, Facts) {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(analyse)) {
        Ok(r) => r,
        Err(_) => {
            tracing::warn!(
                "the analysis of blob {key:?} failed; indexed as plain text without graph facts (please report this file)"
            );
            let windows = std::panic::catch_unwind(|| chunk::chunk(Lang::Text, text)).unwrap_or_default();
            (windows, Facts::default())
        }
    }
}

/// One parse for both: chunks from the definitions, graph facts from the same walk.
fn chunks_and_facts(lang: Lang, text: &str) -> (Vec<chunk::Chunk>, Facts) {
    if lang == Lang::Sql {
        // SQL has no call graph: its routines are definitions, its statements data access.
        let mut facts = Facts { defs: chunk::data::sql_definitions(text), ..Facts::default() };
        facts.data = chunk::data::extract(lang, text, &[], &facts.defs);
        return (chunk::chunk(lang, text), facts);
    }
    // Grammar-less kinds are windowed.
    if !lang.has_grammar() || text.trim().is_empty() {
        return (chunk::chunk(lang, text), Facts::default());
    }
    let parsed = grammar::masked(lang, text);
    let Some(tree) = grammar::parse(lang, parsed.as_bytes()) else {
        return (chunk::chunk(lang, text), Facts::default());
    };
    let mut ex = Extractor::new(lang, parsed.as_bytes());
    let defs = outline::outline(lang, &tree, parsed.as_bytes(), &mut ex);
    let chunks = chunk::chunks_from_defs(text, &defs);
    let strings = std::mem::take(&mut ex.strings);
    let mut facts = ex.finish(Facts::from_defs(&defs, text.as_bytes()));
    facts.fields_on_classes();
    facts.data = chunk::data::extract(lang, text, &strings, &facts.defs);
    (chunks, facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_analyser_that_gives_up_leaves_the_blob_as_plain_windows() {
        let text = "line one\nline two\n";
        let (chunks, facts) = analysed_or_windows(Key::blob(&[7; 20], 0), text, || panic!("an analyser bug"));
        assert!(!chunks.is_empty() && chunks.iter().any(|c| c.text.contains("line two")), "{chunks:?}");
        assert!(facts.defs.is_empty() && facts.calls.is_empty());
        // Analysers that succeed are used as they are.
        let (chunks, _) = analysed_or_windows(Key::blob(&[7; 20], 0), text, || (Vec::new(), Facts::default()));
        assert!(chunks.is_empty());
    }

    #[test]
    fn a_stored_procedure_call_next_to_wide_characters_is_read() {
        // The 400-byte windows either side of the literal start or end inside three-byte
        // characters for one of these paddings.
        for pad in 0..3 {
            let wide = "\u{ffff}".repeat(200);
            let text = format!(
                "// {wide}{}\nvar o = conn.Query<Order>(\"usp_GetOrders\", commandType: CommandType.StoredProcedure)\n// {wide}\n;\n",
                " ".repeat(pad)
            );
            let p = process_with(Key::blob(&[8; 20], 0), "a.cs", text.as_bytes(), true);
            assert!(
                p.facts.facts.data.iter().any(|d| d.name == "usp_GetOrders" && d.access == "call"),
                "padding {pad}: {:?}",
                p.facts.facts.data
            );
        }
    }
}
