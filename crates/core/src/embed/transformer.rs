//! Transformer embeddings through ONNX Runtime: pooling (mean or CLS) and maximum sequence
//! length from the sentence-transformers files, the query instruction of BGE-style models,
//! truncation to the maximum length and padding to the longest text of each batch (whatever
//! tokenizer.json says), batches sorted by length.

use super::EmbedError;
use super::{Embedder, normalize};
use anyhow::{Context, Result};
use std::path::Path;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    Mean,
    Cls,
}

const BATCH: usize = 32;
/// Text beyond this many characters cannot fit the token budget anyway.
const CHARS_PER_TOKEN_CAP: usize = 8;

pub struct Transformer {
    tokenizer: Tokenizer,
    session: super::onnx::Session,
    output: String,
    pooling: Pooling,
    max_len: usize,
    dim: usize,
    query_prefix: String,
    fingerprint: String,
    name: String,
}

/// Settings read from the model folder.
pub struct Settings {
    pub pooling: Pooling,
    pub max_len: usize,
    pub query_prefix: String,
}

fn json(path: &Path) -> serde_json::Value {
    std::fs::read_to_string(path).ok().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default()
}

pub fn settings(name: &str, dir: &Path) -> Settings {
    let pool = json(&dir.join("1_Pooling").join("config.json"));
    let pooling = if pool["pooling_mode_cls_token"].as_bool() == Some(true) { Pooling::Cls } else { Pooling::Mean };
    let st = json(&dir.join("sentence_bert_config.json"));
    let cfg = json(&dir.join("config.json"));
    let max_len = st["max_seq_length"]
        .as_u64()
        .or_else(|| cfg["max_position_embeddings"].as_u64().map(|m| m.min(512)))
        .unwrap_or(256) as usize;
    let prompts = json(&dir.join("config_sentence_transformers.json"));
    let lower = name.to_ascii_lowercase();
    let query_prefix = match prompts["prompts"]["query"].as_str() {
        Some(p) => p.to_string(),
        None if lower.contains("bge-") && lower.contains("-en") => {
            "Represent this sentence for searching relevant passages: ".to_string()
        }
        None => String::new(),
    };
    Settings { pooling, max_len: max_len.max(8), query_prefix }
}

pub(crate) fn tokenizer_for(dir: &Path, max_len: usize) -> Result<Tokenizer> {
    let mut tok = Tokenizer::from_file(dir.join("tokenizer.json"))
        .map_err(|e| EmbedError::TokenizerFile { dir: dir.display().to_string(), why: e.to_string() })?;
    let pad_id = tok
        .get_padding()
        .map(|p| p.pad_id)
        .or_else(|| tok.token_to_id("[PAD]"))
        .or_else(|| tok.token_to_id("<pad>"))
        .unwrap_or(0);
    let pad_token = tok.id_to_token(pad_id).unwrap_or_else(|| "[PAD]".into());
    tok.with_truncation(Some(TruncationParams { max_length: max_len, ..Default::default() }))
        .map_err(|e| EmbedError::Tokenizer { why: e.to_string() })?;
    tok.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        pad_id,
        pad_token,
        ..Default::default()
    }));
    Ok(tok)
}

impl Transformer {
    pub fn load(
        name: &str,
        dir: &Path,
        onnx: &Path,
        threads: usize,
        ort_setting: Option<&str>,
        fingerprint: String,
    ) -> Result<Transformer> {
        let s = settings(name, dir);
        let tokenizer = tokenizer_for(dir, s.max_len)?;
        let session = super::onnx::Session::open(onnx, threads, ort_setting)?;
        let inputs = session.inputs();
        if !inputs.iter().any(|i| i == "input_ids") {
            return Err(
                EmbedError::NotEncoder { path: onnx.display().to_string(), inputs: format!("{inputs:?}") }.into()
            );
        }
        let outputs = session.outputs();
        let output = outputs
            .iter()
            .find(|o| *o == "last_hidden_state" || *o == "token_embeddings")
            .or(outputs.first())
            .cloned()
            .context("model has no outputs")?;
        let mut t = Transformer {
            tokenizer,
            session,
            output,
            pooling: s.pooling,
            max_len: s.max_len,
            dim: 0,
            query_prefix: s.query_prefix,
            fingerprint,
            name: name.to_string(),
        };
        t.dim = t.run(&["dimension probe"])?.len();
        Ok(t)
    }

    /// Embeds one batch (already short enough); returns n × dim, normalised.
    fn run(&self, texts: &[&str]) -> Result<Vec<f32>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenizer { why: e.to_string() })?;
        let n = encodings.len();
        let seq = encodings.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(n * seq);
        let mut mask = Vec::with_capacity(n * seq);
        let mut types = Vec::with_capacity(n * seq);
        for e in &encodings {
            ids.extend(e.get_ids().iter().map(|&v| v as i64));
            mask.extend(e.get_attention_mask().iter().map(|&v| v as i64));
            types.extend(e.get_type_ids().iter().map(|&v| v as i64));
        }
        let mut out = self.forward(ids, mask, types, n, seq, self.pooling)?;
        let d = out.len() / n.max(1);
        out.chunks_mut(d.max(1)).for_each(normalize);
        Ok(out)
    }

    /// Mean-pooled last hidden states (not normalised) of token id sequences, each fed as
    /// given (special tokens included), padded with id 0 behind an attention mask.
    pub(crate) fn mean_hidden(&self, seqs: &[Vec<u32>]) -> Result<Vec<f32>> {
        let n = seqs.len();
        let seq = seqs.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(n * seq);
        let mut mask = Vec::with_capacity(n * seq);
        for s in seqs {
            ids.extend(s.iter().map(|&v| v as i64));
            ids.extend(std::iter::repeat_n(0, seq - s.len()));
            mask.extend(std::iter::repeat_n(1, s.len()));
            mask.extend(std::iter::repeat_n(0, seq - s.len()));
        }
        self.forward(ids, mask, vec![0; n * seq], n, seq, Pooling::Mean)
    }

    pub(crate) fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// One session run over an `n × seq` batch, pooled per row.
    fn forward(
        &self,
        ids: Vec<i64>,
        mask: Vec<i64>,
        types: Vec<i64>,
        n: usize,
        seq: usize,
        pooling: Pooling,
    ) -> Result<Vec<f32>> {
        let mut feed = Vec::new();
        for name in self.session.inputs() {
            feed.push(match name.as_str() {
                "input_ids" => ids.clone(),
                "attention_mask" => mask.clone(),
                "token_type_ids" => types.clone(),
                other => {
                    return Err(EmbedError::Input { name: other.to_string() }.into());
                }
            });
        }
        let (dims, data) = self.session.run(feed, n, seq, Some(&self.output))?;
        let mut out = Vec::new();
        match dims.as_slice() {
            [b, s, d] if *b == n && *s == seq => {
                for i in 0..n {
                    let mut v = vec![0f32; *d];
                    match pooling {
                        Pooling::Cls => v.copy_from_slice(&data[i * s * d..i * s * d + d]),
                        Pooling::Mean => {
                            let mut count = 0f32;
                            for t in 0..*s {
                                if mask[i * seq + t] == 0 {
                                    continue;
                                }
                                count += 1.0;
                                let row = &data[(i * s + t) * d..(i * s + t + 1) * d];
                                for (a, b) in v.iter_mut().zip(row) {
                                    *a += b;
                                }
                            }
                            if count > 0.0 {
                                v.iter_mut().for_each(|x| *x /= count);
                            }
                        }
                    }
                    out.extend(v);
                }
            }
            [b, d] if *b == n => {
                for i in 0..n {
                    out.extend_from_slice(&data[i * d..(i + 1) * d]);
                }
            }
            other => {
                return Err(EmbedError::OutputShape { shape: format!("{other:?}"), output: self.output.clone() }.into());
            }
        }
        Ok(out)
    }
}

impl Embedder for Transformer {
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
        "transformer"
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<f32>> {
        let cap = self.max_len * CHARS_PER_TOKEN_CAP;
        let cut: Vec<&str> = texts
            .iter()
            .map(|t| {
                let mut end = t.len().min(cap);
                while !t.is_char_boundary(end) {
                    end -= 1;
                }
                &t[..end]
            })
            .collect();
        // Sort by length so each batch pads little; restore order after.
        let mut order: Vec<usize> = (0..cut.len()).collect();
        order.sort_by_key(|&i| cut[i].len());
        let mut out = vec![0f32; texts.len() * self.dim];
        for batch in order.chunks(BATCH) {
            let inputs: Vec<&str> = batch.iter().map(|&i| cut[i]).collect();
            let vecs = self.run(&inputs)?;
            for (j, &i) in batch.iter().enumerate() {
                out[i * self.dim..(i + 1) * self.dim].copy_from_slice(&vecs[j * self.dim..(j + 1) * self.dim]);
            }
        }
        Ok(out)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let q = format!("{}{}", self.query_prefix, text);
        self.run(&[q.as_str()])
    }
}
