//! A view's dense side for one model: per chunk ordinal, where its vector is in the shared
//! vector shards (looked up by the chunk's content hash), and exact top-k search by cosine
//! over those rows. Nothing is copied or written per view.

use super::table::Allowed;
use super::table::{ChunkTable, NONE};
use crate::layer;
use crate::shard::Registry;
use crate::shard::vectors::VectorShard;
use crate::store::{Key, Store};
use anyhow::{Result, bail};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

pub struct DenseView {
    /// Per ordinal: (shard, row), shard NONE when the chunk has no vector yet.
    locs: Vec<(u32, u32)>,
    shards: Vec<Arc<VectorShard>>,
    pub dim: usize,
    /// Chunks with a vector, and all chunks.
    pub covered: usize,
    pub live: usize,
    pub fingerprint: String,
}

impl DenseView {
    /// Locates the vectors of `table`'s chunks under model fingerprint `fingerprint`.
    pub fn assemble(
        store: &Store,
        shards: &Registry,
        table: &ChunkTable,
        fingerprint: &str,
        dim: usize,
    ) -> Result<DenseView> {
        let cat = store.catalogs(layer::VECTORS, fingerprint)?;
        let mut at: HashMap<(usize, u32), u32> = HashMap::new();
        let mut list: Vec<Arc<VectorShard>> = Vec::new();
        let mut locs = Vec::with_capacity(table.len());
        let mut covered = 0;
        // The lookups (a hash per chunk) on both cores; opening shards stays in order.
        let found: Vec<_> = table
            .live()
            .into_par_iter()
            .with_min_len(1024)
            .map(|o| cat.get(&Key::hash(&table.chunk_hash(o))))
            .collect();
        for f in found {
            let Some(f) = f else {
                locs.push((NONE, 0));
                continue;
            };
            let seg = (f.dir, f.loc.seg);
            let si = match at.get(&seg) {
                Some(&i) => i,
                None => {
                    let s = shards.vectors(store, f.dir, cat.segment_name(f))?;
                    if s.dim != dim {
                        bail!(
                            "stored vectors have dimension {} but the model has {dim}; the vector layer is inconsistent",
                            s.dim
                        );
                    }
                    list.push(s);
                    at.insert(seg, (list.len() - 1) as u32);
                    (list.len() - 1) as u32
                }
            };
            if (f.loc.row as usize) < list[si as usize].rows {
                locs.push((si, f.loc.row));
                covered += 1;
            } else {
                locs.push((NONE, 0));
            }
        }
        Ok(DenseView { locs, shards: list, dim, covered, live: table.len(), fingerprint: fingerprint.to_string() })
    }

    /// A dense side whose ordinal `i` is row `i` of one shard (benchmarks and tests).
    pub fn over_shard(shard: Arc<VectorShard>) -> DenseView {
        let n = shard.rows;
        DenseView {
            locs: (0..n as u32).map(|r| (0, r)).collect(),
            dim: shard.dim,
            covered: n,
            live: n,
            fingerprint: String::new(),
            shards: vec![shard],
        }
    }

    pub fn has(&self, ord: u32) -> bool {
        self.locs.get(ord as usize).is_some_and(|l| l.0 != NONE)
    }

    /// The vector of chunk `ord` (empty when it has none).
    pub fn row(&self, ord: u32) -> Vec<f32> {
        match self.locs.get(ord as usize) {
            Some(&(s, r)) if s != NONE => self.shards[s as usize].row_f32(r as usize),
            _ => Vec::new(),
        }
    }

    /// Exact top `k` by cosine (dot product of unit vectors) among `allowed` ordinals; ties go
    /// to the lower ordinal.
    pub fn search(&self, q: &[f32], k: usize, allowed: Option<&Allowed>) -> Vec<(u32, f32)> {
        if k == 0 || q.len() != self.dim || self.locs.is_empty() {
            return Vec::new();
        }
        let dot = crate::embed::dot_f16_fn();
        let block = 4096;
        let n = self.locs.len();
        let mut best: Vec<(u32, f32)> = (0..n.div_ceil(block))
            .into_par_iter()
            .map(|b| {
                let start = b * block;
                let end = (start + block).min(n);
                let mut scored: Vec<(u32, f32)> = Vec::with_capacity(end - start);
                for ord in start..end {
                    let (s, r) = self.locs[ord];
                    if s == NONE || allowed.is_some_and(|a| !a.contains(ord as u32)) {
                        continue;
                    }
                    let v = self.shards[s as usize].row(r as usize);
                    if v.len() == self.dim {
                        scored.push((ord as u32, dot(q, v)));
                    }
                }
                super::top_k(&mut scored, k);
                scored
            })
            .reduce(Vec::new, |mut a, b| {
                a.extend(b);
                super::top_k(&mut a, k);
                a
            });
        super::top_k(&mut best, k);
        best
    }
}
