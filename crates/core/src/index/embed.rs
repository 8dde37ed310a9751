//! The embedding phase: vectors for every distinct chunk of a view that lacks one under the
//! model's fingerprint. Runs after chunks and lexical data are committed, writes a segment per
//! few thousand vectors (an interrupted run keeps what it finished), and never fails the index:
//! model problems turn the dense layer off with a reason.

use crate::embed::Embedder;
use crate::layer::{self, vectors};
use crate::progress::Progress;
use crate::store::{Key, Store};
use crate::view::View;
use anyhow::Result;
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
/// distinct chunk count, read from the chunk shards.
fn missing_chunks(store: &Store, view: &View, model_fp: &str) -> Result<(Vec<([u8; 16], String)>, usize)> {
    let chunk_cat = store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
    let vec_cat = store.catalogs(layer::VECTORS, model_fp)?;
    let shards = crate::shard::Registry::default();
    let mut open: HashMap<(usize, u32), std::sync::Arc<crate::shard::chunks::ChunkShard>> = HashMap::new();
    let mut all: HashSet<[u8; 16]> = HashSet::new();
    let mut missing: Vec<([u8; 16], String)> = Vec::new();
    for k in view.distinct_keys() {
        let Some(f) = chunk_cat.get(&k) else { continue };
        let shard = match open.get(&(f.dir, f.loc.seg)) {
            Some(s) => s.clone(),
            None => {
                let s = shards.chunks(store, f.dir, chunk_cat.segment_name(f))?;
                open.insert((f.dir, f.loc.seg), s.clone());
                s
            }
        };
        for row in f.loc.row as usize..(f.loc.row + f.loc.count) as usize {
            if row >= shard.rows() {
                anyhow::bail!(
                    "the catalog points past the end of segment {}; run `git lynx doctor --repair`",
                    chunk_cat.segment_name(f)
                );
            }
            let m = shard.meta(row);
            if m.ord < 0 || !all.insert(m.hash) || vec_cat.contains(&Key::hash(&m.hash)) {
                continue;
            }
            // A text that fails its check is never embedded: the run stops with the error.
            missing.push((m.hash, shard.text(row)?.to_string()));
        }
    }
    missing.sort_by_key(|a| a.0);
    Ok((missing, all.len()))
}

/// Embeds what the view lacks. `progress` shows chunks embedded.
pub fn embed_view(store: &Store, view: &View, model: &dyn Embedder, progress: &Progress) -> Result<DenseOutcome> {
    let fp = model.fingerprint().to_string();
    let (mut missing, total) = missing_chunks(store, view, &fp)?;
    // Vectors other machines made (untrusted alternates) are computed again and compared
    // (`adopt::vectors`): what is stored is this machine's, so they count as embedded here.
    let mut checked = 0;
    if !missing.is_empty() && !store.pools.is_empty() {
        let texts: HashMap<[u8; 16], String> = missing.iter().cloned().collect();
        for pool in &store.pools {
            checked += super::adopt::vectors(store, pool, &texts, model, &mut Vec::new())?;
        }
        if checked > 0 {
            let have = store.catalogs(layer::VECTORS, &fp)?;
            missing.retain(|(h, _)| !have.contains(&Key::hash(h)));
        }
    }
    let mut out = DenseOutcome { embedded: checked, segments: 0, covered: total - missing.len(), total };
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
        crate::shard::vectors::write(store, 0, &name, &batch)?;
        store.commit(layer::VECTORS, &fp, &[(name, keys)])?;
        out.embedded += group.len();
        out.covered += group.len();
        out.segments += 1;
    }
    progress.finish();
    Ok(out)
}
