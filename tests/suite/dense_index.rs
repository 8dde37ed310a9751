//! The dense layer through the binary: vectors computed once per distinct chunk, hybrid search
//! by default, and model problems that turn dense off without failing anything.

use crate::common;
use common::*;

fn static_model() -> String {
    format!("{}/tests/fixtures/models/tiny-static", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn vectors_are_computed_once_and_shared_across_revisions() {
    let r = TestRepo::new();
    r.write("a.py", "def parse_json_config(file):\n    return json.load(file)\n\n\ndef compute_distance(a, b):\n    return abs(a - b)\n");
    r.write("b.py", "def handle_http_request(user):\n    return user\n");
    r.write("copy.py", "def handle_http_request(user):\n    return user\n");
    r.commit_all("first");
    let m = static_model();
    let first = r.json(&["--model", &m, "index", "--rev", "HEAD"]);
    assert_eq!(first["dense"], "ready", "{first}");
    // Identical chunks (b.py and copy.py) share one vector.
    assert_eq!(first["chunks_embedded"], 3, "{first}");
    r.write("a.py", "def parse_json_config(file):\n    return json.loads(file.read())\n\n\ndef compute_distance(a, b):\n    return abs(a - b)\n");
    r.commit_all("change one function");
    let second = r.json(&["--model", &m, "index", "--rev", "HEAD"]);
    assert_eq!(second["blobs_new"], 1);
    assert_eq!(second["chunks_embedded"], 1, "only the changed function is embedded: {second}");
    assert_eq!(second["dense_coverage"], 1.0);
    // Hybrid is the default mode and the answer names both retrievers' ranks.
    let v = r.json(&["--model", &m, "search", "parse json config", "-k", "3"]);
    assert_eq!(v["mode"], "hybrid", "{v}");
    assert_eq!(v["results"][0]["symbol"], "parse_json_config");
    assert!(v["results"][0]["dense_rank"].is_u64() && v["results"][0]["sparse_rank"].is_u64(), "{v}");
    assert!(v.get("note").is_none(), "{v}");
    let d = r.json(&["--model", &m, "search", "compute distance", "--mode", "dense", "-k", "1"]);
    assert_eq!(d["mode"], "dense");
    assert_eq!(d["results"][0]["symbol"], "compute_distance");
    // gc keeps the vectors live chunks need (any model), so nothing is embedded again.
    r.json(&["gc"]);
    let again = r.json(&["--model", &m, "index"]);
    assert_eq!(again["chunks_embedded"], 0, "{again}");
    assert_eq!(again["dense"], "ready");
    // Byte-identical chunks appear once.
    let v = r.json(&["--model", &m, "search", "handle http request", "-k", "5"]);
    let same = v["results"].as_array().unwrap().iter().filter(|h| h["symbol"] == "handle_http_request").count();
    assert_eq!(same, 1, "{v}");
}

#[test]
fn model_problems_turn_dense_off_but_never_fail() {
    let r = TestRepo::new();
    r.write("a.py", "def parse_json_config(file):\n    return json.load(file)\n");
    r.commit_all("first");

    // Missing model.
    let v = r.json(&["--model", "/no/such/model", "index"]);
    assert_eq!(v["dense"], "off");
    assert!(v["dense_reason"].as_str().unwrap().contains("/no/such/model"), "{v}");
    let s = r.json(&["--model", "/no/such/model", "search", "json"]);
    assert_eq!(s["mode"], "sparse");
    assert!(s["note"].as_str().unwrap().contains("lexical only"), "{s}");
    let text = r.text(&["--model", "/no/such/model", "search", "json"]);
    assert!(text.contains("note: results are lexical only"), "{text}");

    // Corrupt model file.
    let bad = tempfile::tempdir().unwrap();
    for f in ["tokenizer.json", "config.json"] {
        std::fs::copy(format!("{}/{f}", static_model()), bad.path().join(f)).unwrap();
    }
    std::fs::write(bad.path().join("model.safetensors"), b"\x10\x00\x00\x00not safetensors").unwrap();
    let v = r.json(&["--model", bad.path().to_str().unwrap(), "index"]);
    assert_eq!(v["dense"], "off");
    assert!(v["dense_reason"].as_str().unwrap().contains("safetensors"), "{v}");

    // Dimension mismatch: an embeddings table with fewer rows than the tokenizer has tokens.
    let short = tempfile::tempdir().unwrap();
    for f in ["tokenizer.json", "config.json"] {
        std::fs::copy(format!("{}/{f}", static_model()), short.path().join(f)).unwrap();
    }
    let header = br#"{"embeddings":{"dtype":"F32","shape":[4,8],"data_offsets":[0,128]}}"#;
    let mut st = (header.len() as u64).to_le_bytes().to_vec();
    st.extend_from_slice(header);
    st.extend_from_slice(&[0u8; 128]);
    std::fs::write(short.path().join("model.safetensors"), st).unwrap();
    let v = r.json(&["--model", short.path().to_str().unwrap(), "index"]);
    assert_eq!(v["dense"], "off");
    assert!(v["dense_reason"].as_str().unwrap().contains("dimension mismatch"), "{v}");
    let s = r.json(&["--model", short.path().to_str().unwrap(), "search", "json"]);
    assert_eq!(s["results"][0]["path"], "a.py", "{s}");

    // ONNX Runtime missing for a transformer model.
    let tiny_bert = format!("{}/tests/fixtures/models/tiny-bert", env!("CARGO_MANIFEST_DIR"));
    let out = r
        .cmd(&["--json", "--model", &tiny_bert, "index"])
        .env("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["dense"], "off");
    let reason = v["dense_reason"].as_str().unwrap();
    assert!(reason.contains("ONNX Runtime") && reason.contains("/nonexistent"), "{reason}");

    // Off on request.
    let v = r.json(&["--no-dense", "index"]);
    assert_eq!(v["dense"], "off");
    assert!(v["dense_reason"].as_str().unwrap().contains("--no-dense"));
}

#[test]
fn views_answer_the_same_with_shards_rebuilt() {
    let r = TestRepo::new();
    for i in 0..20 {
        r.write(&format!("m{i}.py"), &format!("def compute_distance_{i}(a, b):\n    return abs(a - b) + {i}\n"));
    }
    r.commit_all("first");
    r.write("m5.py", "def parse_json_config(file):\n    return json.load(file)\n");
    r.commit_all("second");
    let m = static_model();
    let ask = |rev: &str| -> Vec<(String, String)> {
        let v = r.json(&["--model", &m, "search", "parse json config", "--rev", rev, "--mode", "dense", "-k", "5"]);
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["path"].as_str().unwrap().to_string(), format!("{:.5}", h["score"].as_f64().unwrap())))
            .collect()
    };
    ask("HEAD~1");
    let derived = ask("HEAD");
    assert_eq!(derived[0].0, "m5.py");
    // Shards are caches: removed, they are rebuilt from the segments, and answers stay.
    std::fs::remove_dir_all(r.file(".lynx/cache/shards")).unwrap();
    assert_eq!(ask("HEAD"), derived);
    assert!(r.file(".lynx/cache/shards").is_dir());
}

#[test]
fn rerank_reorders_candidates_by_cross_encoder_and_keeps_retrieval_scores() {
    if !prerequisite(
        "ort",
        lynx_core::embed::onnx::find_library(None).is_some(),
        "ONNX Runtime: pip install onnxruntime",
    ) {
        return;
    }
    let r = TestRepo::new();
    r.write(
        "geometry.py",
        "def distance(a, b):\n    \"\"\"compute distance between points\"\"\"\n    return abs(a - b)\n",
    );
    r.write("config.py", "import json\n\ndef parse_json_config(file):\n    \"\"\"parse the json config file\"\"\"\n    return json.load(file)\n");
    r.write("notes.py", "def config_notes():\n    return 'json config points'\n");
    r.commit_all("init");
    let ce = format!("{}/tests/fixtures/models/tiny-cross-encoder", env!("CARGO_MANIFEST_DIR"));
    let q = "parse json config points";
    let plain = r.json(&["--no-dense", "search", q]);
    let reranked = r.json(&["--no-dense", "search", q, "--reranker", &ce]);
    let plain_hits = plain["results"].as_array().unwrap();
    let hits = reranked["results"].as_array().unwrap();
    assert_eq!(hits.len(), plain_hits.len(), "{reranked}");
    assert!(reranked["note"].as_str().unwrap().contains("reranked by"), "{reranked}");
    let key = |h: &serde_json::Value| format!("{}:{}", h["path"], h["start_line"]);
    for h in hits {
        assert_eq!(h["reranked"], true);
        // The retrieval score survives as original_score, the same as the plain search's.
        let same = plain_hits.iter().find(|p| key(p) == key(h)).expect("same candidates");
        assert!((h["original_score"].as_f64().unwrap() - same["score"].as_f64().unwrap()).abs() < 1e-6);
    }
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "ordered by the cross-encoder: {scores:?}");
    assert!(plain_hits.iter().all(|h| h.get("reranked").is_none() && h.get("original_score").is_none()));

    // A reranker that is not there: the plain ranking, with a note saying why.
    let missing = r.json(&["--no-dense", "search", q, "--reranker", "/nonexistent/reranker"]);
    assert!(missing["note"].as_str().unwrap().contains("not reranked"), "{missing}");
    let keys = |v: &serde_json::Value| v["results"].as_array().unwrap().iter().map(key).collect::<Vec<_>>();
    assert_eq!(keys(&missing), keys(&plain));
}

/// The model `index --model` used stays the store's model: later commands and the MCP server
/// use its vectors without the flag; asking for dense without any model is an error.
#[test]
fn the_model_an_index_was_built_with_is_remembered() {
    let r = TestRepo::new();
    r.write("a.py", "def parse_json_config(file):\n    return json.load(file)\n\n\ndef compute_distance(a, b):\n    return abs(a - b)\n");
    r.commit_all("first");
    // No model on this machine: dense by name is refused, hybrid answers lexically with a note.
    let out = r.lynx(&["--json", "search", "distance", "--mode", "dense"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("dense retrieval is not available"), "{v}");
    assert_eq!(r.json(&["search", "distance"])["mode"], "sparse");
    let m = static_model();
    assert_eq!(r.json(&["--model", &m, "index"])["dense"], "ready");
    let v = r.json(&["search", "compute distance", "-k", "1"]);
    assert_eq!(v["mode"], "hybrid", "{v}");
    assert!(v.get("note").is_none(), "{v}");
    assert_eq!(
        r.json(&["search", "compute distance", "--mode", "dense", "-k", "1"])["results"][0]["symbol"],
        "compute_distance"
    );
    // A flag still wins, and --no-dense still turns it off.
    assert_eq!(r.json(&["--no-dense", "search", "distance"])["mode"], "sparse");
}

#[test]
fn the_model_named_once_is_the_stores_and_status_says_where_it_came_from() {
    let r = TestRepo::new();
    r.write("a.py", "def parse_json_config(file):\n    return file\n");
    r.commit_all("first");
    let m = static_model();
    assert_eq!(r.json(&["--model", &m, "index"])["dense"], "ready");
    // A later shell without --model uses the recorded model, says so, and searches hybrid.
    let s = r.json(&["status"]);
    assert_eq!(s["dense"]["model"], m.as_str(), "{s}");
    assert!(s["dense"]["model_from"].as_str().unwrap_or_default().contains("recorded"), "{s}");
    assert_eq!(r.json(&["search", "parse json config"])["mode"], "hybrid");
    // A flag wins, and is named as the origin.
    let s = r.json(&["--model", &m, "status"]);
    assert_eq!(s["dense"]["model_from"], "--model", "{s}");
}

/// Embedding reads texts shard by shard and writes a segment per few thousand vectors while the
/// next group embeds: a view whose chunks lie in two chunk segments and fill more than one
/// vector segment gets every vector, each under its own chunk.
#[test]
fn vectors_of_many_chunks_over_several_shards_each_belong_to_their_chunk() {
    let r = TestRepo::new();
    let words = ["alpha", "beta", "gamma", "delta", "river", "stone", "cloud", "forest", "ember", "frost", "omega"];
    let file = |f: usize| {
        let mut s = String::new();
        for j in 0..40 {
            let w = |k: usize| words[(f * 7 + j * 3 + k * 5) % words.len()];
            s.push_str(&format!(
                "def {}_{f}_{j}({}):\n    return {} + {} * {}\n\n\n",
                w(0),
                w(1),
                w(2),
                f * 100 + j,
                w(3)
            ));
        }
        s
    };
    for f in 0..120 {
        r.write(&format!("a/m{f:03}.py"), &file(f));
    }
    r.commit_all("first half");
    assert_eq!(r.json(&["--no-dense", "index"])["chunks_written"], 4800);
    for f in 120..240 {
        r.write(&format!("b/m{f:03}.py"), &file(f));
    }
    r.commit_all("second half");
    assert_eq!(r.json(&["--no-dense", "index"])["chunks_written"], 4800);
    let m = static_model();
    let v = r.json(&["--model", &m, "index"]);
    assert_eq!(v["chunks_embedded"], 9600, "{v}");
    assert_eq!(v["dense_coverage"], 1.0, "{v}");
    // 8,192 vectors a segment: two of them.
    assert_eq!(v["segments_written"], 2, "{v}");
    // A chunk's own text, asked densely, finds the chunk at cosine 1: its vector is its own.
    for (f, j) in [(0, 0), (77, 39), (119, 20), (120, 0), (200, 13), (239, 39)] {
        let dir = if f < 120 { "a" } else { "b" };
        let text = file(f).split("\n\n\n").nth(j).unwrap().to_string();
        let hits = r.json(&["--model", &m, "search", &text, "--mode", "dense", "-k", "10"]);
        let own = hits["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["path"] == format!("{dir}/m{f:03}.py") && h["start_line"] == 1 + 4 * j as u64)
            .unwrap_or_else(|| panic!("{f}:{j} not among the hits of its own text: {hits}"));
        assert!(own["score"].as_f64().unwrap() > 0.999, "{f}:{j}: {own}");
    }
}

/// A revision's dense side is kept by `index` beside its view: a new process reads it instead
/// of looking every chunk up again, answers the same, and a record that does not hold is
/// refused, replaced, and removed by `gc`.
#[test]
fn a_revisions_dense_side_is_kept_and_a_damaged_record_is_replaced() {
    let r = TestRepo::new();
    r.write("a.py", "def parse_json_config(file):\n    return json.load(file)\n\n\ndef compute_distance(a, b):\n    return abs(a - b)\n");
    r.write("b.py", "def handle_http_request(user):\n    return user\n");
    r.commit_all("first");
    let m = static_model();
    assert_eq!(r.json(&["--model", &m, "index", "--rev", "HEAD"])["dense"], "ready");
    let records = || r.files_under(".lynx/cache/views-dense");
    let kept = records();
    assert_eq!(kept.len(), 1, "one record for the indexed revision: {kept:?}");
    let ask = || {
        let out = r
            .cmd(&["--model", &m, "--json", "search", "compute distance", "--rev", "HEAD", "--mode", "dense"])
            .env("LYNX_LOG", "debug")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let hits: Vec<(String, String)> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["symbol"].as_str().unwrap().to_string(), format!("{:.5}", h["score"].as_f64().unwrap())))
            .collect();
        (hits, String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (read, log) = ask();
    assert_eq!(read[0].0, "compute_distance", "{read:?}");
    assert!(log.contains("kept dense side of 3 chunks read"), "{log}");
    // Damaged: refused (and removed), the side assembled again with the same answer, and kept again.
    let mut bytes = std::fs::read(&kept[0]).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(&kept[0], &bytes).unwrap();
    let (again, log) = ask();
    assert_eq!(again, read);
    assert!(log.contains("not used") && log.contains("dense side: 3 of 3 chunks"), "{log}");
    assert!(ask().1.contains("kept dense side of 3 chunks read"));
    r.json(&["gc"]);
    assert!(records().is_empty());
}
