//! Model downloads through the real HuggingFace client against a local mirror (`HF_ENDPOINT`):
//! a static model in model2vec's current layout is pulled into the cache, then used offline.

mod common;
use common::*;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

/// Serves `files` ("owner/name/path" → bytes) the way the Hub's `resolve/main/` endpoint does:
/// ETag and X-Repo-Commit headers, byte ranges, 404 for anything else.
fn mirror(files: HashMap<String, Vec<u8>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            let mut range = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("range")
                {
                    range = v.trim().strip_prefix("bytes=").map(str::to_string);
                }
            }
            let path = request.split_whitespace().nth(1).unwrap_or("");
            let key = path.trim_start_matches('/').replacen("/resolve/main/", "/", 1);
            let Some(body) = files.get(&key) else {
                let _ = stream
                    .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found");
                continue;
            };
            let size = body.len();
            let (start, end) = match range.as_deref().and_then(|r| r.split_once('-')) {
                Some((a, b)) => {
                    (a.parse().unwrap_or(0), b.parse::<usize>().map(|e| e.min(size - 1)).unwrap_or(size - 1))
                }
                None => (0, size - 1),
            };
            let chunk = &body[start..=end];
            let etag = format!(
                "{:016x}",
                body.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3))
            );
            let head = format!(
                "HTTP/1.1 {}\r\nETag: \"{etag}\"\r\nX-Repo-Commit: {}\r\nContent-Range: bytes {start}-{end}/{size}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                if range.is_some() { "206 Partial Content" } else { "200 OK" },
                "0123456789abcdef0123456789abcdef01234567",
                chunk.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(chunk);
        }
    });
    format!("http://{addr}")
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models").join(name)
}

#[test]
fn pull_from_a_mirror_then_use_offline() {
    let mut files = HashMap::new();
    let src = fixture("tiny-static");
    // model2vec >= 0.6 writes a config without `model_type` (potion-code-16M's layout).
    files.insert(
        "acme/tiny-code/config.json".to_string(),
        br#"{"normalize": true, "embedding_dtype": "float16"}"#.to_vec(),
    );
    for f in ["tokenizer.json", "model.safetensors"] {
        files.insert(format!("acme/tiny-code/{f}"), std::fs::read(src.join(f)).unwrap());
    }
    let endpoint = mirror(files);
    let hf_home = tempfile::tempdir().unwrap();
    let r = TestRepo::new();
    r.write("a.py", "def parse_json_config(file):\n    return json.load(file)\n");
    r.commit_all("init");
    let online = |args: &[&str]| {
        r.cmd(args)
            .env_remove("HF_HUB_OFFLINE")
            .env("HF_ENDPOINT", &endpoint)
            .env("HF_HOME", hf_home.path())
            .output()
            .unwrap()
    };

    let out = online(&["--json", "model", "pull", "acme/tiny-code"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true, "{v} {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(v["kind"], "static", "{v}");
    assert!(hf_home.path().join("hub/models--acme--tiny-code/snapshots").is_dir());

    // Offline from here on: the cache answers.
    let offline = |args: &[&str]| r.cmd(args).env("HF_HOME", hf_home.path()).output().unwrap();
    let out = offline(&["--json", "--model", "acme/tiny-code", "index"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["dense"], "ready", "{v}");
    assert!(v["chunks_embedded"].as_u64().unwrap() >= 1, "{v}");
    let out = offline(&["--json", "--model", "acme/tiny-code", "search", "json config"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["mode"], "hybrid", "{v}");
    assert!(v["results"][0]["dense_rank"].is_number(), "{v}");

    // A repository the mirror does not have: a clear error naming it and the endpoint.
    let out = online(&["--json", "model", "pull", "acme/missing"]);
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = v["error"].as_str().unwrap();
    assert!(err.contains("acme/missing") && err.contains(&endpoint), "{err}");
}

#[test]
fn onnx_runtime_is_found_in_a_virtual_environment_first_on_path() {
    let r = TestRepo::new();
    seed_project(&r, 1);
    r.commit_all("first");
    let venv = tempfile::tempdir().unwrap();
    let bin = venv.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("python3"), "#!/bin/sh\n").unwrap();
    let capi = venv.path().join("lib/python3.11/site-packages/onnxruntime/capi");
    std::fs::create_dir_all(&capi).unwrap();
    std::fs::write(capi.join("libonnxruntime.so.1.99.0"), b"").unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    // Not activated: no VIRTUAL_ENV, only its bin first on PATH.
    let out = r
        .cmd(&["--json", "--no-dense", "doctor"])
        .env("PATH", &path)
        .env_remove("VIRTUAL_ENV")
        .env_remove("ORT_DYLIB_PATH")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = v["checks"].as_array().unwrap().iter().find(|c| c["name"] == "ONNX Runtime").unwrap().clone();
    assert_eq!(c["status"], "ok", "{c}");
    assert!(c["message"].as_str().unwrap().contains(capi.to_str().unwrap()), "{c}");
    // Nowhere: a warning that says where it looked.
    let empty = tempfile::tempdir().unwrap();
    let out = r
        .cmd(&["--json", "--no-dense", "doctor"])
        .env("PATH", format!("{}:/usr/bin:/bin", empty.path().display()))
        .env("HOME", empty.path())
        .env_remove("VIRTUAL_ENV")
        .env_remove("CONDA_PREFIX")
        .env_remove("PYENV_ROOT")
        .env_remove("ORT_DYLIB_PATH")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = v["checks"].as_array().unwrap().iter().find(|c| c["name"] == "ONNX Runtime").unwrap().clone();
    if !c["message"].as_str().unwrap().starts_with("found /usr") {
        assert_eq!(c["status"], "warn", "{c}");
        assert!(c["message"].as_str().unwrap().contains("python3 on PATH"), "{c}");
    }
}
