//! Model downloads through the real HuggingFace client against a local mirror (`HF_ENDPOINT`):
//! a static model in model2vec's current layout is pulled into the cache, then used offline.

use crate::common;
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

/// The model built into the binary: on a first run with no network and an empty model cache,
/// `index` makes vectors with it and hybrid search ranks by meaning as well as by words; a
/// model that is on the machine still wins.
#[cfg(feature = "builtin-model")]
#[test]
fn the_built_in_model_answers_offline_on_the_first_run() {
    let r = TestRepo::new();
    r.write(
        "src/geometry.py",
        "def euclidean_distance(a, b):\n    \"\"\"Straight-line length between two coordinates.\"\"\"\n    return ((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5\n",
    );
    r.write(
        "src/settings.py",
        "import json\n\ndef load_settings(path):\n    \"\"\"Read the application's options from a file on disk.\"\"\"\n    with open(path) as f:\n        return json.load(f)\n",
    );
    r.write(
        "src/mailer.py",
        "import smtplib\n\ndef send_welcome_email(user, server):\n    \"\"\"Greet a new account holder by mail.\"\"\"\n    message = f\"Hello {user.name}, thanks for signing up\"\n    smtplib.SMTP(server).sendmail(\"noreply@example.com\", user.email, message)\n",
    );
    r.write(
        "src/cache.py",
        "class LruCache:\n    \"\"\"Keeps the most recently used entries and evicts the oldest when full.\"\"\"\n    def __init__(self, capacity):\n        self.capacity = capacity\n        self.entries = {}\n",
    );
    r.write(
        "src/points.py",
        "def parse_points(text):\n    \"\"\"Parse points awarded in a game score sheet, one per line.\"\"\"\n    return [int(line) for line in text.splitlines() if line.strip()]\n",
    );
    r.commit_all("init");
    let home = tempfile::tempdir().unwrap();
    let hf_home = tempfile::tempdir().unwrap();
    let run = |args: &[&str], builtin: bool| {
        let mut c = r.cmd(args);
        c.env("HOME", home.path()).env("HF_HOME", hf_home.path()).env("HF_HUB_OFFLINE", "1");
        if builtin {
            c.env_remove("LYNX_BUILTIN_MODEL");
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    };
    let json = |args: &[&str]| -> serde_json::Value {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        serde_json::from_slice(&run(&full, true).stdout).unwrap()
    };

    let v = json(&["index"]);
    assert_eq!(v["dense"], "ready", "{v}");
    assert_eq!(v["dense_model"], "builtin/all-MiniLM-L6-v2-static-int8", "{v}");
    assert!(v["chunks_embedded"].as_u64().unwrap() >= 5, "{v}");
    let why = v["dense_builtin_because"].as_str().unwrap();
    assert!(why.contains("minishlab/potion-code-16M") && why.contains("HF_HUB_OFFLINE"), "{why}");
    // The model cache stays empty: nothing was fetched or written there.
    assert!(files_under(hf_home.path()).is_empty(), "{:?}", files_under(hf_home.path()));

    let s = json(&["status"]);
    assert_eq!(s["dense"]["state"], "ready", "{s}");
    assert_eq!(s["dense"]["model"], "builtin/all-MiniLM-L6-v2-static-int8", "{s}");
    let text = String::from_utf8(run(&["status"], true).stdout).unwrap();
    assert!(
        text.contains("dense: ready (built-in model builtin/all-MiniLM-L6-v2-static-int8, 100% of chunks)"),
        "{text}"
    );
    assert!(text.contains("used because model `minishlab/potion-code-16M`"), "{text}");
    let doctor = r
        .cmd(&["--json", "doctor"])
        .env("HOME", home.path())
        .env("HF_HOME", hf_home.path())
        .env_remove("LYNX_BUILTIN_MODEL")
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        doctor.contains("built-in model builtin/all-MiniLM-L6-v2-static-int8 (256 dimensions) stands in"),
        "{doctor}"
    );

    // No word of the question is in mailer.py: only the dense side can find it.
    let q = "notify people who registered";
    let sparse = json(&["search", "--mode", "sparse", q]);
    let hybrid = json(&["search", q]);
    assert_eq!(hybrid["mode"], "hybrid", "{hybrid}");
    let paths = |v: &serde_json::Value| -> Vec<String> {
        v["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_string()).collect()
    };
    assert_ne!(paths(&hybrid), paths(&sparse), "hybrid ranked exactly as sparse: {hybrid}");
    assert!(!paths(&sparse).contains(&"src/mailer.py".to_string()), "{sparse}");
    assert_eq!(hybrid["results"][0]["path"], "src/mailer.py", "{hybrid}");
    assert_eq!(hybrid["results"][0]["dense_rank"], 1, "{hybrid}");

    // Turned off, dense retrieval waits for the configured model.
    let off: serde_json::Value = serde_json::from_slice(&run(&["--json", "index"], false).stdout).unwrap();
    assert_eq!(off["dense"], "off", "{off}");
    assert!(off["dense_model"].is_null(), "{off}");

    // A model in the HuggingFace cache under the default's name wins over the built-in one.
    let snap = hf_home.path().join("hub/models--minishlab--potion-code-16M/snapshots/0123456789abcdef");
    std::fs::create_dir_all(&snap).unwrap();
    for f in ["tokenizer.json", "model.safetensors", "config.json"] {
        std::fs::copy(fixture("tiny-static").join(f), snap.join(f)).unwrap();
    }
    let v = json(&["index"]);
    assert_eq!(v["dense"], "ready", "{v}");
    assert_eq!(v["dense_model"], "minishlab/potion-code-16M", "{v}");
    assert!(v["dense_builtin_because"].is_null(), "{v}");
}
