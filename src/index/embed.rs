//! The embedding phase: vectors for every distinct chunk of a view that lacks one under the
//! model's fingerprint. Runs after chunks and lexical data are committed, writes a segment per
//! few thousand vectors (an interrupted run keeps what it finished), and never fails the index:
//! model problems turn the dense layer off with a reason.

use crate::embed::Embedder;
use crate::layer::{self, vectors};
use crate::progress::Progress;
use crate::store::{Key, Store};
use crate::view::View;
use crate::store::read_columns;
use anyhow::Result;
use arrow::array::{Array, FixedSizeBinaryArray, Int32Array, StringArray};
use std::collections::{HashMap, HashSet};

/// Vectors per segment (and per commit to the catalog).
const VECTORS_PER_SEGMENT: usize = 8192;

pub struct DenseOutcome {
    pub embedded: usize,
    pub segments: usize,
    /// Chunks of the view with a vector / all chunks of the view.
    pub covered: usize,
    pub total: usize,
}

/// (chunk hash → text) of the view's chunks whose vectors are missing, and the view's total
/// distinct chunk count. Reads chunk texts only from segments that hold a missing chunk.
fn missing_chunks(store: &Store, view: &View, model_fp: &str) -> Result<(Vec<([u8; 16], String)>, usize)> {
    let chunk_cat = store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
    let vec_cat = store.catalogs(layer::VECTORS, model_fp)?;
    let mut by_segment: HashMap<(usize, String), Vec<crate::store::Found>> = HashMap::new();
    for k in view.distinct_keys() {
        if let Some(f) = chunk_cat.get(&k) {
            by_segment.entry((f.dir, chunk_cat.segment_name(f).to_string())).or_default().push(f);
        }
    }
    let mut all: HashSet<[u8; 16]> = HashSet::new();
    let mut missing: Vec<([u8; 16], String)> = Vec::new();
    let mut missing_set: HashSet<[u8; 16]> = HashSet::new();
    let mut segs: Vec<_> = by_segment.into_iter().collect();
    segs.sort_by(|a, b| a.0.cmp(&b.0));
    for ((dir, name), founds) in segs {
        let path = store.segment_path(dir, &name);
        let b = read_columns(&path, &["ord", "hash"])?;
        let ord: &Int32Array = b.column_by_name("ord").and_then(|c| c.as_any().downcast_ref()).ok_or_else(|| anyhow::anyhow!("bad chunk segment"))?;
        let hash: &FixedSizeBinaryArray = b.column_by_name("hash").and_then(|c| c.as_any().downcast_ref()).ok_or_else(|| anyhow::anyhow!("bad chunk segment"))?;
        let mut wanted_rows = Vec::new();
        for f in &founds {
            for row in f.loc.row as usize..(f.loc.row + f.loc.count) as usize {
                if ord.value(row) < 0 {
                    continue;
                }
                let h: [u8; 16] = hash.value(row).try_into().unwrap_or([0; 16]);
                if all.insert(h) && !vec_cat.contains(&Key::hash(&h)) {
                    wanted_rows.push((row, h));
                }
            }
        }
        if wanted_rows.is_empty() {
            continue;
        }
        let t = read_columns(&path, &["text"])?;
        let text: &StringArray = t.column(0).as_any().downcast_ref().ok_or_else(|| anyhow::anyhow!("bad chunk segment"))?;
        for (row, h) in wanted_rows {
            if missing_set.insert(h) {
                missing.push((h, text.value(row).to_string()));
            }
        }
    }
    missing.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((missing, all.len()))
}

/// Embeds what the view lacks. `progress` shows chunks embedded.
pub fn embed_view(store: &Store, view: &View, model: &dyn Embedder, progress: &Progress) -> Result<DenseOutcome> {
    let fp = model.fingerprint().to_string();
    let (missing, total) = missing_chunks(store, view, &fp)?;
    let mut out = DenseOutcome { embedded: 0, segments: 0, covered: total - missing.len(), total };
    if missing.is_empty() {
        return Ok(out);
    }
    progress.start("embedding chunks", missing.len() as u64);
    let dim = model.dim();
    let info = layer::VectorLayerInfo { model: model.name().to_string(), kind: model.kind().to_string(), dim };
    let info_path = layer::vector_info_path(store.objects(), &fp);
    if !info_path.exists() {
        crate::fsutil::write_atomic(&info_path, serde_json::to_string(&info)?.as_bytes())?;
    }
    for group in missing.chunks(VECTORS_PER_SEGMENT) {
        let mut hashes = Vec::with_capacity(group.len());
        let mut vecs = Vec::with_capacity(group.len() * dim);
        for batch in group.chunks(256) {
            let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
            let v = model.embed_documents(&texts)?;
            if v.len() != texts.len() * dim {
                anyhow::bail!("the model returned {} values for {} texts of dimension {dim}", v.len(), texts.len());
            }
            vecs.extend(v);
            hashes.extend(batch.iter().map(|(h, _)| *h));
            progress.inc(batch.len() as u64);
        }
        let (batch, keys) = vectors::to_batch(&hashes, &vecs, dim)?;
        let name = store.write_segment(layer::VECTORS, &fp, &batch)?;
        crate::shard::vectors::write(&store.root, &name, &batch)?;
        store.commit(layer::VECTORS, &fp, &[(name, keys)])?;
        out.embedded += group.len();
        out.covered += group.len();
        out.segments += 1;
    }
    progress.finish();
    Ok(out)
}
