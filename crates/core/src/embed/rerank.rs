//! Cross-encoder reranking (ms-marco-MiniLM-L-6-v2 layout): scores (query, passage) pairs with
//! one ONNX model and returns the raw relevance logits.

use anyhow::Result;
use std::path::Path;
use tokenizers::Tokenizer;

const MAX_LEN: usize = 512;
const BATCH: usize = 16;

pub struct CrossEncoder {
    tokenizer: Tokenizer,
    session: super::onnx::Session,
    pub name: String,
}

impl CrossEncoder {
    pub fn load(
        name: &str,
        dir: &Path,
        onnx: &Path,
        threads: usize,
        ort_setting: Option<&str>,
    ) -> Result<CrossEncoder> {
        let tokenizer = super::transformer::tokenizer_for(dir, MAX_LEN)?;
        let session = super::onnx::Session::open(onnx, threads, ort_setting)?;
        Ok(CrossEncoder { tokenizer, session, name: name.to_string() })
    }

    /// Relevance of each passage to the query (higher is more relevant).
    pub fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity(passages.len());
        for batch in passages.chunks(BATCH) {
            let pairs: Vec<(String, String)> =
                batch.iter().map(|p| (query.to_string(), cut(p, MAX_LEN * 6).to_string())).collect();
            let enc = self
                .tokenizer
                .encode_batch(pairs, true)
                .map_err(|e| super::EmbedError::Tokenizer { why: e.to_string() })?;
            let n = enc.len();
            let seq = enc.iter().map(|e| e.len()).max().unwrap_or(1).max(1);
            let mut cols: [Vec<i64>; 3] = Default::default();
            for e in &enc {
                cols[0].extend(e.get_ids().iter().map(|&v| v as i64));
                cols[1].extend(e.get_attention_mask().iter().map(|&v| v as i64));
                cols[2].extend(e.get_type_ids().iter().map(|&v| v as i64));
            }
            let mut feed = Vec::new();
            for name in self.session.inputs() {
                feed.push(match name.as_str() {
                    "input_ids" => cols[0].clone(),
                    "attention_mask" => cols[1].clone(),
                    "token_type_ids" => cols[2].clone(),
                    other => return Err(super::EmbedError::Input { name: other.to_string() }.into()),
                });
            }
            let (shape, data) = self.session.run(feed, n, seq, None)?;
            let per = if shape.len() == 2 { shape[1] } else { 1 };
            for i in 0..n {
                // One logit, or the last (positive) class of several.
                out.push(data[i * per + per - 1]);
            }
        }
        Ok(out)
    }
}

fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
