//! A static model distilled from a transformer, the model2vec recipe: every vocabulary token
//! (and any extra word, such as a repository's own identifier words) goes through the
//! transformer once as `[CLS] token [SEP]`, its hidden states mean-pooled; the table is centred
//! and reduced by PCA, and each row is weighted by SIF on its rank (frequent, early tokens
//! count little). The folder written loads as any model2vec static model.

use super::EmbedError;
use super::transformer::Transformer;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Sequences per transformer run (short ones: a token with its two special tokens).
const BATCH: usize = 256;
/// model2vec's default SIF coefficient.
const SIF: f64 = 1e-4;

#[derive(Debug, Serialize)]
pub struct DistillReport {
    pub out: String,
    pub source: String,
    pub tokens: usize,
    pub words_added: usize,
    pub words_skipped: usize,
    pub dim: usize,
    pub seconds: f64,
}

/// How the distilled table is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TableType {
    F32,
    /// model2vec's default.
    #[default]
    F16,
    /// One signed byte per value with a per-row scale in the `weights` tensor (which model2vec
    /// and Lynx multiply each token's row by): half of float16's size. Each row keeps its own
    /// range, so the rows SIF shrinks keep their precision.
    Int8,
}

/// The shape of a distilled model beyond its source.
#[derive(Debug, Clone, Copy)]
pub struct DistillOptions {
    /// Dimensions kept by PCA (the model's own when it has fewer).
    pub dims: usize,
    pub table: TableType,
    /// Keep only tokens written in ASCII (plus the unknown and padding tokens): code rarely
    /// needs the rest, and a word that used one becomes unknown, which embedding skips.
    pub ascii_only: bool,
}

/// What becomes a row: the token's text in the new vocabulary and the ids fed to the model.
struct Entry {
    token: String,
    ids: Vec<u32>,
}

/// Distils `t` (loaded from `source_dir`) into a static model folder at `out` shaped by `opts`,
/// adding `words` to the vocabulary.
pub fn distill(
    t: &Transformer,
    source_dir: &Path,
    source: &str,
    out: &Path,
    opts: &DistillOptions,
    words: &[String],
    progress: &dyn Fn(usize, usize),
) -> Result<DistillReport> {
    let started = std::time::Instant::now();
    let tok_path = source_dir.join("tokenizer.json");
    let mut tok_json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&tok_path).with_context(|| format!("reading {}", tok_path.display()))?,
    )
    .with_context(|| format!("{} is not JSON", tok_path.display()))?;
    let model = &tok_json["model"];
    if model["type"].as_str() != Some("WordPiece") {
        return Err(EmbedError::NotWordPiece {
            path: tok_path.display().to_string(),
            kind: model["type"].as_str().unwrap_or("of unknown type").to_string(),
        }
        .into());
    }
    let unk = model["unk_token"].as_str().unwrap_or("[UNK]").to_string();
    let vocab = model["vocab"].as_object().context("tokenizer.json has no model.vocab")?;
    let mut by_id: Vec<(u32, &str)> =
        vocab.iter().filter_map(|(k, v)| Some((v.as_u64()? as u32, k.as_str()))).collect();
    by_id.sort_unstable();
    // Special tokens other than padding and the unknown token never occur inside a text.
    let specials: HashSet<String> = tok_json["added_tokens"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|t| t["special"].as_bool() == Some(true))
                .filter_map(|t| t["content"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let pad = ["[PAD]", "<pad>"].into_iter().find(|p| vocab.contains_key(*p)).unwrap_or("[PAD]").to_string();
    let unused = regex::Regex::new(r"^\[unused\d+\]$").expect("static regex");

    let tokenizer = t.tokenizer();
    let (prefix, suffix) = special_frame(tokenizer)?;
    let mut entries: Vec<Entry> = Vec::with_capacity(by_id.len() + words.len());
    let mut known: HashSet<&str> = HashSet::with_capacity(by_id.len());
    for &(id, token) in &by_id {
        known.insert(token);
        if unused.is_match(token) || (specials.contains(token) && token != unk && token != pad) {
            continue;
        }
        if opts.ascii_only && !token.is_ascii() {
            continue;
        }
        entries.push(Entry { token: token.to_string(), ids: [prefix.as_slice(), &[id], suffix.as_slice()].concat() });
    }
    let lowercase = tok_json["normalizer"]["lowercase"].as_bool().unwrap_or(false);
    let mut added: HashSet<String> = HashSet::new();
    let mut skipped = 0;
    for w in words {
        let w = if lowercase { w.to_lowercase() } else { w.clone() };
        // One whole word per entry: WordPiece then matches it before its pieces.
        if w.is_empty()
            || !w.chars().all(char::is_alphanumeric)
            || (opts.ascii_only && !w.is_ascii())
            || known.contains(w.as_str())
            || added.contains(&w)
        {
            skipped += 1;
            continue;
        }
        let enc = tokenizer.encode(w.as_str(), true).map_err(|e| EmbedError::Tokenizer { why: e.to_string() })?;
        added.insert(w.clone());
        entries.push(Entry { token: w, ids: enc.get_ids().to_vec() });
    }

    let table = embed_entries(t, &entries, progress)?;
    let width = table.len() / entries.len().max(1);
    let dims = opts.dims.min(width).max(1);
    let mut reduced = pca(&table, entries.len(), width, dims);
    for (i, row) in reduced.chunks_mut(dims).enumerate() {
        let w = sif_weight(i, entries.len()) as f32;
        row.iter_mut().for_each(|x| *x *= w);
    }

    // The new vocabulary, renumbered in table order; added tokens point at their new ids.
    let new_vocab: serde_json::Map<String, serde_json::Value> =
        entries.iter().enumerate().map(|(i, e)| (e.token.clone(), serde_json::json!(i))).collect();
    let ids: HashMap<&str, usize> = entries.iter().enumerate().map(|(i, e)| (e.token.as_str(), i)).collect();
    tok_json["model"]["vocab"] = serde_json::Value::Object(new_vocab);
    let kept_added: Vec<serde_json::Value> = tok_json["added_tokens"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| {
                    let id = *ids.get(t["content"].as_str()?)?;
                    let mut t = t.clone();
                    t["id"] = serde_json::json!(id);
                    Some(t)
                })
                .collect()
        })
        .unwrap_or_default();
    tok_json["added_tokens"] = serde_json::Value::Array(kept_added);
    tok_json["post_processor"] = serde_json::Value::Null;
    tok_json["padding"] = serde_json::Value::Null;
    tok_json["truncation"] = serde_json::Value::Null;

    write_model(out, &tok_json, &reduced, entries.len(), dims, opts.table, source, added.len())?;
    Ok(DistillReport {
        out: out.display().to_string(),
        source: source.to_string(),
        tokens: entries.len(),
        words_added: added.len(),
        words_skipped: skipped,
        dim: dims,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The ids the tokenizer puts before and after a text's own (`[CLS]` and `[SEP]` for BERT).
fn special_frame(tok: &tokenizers::Tokenizer) -> Result<(Vec<u32>, Vec<u32>)> {
    let with = tok.encode("a", true).map_err(|e| EmbedError::Tokenizer { why: e.to_string() })?;
    let without = tok.encode("a", false).map_err(|e| EmbedError::Tokenizer { why: e.to_string() })?;
    let (w, o) = (with.get_ids(), without.get_ids());
    let mask = with.get_attention_mask();
    let real = mask.iter().take_while(|&&m| m == 1).count();
    let w = &w[..real];
    let at = w
        .windows(o.len().max(1))
        .position(|win| win == o)
        .context("the tokenizer's special tokens could not be located")?;
    Ok((w[..at].to_vec(), w[at + o.len()..].to_vec()))
}

/// Mean hidden state of every entry, `entries × width`, shortest sequences batched together.
fn embed_entries(t: &Transformer, entries: &[Entry], progress: &dyn Fn(usize, usize)) -> Result<Vec<f32>> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| entries[i].ids.len());
    let mut table: Vec<f32> = Vec::new();
    let mut width = 0;
    let mut done = 0;
    for batch in order.chunks(BATCH) {
        let seqs: Vec<Vec<u32>> = batch.iter().map(|&i| entries[i].ids.clone()).collect();
        let v = t.mean_hidden(&seqs)?;
        if width == 0 {
            width = v.len() / batch.len();
            table = vec![0f32; entries.len() * width];
        }
        for (j, &i) in batch.iter().enumerate() {
            table[i * width..(i + 1) * width].copy_from_slice(&v[j * width..(j + 1) * width]);
        }
        done += batch.len();
        progress(done, entries.len());
    }
    table.iter_mut().filter(|x| !x.is_finite()).for_each(|x| *x = 0.0);
    Ok(table)
}

/// model2vec's SIF weight of the row at `rank`: token probability from Zipf's law on the rank.
pub fn sif_weight(rank: usize, n: usize) -> f64 {
    let norm: f64 = (2..n + 2).map(|r| 1.0 / r as f64).sum();
    let p = (1.0 / (rank + 2) as f64) / norm;
    SIF / (SIF + p)
}

/// Rows centred and projected on the `k` principal axes (largest variance first), each axis
/// signed so that its largest-magnitude score is positive; not whitened.
pub fn pca(x: &[f32], n: usize, d: usize, k: usize) -> Vec<f32> {
    let mut mean = vec![0f64; d];
    for row in x.chunks(d) {
        mean.iter_mut().zip(row).for_each(|(m, &v)| *m += v as f64);
    }
    mean.iter_mut().for_each(|m| *m /= n.max(1) as f64);
    let mut cov = vec![0f64; d * d];
    let mut c = vec![0f64; d];
    for row in x.chunks(d) {
        c.iter_mut().zip(row).zip(&mean).for_each(|((c, &v), m)| *c = v as f64 - m);
        for i in 0..d {
            let ci = c[i];
            let line = &mut cov[i * d..(i + 1) * d];
            for j in i..d {
                line[j] += ci * c[j];
            }
        }
    }
    for i in 0..d {
        for j in i..d {
            cov[i * d + j] /= (n.max(2) - 1) as f64;
            cov[j * d + i] = cov[i * d + j];
        }
    }
    let (values, vectors) = symmetric_eigen(cov, d);
    let mut axes: Vec<usize> = (0..d).collect();
    axes.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let axes = &axes[..k.min(d)];
    let mut out = vec![0f32; n * axes.len()];
    for (r, row) in x.chunks(d).enumerate() {
        for (j, &a) in axes.iter().enumerate() {
            let mut s = 0f64;
            for i in 0..d {
                s += (row[i] as f64 - mean[i]) * vectors[i * d + a];
            }
            out[r * axes.len() + j] = s as f32;
        }
    }
    let k = axes.len();
    for j in 0..k {
        let mut best = 0f32;
        for r in 0..n {
            let v = out[r * k + j];
            if v.abs() > best.abs() {
                best = v;
            }
        }
        if best < 0.0 {
            (0..n).for_each(|r| out[r * k + j] = -out[r * k + j]);
        }
    }
    out
}

/// Eigenvalues and eigenvectors (column `j` of the row-major result) of a symmetric matrix,
/// by cyclic Jacobi rotations: exact to rounding for the few hundred dimensions of an
/// embedding model, and a few dozen lines instead of a linear-algebra dependency.
fn symmetric_eigen(mut a: Vec<f64>, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0f64; n * n];
    (0..n).for_each(|i| v[i * n + i] = 1.0);
    for _sweep in 0..60 {
        let off: f64 =
            (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).map(|(i, j)| a[i * n + j] * a[i * n + j]).sum();
        let diag: f64 = (0..n).map(|i| a[i * n + i] * a[i * n + i]).sum();
        if off <= 1e-22 * diag.max(1e-300) {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let akp = a[k * n + p];
                    let akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let apk = a[p * n + k];
                    let aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let vkp = v[k * n + p];
                    let vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..n).map(|i| a[i * n + i]).collect(), v)
}

/// Writes the folder beside its final place and renames it in, so a crash leaves no half model.
#[allow(clippy::too_many_arguments)]
fn write_model(
    out: &Path,
    tok_json: &serde_json::Value,
    table: &[f32],
    rows: usize,
    dims: usize,
    stored: TableType,
    source: &str,
    words: usize,
) -> Result<()> {
    if out.exists() {
        return Err(EmbedError::Exists { path: out.display().to_string() }.into());
    }
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let name = out.file_name().context("--out needs a folder name")?.to_string_lossy().to_string();
    let tmp = parent.join(format!(".{name}.{}.lynx-tmp", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    let (data, dtype, scales) = encode_table(table, dims, stored);
    let mut tensors = vec![("embeddings", safetensors::tensor::TensorView::new(dtype, vec![rows, dims], &data)?)];
    let scale_bytes: Vec<u8> = scales.iter().flat_map(|s| s.to_le_bytes()).collect();
    if !scales.is_empty() {
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![rows], &scale_bytes)?;
        tensors.push(("weights", view));
    }
    let st = safetensors::serialize(tensors, None)?;
    let dtype_name = match stored {
        TableType::F32 => "float32",
        TableType::F16 => "float16",
        TableType::Int8 => "int8",
    };
    let config = serde_json::json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": dims,
        "apply_pca": dims,
        "sif_coefficient": SIF,
        "normalize": true,
        "embedding_dtype": dtype_name,
        "distilled_from": source,
        "repository_words": words,
    });
    let files: [(&str, Vec<u8>); 3] = [
        ("model.safetensors", st),
        ("tokenizer.json", serde_json::to_vec(tok_json)?),
        ("config.json", serde_json::to_vec_pretty(&config)?),
    ];
    for (file, data) in files {
        crate::fsutil::write_atomic(&tmp.join(file), &data)?;
    }
    std::fs::rename(&tmp, out).with_context(|| format!("moving the model into {}", out.display()))?;
    Ok(())
}

/// The table's bytes as stored, their dtype, and (int8 only) each row's scale: the row's
/// largest magnitude over 127, so that `byte × scale` gives the value back.
fn encode_table(table: &[f32], dims: usize, stored: TableType) -> (Vec<u8>, safetensors::Dtype, Vec<f32>) {
    match stored {
        TableType::F32 => (table.iter().flat_map(|x| x.to_le_bytes()).collect(), safetensors::Dtype::F32, Vec::new()),
        TableType::F16 => (
            table.iter().flat_map(|&x| half::f16::from_f32(x).to_le_bytes()).collect(),
            safetensors::Dtype::F16,
            Vec::new(),
        ),
        TableType::Int8 => {
            let mut bytes = Vec::with_capacity(table.len());
            let mut scales = Vec::with_capacity(table.len() / dims.max(1));
            for row in table.chunks(dims) {
                let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
                let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
                bytes.extend(row.iter().map(|&x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8));
                scales.push(scale);
            }
            (bytes, safetensors::Dtype::I8, scales)
        }
    }
}

/// The words of a repository's identifiers (`parseHttpRequest` → parse, http, request), most
/// frequent first: the vocabulary a repository-specific static model adds.
pub fn identifier_words<'a>(texts: impl Iterator<Item = &'a [u8]>, max: usize, min_count: usize) -> Vec<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for bytes in texts {
        let Ok(text) = std::str::from_utf8(bytes) else { continue };
        let words = super::static_model::code_words(text);
        for w in words.split(|c: char| !c.is_ascii_alphabetic()) {
            if (3..=24).contains(&w.len()) {
                *counts.entry(w.to_ascii_lowercase()).or_default() += 1;
            }
        }
    }
    let mut v: Vec<(String, usize)> = counts.into_iter().filter(|(_, c)| *c >= min_count).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.into_iter().take(max).map(|(w, _)| w).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_finds_known_eigenpairs() {
        // [[2,1],[1,2]]: eigenvalues 3 and 1 with axes (1,1) and (1,-1).
        let (vals, vecs) = symmetric_eigen(vec![2.0, 1.0, 1.0, 2.0], 2);
        let big = if vals[0] > vals[1] { 0 } else { 1 };
        assert!((vals[big] - 3.0).abs() < 1e-12 && (vals[1 - big] - 1.0).abs() < 1e-12, "{vals:?}");
        assert!((vecs[big].abs() - vecs[2 + big].abs()).abs() < 1e-12 && vecs[big] * vecs[2 + big] > 0.0);
    }

    #[test]
    fn pca_keeps_the_axis_of_most_variance() {
        // Points along (1,1) with a little noise across it: one component carries them.
        let x: Vec<f32> = (0..50)
            .flat_map(|i| {
                let t = i as f32 - 25.0;
                let e = if i % 2 == 0 { 0.1 } else { -0.1 };
                [t + e, t - e]
            })
            .collect();
        let p = pca(&x, 50, 2, 1);
        assert_eq!(p.len(), 50);
        // Projection on (1,1)/√2 of the centred point, sign chosen so the largest is positive.
        let expect = |i: usize| ((i as f32 - 25.0) + 0.5) * 2f32.sqrt();
        let sign = if p[49] > 0.0 { 1.0 } else { -1.0 };
        for (i, v) in p.iter().enumerate() {
            assert!((v - sign * expect(i)).abs() < 1e-3, "{i}: {v} vs {}", expect(i));
        }
        assert!(p.iter().map(|v| v.abs()).fold(0f32, f32::max) == p.iter().copied().fold(f32::MIN, f32::max));
    }

    #[test]
    fn sif_weights_rise_with_rank() {
        let n = 30_000;
        let (first, mid, last) = (sif_weight(0, n), sif_weight(1000, n), sif_weight(n - 1, n));
        assert!(first < 0.01 && first < mid && mid < last && last < 1.0, "{first} {mid} {last}");
    }

    #[test]
    fn int8_rows_keep_their_own_range() {
        // A row SIF shrank to a hundredth of its neighbour keeps its precision.
        let table = [0.01f32, -0.005, 0.0025, 1.0, -0.5, 0.25];
        let (bytes, dtype, scales) = encode_table(&table, 3, TableType::Int8);
        assert_eq!(dtype, safetensors::Dtype::I8);
        assert_eq!(scales.len(), 2);
        for (i, &want) in table.iter().enumerate() {
            let got = bytes[i] as i8 as f32 * scales[i / 3];
            assert!((got - want).abs() <= want.abs() / 100.0 + 1e-9, "{i}: {got} vs {want}");
        }
    }

    #[test]
    fn identifier_words_split_and_count() {
        let a = b"fn parseHttpRequest(req) { parse_http(req) }".as_slice();
        let b = b"HttpRequest request".as_slice();
        let w = identifier_words([a, b].into_iter(), 10, 2);
        assert_eq!(w, vec!["http", "request", "parse", "req"]);
    }
}
