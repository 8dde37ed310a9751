//! Adopting objects computed elsewhere (an imported pack, a fetched remote, an alternate
//! object directory that the user has not marked trusted). They are untrusted input, and a
//! sample proves nothing about the rows it skipped: a forged segment can hide one chunk, swap
//! two symbols, drop a call edge or carry a chosen vector. So every blob they describe is
//! processed again from its content and must match them in every layer, exactly; every vector
//! is computed again with the local model and must agree (cosine ≥ 0.99). What is stored is
//! always what this machine computed, and a mismatch refuses the segment with the reason
//! (reported, so a tampered source is known). Only a source the user trusts (`--trust`,
//! `store.trusted`) is read as it is, which is what saves the computing.
//!
//! A segment with one failing blob is refused whole: a tampered pack is not trusted for its
//! other rows either.

use super::process::{self, Processed};
use crate::chunk::facts::Facts;
use crate::embed::Embedder;
use crate::lang::Lang;
use crate::layer::chunks::{BlobChunks, ChunkColumns, Status};
use crate::layer::graph::BlobFacts;
use crate::layer::lexical::{BlobTerms, ChunkTerms, TermColumns};
use crate::layer::{self};
use crate::store::catalog::{Catalog, catalog_path};
use crate::store::{Key, Loc};
use crate::workspace::Workspace;
use anyhow::Result;
use arrow::array::{Array, RecordBatch};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// What an adoption did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Adoption {
    /// Blobs whose objects were checked and adopted.
    pub blobs: usize,
    /// Vectors adopted.
    pub vectors: usize,
    /// Blobs whose content is not available here (their objects cannot be checked).
    pub unverifiable: usize,
    /// Segments refused, with the reason.
    pub rejected: Vec<Rejected>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Rejected {
    pub segment: String,
    pub reason: String,
    /// The other segments holding rows of the same blob (its other layers): a repair removes
    /// them together, so what is processed again is consistent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<String>,
}

/// Where a blob's content comes from.
pub enum Content<'a> {
    /// Git's object database.
    Odb(gix::ObjectId),
    /// Already in memory (working-tree files).
    Bytes(&'a [u8]),
}

/// Adopts the objects `pool` (an object directory) holds for `wanted`, after checking them.
/// `model` allows adopting vectors of that model.
pub fn adopt(ws: &Workspace, pool: &Path, wanted: &[(Key, Content)], model: Option<&dyn Embedder>) -> Result<Adoption> {
    let mut out = Adoption::default();
    let with_graph = ws.config.index.graph;
    let cats = |layer: &str, fp: &str| Catalog::load(&catalog_path(pool, layer, fp)).unwrap_or_default();
    let chunk_cat = cats(layer::CHUNKS, &layer::chunks_fingerprint());
    let lex_cat = cats(layer::LEXICAL, &layer::lexical_fingerprint());
    let graph_cat = cats(layer::GRAPH, &layer::graph_fingerprint());
    // Group by the pool's chunk segment: a segment is accepted or refused whole.
    let mut groups: BTreeMap<u32, Vec<(&Key, &Content, Loc, Loc, Option<Loc>)>> = BTreeMap::new();
    for (key, content) in wanted {
        let (Some(c), Some(l)) = (chunk_cat.get(key), lex_cat.get(key)) else { continue };
        let g = graph_cat.get(key);
        if with_graph && g.is_none() {
            continue;
        }
        groups.entry(c.seg).or_default().push((key, content, c, l, g));
    }
    if groups.is_empty() {
        return Ok(out);
    }
    let repo = ws.repo.local();
    let mut batches: HashMap<std::path::PathBuf, RecordBatch> = HashMap::new();
    let at = |name: &str| pool.join(format!("{name}.parquet"));
    let mut accepted: Vec<Processed> = Vec::new();
    for (seg, items) in &groups {
        let seg_name = chunk_cat.segments[*seg as usize].clone();
        let mut good: Vec<Processed> = Vec::new();
        let mut failure: Option<String> = None;
        for (key, content, c, l, g) in items.iter() {
            let bytes: std::borrow::Cow<[u8]> = match content {
                Content::Bytes(b) => std::borrow::Cow::Borrowed(*b),
                Content::Odb(id) => match crate::repo::Repo::read_blob(&repo, *id) {
                    Ok(b) => std::borrow::Cow::Owned(b),
                    Err(_) => {
                        out.unverifiable += 1;
                        continue;
                    }
                },
            };
            let lex_name = lex_cat.segments[l.seg as usize].clone();
            let graph_name = g.map(|g| graph_cat.segments[g.seg as usize].clone());
            let loaded = load(&mut batches, &at(&seg_name))
                .and_then(|_| load(&mut batches, &at(&lex_name)))
                .and_then(|_| graph_name.as_deref().map_or(Ok(()), |g| load(&mut batches, &at(g))));
            if let Err(e) = loaded {
                failure = Some(format!("unreadable: {e:#}"));
                break;
            }
            let graph = graph_name.as_ref().zip(*g).map(|(n, g)| (&batches[&at(n)], g));
            match check_blob(
                **key,
                &bytes,
                (&batches[&at(&seg_name)], *c),
                (&batches[&at(&lex_name)], *l),
                graph,
                with_graph,
            ) {
                Ok(p) => good.push(p),
                Err(why) => {
                    failure = Some(format!("blob {:?}: {why}", key));
                    break;
                }
            }
        }
        match failure {
            Some(reason) => {
                tracing::warn!("refusing foreign segment {seg_name}: {reason}");
                out.rejected.push(Rejected { segment: seg_name, reason, derived: Vec::new() });
            }
            None => accepted.extend(good),
        }
    }
    out.blobs = accepted.len();
    let texts: HashMap<[u8; 16], String> = accepted
        .iter()
        .flat_map(|p| p.chunks.hashes.iter().copied().zip(p.chunks.chunks.iter().map(|c| c.text.clone())))
        .collect();
    super::store_processed(ws, accepted)?;
    if let Some(m) = model {
        out.vectors = vectors(&ws.store, pool, &texts, m, &mut out.rejected)?;
    }
    Ok(out)
}

/// Decodes the segment at `path` once.
fn load(batches: &mut HashMap<std::path::PathBuf, RecordBatch>, path: &Path) -> Result<()> {
    if !batches.contains_key(path) {
        let b = crate::store::read_segment_file(path)?;
        batches.insert(path.to_path_buf(), b);
    }
    Ok(())
}

/// Checks one blob's rows against its content, processed again from scratch: they must match
/// in every layer, exactly. Returns what this machine computed.
fn check_blob(
    key: Key,
    content: &[u8],
    (cb, c): (&RecordBatch, Loc),
    (lb, l): (&RecordBatch, Loc),
    graph: Option<(&RecordBatch, Loc)>,
    with_graph: bool,
) -> std::result::Result<Processed, String> {
    let cc = ChunkColumns::new(cb).map_err(|e| e.to_string())?;
    let lc = TermColumns::new(lb).map_err(|e| e.to_string())?;
    let rows = |loc: Loc, n: usize| -> std::result::Result<std::ops::Range<usize>, String> {
        let (s, e) = (loc.row as usize, loc.row as usize + loc.count as usize);
        if loc.count == 0 || e > n { Err("rows out of range".into()) } else { Ok(s..e) }
    };
    let cr = rows(c, cc.len())?;
    let lr = rows(l, lc.key.len())?;
    for r in cr.clone() {
        if cc.key.value(r) != key.0 {
            return Err("chunk rows belong to another blob".into());
        }
    }
    let head = cr.start;
    let expected_status = match crate::repo::content_skip(content) {
        Some(crate::repo::SkipReason::LfsPointer) => Status::LfsPointer,
        Some(_) => Status::Binary,
        None => Status::Text,
    };
    if cc.status(head) != expected_status || cc.size.value(head) != content.len() as u64 {
        return Err("status or size does not match the blob".into());
    }
    let lang = cc.lang(head);
    if Lang::from_code(key.hint()).is_some_and(|h| h != lang) {
        return Err("language does not match the path's".into());
    }
    let mine = process::process_as(key, lang, content, with_graph);
    let theirs = read_processed(key, &cc, cr, &lc, lr, graph, lang, content.len() as u64)?;
    let differs = |what: &str| Err(format!("processing the blob again gives other {what}"));
    if mine.chunks.status != theirs.chunks.status || mine.chunks.encoding != theirs.chunks.encoding {
        return differs("status or encoding");
    }
    if mine.chunks.chunks.len() != theirs.chunks.chunks.len() {
        return differs(&format!("chunks ({} here, {} there)", mine.chunks.chunks.len(), theirs.chunks.chunks.len()));
    }
    if mine.chunks.chunks != theirs.chunks.chunks || mine.chunks.hashes != theirs.chunks.hashes {
        return differs("chunk texts, lines or symbols");
    }
    if mine.terms.chunks != theirs.terms.chunks {
        return differs("lexical data");
    }
    if with_graph && mine.facts.facts != theirs.facts.facts {
        return differs("graph facts (definitions, calls, imports or bases)");
    }
    Ok(mine)
}

/// The foreign rows of one blob as processed output (shape checks only).
#[allow(clippy::too_many_arguments)]
fn read_processed(
    key: Key,
    cc: &ChunkColumns,
    cr: std::ops::Range<usize>,
    lc: &TermColumns,
    lr: std::ops::Range<usize>,
    graph: Option<(&RecordBatch, Loc)>,
    lang: Lang,
    size: u64,
) -> std::result::Result<Processed, String> {
    let status = cc.status(cr.start);
    let encoding = cc.encoding.value(cr.start).to_string();
    let mut chunks = Vec::new();
    let mut hashes = Vec::new();
    let mut terms = Vec::new();
    let no_chunks = cr.len() == 1 && !cc.is_chunk(cr.start);
    if !no_chunks {
        if cr.len() != lr.len() {
            return Err("chunk and lexical rows disagree".into());
        }
        for (i, (r, t)) in cr.zip(lr).enumerate() {
            if cc.ord.value(r) != i as i32 || lc.ord.value(t) != i as i32 {
                return Err("chunk ordinals are not in sequence".into());
            }
            let (start, end) = (cc.start_line.value(r), cc.end_line.value(r));
            if start == 0 || end < start {
                return Err("chunk lines out of order".into());
            }
            chunks.push(crate::chunk::Chunk {
                symbol: cc.symbol.value(r).to_string(),
                kind: cc.kind.value(r).to_string(),
                start_line: start,
                end_line: end,
                text: cc.text.value(r).to_string(),
            });
            hashes.push(cc.hash(r));
            terms.push(ChunkTerms {
                terms: lc.terms(t).map(|(s, n)| (s.to_string(), n)).collect(),
                symbol: lc.symbol_terms(t).map(str::to_string).collect(),
            });
        }
    } else if lr.len() != 1 || lc.ord.value(lr.start) >= 0 {
        return Err("chunk and lexical rows disagree".into());
    }
    let facts = match graph {
        Some((b, g)) => {
            let n = b.num_rows();
            if g.count == 0 || (g.row + g.count) as usize > n {
                return Err("graph rows out of range".into());
            }
            layer::graph::read_facts(b, g.row as usize, g.count as usize).map_err(|e| e.to_string())?
        }
        None => Facts::default(),
    };
    Ok(Processed {
        chunks: BlobChunks { key, status, lang, size, chunks, hashes, encoding },
        terms: BlobTerms { key, chunks: terms },
        facts: BlobFacts { key, facts },
    })
}

/// The pool's vectors (of `model`) for the chunks of `texts`: every one is computed again with
/// the local model and compared; what is stored is the local computation, so a forged vector
/// can never enter, and a segment holding one is reported as refused. Returns the number of
/// vectors stored.
pub fn vectors(
    store: &crate::store::Store,
    pool: &Path,
    texts: &HashMap<[u8; 16], String>,
    model: &dyn Embedder,
    rejected: &mut Vec<Rejected>,
) -> Result<usize> {
    let fp = model.fingerprint();
    let cat = Catalog::load(&catalog_path(pool, layer::VECTORS, fp)).unwrap_or_default();
    let local = store.catalogs(layer::VECTORS, fp)?;
    let mut by_seg: BTreeMap<u32, Vec<([u8; 16], u32)>> = BTreeMap::new();
    for h in texts.keys() {
        let k = Key::hash(h);
        if local.contains(&k) {
            continue;
        }
        if let Some(loc) = cat.get(&k) {
            by_seg.entry(loc.seg).or_default().push((*h, loc.row));
        }
    }
    let dim = model.dim();
    let mut stored = 0;
    for (seg, mut rows) in by_seg {
        rows.sort();
        let name = &cat.segments[seg as usize];
        let theirs = (|| -> std::result::Result<Vec<f32>, String> {
            let batch =
                crate::store::read_segment_file(&pool.join(format!("{name}.parquet"))).map_err(|e| format!("{e:#}"))?;
            let cols = layer::vectors::VectorColumns::new(&batch).map_err(|e| e.to_string())?;
            if cols.dim != dim {
                return Err(format!("dimension {} where the model has {dim}", cols.dim));
            }
            let mut values = vec![0f32; rows.len() * dim];
            for (i, &(_, row)) in rows.iter().enumerate() {
                if row as usize >= cols.len() {
                    return Err("rows out of range".into());
                }
                cols.read(row as usize, &mut values[i * dim..(i + 1) * dim]);
            }
            Ok(values)
        })();
        let all_texts: Vec<&str> = rows.iter().map(|r| texts[&r.0].as_str()).collect();
        let mut mine = Vec::with_capacity(rows.len() * dim);
        for batch in all_texts.chunks(256) {
            mine.extend(model.embed_documents(batch)?);
        }
        if mine.len() != rows.len() * dim {
            anyhow::bail!("the model returned {} values for {} texts of dimension {dim}", mine.len(), rows.len());
        }
        let verdict = theirs.and_then(|values| {
            for i in 0..rows.len() {
                let cos = crate::embed::dot(&mine[i * dim..(i + 1) * dim], &values[i * dim..(i + 1) * dim]);
                if !(cos >= 0.99) {
                    return Err(format!("a vector does not match the model's (cosine {cos:.3})"));
                }
            }
            Ok(())
        });
        if let Err(reason) = verdict {
            tracing::warn!("refusing foreign vector segment {name}: {reason}");
            rejected.push(Rejected { segment: name.clone(), reason, derived: Vec::new() });
        }
        let hashes: Vec<[u8; 16]> = rows.iter().map(|r| r.0).collect();
        let (batch, keys) = layer::vectors::to_batch(&hashes, &mine, dim)?;
        let seg_name = store.write_segment(layer::VECTORS, fp, &batch)?;
        crate::shard::vectors::write(store, 0, &seg_name, &batch)?;
        store.commit(layer::VECTORS, fp, &[(seg_name, keys)])?;
        stored += hashes.len();
    }
    if stored > 0 {
        let info = layer::VectorLayerInfo { model: model.name().to_string(), kind: model.kind().to_string(), dim };
        let info_path = layer::vector_info_path(store.objects(), fp);
        if !info_path.exists() {
            crate::fsutil::write_atomic(&info_path, serde_json::to_string(&info)?.as_bytes())?;
        }
    }
    Ok(stored)
}

/// Checks the local store's objects of `wanted` by processing each blob again (what
/// `doctor --verify` does), and, with `model`, every vector of their chunks by computing it
/// again: every mismatch is reported with its segment and the segments derived with it.
pub fn verify_local(
    ws: &Workspace,
    wanted: &[(Key, Content)],
    model: Option<&dyn Embedder>,
) -> Result<(usize, Vec<Rejected>)> {
    let with_graph = ws.config.index.graph;
    let chunk_cat = ws.store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
    let lex_cat = ws.store.catalogs(layer::LEXICAL, &layer::lexical_fingerprint())?;
    let graph_cat = ws.store.catalogs(layer::GRAPH, &layer::graph_fingerprint())?;
    let repo = ws.repo.local();
    let mut batches: HashMap<std::path::PathBuf, RecordBatch> = HashMap::new();
    let (mut checked, mut bad) = (0, Vec::new());
    let mut texts: HashMap<[u8; 16], String> = HashMap::new();
    for (key, content) in wanted {
        let (Some(c), Some(l)) = (chunk_cat.get(key), lex_cat.get(key)) else { continue };
        let g = if with_graph { graph_cat.get(key) } else { None };
        let bytes = match content {
            Content::Bytes(b) => b.to_vec(),
            Content::Odb(id) => match crate::repo::Repo::read_blob(&repo, *id) {
                Ok(b) => b,
                Err(_) => continue,
            },
        };
        let cn = chunk_cat.segment_name(c).to_string();
        let ln = lex_cat.segment_name(l).to_string();
        let gn = g.map(|g| graph_cat.segment_name(g).to_string());
        let (cp, lp) = (ws.store.segment_path(c.dir, &cn), ws.store.segment_path(l.dir, &ln));
        let gp = g.zip(gn.as_ref()).map(|(g, n)| ws.store.segment_path(g.dir, n));
        let loaded = load(&mut batches, &cp)
            .and_then(|_| load(&mut batches, &lp))
            .and_then(|_| gp.as_ref().map_or(Ok(()), |gp| load(&mut batches, gp)));
        checked += 1;
        let derived: Vec<String> = [Some(ln.clone()), gn.clone()].into_iter().flatten().collect();
        if let Err(e) = loaded {
            bad.push(Rejected { segment: cn, reason: format!("blob {key:?}: unreadable ({e:#})"), derived });
            continue;
        }
        let graph = g.zip(gp.as_ref()).map(|(g, gp)| (&batches[gp], g.loc));
        match check_blob(*key, &bytes, (&batches[&cp], c.loc), (&batches[&lp], l.loc), graph, with_graph) {
            Ok(mine) => {
                texts.extend(mine.chunks.hashes.iter().copied().zip(mine.chunks.chunks.into_iter().map(|c| c.text)))
            }
            Err(reason) => bad.push(Rejected { segment: cn, reason: format!("blob {key:?}: {reason}"), derived }),
        }
    }
    if let Some(m) = model {
        bad.extend(verify_vectors(ws, &texts, m)?);
    }
    Ok((checked, bad))
}

/// Every stored vector of these chunk texts, computed again with `model` and compared.
fn verify_vectors(ws: &Workspace, texts: &HashMap<[u8; 16], String>, model: &dyn Embedder) -> Result<Vec<Rejected>> {
    let cat = ws.store.catalogs(layer::VECTORS, model.fingerprint())?;
    let dim = model.dim();
    let mut bad = Vec::new();
    let keyed = texts.keys().map(|h| (*h, Key::hash(h)));
    for g in cat.by_segment(keyed, |_| true) {
        let batch = match ws.store.read_segment(g.dir, &g.name) {
            Ok(b) => b,
            Err(e) => {
                bad.push(Rejected {
                    segment: g.name.clone(),
                    reason: format!("unreadable vectors ({e:#})"),
                    derived: Vec::new(),
                });
                continue;
            }
        };
        let cols = layer::vectors::VectorColumns::new(&batch)?;
        let rows: Vec<([u8; 16], u32)> = g.rows().map(|(h, row, _)| (*h, row as u32)).collect();
        let chunk_texts: Vec<&str> = rows.iter().map(|(h, _)| texts[h].as_str()).collect();
        let mut mine = Vec::with_capacity(rows.len() * dim);
        for b in chunk_texts.chunks(256) {
            mine.extend(model.embed_documents(b)?);
        }
        let mut stored = vec![0f32; dim];
        for (i, &(_, row)) in rows.iter().enumerate() {
            if cols.dim != dim || row as usize >= cols.len() {
                bad.push(Rejected {
                    segment: g.name.clone(),
                    reason: "vector rows do not fit the model".into(),
                    derived: Vec::new(),
                });
                break;
            }
            cols.read(row as usize, &mut stored);
            let cos = crate::embed::dot(&mine[i * dim..(i + 1) * dim], &stored);
            if !(cos >= 0.99) {
                bad.push(Rejected {
                    segment: g.name.clone(),
                    reason: format!("a vector does not match the model's (cosine {cos:.3})"),
                    derived: Vec::new(),
                });
                break;
            }
        }
    }
    Ok(bad)
}
