//! Local embedding models behind one interface: static (model2vec, pure Rust) and transformer
//! (ONNX Runtime), plus the cross-encoder reranker. A model's fingerprint covers its name,
//! kind, a hash of its files, dimension, pooling and length, so changed model files can never
//! mix vectors.

pub mod builtin;
pub mod distill;
pub mod onnx;
pub mod rerank;
pub mod resolve;
pub mod static_model;
pub mod transformer;

use anyhow::{Context, Result};

crate::error::errors! {
    /// What goes wrong loading or running a transformer, or distilling one.
    pub enum EmbedError: Failure {
        Tokenizer { why: String } => "tokenizer: {why}",
        TokenizerFile { dir: String, why: String } => "cannot read {dir}/tokenizer.json: {why}",
        Session { why: String } => "ONNX Runtime session: {why}",
        Load { path: String, why: String } =>
            "cannot load {path} with ONNX Runtime (corrupt or unsupported model?): {why}",
        Poisoned {} => "ONNX session poisoned",
        NotEncoder { path: String, inputs: String } => "{path} has no `input_ids` input (inputs: {inputs}); not a text encoder",
        Input { name: String } =>
            "model input `{name}` is not supported (expected input_ids, attention_mask, token_type_ids)",
        OutputShape { shape: String, output: String } => "unexpected output shape {shape} from `{output}`",
        NotWordPiece { path: String, kind: String } =>
            "{path}: distilling needs a WordPiece tokenizer (BERT family, e.g. all-MiniLM-L6-v2, bge-small-en-v1.5); this one is {kind}",
        Exists { path: String } => "{path} already exists; choose another --out or remove it first",
        Returned { values: usize, texts: usize, dim: usize } =>
            "the model returned {values} values for {texts} texts of dimension {dim}",
        WriterPanicked {} => "the vector segment writer panicked",
        CrossEncoder { name: String } =>
            "{name} is a cross-encoder (a reranker), not an embedding model; use it with --rerank",
    }
}
use resolve::{ModelFiles, ModelKind};
use std::path::Path;
use std::sync::Arc;

pub trait Embedder: Send + Sync {
    fn dim(&self) -> usize;
    /// Identity of the vectors this model makes (the vector layer's fingerprint).
    fn fingerprint(&self) -> &str;
    fn name(&self) -> &str;
    fn kind(&self) -> &'static str;
    /// Unit vectors, `texts.len() × dim`, row-major.
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<f32>>;
    /// A unit vector for a search query (with the model's query instruction, if any).
    fn embed_query(&self, text: &str) -> Result<Vec<f32>>;
}

pub fn normalize(v: &mut [f32]) {
    let n: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Dot product of two equal-length vectors (runtime-dispatched to AVX2+FMA when the CPU has
/// them; the baseline x86-64 target only guarantees SSE2).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_fn()(a, b)
}

/// A stored vector: little-endian float16s at any byte alignment. Vector shards can point into
/// a segment file, where the values start wherever Parquet's page header ends.
#[derive(Debug, Clone, Copy)]
pub struct F16Row<'a>(&'a [u8]);

impl<'a> F16Row<'a> {
    /// `bytes` of whole float16s (a trailing odd byte is ignored).
    pub fn new(bytes: &'a [u8]) -> F16Row<'a> {
        F16Row(&bytes[..bytes.len() & !1])
    }

    /// Float16 bits as a row (tests, vectors built in memory).
    pub fn of_bits(bits: &'a [u16]) -> F16Row<'a> {
        F16Row(bytemuck::cast_slice(bits))
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.0.len() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Value `i` (panics out of range).
    pub fn get(&self, i: usize) -> f32 {
        half::f16::from_bits(u16::from_le_bytes([self.0[2 * i], self.0[2 * i + 1]])).to_f32()
    }

    /// The values as f32 (`out` as long as the row).
    pub fn to_f32(&self, out: &mut [f32]) {
        for (o, b) in out.iter_mut().zip(self.0.chunks_exact(2)) {
            *o = half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32();
        }
    }

    pub fn to_vec(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.len()];
        self.to_f32(&mut out);
        out
    }
}

/// The dot product of an f32 query and a stored f16 vector, the fastest this CPU has: F16C
/// conversion with AVX2+FMA, else a portable loop.
pub fn dot_f16_fn() -> fn(&[f32], F16Row) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c")
        {
            // SAFETY: the CPU has the features the function is compiled for.
            return |a, b| unsafe { dot_f16_avx2(a, b) };
        }
    }
    dot_f16_portable
}

fn dot_f16_portable(a: &[f32], b: F16Row) -> f32 {
    let mut acc = [0f32; 8];
    let n = a.len().min(b.len());
    for i in 0..n {
        acc[i % 8] += a[i] * b.get(i);
    }
    acc.iter().sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn dot_f16_avx2(a: &[f32], b: F16Row) -> f32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    // Four accumulators: one FMA chain would wait on its own latency every step.
    let (mut c0, mut c1, mut c2, mut c3) =
        (_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps());
    let mut i = 0;
    // SAFETY: every load reads 8 (or 32) elements at `i` within `n`, inside both slices; the
    // f16 loads are unaligned loads of 16 bytes.
    unsafe {
        let (pa, pb) = (a.as_ptr(), b.0.as_ptr());
        let half_at = |j: usize| _mm256_cvtph_ps(_mm_loadu_si128(pb.add(2 * j) as *const __m128i));
        while i + 32 <= n {
            c0 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), half_at(i), c0);
            c1 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i + 8)), half_at(i + 8), c1);
            c2 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i + 16)), half_at(i + 16), c2);
            c3 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i + 24)), half_at(i + 24), c3);
            i += 32;
        }
        while i + 8 <= n {
            c0 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), half_at(i), c0);
            i += 8;
        }
        let acc = _mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3));
        let mut lanes = [0f32; 8];
        _mm256_storeu_ps(lanes.as_mut_ptr(), acc);
        let mut s: f32 = lanes.iter().sum();
        while i < n {
            s += a[i] * b.get(i);
            i += 1;
        }
        s
    }
}

/// Sets bit `j` of `out` (`out` zeroed, ⌈len/64⌉ words) when f16 `row[j]` exceeds `center[j]`:
/// the sign sketch of a stored vector, the fastest this CPU has.
pub fn signs_f16_fn() -> fn(F16Row, &[f32], &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has the features the function is compiled for.
            return |r, c, o| unsafe { signs_f16_avx2(r, c, o) };
        }
    }
    signs_f16_portable
}

fn signs_f16_portable(row: F16Row, center: &[f32], out: &mut [u64]) {
    for (j, &c) in center.iter().enumerate().take(row.len()) {
        if row.get(j) > c {
            out[j / 64] |= 1 << (j % 64);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn signs_f16_avx2(row: F16Row, center: &[f32], out: &mut [u64]) {
    use std::arch::x86_64::*;
    let n = row.len().min(center.len());
    let mut i = 0;
    // SAFETY: every load reads 8 elements at `i` within `n`, inside both slices (the f16 load
    // unaligned, 16 bytes).
    unsafe {
        while i + 8 <= n {
            let v = _mm256_cvtph_ps(_mm_loadu_si128(row.0.as_ptr().add(2 * i) as *const __m128i));
            let gt = _mm256_cmp_ps::<_CMP_GT_OQ>(v, _mm256_loadu_ps(center.as_ptr().add(i)));
            out[i / 64] |= (_mm256_movemask_ps(gt) as u32 as u64) << (i % 64);
            i += 8;
        }
    }
    for j in i..n {
        if row.get(j) > center[j] {
            out[j / 64] |= 1 << (j % 64);
        }
    }
}

/// `out += scale * row`, the fastest this CPU has (AVX2, else what the compiler makes of the
/// portable loop).
pub fn axpy_fn() -> fn(&mut [f32], &[f32], f32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has the feature the function is compiled for.
            return |o, r, s| unsafe { axpy_avx2(o, r, s) };
        }
    }
    axpy_portable
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn axpy_avx2(out: &mut [f32], row: &[f32], scale: f32) {
    axpy_portable(out, row, scale)
}

#[inline(always)]
fn axpy_portable(out: &mut [f32], row: &[f32], scale: f32) {
    out.iter_mut().zip(row).for_each(|(o, r)| *o += r * scale);
}

/// The fastest dot product for this CPU, chosen once; call it in hot loops.
pub fn dot_fn() -> fn(&[f32], &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            return |a, b| unsafe { dot_avx2(a, b) };
        }
    }
    dot_portable
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    dot_portable(a, b)
}

/// Eight independent accumulators let the compiler vectorise without fast-math.
#[inline(always)]
fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let chunks = n / 8;
    for i in 0..chunks {
        let (x, y) = (&a[i * 8..i * 8 + 8], &b[i * 8..i * 8 + 8]);
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for i in chunks * 8..n {
        s += a[i] * b[i];
    }
    s
}

/// The unknown-token id named by tokenizer.json's model (`unk_token`), if the vocabulary has it;
/// `json` gives tokenizer.json's text when the loaded model does not say.
pub(crate) fn read_unk_id(json: &dyn Fn() -> Option<String>, tok: &tokenizers::Tokenizer) -> Option<u32> {
    use tokenizers::models::ModelWrapper;
    // The loaded model names it; parsing tokenizer.json a second time cost a third of a warm
    // CLI search. Only Unigram keeps its `unk_id` private.
    match tok.get_model() {
        ModelWrapper::WordPiece(m) => return tok.token_to_id(&m.unk_token),
        ModelWrapper::WordLevel(m) => return tok.token_to_id(&m.unk_token),
        ModelWrapper::BPE(m) => return tok.token_to_id(m.unk_token.as_deref().unwrap_or("[UNK]")),
        ModelWrapper::Unigram(_) => {}
    }
    let text = json()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let model = &v["model"];
    if let Some(id) = model["unk_id"].as_u64() {
        return Some(id as u32); // Unigram
    }
    let unk = model["unk_token"].as_str().unwrap_or("[UNK]");
    tok.token_to_id(unk)
}

/// Content hashes of a model's files, cached by (path, size, mtime) so a warm start does not
/// re-read hundreds of megabytes.
fn files_hash(files: &[std::path::PathBuf], cache_dir: Option<&Path>) -> Result<String> {
    let mut h = blake3::Hasher::new();
    let cache_path = cache_dir.map(|d| d.join("model-file-hashes.json"));
    let mut cache: std::collections::BTreeMap<String, String> = cache_path
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    let mut changed = false;
    for f in files {
        let md = std::fs::metadata(f).with_context(|| format!("model file {} is missing", f.display()))?;
        let mtime = md
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let canon = f.canonicalize().unwrap_or(f.clone());
        let id = format!("{}|{}|{}", canon.display(), md.len(), mtime);
        let hex = match cache.get(&id) {
            Some(hx) => hx.clone(),
            None => {
                let mut fh = blake3::Hasher::new();
                fh.update_reader(std::fs::File::open(&canon)?).with_context(|| format!("reading {}", f.display()))?;
                let hx = fh.finalize().to_hex().to_string();
                cache.insert(id, hx.clone());
                changed = true;
                hx
            }
        };
        h.update(hex.as_bytes());
    }
    if changed && let Some(p) = cache_path {
        let _ = crate::fsutil::write_atomic(&p, serde_json::to_string(&cache)?.as_bytes());
    }
    Ok(h.finalize().to_hex()[..16].to_string())
}

/// Loads the embedder for `files`. `cache_dir` keeps file hashes (and a static model's
/// vocabulary) between runs.
/// The models loaded in this process, by fingerprint: the repositories of a workspace that
/// choose the same model share one copy of its weights (or one ONNX session) instead of each
/// loading its own. Held weakly, so a model no engine uses any more is freed.
static LOADED: std::sync::Mutex<Vec<(String, std::sync::Weak<dyn Embedder>)>> = std::sync::Mutex::new(Vec::new());

/// The model of fingerprint `key`, loaded by `load` unless this process already holds it.
fn shared(key: &str, load: impl FnOnce() -> Result<Arc<dyn Embedder>>) -> Result<Arc<dyn Embedder>> {
    // Held while loading: two engines asking at once load it once.
    let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    loaded.retain(|(_, w)| w.strong_count() > 0);
    if let Some(m) = loaded.iter().find(|(k, _)| k == key).and_then(|(_, w)| w.upgrade()) {
        return Ok(m);
    }
    let m = load()?;
    loaded.push((key.to_string(), Arc::downgrade(&m)));
    Ok(m)
}

pub fn load_files(
    files: &ModelFiles,
    threads: usize,
    ort_setting: Option<&str>,
    cache_dir: Option<&Path>,
) -> Result<Arc<dyn Embedder>> {
    let tok = files.dir.join("tokenizer.json");
    match files.kind {
        ModelKind::Static => {
            let weights = files.dir.join("model.safetensors");
            let fh = files_hash(&[weights, tok], cache_dir)?;
            let fp = crate::fsutil::short_hash(&[
                b"static",
                files.name.as_bytes(),
                fh.as_bytes(),
                static_model::TEXT_PREP.as_bytes(),
            ]);
            shared(&fp, || {
                Ok(Arc::new(static_model::StaticModel::load(&files.name, &files.dir, fp.clone(), cache_dir)?))
            })
        }
        ModelKind::Transformer => {
            let onnx = files.onnx.clone().context("transformer model without an ONNX file")?;
            let s = transformer::settings(&files.name, &files.dir);
            let fh = files_hash(&[onnx.clone(), tok], cache_dir)?;
            let fp = crate::fsutil::short_hash(&[
                b"transformer",
                files.name.as_bytes(),
                fh.as_bytes(),
                format!("{:?}/{}/{}", s.pooling, s.max_len, s.query_prefix).as_bytes(),
            ]);
            let key = format!("{fp}/{threads}/{}", ort_setting.unwrap_or(""));
            shared(&key, || {
                Ok(Arc::new(transformer::Transformer::load(
                    &files.name,
                    &files.dir,
                    &onnx,
                    threads,
                    ort_setting,
                    fp.clone(),
                )?))
            })
        }
        ModelKind::CrossEncoder => Err(EmbedError::CrossEncoder { name: files.name.clone() }.into()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sign_sketches_agree_with_the_portable_loop() {
        for dim in [256usize, 100, 7] {
            let row: Vec<u16> = (0..dim).map(|i| half::f16::from_f32((i as f32 * 0.37).sin()).to_bits()).collect();
            let center: Vec<f32> = (0..dim).map(|i| (i as f32 * 0.11).cos() * 0.5).collect();
            let (mut fast, mut slow) = (vec![0u64; dim.div_ceil(64)], vec![0u64; dim.div_ceil(64)]);
            super::signs_f16_fn()(super::F16Row::of_bits(&row), &center, &mut fast);
            super::signs_f16_portable(super::F16Row::of_bits(&row), &center, &mut slow);
            assert_eq!(fast, slow, "{dim} dimensions");
            let above = (0..dim).filter(|&i| half::f16::from_bits(row[i]).to_f32() > center[i]).count();
            assert_eq!(slow.iter().map(|w| w.count_ones() as usize).sum::<usize>(), above);
        }
    }

    #[test]
    fn dot_products_agree_with_the_portable_loop_at_any_alignment() {
        for dim in [256usize, 100, 7] {
            let q: Vec<f32> = (0..dim).map(|i| (i as f32 * 0.21).cos()).collect();
            let bits: Vec<u16> = (0..dim).map(|i| half::f16::from_f32((i as f32 * 0.37).sin()).to_bits()).collect();
            let exact: f32 = (0..dim).map(|i| q[i] * half::f16::from_bits(bits[i]).to_f32()).sum();
            // The same values one byte off their natural alignment, as in a segment file.
            let mut shifted = vec![0u8];
            shifted.extend(bits.iter().flat_map(|b| b.to_le_bytes()));
            let odd = super::F16Row::new(&shifted[1..]);
            assert_eq!(odd.len(), dim);
            for row in [super::F16Row::of_bits(&bits), odd] {
                let (fast, slow) = (super::dot_f16_fn()(&q, row), super::dot_f16_portable(&q, row));
                assert!((fast - exact).abs() < 1e-4 && (slow - exact).abs() < 1e-4, "{dim}: {fast} {slow} {exact}");
            }
            let (mut a, mut b) = (vec![0u64; dim.div_ceil(64)], vec![0u64; dim.div_ceil(64)]);
            super::signs_f16_fn()(odd, &q, &mut a);
            super::signs_f16_portable(super::F16Row::of_bits(&bits), &q, &mut b);
            assert_eq!(a, b);
        }
    }
}
