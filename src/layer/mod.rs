//! The per-blob layers and their fingerprints. Each layer's rows are keyed by
//! (blob id + language hint) — or by chunk content hash for vectors — and stored in segments
//! of the object store under the layer's fingerprint, so changing one layer's pipeline
//! selects new objects for that layer only.

pub mod chunks;
pub mod graph;
pub mod lexical;
pub mod vectors;

use crate::fsutil::short_hash;

/// Layer names as written in segment metadata and catalog file names.
pub const CHUNKS: &str = "chunks";
pub const LEXICAL: &str = "lexical";
pub const GRAPH: &str = "graph";
pub const VECTORS: &str = "vectors";

pub fn chunks_fingerprint() -> String {
    short_hash(&[
        CHUNKS.as_bytes(),
        &crate::chunk::CHUNKER_VERSION.to_le_bytes(),
        crate::chunk::grammar::GRAMMAR_VERSIONS.as_bytes(),
    ])
}

pub fn lexical_fingerprint() -> String {
    short_hash(&[LEXICAL.as_bytes(), &crate::analyze::ANALYZER_VERSION.to_le_bytes(), chunks_fingerprint().as_bytes()])
}

pub fn graph_fingerprint() -> String {
    short_hash(&[
        GRAPH.as_bytes(),
        &crate::graph::facts::EXTRACTOR_VERSION.to_le_bytes(),
        &crate::chunk::CHUNKER_VERSION.to_le_bytes(),
        crate::chunk::grammar::GRAMMAR_VERSIONS.as_bytes(),
    ])
}

/// Content hash of a chunk's text: the key of its vector, shared by identical chunks anywhere.
pub fn chunk_hash(text: &str) -> [u8; 16] {
    let h = blake3::hash(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.as_bytes()[..16]);
    out
}
