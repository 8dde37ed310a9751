//! Embedders on the real code paths (tokenizers, safetensors, ONNX Runtime) against reference
//! values computed in Python (tests/fixtures/models/reference.json), and the real models in
//! ../shared/models when present.

use crate::common;
use common::prerequisite;
use lynx_core::embed::{self, Embedder, resolve};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models")
}

fn reference() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join("reference.json")).unwrap()).unwrap()
}

fn load(path: PathBuf) -> Arc<dyn Embedder> {
    let files = resolve::resolve(path.to_str().unwrap(), false, false).unwrap();
    embed::load_files(&files, 1, None, None).unwrap()
}

fn ort_available() -> bool {
    prerequisite("ort", embed::onnx::find_library(None).is_some(), &embed::onnx::not_found_message())
}

fn assert_close(got: &[f32], want: &Value, tol: f32, what: &str) {
    let want: Vec<f32> = want.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
    assert_eq!(got.len(), want.len(), "{what}: dimension");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!((g - w).abs() <= tol, "{what}[{i}]: got {g}, want {w}");
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    embed::dot(a, b)
}

fn load_exact(name: &str) -> embed::static_model::StaticModel {
    embed::static_model::StaticModel::load(name, &fixtures().join(name), "test".into(), None).unwrap().exact()
}

#[test]
fn static_model_matches_reference_f16_and_f32() {
    let r = reference();
    let texts: Vec<String> = r["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
    for name in ["tiny-static", "tiny-static-f32"] {
        assert_eq!(load(fixtures().join(name)).kind(), "static");
        let m = load_exact(name);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let docs = m.embed_documents(&refs).unwrap();
        let dim = m.dim();
        for (i, t) in texts.iter().enumerate() {
            assert_close(&docs[i * dim..(i + 1) * dim], &r[name]["embeddings"][t], 1e-4, &format!("{name} {t}"));
            // Queries embed the same way for static models.
            assert_close(&m.embed_query(t).unwrap(), &r[name]["embeddings"][t], 1e-4, &format!("{name} query {t}"));
        }
    }
    // Different file contents give different fingerprints.
    assert_ne!(
        load(fixtures().join("tiny-static")).fingerprint(),
        load(fixtures().join("tiny-static-f32")).fingerprint()
    );
}

/// A static model's vocabulary kept under the store's cache: a second load reads the record
/// instead of tokenizer.json and embeds exactly as the first; a damaged record is refused and
/// written again.
#[test]
fn static_model_vocabulary_is_kept_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    for f in ["tokenizer.json", "config.json", "model.safetensors"] {
        std::fs::copy(fixtures().join("tiny-static").join(f), model.join(f)).unwrap();
    }
    let cache = dir.path().join("cache");
    let load = |fp: &str| embed::static_model::StaticModel::load("tiny", &model, fp.into(), Some(&cache)).unwrap();
    let texts = ["def parse_json_config(file): return json.load(file)", "class HTTPServer: pass", "größe über alles"];
    let want = load("fp").embed_documents(&texts).unwrap();
    let record = cache.join("vocab/fp-vocab-1.bin");
    let kept = std::fs::read(&record).expect("the first load keeps the vocabulary");

    // Without tokenizer.json, ASCII text still embeds from the record alone, identically; text
    // that needs the tokenizer says which file it could not read.
    let json = std::fs::read(model.join("tokenizer.json")).unwrap();
    std::fs::write(model.join("tokenizer.json"), b"{ not json").unwrap();
    let m = load("fp");
    assert_eq!(m.embed_documents(&texts[..2]).unwrap(), want[..2 * m.dim()]);
    let err = m.embed_query("größe").unwrap_err().to_string();
    assert!(err.contains("tokenizer.json"), "{err}");
    std::fs::write(model.join("tokenizer.json"), &json).unwrap();
    assert_eq!(load("fp").embed_documents(&texts).unwrap(), want);

    // One flipped byte: the record is not used, the model loads from tokenizer.json, and the
    // record is written again.
    let mut bad = kept.clone();
    bad[20] ^= 0x40;
    std::fs::write(&record, &bad).unwrap();
    assert_eq!(load("fp").embed_documents(&texts).unwrap(), want);
    assert!(std::fs::read(&record).unwrap() == kept, "the record is written again as it was");
}

/// The default preparation: identifiers embedded as their words, queries without function
/// words; the exact model2vec embedding of the prepared text.
#[test]
fn static_model_embeds_identifiers_as_words() {
    let (m, exact) = (load(fixtures().join("tiny-static")), load_exact("tiny-static"));
    let dim = m.dim();
    let doc = m.embed_documents(&["def parse_json_config(file): return json.load(file)"]).unwrap();
    let want = exact.embed_documents(&["def parse json config(file): return json.load(file)"]).unwrap();
    assert_eq!(doc.len(), dim);
    assert!(doc.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6));
    let raw = exact.embed_documents(&["def parse_json_config(file): return json.load(file)"]).unwrap();
    assert!(cosine(&doc, &raw) < 0.9999, "the underscores must no longer be embedded");
    let q = m.embed_query("how does the json config get parsed?").unwrap();
    let want = exact.embed_query("json config get parsed").unwrap();
    assert!(q.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6));
}

#[test]
fn transformer_mean_and_cls_pooling_match_reference() {
    if !ort_available() {
        return;
    }
    let r = reference();
    let texts: Vec<&str> = r["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    for name in ["tiny-bert", "tiny-bge-cls"] {
        let m = load(fixtures().join(name));
        assert_eq!((m.kind(), m.dim()), ("transformer", 32));
        // All texts in one call: batches are sorted by length and padded to the longest, and
        // the tokenizer's shipped `Fixed: 16` padding / 16-token truncation are overridden
        // (three texts are longer than 16 tokens).
        let all = m.embed_documents(&texts).unwrap();
        for (i, t) in texts.iter().enumerate() {
            assert_close(&all[i * 32..(i + 1) * 32], &r[name]["embeddings"][*t], 1e-4, &format!("{name} {t}"));
        }
        // One at a time gives the same vectors (no dependence on batch padding).
        let single = m.embed_documents(&texts[4..5]).unwrap();
        assert_close(&single, &r[name]["embeddings"][texts[4]], 1e-4, &format!("{name} alone"));
    }
}

#[test]
fn int8_model_agrees_with_fp32() {
    if !ort_available() {
        return;
    }
    let r = reference();
    let m = load(fixtures().join("tiny-bert/onnx/model_int8.onnx"));
    let texts: Vec<&str> = r["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let v = m.embed_documents(&texts).unwrap();
    for (i, t) in texts.iter().enumerate() {
        let want: Vec<f32> =
            r["tiny-bert"]["embeddings"][*t].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
        let c = cosine(&v[i * 32..(i + 1) * 32], &want);
        assert!(c > 0.95, "int8 vs fp32 cosine {c} for {t}");
    }
    assert_ne!(m.fingerprint(), load(fixtures().join("tiny-bert")).fingerprint());
}

#[test]
fn cross_encoder_logits_match_reference() {
    if !ort_available() {
        return;
    }
    let r = reference();
    let dir = fixtures().join("tiny-cross-encoder");
    let files = resolve::resolve(dir.to_str().unwrap(), false, false).unwrap();
    assert_eq!(files.kind, resolve::ModelKind::CrossEncoder);
    let ce = embed::rerank::CrossEncoder::load("tiny", &dir, files.onnx.as_ref().unwrap(), 1, None).unwrap();
    for pair in r["tiny-cross-encoder"]["pairs"].as_array().unwrap() {
        let got = ce.score(pair["query"].as_str().unwrap(), &[pair["document"].as_str().unwrap()]).unwrap();
        let want = pair["logit"].as_f64().unwrap() as f32;
        assert!((got[0] - want).abs() < 1e-3, "{pair}: got {}", got[0]);
    }
    // Batched scoring keeps order.
    let q = "parse json config";
    let docs = ["compute distance between points", "def parse_json_config(file): return json.load(file)"];
    let s = ce.score(q, &docs).unwrap();
    assert!(s[1] > s[0], "{s:?}");
}

/// The real all-MiniLM-L6-v2 (fp32, int8) and its static distillation, checked against the
/// numbers in ../shared/models/README.md (mean pooling, truncation 256).
#[test]
fn shared_real_models_agree_with_reference_numbers() {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/models");
    // CI has ../shared beside its clone and sets LYNX_REQUIRE_MODELS: there, a missing folder fails.
    if !prerequisite("models", shared.join("all-MiniLM-L6-v2").exists(), "../shared/models is not present") {
        return;
    }
    let q = "compute distance between two points";
    let f = "fn euclidean(a: Point, b: Point) -> f64";
    let j = "parse a JSON config file";
    let check = |m: &dyn Embedder, want: [f32; 3], tol: f32| {
        let v = m.embed_documents(&[q, f, j]).unwrap();
        let d = m.dim();
        let (vq, vf, vj) = (&v[..d], &v[d..2 * d], &v[2 * d..]);
        let got = [cosine(vq, vf), cosine(vq, vj), cosine(vf, vj)];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= tol, "{}: got {got:?}, want {want:?}", m.name());
        }
        assert!(got[0] > got[1] && got[0] > got[2], "related pair must be closest: {got:?}");
    };
    check(load(shared.join("minilm-static-256")).as_ref(), [0.478, 0.121, 0.127], 0.002);
    if ort_available() {
        let fp32 = load(shared.join("all-MiniLM-L6-v2"));
        assert_eq!(fp32.dim(), 384);
        check(fp32.as_ref(), [0.343, 0.048, -0.035], 0.002);
        // int8 kernels differ by CPU (the reference machine had AVX2 without VNNI).
        check(load(shared.join("all-MiniLM-L6-v2/onnx/model_int8.onnx")).as_ref(), [0.349, 0.035, -0.028], 0.025);
    }
}

/// A safetensors file from (name, dtype, shape, little-endian bytes).
fn safetensors_bytes(tensors: &[(&str, &str, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [data.len(), data.len() + bytes.len()]}),
        );
        data.extend_from_slice(bytes);
    }
    let h = serde_json::to_vec(&header).unwrap();
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&data);
    out
}

/// Vocabulary-quantized model2vec models (potion-code-16M's layout): a `mapping` from token id
/// to row and per-token `weights`, combined as model2vec does.
#[test]
fn quantized_static_model_uses_mapping_and_weights() {
    let src = fixtures().join("tiny-static");
    let dir = tempfile::tempdir().unwrap();
    for f in ["tokenizer.json", "config.json"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    let tok = tokenizers::Tokenizer::from_file(src.join("tokenizer.json")).unwrap();
    let vocab = tok.get_vocab_size(false);
    let (rows, dim) = (3usize, 4usize);
    let table: Vec<f32> = (0..rows * dim).map(|i| ((i * 7 % 11) as f32) - 5.0).collect();
    let mapping: Vec<i64> = (0..vocab as i64).map(|id| id % rows as i64).collect();
    let weights: Vec<f32> = (0..vocab).map(|id| 1.0 + (id % 5) as f32).collect();
    let le = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let st = safetensors_bytes(&[
        ("embeddings", "F32", vec![rows, dim], le(&table)),
        ("mapping", "I64", vec![vocab], mapping.iter().flat_map(|x| x.to_le_bytes()).collect()),
        ("weights", "F32", vec![vocab], le(&weights)),
    ]);
    std::fs::write(dir.path().join("model.safetensors"), st).unwrap();
    // Exact model2vec arithmetic: text preparation is tested on its own.
    let m = embed::static_model::StaticModel::load("quantized", dir.path(), "test".into(), None).unwrap().exact();
    assert_eq!(m.dim(), dim);

    let text = "parse the json config file";
    let unk = tok.get_vocab(true).get("[UNK]").copied();
    let ids: Vec<u32> =
        tok.encode(text, false).unwrap().get_ids().iter().copied().filter(|&i| Some(i) != unk).collect();
    assert!(!ids.is_empty());
    let mut want = vec![0f32; dim];
    for &id in &ids {
        let row = mapping[id as usize] as usize;
        for d in 0..dim {
            want[d] += table[row * dim + d] * weights[id as usize];
        }
    }
    let norm = want.iter().map(|x| x * x).sum::<f32>().sqrt();
    want.iter_mut().for_each(|x| *x /= norm);
    let got = m.embed_query(text).unwrap();
    for d in 0..dim {
        assert!((got[d] - want[d]).abs() < 1e-5, "dim {d}: got {got:?}, want {want:?}");
    }

    // A mapping pointing past the table is refused at load, naming the problem.
    let bad_map: Vec<i64> = (0..vocab as i64).map(|_| rows as i64).collect();
    let st = safetensors_bytes(&[
        ("embeddings", "F32", vec![rows, dim], le(&table)),
        ("mapping", "I64", vec![vocab], bad_map.iter().flat_map(|x| x.to_le_bytes()).collect()),
    ]);
    std::fs::write(dir.path().join("model.safetensors"), st).unwrap();
    let files = resolve::resolve(dir.path().to_str().unwrap(), false, false).unwrap();
    let err = embed::load_files(&files, 1, None, None).err().expect("refused").to_string();
    assert!(err.contains("dimension mismatch"), "{err}");
}

/// `model distill` on the tiny BERT: every token but the unused and sentence-frame ones, plus
/// the extra words as whole tokens; PCA columns uncorrelated with falling variance once the SIF
/// weights are divided out; the folder loads and embeds as a static model.
#[test]
fn distill_makes_a_static_model_with_added_words() {
    if !ort_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("words.txt");
    // `retryable` is not in the tiny vocabulary; `the` is; `foo_bar` is not one word.
    std::fs::write(&words, "# repository words\nretryable\nthe\nfoo_bar\nretryable\n").unwrap();
    let out = dir.path().join("distilled");
    let exe = env!("CARGO_BIN_EXE_git-lynx");
    let mut cmd = std::process::Command::new(exe);
    common::isolate(&mut cmd);
    let run = cmd
        .args([
            "--json",
            "model",
            "distill",
            fixtures().join("tiny-bert").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--dims",
            "8",
            "--words",
            words.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report: Value = serde_json::from_slice(&run.stdout).unwrap();
    let source: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("tiny-bert/tokenizer.json")).unwrap()).unwrap();
    let vocab = source["model"]["vocab"].as_object().unwrap().len();
    // [CLS], [SEP] and [MASK] never occur inside a text; [PAD] and [UNK] stay.
    assert_eq!(report["tokens"], vocab - 3 + 1, "{report}");
    assert_eq!(report["words_added"], 1, "{report}");
    assert_eq!(report["words_skipped"], 3, "{report}");
    assert_eq!(report["dim"], 8);

    let tok: Value = serde_json::from_str(&std::fs::read_to_string(out.join("tokenizer.json")).unwrap()).unwrap();
    let new_vocab = tok["model"]["vocab"].as_object().unwrap();
    assert_eq!(new_vocab["retryable"], vocab - 3, "the added word is the last row");
    assert!(!new_vocab.contains_key("[CLS]") && new_vocab.contains_key("[UNK]"));
    assert!(tok["post_processor"].is_null());

    let bytes = std::fs::read(out.join("model.safetensors")).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let t = st.tensor("embeddings").unwrap();
    assert_eq!(t.shape(), &[vocab - 2, 8]);
    let rows: Vec<f32> = t.data().chunks(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect();
    let n = vocab - 2;
    let unweighted: Vec<f64> = rows
        .chunks(8)
        .enumerate()
        .flat_map(|(i, r)| {
            let w = lynx_core::embed::distill::sif_weight(i, n);
            r.iter().map(move |x| *x as f64 / w).collect::<Vec<_>>()
        })
        .collect();
    let mean = |j: usize| unweighted.chunks(8).map(|r| r[j]).sum::<f64>() / n as f64;
    let cov = |a: usize, b: usize| {
        let (ma, mb) = (mean(a), mean(b));
        unweighted.chunks(8).map(|r| (r[a] - ma) * (r[b] - mb)).sum::<f64>() / (n - 1) as f64
    };
    for j in 0..8 {
        assert!(mean(j).abs() < 1e-2 * cov(0, 0).sqrt(), "column {j} is centred");
        if j > 0 {
            assert!(cov(j, j) <= cov(j - 1, j - 1) * 1.001, "variance falls along the components");
            assert!(cov(0, j).abs() < 1e-2 * (cov(0, 0) * cov(j, j)).sqrt(), "components 0 and {j} are uncorrelated");
        }
    }

    let m = load(out.clone());
    assert_eq!(m.kind(), "static");
    assert_eq!(m.dim(), 8);
    let v = m.embed_query("retryable request").unwrap();
    assert!((embed::dot(&v, &v) - 1.0).abs() < 1e-4);
}
