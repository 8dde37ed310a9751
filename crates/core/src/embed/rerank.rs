//! Cross-encoder reranking (ms-marco-MiniLM-L-6-v2 layout): scores (query, passage) pairs with
//! one ONNX model and returns the raw relevance logits.

use anyhow::{Result, anyhow, bail};
use std::path::Path;
use std::sync::Mutex;
use tokenizers::Tokenizer;

const MAX_LEN: usize = 512;
const BATCH: usize = 16;

pub struct CrossEncoder {
    tokenizer: Tokenizer,
    session: Mutex<ort::session::Session>,
    inputs: Vec<String>,
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
        let session = super::transformer::session(onnx, threads, ort_setting)?;
        let inputs = session.inputs().iter().map(|i| i.name().to_string()).collect();
        Ok(CrossEncoder { tokenizer, session: Mutex::new(session), inputs, name: name.to_string() })
    }

    /// Relevance of each passage to the query (higher is more relevant).
    pub fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity(passages.len());
        for batch in passages.chunks(BATCH) {
            let pairs: Vec<(String, String)> =
                batch.iter().map(|p| (query.to_string(), cut(p, MAX_LEN * 6).to_string())).collect();
            let enc = self.tokenizer.encode_batch(pairs, true).map_err(|e| anyhow!("tokenizer: {e}"))?;
            let n = enc.len();
            let seq = enc.iter().map(|e| e.len()).max().unwrap_or(1).max(1);
            let mut cols: [Vec<i64>; 3] = Default::default();
            for e in &enc {
                cols[0].extend(e.get_ids().iter().map(|&v| v as i64));
                cols[1].extend(e.get_attention_mask().iter().map(|&v| v as i64));
                cols[2].extend(e.get_type_ids().iter().map(|&v| v as i64));
            }
            let mut feed: Vec<(String, ort::value::DynValue)> = Vec::new();
            for name in &self.inputs {
                let data = match name.as_str() {
                    "input_ids" => cols[0].clone(),
                    "attention_mask" => cols[1].clone(),
                    "token_type_ids" => cols[2].clone(),
                    other => bail!("cross-encoder input `{other}` is not supported"),
                };
                feed.push((
                    name.clone(),
                    ort::value::Tensor::from_array((vec![n as i64, seq as i64], data))?.into_dyn(),
                ));
            }
            let mut session = self.session.lock().map_err(|_| anyhow!("ONNX session poisoned"))?;
            let outputs = session.run(feed)?;
            let (shape, data) = outputs[0].try_extract_tensor::<f32>()?;
            let per = if shape.len() == 2 { shape[1] as usize } else { 1 };
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
