//! The embedding phase: vectors for every distinct chunk of a view that lacks one under the
//! model's fingerprint. Runs after chunks and lexical data are committed, writes a segment per
//! few thousand vectors (an interrupted run keeps what it finished), and never fails the index:
//! model problems turn the dense layer off with a reason.
//!
//! Texts are read from the chunk shards a group at a time, in shard order, and a shard is let
//! go once its last group is embedded: a monorepo's texts never sit in memory all at once. A
//! group's segment is written on a thread of its own while the next group embeds.

use crate::embed::Embedder;
use crate::layer::{self, vectors};
use crate::progress::Progress;
use crate::shard::chunks::ChunkShard;
use crate::store::{Key, Store};
use crate::view::View;
use anyhow::Result;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Vectors per segment (and per commit to the catalog).
const VECTORS_PER_SEGMENT: usize = 8192;

/// Texts per call to the model (the unit of progress).
const BATCH: usize = 256;

pub struct DenseOutcome {
    pub embedded: usize,
    pub segments: usize,
    /// Chunks of the view with a vector / all chunks of the view.
    pub covered: usize,
    pub total: usize,
    /// What the shared object store gave (vectors of this model), when one is configured.
    pub fetched: Option<crate::store::remote::Fetched>,
}

/// A chunk of the view without a vector: where its text is.
#[derive(Clone, Copy)]
struct Missing {
    shard: u32,
    row: u32,
    hash: [u8; 16],
}

/// The chunks of a view that lack a vector, in shard order, the shards they are in, and the
/// view's distinct chunk count.
struct ToEmbed {
    shards: Vec<Option<Arc<ChunkShard>>>,
    missing: Vec<Missing>,
    total: usize,
}

impl ToEmbed {
    fn text(&self, m: &Missing) -> Result<&str> {
        let shard = self.shards[m.shard as usize].as_ref().expect("a shard is let go only after its last group");
        // A text that fails its check is never embedded: the run stops with the error.
        Ok(shard.text(m.row as usize)?)
    }
}

fn missing_chunks(store: &Store, view: &View, model_fp: &str) -> Result<ToEmbed> {
    let chunk_cat = store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
    let vec_cat = store.catalogs(layer::VECTORS, model_fp)?;
    let registry = crate::shard::Registry::default();
    let mut index: HashMap<(usize, u32), u32> = HashMap::new();
    let mut shards: Vec<Option<Arc<ChunkShard>>> = Vec::new();
    let mut all: HashSet<[u8; 16]> = HashSet::new();
    let mut missing: Vec<Missing> = Vec::new();
    for k in view.distinct_keys() {
        let Some(f) = chunk_cat.get(&k) else { continue };
        let at = match index.get(&(f.dir, f.loc.seg)) {
            Some(&i) => i,
            None => {
                shards.push(Some(registry.chunks(store, f.dir, chunk_cat.segment_name(f))?));
                let i = (shards.len() - 1) as u32;
                index.insert((f.dir, f.loc.seg), i);
                i
            }
        };
        let shard = shards[at as usize].as_ref().expect("just opened");
        for row in f.loc.row..f.loc.row + f.loc.count {
            if row as usize >= shard.rows() {
                return Err(crate::store::catalog::CatalogError::PastEnd {
                    segment: chunk_cat.segment_name(f).to_string(),
                }
                .into());
            }
            let m = shard.meta(row as usize);
            if m.ord < 0 || !all.insert(m.hash) || vec_cat.contains(&Key::hash(&m.hash)) {
                continue;
            }
            missing.push(Missing { shard: at, row, hash: m.hash });
        }
    }
    // Shard by shard, each in row order: the text blocks are decompressed once, in file order.
    missing.sort_unstable_by_key(|m| (m.shard, m.row));
    Ok(ToEmbed { shards, missing, total: all.len() })
}

/// Embeds what the view lacks. `progress` shows chunks embedded.
pub fn embed_view(store: &Store, view: &View, model: &dyn Embedder, progress: &Progress) -> Result<DenseOutcome> {
    let fp = model.fingerprint().to_string();
    let t = std::time::Instant::now();
    // Which model made this fingerprint's vectors, for `status` (also when they all came from
    // the shared object store).
    let info_path = layer::vector_info_path(store.objects(), &fp);
    if !info_path.exists() {
        let info = layer::VectorLayerInfo {
            model: model.name().to_string(),
            kind: model.kind().to_string(),
            dim: model.dim(),
        };
        let _ = crate::fsutil::write_atomic(&info_path, serde_json::to_string(&info)?.as_bytes());
    }
    let mut todo = missing_chunks(store, view, &fp)?;
    let located = t.elapsed();
    // The vectors the shared object store holds for this model, before any is computed.
    let mut fetched = None;
    if !todo.missing.is_empty()
        && let Some(url) = store.remote.as_deref()
    {
        let keys: Vec<Key> = todo.missing.iter().map(|m| Key::hash(&m.hash)).collect();
        let got = crate::store::remote::fetch_into(store, url, &vec![(layer::VECTORS.to_string(), fp.clone(), keys)]);
        if got.segments > 0 {
            let have = store.catalogs(layer::VECTORS, &fp)?;
            todo.missing.retain(|m| !have.contains(&Key::hash(&m.hash)));
        }
        fetched = Some(got);
    }
    // Vectors other machines made (untrusted alternates) are computed again and compared
    // (`adopt::vectors`): what is stored is this machine's, so they count as embedded here.
    let mut checked = 0;
    if !todo.missing.is_empty() && !store.pools.is_empty() {
        let mut texts: HashMap<[u8; 16], String> = HashMap::with_capacity(todo.missing.len());
        for m in &todo.missing {
            texts.insert(m.hash, todo.text(m)?.to_string());
        }
        for pool in &store.pools {
            checked += super::adopt::vectors(store, pool, &texts, model, &mut Vec::new())?;
        }
        if checked > 0 {
            let have = store.catalogs(layer::VECTORS, &fp)?;
            todo.missing.retain(|m| !have.contains(&Key::hash(&m.hash)));
        }
    }
    let mut out = DenseOutcome {
        embedded: checked,
        segments: 0,
        covered: todo.total - todo.missing.len(),
        total: todo.total,
        fetched,
    };
    if todo.missing.is_empty() {
        return Ok(out);
    }
    progress.start("embedding chunks", todo.missing.len() as u64);
    let dim = model.dim();
    // The group after which each shard is no longer needed.
    let mut last_group = vec![0usize; todo.shards.len()];
    for (g, group) in todo.missing.chunks(VECTORS_PER_SEGMENT).enumerate() {
        for m in group {
            last_group[m.shard as usize] = g;
        }
    }
    let groups: Vec<Vec<Missing>> = todo.missing.chunks(VECTORS_PER_SEGMENT).map(<[Missing]>::to_vec).collect();
    let written = std::thread::scope(|s| -> Result<usize> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<[u8; 16]>, Vec<f32>)>(1);
        let writer = s.spawn(move || -> Result<usize> {
            let mut segments = 0;
            for (hashes, vecs) in rx {
                let (batch, keys) = vectors::to_batch(&hashes, &vecs, dim)?;
                let name = store.write_segment(layer::VECTORS, &fp, &batch)?;
                crate::shard::vectors::write(store, 0, &name, &batch)?;
                store.commit(layer::VECTORS, &fp, &[(name, keys)])?;
                segments += 1;
            }
            Ok(segments)
        });
        let embedded = (|| -> Result<()> {
            for (g, mut group) in groups.into_iter().enumerate() {
                // Each segment's rows in hash order, as before texts were read shard by shard.
                group.sort_unstable_by_key(|m| m.hash);
                let texts: Vec<&str> = group.par_iter().map(|m| todo.text(m)).collect::<Result<_>>()?;
                let mut vecs = Vec::with_capacity(group.len() * dim);
                for batch in texts.chunks(BATCH) {
                    let v = model.embed_documents(batch)?;
                    if v.len() != batch.len() * dim {
                        return Err(
                            crate::embed::EmbedError::Returned { values: v.len(), texts: batch.len(), dim }.into()
                        );
                    }
                    vecs.extend(v);
                    progress.inc(batch.len() as u64);
                }
                drop(texts);
                let hashes = group.iter().map(|m| m.hash).collect();
                if tx.send((hashes, vecs)).is_err() {
                    // The writer stopped on an error, which its join reports.
                    break;
                }
                for (i, last) in last_group.iter().enumerate() {
                    if *last == g {
                        todo.shards[i] = None;
                    }
                }
            }
            Ok(())
        })();
        drop(tx);
        let segments = writer.join().map_err(|_| crate::embed::EmbedError::WriterPanicked {})??;
        embedded.map(|()| segments)
    })?;
    let vectors: usize = todo.missing.len();
    tracing::debug!(
        "embedding: {vectors} of {} chunks located in {located:.1?}, embedded and written in {:.1?}",
        todo.total,
        t.elapsed() - located
    );
    out.embedded += vectors;
    out.covered += vectors;
    out.segments = written;
    progress.finish();
    Ok(out)
}
