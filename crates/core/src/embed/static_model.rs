//! Static (model2vec) embeddings: tokenize without special tokens, drop the unknown-token id,
//! average the rows of the `embeddings` table, L2-normalise. Pure Rust, no ONNX Runtime.
//! Vocabulary-quantized models (model2vec ≥ 0.6, e.g. potion-code-16M) add a `mapping` tensor
//! (token id → row) and a `weights` tensor (a per-token scale); both are honoured as model2vec
//! does: the mean of `embeddings[mapping[id]] * weights[id]`.
//! Before tokenizing, identifiers are split into words and a query loses its English function
//! words (`code_words`, `analyze::content_words`): measured +0.04 to +0.08 MRR for dense
//! retrieval with a general-text model (docs/EVALUATION.md).

use super::{Embedder, normalize, read_unk_id};
use anyhow::{Context, Result};
use rayon::prelude::*;
use std::path::Path;
use tokenizers::Tokenizer;

crate::error::errors! {
    /// A static model whose files do not fit together or cannot be read.
    pub enum StaticModelError: Failure {
        Shape { path: String, shape: String } => "{path}: the embeddings tensor must be 2-D [vocab, dim], found {shape}",
        Dtype { path: String, dtype: String } => "{path}: embeddings: unsupported dtype {dtype} (f32, f16, bf16 or i8 expected)",
        DataSize { path: String } => "{path}: tensor data does not match its shape",
        MappedRow { path: String, bad: u32, rows: usize } =>
            "dimension mismatch: {path} maps a token to row {bad} but its embeddings table has {rows} rows",
        Mismatch { dir: String, vocab: usize, other: String } =>
            "dimension mismatch: {dir}/tokenizer.json has {vocab} tokens but {other}",
        Tokenizer { why: String } => "tokenizer: {why}",
        TokenizerFile { dir: String, why: String } => "cannot read {dir}/tokenizer.json: {why}",
        TensorType { dtype: String, expected: &'static str } => "unsupported dtype {dtype} ({expected} expected)",
        RowIndex { x: i64 } => "negative or huge row index {x}",
    }
}

/// Tokens looked at per text (model2vec's default maximum).
const MAX_TOKENS: usize = 512;
/// Characters looked at per text: enough for MAX_TOKENS, and tokenizing beyond them is waste.
const MAX_CHARS: usize = 4 * MAX_TOKENS;

thread_local! {
    /// Per-thread word → token ids cache, tagged with the model it belongs to.
    static WORDS: std::cell::RefCell<(String, rustc_hash::FxHashMap<Box<str>, Box<[u32]>>)> = Default::default();
}

/// Empties this thread's word cache (between the tokenizations tried at load).
fn clear_word_cache() {
    WORDS.with(|cell| cell.borrow_mut().1.clear());
}

pub struct StaticModel {
    /// Parsed on first use: a model whose vocabulary was read from the cache (`VocabCache`)
    /// needs it only for text the word-by-word path does not take (non-ASCII).
    tokenizer: std::sync::OnceLock<std::result::Result<Tokenizer, String>>,
    source: Source,
    /// Tokenize ASCII text word by word through a per-thread cache (verified at load to give
    /// the tokenizer's own ids; code repeats its identifiers endlessly).
    word_cache: bool,
    /// WordPiece over ASCII words without the tokenizer's pipeline (a word the cache lacks cost
    /// a third of embedding through it), verified at load like the cache.
    pieces: Option<Pieces>,
    table: Table,
    /// Token id → row of `table` (vocabulary quantization); identity when absent.
    mapping: Option<Vec<u32>>,
    /// Per-token scale applied before averaging.
    weights: Option<Vec<f32>>,
    dim: usize,
    rows: usize,
    unk: Option<u32>,
    normalize: bool,
    fingerprint: String,
    name: String,
    /// Embed texts exactly as model2vec does, without `code_words` and query cleaning.
    exact: bool,
}

/// Names how texts are prepared before tokenizing; part of the vectors' fingerprint.
pub const TEXT_PREP: &str = "code-words-1";

impl StaticModel {
    /// The same model embedding texts exactly as model2vec does (identifiers and function
    /// words left alone), for comparing with model2vec's own output.
    pub fn exact(mut self) -> StaticModel {
        self.exact = true;
        self.fingerprint.push_str("-exact");
        self
    }

    /// Loads the model in `dir`. With `cache`, what tokenizing needs (the verified word pieces)
    /// is kept there in binary form, so a later process skips parsing tokenizer.json: that
    /// parse and building the piece maps were most of a warm hybrid search.
    pub fn load(name: &str, dir: &Path, fingerprint: String, cache: Option<&Path>) -> Result<StaticModel> {
        StaticModel::load_from(name, Source::Dir(dir.to_path_buf()), fingerprint, cache)
    }

    /// Loads a model whose three files are bytes built into the program.
    pub fn load_static(
        name: &str,
        weights: &'static [u8],
        tokenizer: &'static [u8],
        config: &'static [u8],
        fingerprint: String,
        cache: Option<&Path>,
    ) -> Result<StaticModel> {
        StaticModel::load_from(name, Source::Static { weights, tokenizer, config }, fingerprint, cache)
    }

    fn load_from(name: &str, source: Source, fingerprint: String, cache: Option<&Path>) -> Result<StaticModel> {
        let dir = source.label();
        let cache_file = cache.map(|c| c.join("vocab").join(format!("{fingerprint}-{VOCAB_VERSION}.bin")));
        let cached = cache_file.as_deref().and_then(VocabCache::read);
        let tokenizer = std::sync::OnceLock::new();
        let (vocab, unk) = match &cached {
            Some(c) => (c.vocab, c.unk),
            None => {
                let tok = parse_tokenizer(&source)?;
                let unk = read_unk_id(&|| source.tokenizer_json(), &tok);
                let vocab = tok.get_vocab_size(false);
                let _ = tokenizer.set(Ok(tok));
                (vocab, unk)
            }
        };
        let path = dir.join("model.safetensors");
        let bytes = match &source {
            Source::Dir(_) => {
                let file = std::fs::File::open(&path).with_context(|| format!("reading {}", path.display()))?;
                // SAFETY: a model file is read-only for the life of the process (model folders
                // are replaced, not edited, by downloads and imports).
                let map =
                    unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("mapping {}", path.display()))?;
                Bytes::Mapped(map)
            }
            Source::Static { weights, .. } => Bytes::Static(weights),
        };
        let st = safetensors::SafeTensors::deserialize(&bytes[..])
            .with_context(|| format!("{} is not a valid safetensors file", path.display()))?;
        let tensor = match st.tensor("embeddings") {
            Ok(t) => t,
            Err(_) => {
                let names = st.names();
                let first = names.first().with_context(|| format!("{} holds no tensors", path.display()))?;
                st.tensor(first)?
            }
        };
        let shape = tensor.shape().to_vec();
        if shape.len() != 2 || shape[1] == 0 {
            return Err(
                StaticModelError::Shape { path: path.display().to_string(), shape: format!("{shape:?}") }.into()
            );
        }
        let (rows, dim) = (shape[0], shape[1]);
        let width = match tensor.dtype() {
            safetensors::Dtype::F32 => 4,
            safetensors::Dtype::F16 | safetensors::Dtype::BF16 => 2,
            safetensors::Dtype::I8 => 1,
            other => {
                return Err(
                    StaticModelError::Dtype { path: path.display().to_string(), dtype: format!("{other:?}") }.into()
                );
            }
        };
        if rows.checked_mul(dim).and_then(|n| n.checked_mul(width)) != Some(tensor.data().len()) {
            return Err(StaticModelError::DataSize { path: path.display().to_string() }.into());
        }
        let start = tensor.data().as_ptr() as usize - bytes.as_ptr() as usize;
        let dtype = tensor.dtype();
        let mapping = match st.tensor("mapping") {
            Ok(t) => {
                let m = integers(&t).with_context(|| format!("{}: mapping", path.display()))?;
                if let Some(bad) = m.iter().find(|&&r| r as usize >= rows) {
                    return Err(
                        StaticModelError::MappedRow { path: path.display().to_string(), bad: *bad, rows }.into()
                    );
                }
                Some(m)
            }
            Err(_) => None,
        };
        let weights = match st.tensor("weights") {
            Ok(t) => Some(floats(&t).with_context(|| format!("{}: weights", path.display()))?),
            Err(_) => None,
        };
        if let Some(m) = &mapping {
            if m.len() < vocab {
                return Err(StaticModelError::Mismatch {
                    dir: dir.display().to_string(),
                    vocab,
                    other: format!("the mapping in {} covers {}", path.display(), m.len()),
                }
                .into());
            }
        } else if vocab > rows {
            return Err(StaticModelError::Mismatch {
                dir: dir.display().to_string(),
                vocab,
                other: format!(
                    "{} has {rows} rows; the tokenizer and the embeddings table come from different models",
                    path.display()
                ),
            }
            .into());
        }
        let config: serde_json::Value = source.config().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
        let normalize = config["normalize"].as_bool().unwrap_or(true);
        if let Some(w) = &weights
            && w.len() < vocab
        {
            return Err(StaticModelError::Mismatch {
                dir: dir.display().to_string(),
                vocab,
                other: format!("{} has {} weights", path.display(), w.len()),
            }
            .into());
        }
        drop(st);
        let table = Table { map: bytes, start, dtype, dim, full: std::sync::OnceLock::new() };
        let mut m = StaticModel {
            tokenizer,
            source,
            word_cache: false,
            pieces: None,
            table,
            mapping,
            weights,
            dim,
            rows,
            unk,
            normalize,
            fingerprint,
            name: name.to_string(),
            exact: false,
        };
        if let Some(c) = cached {
            m.word_cache = true;
            m.pieces = Some(c.pieces);
            return Ok(m);
        }
        // The fast WordPiece is kept only when it gives the tokenizer's own ids on the probes,
        // lowercasing or not (uncased and cased vocabularies); else the tokenizer tokenizes.
        let agrees = |m: &mut StaticModel, lowercase: bool| {
            clear_word_cache();
            m.pieces = m.tokenizer().ok().and_then(|t| Pieces::of(t, lowercase));
            m.pieces.is_some() && m.word_cache_agrees()
        };
        if !(agrees(&mut m, true) || agrees(&mut m, false)) {
            m.pieces = None;
        }
        clear_word_cache();
        m.word_cache = m.word_cache_agrees();
        // Only the verified fast path is worth keeping: without it every text needs the tokenizer.
        if let (Some(path), Some(pieces), true) = (&cache_file, &m.pieces, m.word_cache) {
            let record = VocabCache::encode(pieces, vocab, unk);
            if let Err(e) = crate::fsutil::write_atomic(path, &record) {
                tracing::debug!("could not keep the vocabulary of {name}: {e:#}");
            }
        }
        Ok(m)
    }

    /// The tokenizer, parsed from the model folder the first time it is needed.
    fn tokenizer(&self) -> Result<&Tokenizer> {
        self.tokenizer
            .get_or_init(|| parse_tokenizer(&self.source).map_err(|e| format!("{e:#}")))
            .as_ref()
            .map_err(|e| StaticModelError::Tokenizer { why: e.clone() }.into())
    }

    /// Whether word-by-word tokenization of ASCII text reproduces the tokenizer exactly
    /// (true for BERT-style normalizers and pre-tokenizers; other tokenizers keep the full path).
    fn word_cache_agrees(&self) -> bool {
        const PROBES: &[&str] = &[
            "fn parse_http_request(req: &Request) -> Result<Response, Error> { req.body().len() }",
            "def __init__(self, value=None):\n    self._value = value  # TODO: x+y*2 != z\n",
            "  if (a[i] >= 0x1F && b->c) { return \"str\\n\"; } // <Tag attr='v'> @dec $var ~`^|%",
            "class HTTPServer2Go extends Base implements IDamageable { private static final int MAX = 42; }",
            "unsubscribeListenersAsynchronously xqzzvbnmwk free_9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        ];
        PROBES.iter().all(|p| {
            let Ok(tok) = self.tokenizer() else { return false };
            let full = tok.encode_fast(*p, false).map(|e| e.get_ids().to_vec());
            let mut fast = Vec::new();
            full.is_ok_and(|f| self.word_ids(p, &mut fast).is_ok() && f == fast)
        })
    }

    /// Token ids of ASCII `text` via BERT-style words (alphanumeric runs; every other visible
    /// character alone), each looked up in a per-thread cache.
    fn word_ids(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        WORDS.with(|cell| {
            let mut cache = cell.borrow_mut();
            if cache.0 != self.fingerprint {
                cache.0 = self.fingerprint.clone();
                cache.1.clear();
            }
            if cache.1.len() > 500_000 {
                cache.1.clear();
            }
            let bytes = text.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                if b.is_ascii_whitespace() || b.is_ascii_control() {
                    i += 1;
                    continue;
                }
                let start = i;
                if b.is_ascii_alphanumeric() {
                    while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                        i += 1;
                    }
                } else {
                    i += 1;
                }
                let word = &text[start..i];
                match cache.1.get(word) {
                    Some(ids) => out.extend_from_slice(ids),
                    None => {
                        let ids: Box<[u32]> = match &self.pieces {
                            Some(p) => p.word(word).into(),
                            None => self
                                .tokenizer()?
                                .encode_fast(word, false)
                                .map_err(|e| StaticModelError::Tokenizer { why: e.to_string() })?
                                .get_ids()
                                .into(),
                        };
                        out.extend_from_slice(&ids);
                        cache.1.insert(word.into(), ids);
                    }
                }
                if out.len() >= MAX_TOKENS {
                    break;
                }
            }
            Ok(())
        })
    }

    fn embed_one(&self, text: &str, out: &mut [f32]) -> Result<()> {
        let prepared;
        let text = if self.exact {
            text
        } else {
            // Only the first MAX_CHARS of the prepared text are looked at, and preparing only
            // inserts: a little more than MAX_CHARS of the input gives the same prefix.
            prepared = code_words(head(text, MAX_CHARS + 16));
            prepared.as_str()
        };
        let text = head(text, MAX_CHARS);
        let mut ids: Vec<u32> = if self.word_cache && text.is_ascii() {
            let mut v = Vec::with_capacity(text.len() / 3);
            self.word_ids(text, &mut v)?;
            v
        } else {
            self.tokenizer()?
                .encode_fast(text, false)
                .map_err(|e| StaticModelError::Tokenizer { why: e.to_string() })?
                .get_ids()
                .to_vec()
        };
        ids.truncate(MAX_TOKENS);
        ids.retain(|&id| Some(id) != self.unk);
        // Code repeats its tokens: each distinct token's row is added once, scaled by how
        // often it occurs (the same mean, a third of the additions).
        ids.sort_unstable();
        out.iter_mut().for_each(|v| *v = 0.0);
        let mut n = 0usize;
        let mut scratch = vec![0f32; if self.table.full.get().is_some() { 0 } else { self.dim }];
        let axpy = super::axpy_fn();
        for run in ids.chunk_by(|a, b| a == b) {
            let id = run[0];
            let row = match &self.mapping {
                Some(m) => match m.get(id as usize) {
                    Some(&r) => r as usize,
                    None => continue,
                },
                None => id as usize,
            };
            if row >= self.rows {
                continue;
            }
            let weight = self.weights.as_ref().and_then(|w| w.get(id as usize)).copied().unwrap_or(1.0);
            axpy(out, self.table.row(row, &mut scratch), weight * run.len() as f32);
            n += run.len();
        }
        if n > 0 {
            let inv = 1.0 / n as f32;
            out.iter_mut().for_each(|v| *v *= inv);
        }
        if self.normalize || n > 0 {
            // Cosine similarity needs unit vectors whatever the model's own setting.
            normalize(out);
        }
        Ok(())
    }
}

/// Where a model's files are: a folder, or bytes built into the program.
enum Source {
    Dir(std::path::PathBuf),
    Static { weights: &'static [u8], tokenizer: &'static [u8], config: &'static [u8] },
}

impl Source {
    /// What error messages call the folder.
    fn label(&self) -> std::path::PathBuf {
        match self {
            Source::Dir(d) => d.clone(),
            Source::Static { .. } => "(built-in model)".into(),
        }
    }

    fn tokenizer_json(&self) -> Option<String> {
        match self {
            Source::Dir(d) => std::fs::read_to_string(d.join("tokenizer.json")).ok(),
            Source::Static { tokenizer, .. } => std::str::from_utf8(tokenizer).ok().map(str::to_string),
        }
    }

    fn config(&self) -> Option<String> {
        match self {
            Source::Dir(d) => std::fs::read_to_string(d.join("config.json")).ok(),
            Source::Static { config, .. } => std::str::from_utf8(config).ok().map(str::to_string),
        }
    }
}

/// The weights file's bytes: mapped from disk, or built into the program.
enum Bytes {
    Mapped(memmap2::Mmap),
    Static(&'static [u8]),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Static(b) => b,
        }
    }
}

/// The model's tokenizer.json, with padding and truncation off (texts are cut by `MAX_CHARS`).
fn parse_tokenizer(source: &Source) -> Result<Tokenizer> {
    let dir = source.label();
    let parsed = match source {
        Source::Dir(d) => Tokenizer::from_file(d.join("tokenizer.json")),
        Source::Static { tokenizer, .. } => Tokenizer::from_bytes(tokenizer),
    };
    let mut tokenizer =
        parsed.map_err(|e| StaticModelError::TokenizerFile { dir: dir.display().to_string(), why: e.to_string() })?;
    tokenizer.with_padding(None);
    tokenizer.with_truncation(None).map_err(|e| StaticModelError::Tokenizer { why: e.to_string() })?;
    Ok(tokenizer)
}

/// Names the layout of a vocabulary record and the rules that verified it (`PROBES`, `Pieces`).
const VOCAB_VERSION: &str = "vocab-1";
const VOCAB_MAGIC: &[u8; 8] = b"LYNXVOC1";

/// What tokenizing needs, read back from a record kept under the store's cache: the verified
/// word pieces, the vocabulary size and the unknown-token id. The record is named by the
/// model's fingerprint (the content of its files) and ends with a checksum; anything that does
/// not hold makes it unread, and the model is loaded from tokenizer.json again.
struct VocabCache {
    pieces: Pieces,
    vocab: usize,
    unk: Option<u32>,
}

impl VocabCache {
    fn encode(p: &Pieces, vocab: usize, unk: Option<u32>) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 12 * (p.first.len() + p.rest.len()) + 8 * vocab);
        out.extend_from_slice(VOCAB_MAGIC);
        for n in [p.lowercase as u32, p.unk, p.max_chars as u32, unk.unwrap_or(u32::MAX), vocab as u32] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        for map in [&p.first, &p.rest] {
            out.extend_from_slice(&(map.len() as u32).to_le_bytes());
            // In id order: the same vocabulary always makes the same record.
            let mut entries: Vec<(&Box<str>, &u32)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| (a.1, a.0).cmp(&(b.1, b.0)));
            for (piece, id) in entries {
                out.extend_from_slice(&id.to_le_bytes());
                out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
                out.extend_from_slice(piece.as_bytes());
            }
        }
        let sum = blake3::hash(&out);
        out.extend_from_slice(sum.as_bytes());
        out
    }

    fn read(path: &Path) -> Option<VocabCache> {
        let bytes = std::fs::read(path).ok()?;
        let decoded = VocabCache::decode(&bytes);
        if decoded.is_none() {
            tracing::debug!("{} does not hold a vocabulary; reading tokenizer.json", path.display());
        }
        decoded
    }

    fn decode(bytes: &[u8]) -> Option<VocabCache> {
        let body = bytes.len().checked_sub(32).map(|n| &bytes[..n])?;
        if blake3::hash(body).as_bytes() != &bytes[body.len()..] || !body.starts_with(VOCAB_MAGIC) {
            return None;
        }
        let mut at = VOCAB_MAGIC.len();
        let u32_at = |at: &mut usize| -> Option<u32> {
            let v = u32::from_le_bytes(body.get(*at..*at + 4)?.try_into().ok()?);
            *at += 4;
            Some(v)
        };
        let lowercase = u32_at(&mut at)? == 1;
        let unk_piece = u32_at(&mut at)?;
        let max_chars = u32_at(&mut at)? as usize;
        let unk = Some(u32_at(&mut at)?).filter(|&u| u != u32::MAX);
        let vocab = u32_at(&mut at)? as usize;
        let mut maps = [rustc_hash::FxHashMap::default(), rustc_hash::FxHashMap::default()];
        for map in &mut maps {
            let n = u32_at(&mut at)? as usize;
            // Every entry takes at least 8 bytes: a count beyond that is damage, not a reservation to make.
            if n > body.len() / 8 {
                return None;
            }
            map.reserve(n);
            for _ in 0..n {
                let id = u32_at(&mut at)?;
                let len = u32_at(&mut at)? as usize;
                let piece = std::str::from_utf8(body.get(at..at.checked_add(len)?)?).ok()?;
                at += len;
                if id as usize >= vocab {
                    return None;
                }
                map.insert(Box::<str>::from(piece), id);
            }
        }
        if at != body.len() || unk_piece as usize >= vocab {
            return None;
        }
        let [first, rest] = maps;
        Some(VocabCache { pieces: Pieces { first, rest, unk: unk_piece, max_chars, lowercase }, vocab, unk })
    }
}

/// A WordPiece vocabulary for ASCII words (an alphanumeric run or one punctuation character,
/// as BERT's pre-tokenizer splits them): greedy longest match, continuation pieces after the
/// first, the unknown token for a word that does not split or is too long.
struct Pieces {
    first: rustc_hash::FxHashMap<Box<str>, u32>,
    /// Continuation pieces, without their prefix.
    rest: rustc_hash::FxHashMap<Box<str>, u32>,
    unk: u32,
    max_chars: usize,
    lowercase: bool,
}

impl Pieces {
    fn of(tokenizer: &Tokenizer, lowercase: bool) -> Option<Pieces> {
        use tokenizers::Model;
        let tokenizers::models::ModelWrapper::WordPiece(wp) = tokenizer.get_model() else { return None };
        let prefix = wp.continuing_subword_prefix.as_str();
        let (mut first, mut rest) = (rustc_hash::FxHashMap::default(), rustc_hash::FxHashMap::default());
        for (token, id) in wp.get_vocab() {
            match token.strip_prefix(prefix).filter(|_| !prefix.is_empty()) {
                Some(piece) => rest.insert(piece.into(), id),
                None => first.insert(token.into_boxed_str(), id),
            };
        }
        let unk = *first.get(wp.unk_token.as_str())?;
        Some(Pieces { first, rest, unk, max_chars: wp.max_input_chars_per_word, lowercase })
    }

    fn word(&self, word: &str) -> Vec<u32> {
        let lower;
        let word = if self.lowercase && word.bytes().any(|b| b.is_ascii_uppercase()) {
            lower = word.to_ascii_lowercase();
            lower.as_str()
        } else {
            word
        };
        if word.len() > self.max_chars {
            return vec![self.unk];
        }
        let mut ids = Vec::with_capacity(2);
        let mut start = 0;
        while start < word.len() {
            let vocab = if start == 0 { &self.first } else { &self.rest };
            let Some((end, id)) =
                (start + 1..=word.len()).rev().find_map(|end| vocab.get(&word[start..end]).map(|&id| (end, id)))
            else {
                return vec![self.unk];
            };
            ids.push(id);
            start = end;
        }
        ids
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn head(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The embeddings table, memory-mapped as stored. A query converts the few rows it uses; a
/// batch of documents converts the whole table once (converting it all took longer than the
/// rest of a CLI search).
struct Table {
    map: Bytes,
    start: usize,
    dtype: safetensors::Dtype,
    dim: usize,
    full: std::sync::OnceLock<Vec<f32>>,
}

/// Batches of at least this many documents convert the whole table first.
const FULL_TABLE_BATCH: usize = 64;

impl Table {
    fn width(&self) -> usize {
        match self.dtype {
            safetensors::Dtype::F32 => 4,
            safetensors::Dtype::I8 => 1,
            _ => 2,
        }
    }

    fn convert(&self, bytes: &[u8], out: &mut [f32]) {
        match self.dtype {
            safetensors::Dtype::F32 => out
                .iter_mut()
                .zip(bytes.chunks_exact(4))
                .for_each(|(o, b)| *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            safetensors::Dtype::BF16 => out
                .iter_mut()
                .zip(bytes.chunks_exact(2))
                .for_each(|(o, b)| *o = half::bf16::from_le_bytes([b[0], b[1]]).to_f32()),
            // Int8 rows are scaled by the model's per-token `weights`, as model2vec does.
            safetensors::Dtype::I8 => out.iter_mut().zip(bytes).for_each(|(o, &b)| *o = b as i8 as f32),
            _ => out
                .iter_mut()
                .zip(bytes.chunks_exact(2))
                .for_each(|(o, b)| *o = half::f16::from_le_bytes([b[0], b[1]]).to_f32()),
        }
    }

    /// Row `r` as f32 (in range: checked against the table's shape by the caller).
    fn row<'a>(&'a self, r: usize, scratch: &'a mut [f32]) -> &'a [f32] {
        if let Some(full) = self.full.get() {
            return &full[r * self.dim..(r + 1) * self.dim];
        }
        let w = self.width();
        let at = self.start + r * self.dim * w;
        self.convert(&self.map[at..at + self.dim * w], scratch);
        scratch
    }

    fn convert_all(&self, rows: usize) {
        self.full.get_or_init(|| {
            let w = self.width();
            let bytes = &self.map[self.start..self.start + rows * self.dim * w];
            let mut out = vec![0f32; rows * self.dim];
            out.par_chunks_mut(self.dim).zip(bytes.par_chunks(self.dim * w)).for_each(|(o, b)| self.convert(b, o));
            out
        });
    }
}

/// A float tensor's values (f32, f16 or bf16).
fn floats(t: &safetensors::tensor::TensorView<'_>) -> Result<Vec<f32>> {
    let data = t.data();
    Ok(match t.dtype() {
        safetensors::Dtype::F32 => data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        safetensors::Dtype::F16 => {
            data.chunks_exact(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect()
        }
        safetensors::Dtype::BF16 => {
            data.chunks_exact(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect()
        }
        other => {
            return Err(
                StaticModelError::TensorType { dtype: format!("{other:?}"), expected: "f32, f16 or bf16" }.into()
            );
        }
    })
}

/// An integer tensor's values as row indices (i64, i32, u32, i16, u16, u8).
fn integers(t: &safetensors::tensor::TensorView<'_>) -> Result<Vec<u32>> {
    let d = t.data();
    let v: Vec<i64> = match t.dtype() {
        safetensors::Dtype::I64 => d.chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().unwrap())).collect(),
        safetensors::Dtype::I32 => {
            d.chunks_exact(4).map(|b| i32::from_le_bytes(b.try_into().unwrap()) as i64).collect()
        }
        safetensors::Dtype::U32 => {
            d.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().unwrap()) as i64).collect()
        }
        safetensors::Dtype::I16 => {
            d.chunks_exact(2).map(|b| i16::from_le_bytes(b.try_into().unwrap()) as i64).collect()
        }
        safetensors::Dtype::U16 => {
            d.chunks_exact(2).map(|b| u16::from_le_bytes(b.try_into().unwrap()) as i64).collect()
        }
        safetensors::Dtype::U8 => d.iter().map(|&b| b as i64).collect(),
        other => {
            return Err(
                StaticModelError::TensorType { dtype: format!("{other:?}"), expected: "an integer type" }.into()
            );
        }
    };
    v.into_iter().map(|x| u32::try_from(x).map_err(|_| StaticModelError::RowIndex { x }.into())).collect()
}

impl Embedder for StaticModel {
    fn dim(&self) -> usize {
        self.dim
    }

    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "static"
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<f32>> {
        if texts.len() >= FULL_TABLE_BATCH {
            self.table.convert_all(self.rows);
        }
        let mut out = vec![0f32; texts.len() * self.dim];
        out.par_chunks_mut(self.dim).zip(texts.par_iter()).try_for_each(|(o, t)| self.embed_one(t, o))?;
        Ok(out)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let mut out = vec![0f32; self.dim];
        let stripped;
        let text = if self.exact {
            text
        } else {
            stripped = crate::analyze::content_words(text);
            stripped.as_str()
        };
        self.embed_one(text, &mut out)?;
        Ok(out)
    }
}

/// Identifiers split into their words (`parseHttpRequest`, `parse_http_request`,
/// `HTTPServer` → `parse Http Request`, `parse http request`, `HTTP Server`). A general-text
/// vocabulary knows `request`, not the word pieces of `httprequest`, and every `_` would be a
/// token of its own in the average.
pub fn code_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut prev = ' ';
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' {
            out.push(' ');
            prev = ' ';
            continue;
        }
        if c.is_uppercase()
            && (prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && chars.peek().is_some_and(|n| n.is_lowercase())))
        {
            out.push(' ');
        }
        out.push(c);
        prev = c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::code_words;

    #[test]
    fn fast_word_pieces_match_the_tokenizer() {
        let vocab: serde_json::Map<String, serde_json::Value> =
            ["[UNK]", "un", "sub", "##sub", "##scribe", "scribe", "x", "##y", "##yz", "q", "##1", "2", "_", "("]
                .iter()
                .enumerate()
                .map(|(i, t)| (t.to_string(), i.into()))
                .collect();
        // A tokenizer.json as BERT's are written.
        let json = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": null, "decoder": null,
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 12, "vocab": vocab}
        });
        let tok: tokenizers::Tokenizer = json.to_string().parse().unwrap();
        let pieces = super::Pieces::of(&tok, true).unwrap();
        for word in [
            "unsubscribe",
            "UNSUB",
            "Unsubsub",
            "x",
            "xy",
            "xyz",
            "xyzy",
            "xq",
            "q1",
            "2",
            "_",
            "(",
            "zzz",
            "unsubscribesub",
        ] {
            let want = tok.encode_fast(word, false).unwrap().get_ids().to_vec();
            assert_eq!(pieces.word(word), want, "{word}");
        }
        // Cased, the same vocabulary lacks the capitalised pieces: unknown, as the tokenizer says.
        let cased = super::Pieces::of(&tok, false).unwrap();
        assert_eq!(cased.word("UNSUB"), vec![0]);
    }

    #[test]
    fn identifiers_become_words() {
        assert_eq!(code_words("parse_http_request(req)"), "parse http request(req)");
        assert_eq!(code_words("parseHTTPRequest"), "parse HTTP Request");
        assert_eq!(code_words("HTTPServer2Go IDamageable"), "HTTP Server2 Go I Damageable");
        assert_eq!(code_words("__init__ größeStraße"), "  init   größe Straße");
        assert_eq!(code_words("plain words stay"), "plain words stay");
    }
}
