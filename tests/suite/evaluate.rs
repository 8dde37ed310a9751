//! `git lynx evaluate`: mining on a synthetic history, gates and their exit codes, bad input.

use crate::common;
use common::*;

fn history(r: &TestRepo) {
    r.write("src/parser.py", "def parse_config(path):\n    return open(path).read()\n");
    r.write("src/net.py", "def fetch_url(url):\n    return url\n");
    r.write("README.md", "# demo\n");
    r.commit_all("Initial import");
    // Kept: modifies one source file (asked at its parent).
    r.write("src/parser.py", "def parse_config(path):\n    text = open(path).read()\n    return text.strip()\n");
    r.commit_all(
        "Trim trailing blanks when parsing the config file\n\nConfig files written on Windows have trailing blanks.",
    );
    // Skipped: docs only.
    r.write("README.md", "# demo\n\nUsage.\n");
    r.commit_all("Document usage");
    // Skipped: formatting.
    r.write("src/net.py", "def fetch_url(url):\n    return  url\n");
    r.commit_all("Run the formatter");
    // Skipped: revert.
    r.write("src/net.py", "def fetch_url(url):\n    return url\n");
    r.commit_all("Revert \"Run the formatter\"");
    // Skipped: only a new file.
    r.write("src/cache.py", "def cache():\n    return {}\n");
    r.commit_all("Add a cache module");
    // Skipped: test-only change (no source file).
    r.write("tests/test_net.py", "def test_fetch():\n    assert True\n");
    r.commit_all("Test the network helper");
    // Kept: modifies net.py, adds a test.
    r.write("src/net.py", "def fetch_url(url, timeout=5):\n    return url\n");
    r.write("tests/test_net.py", "def test_fetch():\n    assert fetch_url('x', timeout=1)\n");
    r.commit_all("Add a timeout to fetch_url (#42)");
    // Kept: deletes a source file, which existed where the question is asked.
    r.remove("src/cache.py");
    r.commit_all("Remove the unused cache module");
    // Kept; the older commit with the same subject is then skipped as a duplicate.
    r.write("src/net.py", "def fetch_url(url, timeout=10):\n    return url\n");
    r.commit_all("Add a timeout to fetch_url");
}

#[test]
fn mining_yields_exactly_the_expected_questions() {
    let r = TestRepo::new();
    history(&r);
    let v = r.json(&["evaluate", "mine", "--rev-range", "HEAD"]);
    let qs = v["questions"].as_array().unwrap();
    let got: Vec<(String, String, Vec<String>)> = qs
        .iter()
        .map(|q| {
            (
                q["query"].as_str().unwrap().to_string(),
                q["rev"].as_str().unwrap().to_string(),
                q["expected"]["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect(),
            )
        })
        .collect();
    let parent = |n: usize| r.git(&["rev-parse", &format!("HEAD~{n}")]).trim().to_string();
    assert_eq!(
        got,
        vec![
            ("Add a timeout to fetch_url".to_string(), parent(1), vec!["src/net.py".to_string()]),
            ("Remove the unused cache module".to_string(), parent(2), vec!["src/cache.py".to_string()]),
            ("Trim trailing blanks when parsing the config file".to_string(), parent(9), vec!["src/parser.py".to_string()]),
            ("Trim trailing blanks when parsing the config file\nConfig files written on Windows have trailing blanks.".to_string(), parent(9), vec!["src/parser.py".to_string()]),
        ]
    );
    assert_eq!(v["skipped"]["docs only"], 1);
    assert_eq!(v["skipped"]["duplicate subject"], 1);
    assert_eq!(v["skipped"]["formatting"], 1);
    assert_eq!(v["skipped"]["revert"], 1);
    assert_eq!(v["skipped"]["only new source files"], 1);
    assert_eq!(v["skipped"]["no source file"], 1);
    assert_eq!(v["skipped"]["root commit"], 1);
    assert!(v["rules"].as_array().unwrap().len() >= 5);
}

/// `evaluate mine > q.json` is the question file (the summary goes to stderr), and so is the
/// `--json` envelope: `evaluate run` reads both.
#[test]
fn mined_stdout_is_a_question_file_that_run_reads() {
    let r = TestRepo::new();
    history(&r);
    let out = r.lynx(&["evaluate", "mine", "--rev-range", "HEAD"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("mined 4 questions") && stderr.contains("skipped 1: revert"), "{stderr}");
    let dataset: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(dataset["questions"].as_array().map(Vec::len), Some(4), "{dataset}");
    let file = r.file("mined.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let v = r.json(&["--no-dense", "evaluate", "run", file.to_str().unwrap(), "--mode", "sparse"]);
    assert_eq!(v["questions"], 4, "{v}");
    // With --out the file is the same, and stdout says what was written.
    let written = r.file("out.json");
    let text = r.text(&["evaluate", "mine", "--rev-range", "HEAD", "--out", written.to_str().unwrap()]);
    assert!(text.contains("mined 4 questions") && text.contains("wrote"), "{text}");
    assert_eq!(std::fs::read(&written).unwrap(), out.stdout);
    let envelope = r.lynx(&["--json", "evaluate", "mine", "--rev-range", "HEAD"]);
    std::fs::write(&file, &envelope.stdout).unwrap();
    let v = r.json(&["--no-dense", "evaluate", "run", file.to_str().unwrap(), "--mode", "sparse"]);
    assert_eq!(v["questions"], 4, "{v}");
}

#[test]
fn run_reports_metrics_and_gates_exit_with_documented_codes() {
    let r = TestRepo::new();
    history(&r);
    let qfile = r.file("q.json");
    let out = r.lynx(&["evaluate", "mine", "--rev-range", "HEAD", "--out", qfile.to_str().unwrap()]);
    assert!(out.status.success());
    let q = qfile.to_str().unwrap();
    // `evaluate run` of these questions, lexical, with `extra` arguments.
    let args = |extra: &[&str]| {
        let mut a = vec!["--no-dense", "evaluate", "run", q, "--mode", "sparse"];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| r.lynx(&args(extra).iter().map(String::as_str).collect::<Vec<_>>());
    let v = r.json(&args(&["--per-question"]).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(v["questions"], 4);
    let mrr = v["metrics"]["mrr"].as_f64().unwrap();
    assert!(mrr > 0.5, "{v}");
    assert_eq!(v["per_question"].as_array().unwrap().len(), 4);
    assert!(v["identity"]["fingerprints"]["chunks"].is_string());
    let report = r.file("base.json");
    let saved = run(&["--save", report.to_str().unwrap()]);
    assert!(saved.status.success(), "{}", String::from_utf8_lossy(&saved.stderr));
    // Gates: pass, then fail with exit 4.
    let ok = run(&["--min-recall", "0.1", "--baseline", report.to_str().unwrap(), "--max-recall-drop", "0.0"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));
    let bad = run(&["--min-recall", "1.01"]);
    assert_eq!(bad.status.code(), Some(4));
    let slow = run(&["--max-p95-ms", "0.000001"]);
    assert_eq!(slow.status.code(), Some(4));
    // Reranked by a cross-encoder: recorded in the report's identity.
    if lynx_core::embed::onnx::find_library(None).is_some() {
        let ce = format!("{}/tests/fixtures/models/tiny-cross-encoder", env!("CARGO_MANIFEST_DIR"));
        let v =
            r.json(&["--no-dense", "evaluate", "run", qfile.to_str().unwrap(), "--mode", "sparse", "--reranker", &ce]);
        assert_eq!(v["identity"]["reranker"], ce.as_str(), "{v}");
        assert_eq!(v["questions"], 4);
        let bad = r.lynx(&[
            "--no-dense",
            "evaluate",
            "run",
            qfile.to_str().unwrap(),
            "--mode",
            "bm25-files",
            "--reranker",
            &ce,
        ]);
        assert_eq!(bad.status.code(), Some(2));
    }
    // The whole-file BM25 baseline runs on the same questions.
    let b = r.json(&["--no-dense", "evaluate", "run", qfile.to_str().unwrap(), "--mode", "bm25-files"]);
    assert!(b["metrics"]["mrr"].as_f64().unwrap() > 0.0);
}

#[test]
fn invalid_question_files_are_clear_usage_errors() {
    let r = TestRepo::new();
    history(&r);
    r.write(
        "bad.jsonl",
        "{\"id\": \"a\", \"query\": \"x\", \"expected\": {\"files\": [\"a.py\"]}}\n{\"id\": \"b\", \"query\": \"y\"}\n",
    );
    let out = r.lynx(&["--json", "evaluate", "run", "bad.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = v["error"].as_str().unwrap();
    assert!(err.contains("bad.jsonl:2") && err.contains("expected"), "{err}");
    r.write("empty.json", "[]");
    let v: serde_json::Value =
        serde_json::from_slice(&r.lynx(&["--json", "evaluate", "run", "empty.json"]).stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("no questions"), "{v}");
    let out = r.lynx(&["--json", "evaluate", "run", "missing.json"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--candidates` writes, per question, every ranked candidate with what scored it: the order
/// of the report, the priors by name (a Haskell file is code, not prose; a commit subject's
/// scope lifts its directory) and the other files holding the same chunk.
#[test]
fn candidates_hold_what_ranked_each_question() {
    let r = TestRepo::new();
    let parser = "def parse_settings(path):\n    \"\"\"Parse the settings file.\"\"\"\n    return open(path).read()\n";
    r.write("src/parser.py", parser);
    r.write("copies/parser.py", parser);
    r.write(
        "src/Settings.hs",
        "-- Parse the settings file.\nparseSettings :: FilePath -> IO String\nparseSettings path = readFile path\n",
    );
    r.write("docs/settings.md", "# Settings\n\nParse the settings file with `parse_settings`.\n");
    r.write("net/client.py", "def send(settings):\n    \"\"\"Send the parsed settings.\"\"\"\n    return settings\n");
    r.commit_all("init");
    let q = r.file("q.json");
    std::fs::write(
        &q,
        r#"[{"id": "a", "query": "parse the settings file", "expected": {"files": ["src/Settings.hs"]}},
            {"id": "b", "query": "net: send parsed settings", "expected": {"files": ["net/client.py"]}}]"#,
    )
    .unwrap();
    let out = r.file("candidates.jsonl");
    let (qs, dump) = (q.to_str().unwrap(), out.to_str().unwrap());
    let v = r.json(&["--no-dense", "evaluate", "run", qs, "--mode", "sparse", "--per-question", "--candidates", dump]);
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "one line per question");
    for (line, per) in lines.iter().zip(v["per_question"].as_array().unwrap()) {
        assert_eq!(line["id"], per["id"]);
        assert_eq!(line["mode"], "sparse");
        let cands = line["candidates"].as_array().unwrap();
        let scores: Vec<f64> = cands.iter().map(|c| c["score"].as_f64().unwrap()).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "best first: {scores:?}");
        // The report's file ranking is the candidates' files in order.
        let mut files: Vec<&str> = Vec::new();
        for c in cands {
            let p = c["path"].as_str().unwrap();
            if !files.contains(&p) {
                files.push(p);
            }
        }
        let ranked: Vec<&str> = per["ranked_files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        assert_eq!(files[..ranked.len()], ranked[..], "{line}");
        assert!(cands.iter().all(|c| c["bm25"].is_number() && c["file_chunks"].as_u64().unwrap() >= 1));
    }
    let cand = |q: usize, path: &str| -> serde_json::Value {
        lines[q]["candidates"].as_array().unwrap().iter().find(|c| c["path"] == path).cloned().unwrap_or_else(|| {
            panic!("{path} is not a candidate of question {q}: {}", lines[q]);
        })
    };
    let priors = |c: &serde_json::Value| -> Vec<String> {
        c["priors"].as_array().unwrap().iter().map(|p| p[0].as_str().unwrap().to_string()).collect()
    };
    let hs = cand(0, "src/Settings.hs");
    assert_eq!(hs["code"], true);
    assert!(!priors(&hs).iter().any(|p| p.contains("prose")), "{hs}");
    let md = cand(0, "docs/settings.md");
    assert!(priors(&md).iter().any(|p| p.contains("prose")), "{md}");
    // Byte-identical chunks: one is ranked, and it names the other file.
    let kept: Vec<&serde_json::Value> = lines[0]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["path"].as_str().unwrap().ends_with("parser.py"))
        .collect();
    assert_eq!(kept.len(), 1, "duplicates are dropped: {kept:?}");
    let other = if kept[0]["path"] == "src/parser.py" { "copies/parser.py" } else { "src/parser.py" };
    assert_eq!(kept[0]["copies"][0][0], other, "{}", kept[0]);
    let client = cand(1, "net/client.py");
    assert!(priors(&client).iter().any(|p| p.contains("scope")), "{client}");
    assert_eq!(lines[1]["candidates"][0]["path"], "net/client.py");
}
