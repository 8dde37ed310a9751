//! The per-blob layers and their fingerprints. Each layer's rows are keyed by
//! (blob id + language hint) — or by chunk content hash for vectors — and stored in segments
//! of the object store under the layer's fingerprint, so changing one layer's pipeline
//! selects new objects for that layer only.

pub mod chunks;
pub mod graph;
pub mod history;
pub mod lexical;
pub mod scip;
pub mod vectors;

use crate::fsutil::short_hash;

/// Layer names as written in segment metadata and catalog file names.
pub const CHUNKS: &str = "chunks";
pub const LEXICAL: &str = "lexical";
pub const GRAPH: &str = "graph";
pub const VECTORS: &str = "vectors";

/// A decoded segment's column `name` as its concrete Arrow type.
pub fn column<'a, T: 'static>(batch: &'a arrow::array::RecordBatch, name: &str) -> anyhow::Result<&'a T> {
    use anyhow::Context;
    batch
        .column_by_name(name)
        .with_context(|| format!("segment lacks column `{name}`"))?
        .as_any()
        .downcast_ref::<T>()
        .with_context(|| format!("segment column `{name}` has an unexpected type"))
}

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
        &crate::chunk::facts::EXTRACTOR_VERSION.to_le_bytes(),
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

/// Content hashes (as vector keys) of the chunks of the given blobs, reading only the chunk
/// segments' `ord` and `hash` columns.
pub fn chunk_hashes<'a>(
    store: &crate::store::Store,
    keys: impl IntoIterator<Item = &'a crate::store::Key>,
) -> anyhow::Result<std::collections::HashSet<crate::store::Key>> {
    use arrow::array::{Array, FixedSizeBinaryArray, Int32Array};
    let cat = store.catalogs(CHUNKS, &chunks_fingerprint())?;
    let mut out = std::collections::HashSet::new();
    for g in cat.by_segment(keys.into_iter().map(|k| ((), *k)), |_| true) {
        let name = &g.name;
        let b = store.read_segment_columns(g.dir, name, &["ord", "hash"])?;
        let ord: &Int32Array =
            b.column(0).as_any().downcast_ref().ok_or_else(|| anyhow::anyhow!("bad chunk segment {name}"))?;
        let hash: &FixedSizeBinaryArray =
            b.column(1).as_any().downcast_ref().ok_or_else(|| anyhow::anyhow!("bad chunk segment {name}"))?;
        for (_, row, count) in g.rows() {
            for row in row..row + count {
                if ord.value(row) >= 0 {
                    let h: [u8; 16] = hash.value(row).try_into().unwrap_or([0; 16]);
                    out.insert(crate::store::Key::hash(&h));
                }
            }
        }
    }
    Ok(out)
}

/// What produced a vector layer (written beside its catalog when vectors are stored).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VectorLayerInfo {
    pub model: String,
    pub kind: String,
    pub dim: usize,
}

pub fn vector_info_path(objects: &std::path::Path, fingerprint: &str) -> std::path::PathBuf {
    objects.join("catalog").join(format!("{VECTORS}-{fingerprint}.json"))
}
