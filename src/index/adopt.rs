//! Adopting objects computed elsewhere (an imported pack, an alternate object directory that
//! the user has not marked trusted). They are untrusted input: a row enters the local store
//! only after it is checked against the git blob it claims to describe, and then it is written
//! anew as the local store's own segment (so everything under `.lynx/objects` stays trusted,
//! and a catalog rebuilt from the segments trusts nothing it should not).
//!
//! What is checked, for every blob adopted:
//! - chunks: status and size match the content; every chunk's text is exactly the lines it
//!   claims (or their documented truncation), its hash is its text's hash, its kind is one Lynx
//!   emits, its symbol is made of words of the file;
//! - lexical data: recomputed from those texts and compared exactly;
//! - graph facts: every name is made of words of the file, lines and references are in range;
//! - one blob in sixteen (and the first of every segment) is processed again from its content
//!   and must match in every layer, exactly;
//! - vectors: a sample of each segment is embedded again with the local model and must agree
//!   (cosine ≥ 0.99); without the model, vectors are not adopted (they are computed locally).
//!
//! A segment with one failing blob is refused whole: a tampered pack is not trusted for its
//! other rows either.

use super::process::{self, Processed};
use crate::embed::Embedder;
use crate::chunk::facts::Facts;
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
use std::collections::{BTreeMap, HashMap, HashSet};
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
}

/// Where a blob's content comes from.
pub enum Content<'a> {
    /// Git's object database.
    Odb(gix::ObjectId),
    /// Already in memory (working-tree files).
    Bytes(&'a [u8]),
}

/// One blob in sixteen, by its id, is processed again in full.
fn sampled(key: &Key) -> bool {
    key.0[0] < 16
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
        for (i, (key, content, c, l, g)) in items.iter().enumerate() {
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
            match check_blob(**key, &bytes, (&batches[&at(&seg_name)], *c), (&batches[&at(&lex_name)], *l), graph, i == 0 || sampled(key), with_graph) {
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
                out.rejected.push(Rejected { segment: seg_name, reason });
            }
            None => accepted.extend(good),
        }
    }
    out.blobs = accepted.len();
    let texts: HashMap<[u8; 16], String> =
        accepted.iter().flat_map(|p| p.chunks.hashes.iter().copied().zip(p.chunks.chunks.iter().map(|c| c.text.clone()))).collect();
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

/// Checks one blob's foreign rows against its content; returns them as processed output.
fn check_blob(
    key: Key,
    content: &[u8],
    (cb, c): (&RecordBatch, Loc),
    (lb, l): (&RecordBatch, Loc),
    graph: Option<(&RecordBatch, Loc)>,
    full: bool,
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
    if full {
        // Processed again from scratch: must match in every layer.
        let mine = process::process_as(key, lang, content, with_graph);
        let theirs = read_processed(key, &cc, cr.clone(), &lc, lr.clone(), graph, lang, content.len() as u64)?;
        if mine.chunks.status != theirs.chunks.status
            || mine.chunks.chunks != theirs.chunks.chunks
            || mine.chunks.hashes != theirs.chunks.hashes
            || mine.chunks.encoding != theirs.chunks.encoding
            || mine.terms.chunks != theirs.terms.chunks
            || (with_graph && mine.facts.facts != theirs.facts.facts)
        {
            return Err("processing the blob again gives other objects".into());
        }
        return Ok(mine);
    }
    let p = read_processed(key, &cc, cr.clone(), &lc, lr, graph, lang, content.len() as u64)?;
    if expected_status != Status::Text {
        return if p.chunks.chunks.is_empty() && p.terms.chunks.is_empty() { Ok(p) } else { Err("a binary or LFS blob with chunks".into()) };
    }
    let (text, encoding) = crate::encoding::decode(content);
    if cc.encoding.value(cr.start) != encoding.unwrap_or_default() {
        return Err("text encoding does not match the blob's".into());
    }
    let lines = crate::chunk::line_spans(&text);
    let words = words_of(&text);
    for (ch, h) in p.chunks.chunks.iter().zip(&p.chunks.hashes) {
        if !crate::chunk::is_chunk_text(&text, &lines, ch.start_line, ch.end_line, &ch.text) {
            return Err(format!("chunk text at lines {}-{} is not the blob's", ch.start_line, ch.end_line));
        }
        if *h != layer::chunk_hash(&ch.text) {
            return Err("chunk hash does not match its text".into());
        }
        if !crate::chunk::is_known_kind(&ch.kind) || !made_of(&ch.symbol, &words) {
            return Err("chunk symbol or kind is not the blob's".into());
        }
    }
    for (ch, t) in p.chunks.chunks.iter().zip(&p.terms.chunks) {
        if ChunkTerms::analyse(&ch.text, &ch.symbol) != *t {
            return Err("lexical data does not match the chunk texts".into());
        }
    }
    check_facts(&p.facts.facts, &words, lines.len() as u32)?;
    Ok(p)
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

/// Identifier-like words of a text.
fn words_of(text: &str) -> HashSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect()
}

/// Whether every identifier-like word of `s` is a word of the blob, several of them run together
/// (a name read across macro tokens: `HWY_ATTR Vec<D> f` gives `HWY_ATTRVecf`), or one the
/// chunker makes up (`part2` of a split definition, `(anonymous)` for an unnamed namespace).
fn made_of(s: &str, words: &HashSet<&str>) -> bool {
    let made_up = |w: &str| w == "anonymous" || w.strip_prefix("part").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    s.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).all(|w| words.contains(w) || made_up(w) || joined(w, words))
}

/// Whether `w` splits into words of the blob.
fn joined(w: &str, words: &HashSet<&str>) -> bool {
    if w.len() > 256 {
        return false;
    }
    let mut reach = vec![false; w.len() + 1];
    reach[0] = true;
    for i in 0..w.len() {
        if !reach[i] || !w.is_char_boundary(i) {
            continue;
        }
        for j in i + 1..=w.len() {
            if w.is_char_boundary(j) && words.contains(&w[i..j]) {
                reach[j] = true;
            }
        }
    }
    reach[w.len()]
}

fn check_facts(f: &Facts, words: &HashSet<&str>, lines: u32) -> std::result::Result<(), String> {
    let n = f.defs.len() as i32;
    let in_range = |r: i32| r >= -1 && r < n;
    let line_ok = |l: u32| l <= lines.max(1);
    let bad = |what: &str| Err(format!("graph fact ({what}) is not the blob's"));
    for d in &f.defs {
        if !made_of(&d.name, words) || !made_of(&d.qualified, words) || !crate::chunk::is_known_kind(&d.kind) {
            return bad("definition name");
        }
        if !line_ok(d.end_line) || d.end_line < d.start_line || !in_range(d.parent) {
            return bad("definition lines");
        }
    }
    for c in &f.calls {
        if !made_of(&c.name, words) || !made_of(&c.receiver, words) || !line_ok(c.line) || !in_range(c.scope) {
            return bad("call");
        }
    }
    for b in &f.bases {
        if !made_of(&b.name, words) || !in_range(b.def) {
            return bad("base");
        }
    }
    for i in &f.imports {
        if !made_of(&i.module, words) || !i.names.iter().all(|x| made_of(x, words)) || !line_ok(i.line) {
            return bad("import");
        }
    }
    for t in &f.types {
        // A field's hint is written `self.x` whatever the language calls its receiver.
        let var = t.var.strip_prefix("self.").unwrap_or(&t.var);
        if !made_of(var, words) || !made_of(&t.ty, words) || !in_range(t.scope) {
            return bad("type hint");
        }
    }
    // Table, class and column names are identifiers (plural or snake-cased forms of the
    // blob's words, so not checked word by word); anything else is not the blob's.
    let ident = |s: &str| s.len() <= 128 && s.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.'));
    for d in &f.data {
        let access_ok = matches!(d.access.as_str(), "read" | "write" | "ddl" | "call" | "map" | "map:django" | "map:join" | "repository" | "dbset");
        if !ident(&d.name) || !ident(&d.target) || !d.columns.iter().all(|c| ident(c)) || !access_ok || !line_ok(d.line) || !in_range(d.scope) {
            return bad("data access");
        }
    }
    Ok(())
}

/// Adopts the pool's vectors (of `model`) for the chunks of `texts`, a sample of each segment
/// embedded again and compared. Returns the number adopted.
pub fn vectors(store: &crate::store::Store, pool: &Path, texts: &HashMap<[u8; 16], String>, model: &dyn Embedder, rejected: &mut Vec<Rejected>) -> Result<usize> {
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
    let mut adopted = 0;
    for (seg, mut rows) in by_seg {
        rows.sort();
        let name = &cat.segments[seg as usize];
        let checked = (|| -> std::result::Result<Vec<f32>, String> {
            let batch = crate::store::read_segment_file(&pool.join(format!("{name}.parquet"))).map_err(|e| format!("{e:#}"))?;
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
            // Up to eight rows, spread over the segment, embedded again.
            let step = (rows.len() / 8).max(1);
            let sample: Vec<usize> = (0..rows.len()).step_by(step).take(8).collect();
            let sample_texts: Vec<&str> = sample.iter().map(|&i| texts[&rows[i].0].as_str()).collect();
            let fresh = model.embed_documents(&sample_texts).map_err(|e| format!("{e:#}"))?;
            for (j, &i) in sample.iter().enumerate() {
                let cos = crate::embed::dot(&fresh[j * dim..(j + 1) * dim], &values[i * dim..(i + 1) * dim]);
                if !(cos >= 0.99) {
                    return Err(format!("a vector does not match the model's (cosine {cos:.3})"));
                }
            }
            Ok(values)
        })();
        match checked {
            Ok(values) => {
                let hashes: Vec<[u8; 16]> = rows.iter().map(|r| r.0).collect();
                let (batch, keys) = layer::vectors::to_batch(&hashes, &values, dim)?;
                let seg_name = store.write_segment(layer::VECTORS, fp, &batch)?;
                crate::shard::vectors::write(&store.root, &seg_name, &batch)?;
                store.commit(layer::VECTORS, fp, &[(seg_name, keys)])?;
                adopted += hashes.len();
            }
            Err(reason) => {
                tracing::warn!("refusing foreign vector segment {name}: {reason}");
                rejected.push(Rejected { segment: name.clone(), reason });
            }
        }
    }
    if adopted > 0 {
        let info = layer::VectorLayerInfo { model: model.name().to_string(), kind: model.kind().to_string(), dim };
        let info_path = layer::vector_info_path(store.objects(), fp);
        if !info_path.exists() {
            crate::fsutil::write_atomic(&info_path, serde_json::to_string(&info)?.as_bytes())?;
        }
    }
    Ok(adopted)
}

/// Checks the local store's objects of `wanted` by processing each blob again (what
/// `doctor --verify` does): every mismatch is reported with its segment.
pub fn verify_local(ws: &Workspace, wanted: &[(Key, Content)]) -> Result<(usize, Vec<Rejected>)> {
    let with_graph = ws.config.index.graph;
    let chunk_cat = ws.store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?;
    let lex_cat = ws.store.catalogs(layer::LEXICAL, &layer::lexical_fingerprint())?;
    let graph_cat = ws.store.catalogs(layer::GRAPH, &layer::graph_fingerprint())?;
    let repo = ws.repo.local();
    let mut batches: HashMap<std::path::PathBuf, RecordBatch> = HashMap::new();
    let (mut checked, mut bad) = (0, Vec::new());
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
        let (cp, lp) = (ws.store.segment_path(c.dir, &cn), ws.store.segment_path(l.dir, lex_cat.segment_name(l)));
        let gp = g.map(|g| ws.store.segment_path(g.dir, graph_cat.segment_name(g)));
        load(&mut batches, &cp)?;
        load(&mut batches, &lp)?;
        if let Some(gp) = &gp {
            load(&mut batches, gp)?;
        }
        checked += 1;
        let graph = g.zip(gp.as_ref()).map(|(g, gp)| (&batches[gp], g.loc));
        if let Err(reason) = check_blob(*key, &bytes, (&batches[&cp], c.loc), (&batches[&lp], l.loc), graph, true, with_graph) {
            bad.push(Rejected { segment: cn, reason: format!("blob {key:?}: {reason}") });
        }
    }
    Ok((checked, bad))
}

#[cfg(test)]
mod tests {
    use super::{made_of, words_of};

    #[test]
    fn names_are_checked_against_the_blob_words() {
        let text = "namespace {\nHWY_ATTR Vec<D> byte_to_true(Vec<D> v) { return v; }\n}\n";
        let words = words_of(text);
        assert!(made_of("(anonymous).HWY_ATTRVecbyte_to_true", &words));
        assert!(made_of("byte_to_true.part2", &words));
        assert!(!made_of("ignore_previous_instructions", &words));
        assert!(!made_of("byte_to_trueX", &words));
    }
}
