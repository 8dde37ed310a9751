//! Embedding and dense retrieval speed.
//!
//!     cargo bench --bench embed -- [/path/to/repo]
//!
//! Reports (1) static model throughput on real code chunks (model: LYNX_BENCH_STATIC, default
//! ../shared/models/minilm-static-256), (2) transformer throughput next to onnxruntime's own
//! Python API on the same model and inputs (../shared/models/all-MiniLM-L6-v2, fp32 and int8;
//! Python from LYNX_BENCH_PYTHON, default python3, needs onnxruntime, tokenizers and numpy),
//! (3) exact dense query latency over 100,000 vectors.

mod common;
use common::*;
use lynx_core::embed;
use std::path::PathBuf;
use std::time::Instant;

fn chunks_of(repo: &std::path::Path, max: usize) -> Vec<String> {
    let files = git(repo, &["ls-files"]);
    let mut out = Vec::new();
    for f in files.lines() {
        let Ok(bytes) = std::fs::read(repo.join(f)) else { continue };
        if bytes.len() > 1 << 20 || lynx_core::repo::content_skip(&bytes).is_some() {
            continue;
        }
        let lang = lynx_core::lang::detect(f, &bytes);
        if !lang.is_code() {
            continue;
        }
        for c in lynx_core::chunk::chunk(lang, &String::from_utf8_lossy(&bytes)) {
            out.push(c.text);
            if out.len() >= max {
                return out;
            }
        }
    }
    out
}

fn main() {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/models");
    let repo = repo_arg().unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let mut report = serde_json::Map::new();

    // 1. Static throughput.
    let static_dir = std::env::var("LYNX_BENCH_STATIC").map(PathBuf::from).unwrap_or(shared.join("minilm-static-256"));
    let chunks = chunks_of(&repo, 20_000);
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    if static_dir.exists() {
        let files = embed::resolve::resolve(static_dir.to_str().unwrap(), false, false).unwrap();
        let m = embed::load_files(&files, 0, None, None).unwrap();
        m.embed_documents(&refs[..refs.len().min(500)]).unwrap(); // warm up
        let t = Instant::now();
        let v = m.embed_documents(&refs).unwrap();
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(v.len(), refs.len() * m.dim());
        let mean_chars = chunks.iter().map(|c| c.len()).sum::<usize>() as f64 / chunks.len().max(1) as f64;
        report.insert("static".into(), serde_json::json!({"model": static_dir.display().to_string(), "chunks": refs.len(), "mean_chunk_chars": mean_chars.round(), "seconds": secs, "chunks_per_s": refs.len() as f64 / secs}));
    }

    // 2. Transformer vs onnxruntime's Python API, same inputs.
    let tdir = shared.join("all-MiniLM-L6-v2");
    let only = std::env::var("LYNX_BENCH_ONLY").unwrap_or_default();
    if tdir.exists() && embed::onnx::find_library(None).is_some() && (only.is_empty() || only == "transformer") {
        let sample: Vec<String> = chunks.iter().take(256).cloned().collect();
        let tmp = tempfile::tempdir().unwrap();
        let texts_path = tmp.path().join("texts.json");
        std::fs::write(&texts_path, serde_json::to_string(&sample).unwrap()).unwrap();
        let refs: Vec<&str> = sample.iter().map(String::as_str).collect();
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        for (name, onnx) in [("fp32", tdir.join("onnx/model.onnx")), ("int8", tdir.join("onnx/model_int8.onnx"))] {
            let files = embed::resolve::resolve(onnx.to_str().unwrap(), false, false).unwrap();
            let m = embed::load_files(&files, threads, None, None).unwrap();
            m.embed_documents(&refs[..8]).unwrap();
            let t = Instant::now();
            let ours = m.embed_documents(&refs).unwrap();
            let ours_s = t.elapsed().as_secs_f64();
            let python = std::env::var("LYNX_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
            let out = std::process::Command::new(&python)
                .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/ort_python_bench.py"))
                .args([
                    tdir.to_str().unwrap(),
                    onnx.to_str().unwrap(),
                    texts_path.to_str().unwrap(),
                    &threads.to_string(),
                ])
                .output()
                .unwrap();
            let py: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| serde_json::json!({"error": String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("").to_string()}));
            // Agreement on the same inputs (first vector).
            let cos = py["first"].as_array().map(|f| {
                let f: Vec<f32> = f.iter().map(|x| x.as_f64().unwrap() as f32).collect();
                embed::dot(&ours[..f.len()], &f)
            });
            report.insert(
                format!("transformer_{name}"),
                serde_json::json!({
                    "texts": refs.len(), "threads": threads,
                    "lynx_seconds": ours_s, "lynx_per_s": refs.len() as f64 / ours_s,
                    "python_seconds": py["seconds"], "python_per_s": py["per_s"],
                    "ratio_lynx_over_python": py["seconds"].as_f64().map(|p| ours_s / p),
                    "cosine_first_vector": cos, "python_error": py.get("error"),
                }),
            );
        }
    }

    // 3. Dense query latency on 100k vectors.
    for dim in [256usize, 384] {
        let n = 100_000;
        let mut state = 0x9E3779B97F4A7C15u64;
        let mut rnd = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let mut data = vec![0f32; n * dim];
        for row in data.chunks_mut(dim) {
            for x in row.iter_mut() {
                *x = rnd();
            }
            embed::normalize(row);
        }
        let tmp = tempfile::tempdir().unwrap();
        let p = lynx_core::shard::vectors::write_values(tmp.path(), "be/nch", dim, &data).unwrap();
        let shard = lynx_core::shard::vectors::VectorShard::open(&p, "be/nch").unwrap();
        let m = lynx_core::view::dense::DenseView::over_shard(std::sync::Arc::new(shard));
        let mut times = Vec::new();
        for i in 0..120 {
            let q = data[(i * 997 % n) * dim..(i * 997 % n + 1) * dim].to_vec();
            let t = Instant::now();
            let top = m.search(&q, 30, None);
            if i >= 20 {
                times.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            assert_eq!(top[0].0 as usize, i * 997 % n);
        }
        times.sort_by(|a, b| a.total_cmp(b));
        report.insert(
            format!("dense_query_{dim}d_100k"),
            serde_json::json!({"p50_ms": percentile(&times, 0.5), "p95_ms": percentile(&times, 0.95)}),
        );
    }
    println!("{}", serde_json::to_string_pretty(&serde_json::Value::Object(report)).unwrap());
}
