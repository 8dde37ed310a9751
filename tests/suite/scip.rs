//! Precise graph edges from a SCIP index made by a real indexer (scip-python, installed from
//! npm by `.ci/run`), imported per blob and shared across revisions; and an untrusted index
//! that names paths outside the repository or is not an index at all.

use crate::common;
use common::{TestRepo, prerequisite};
use protobuf::Message;
use std::path::PathBuf;

/// The scip-python executable: `LYNX_SCIP_PYTHON`, else `scip-python` on PATH.
fn scip_python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LYNX_SCIP_PYTHON").map(PathBuf::from) {
        return p.exists().then_some(p);
    }
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join("scip-python")).find(|p| p.exists()))
}

/// Runs scip-python over the repository into `index.scip` (ignored by git). An empty
/// environment file keeps it from asking pip for installed packages.
fn run_indexer(r: &TestRepo, exe: &PathBuf) -> PathBuf {
    let env = r.path().join(".git").join("scip-env.json");
    std::fs::write(&env, "[]").unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "index",
            ".",
            "--project-name",
            "demo",
            "--project-version",
            "1",
            "--output",
            "index.scip",
            "--quiet",
            "--environment",
        ])
        .arg(&env)
        .current_dir(r.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scip-python failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    r.path().join("index.scip")
}

fn links(v: &serde_json::Value) -> Vec<(String, String)> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["node"]["name"].as_str().unwrap().to_string(), l["confidence"].as_str().unwrap().to_string()))
        .collect()
}

fn query(r: &TestRepo, op: &str, sym: &str, rev: Option<&str>) -> Vec<(String, String)> {
    let mut args = vec!["--no-dense", "graph", "query", "--op", op, "--symbol", sym];
    if let Some(rev) = rev {
        args.extend(["--rev", rev]);
    }
    links(&r.json(&args))
}

#[test]
fn scip_python_edges_are_precise_shared_across_revisions_and_checked_against_content() {
    let Some(exe) = scip_python() else {
        prerequisite("scip", false, "install it with `npm install @sourcegraph/scip-python` or set LYNX_SCIP_PYTHON");
        return;
    };
    let r = TestRepo::new();
    r.write(".gitignore", "index.scip\n");
    r.write("pkg/__init__.py", "");
    r.write(
        "pkg/store.py",
        "class Store:\n    def __init__(self):\n        self.data = {}\n\n    def get(self, key):\n        return self.data.get(key)\n\n    def put(self, key, value):\n        self.data[key] = value\n\n    def evict(self, key):\n        self.data.pop(key)\n\n\nclass Cache(Store):\n    def get(self, key):\n        return super().get(key)\n",
    );
    r.write(
        "pkg/app.py",
        "from pkg.store import Store, Cache\n\n\ndef main():\n    v = Store().get(\"a\")\n    c = Cache()\n    c.put(\"b\", 2)\n    d = {\"a\": 1}\n    w = d.get(\"a\")\n    return v, w\n\n\ndef untyped(x):\n    return x.evict(\"k\")\n",
    );
    let first = r.commit_all("first");
    r.text(&["--no-dense", "index"]);

    // Before any import, the heuristic graph resolves the call on a constructed receiver
    // (`Store().get`) by the constructor's type.
    let heuristic = query(&r, "callers", "Store.get", None);
    assert!(heuristic.contains(&("main".into(), "resolved".into())), "{heuristic:?}");

    let index = run_indexer(&r, &exe);
    let v = r.json(&["graph", "import-scip", index.to_str().unwrap()]);
    assert!(v["imported"].as_u64().unwrap() >= 2, "{v}");
    assert_eq!(v["skipped"].as_array().unwrap().len(), 0, "{v}");
    assert!(v["tool"].as_str().unwrap().starts_with("scip-python"), "{v}");
    let status = r.json(&["--no-dense", "graph", "status"]);
    assert_eq!(status["stats"]["precise_files"], v["imported"], "{status}");

    // Calls proven by the type checker, labelled precise; the dict's `.get` is not Store.get.
    let callers = query(&r, "callers", "Store.get", None);
    assert!(callers.contains(&("main".into(), "precise".into())), "{callers:?}");
    assert!(callers.contains(&("Cache.get".into(), "precise".into())), "{callers:?}");
    assert_eq!(callers.len(), 2, "{callers:?}");
    let callees = query(&r, "callees", "main", None);
    assert!(callees.contains(&("dict.get".into(), "external".into())), "{callees:?}");
    assert!(callees.contains(&("Store.put".into(), "precise".into())), "{callees:?}");
    assert_eq!(query(&r, "superclasses", "Cache", None), vec![("Store".to_string(), "precise".to_string())]);
    let imports = links(&r.json(&["--no-dense", "graph", "query", "--op", "imports", "--symbol", "pkg/app.py"]));
    assert_eq!(imports, vec![("pkg/store.py".to_string(), "precise".to_string())]);
    // A call the indexer could not type (an untyped parameter) keeps its heuristic, unconfident edge.
    let evict_callers = query(&r, "callers", "Store.evict", None);
    assert!(evict_callers.contains(&("untyped".into(), "inferred".into())), "{evict_callers:?}");

    // A later commit changes app.py only: store.py's blob keeps its precise edges there, app.py
    // is back to heuristics, and the first commit still answers precisely.
    r.write("pkg/app.py", "from pkg.store import Store\n\n\ndef main():\n    s = Store()\n    return s.get(\"a\")\n");
    r.commit_all("second");
    assert_eq!(query(&r, "superclasses", "Cache", Some("HEAD")), vec![("Store".to_string(), "precise".to_string())]);
    let at_head = query(&r, "callers", "Store.get", Some("HEAD"));
    assert!(at_head.contains(&("main".into(), "resolved".into())), "{at_head:?}");
    assert!(at_head.contains(&("Cache.get".into(), "precise".into())), "{at_head:?}");
    let at_first = query(&r, "callers", "Store.get", Some(&first));
    assert!(at_first.contains(&("main".into(), "precise".into())), "{at_first:?}");

    // The old index against edited content: store.py's definitions are no longer where the index
    // says, so that file is refused (named, with the fix) and the others still import.
    r.write("pkg/store.py", &format!("import os\n\n\n\n{}", std::fs::read_to_string(r.file("pkg/store.py")).unwrap()));
    let v = r.json(&["graph", "import-scip", index.to_str().unwrap()]);
    let skipped = v["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["path"] == "pkg/store.py" && s["reason"].as_str().unwrap().contains("re-run the indexer")),
        "{v}"
    );

    // Forgetting the imports makes the first commit's graph heuristic again.
    assert!(r.json(&["graph", "clear-scip"])["blobs"].as_u64().unwrap() >= 2);
    let heuristic = query(&r, "callers", "Store.get", Some(&first));
    assert!(!heuristic.iter().any(|(_, c)| c == "precise"), "{heuristic:?}");
    assert_eq!(query(&r, "superclasses", "Cache", Some(&first)), vec![("Store".to_string(), "extracted".to_string())]);
}

#[test]
fn an_untrusted_index_cannot_name_paths_outside_the_repository() {
    let r = TestRepo::new();
    r.write("a.py", "def f():\n    return 1\n");
    r.commit_all("a");
    let mut index = scip::types::Index::new();
    for path in ["../outside.py", "/etc/passwd", "a.py"] {
        let mut doc = scip::types::Document::new();
        doc.relative_path = path.into();
        let mut occ = scip::types::Occurrence::new();
        occ.range = vec![0, 4, 5];
        occ.symbol = "scip-python python demo 1 `a`/f().".into();
        occ.symbol_roles = 1;
        doc.occurrences.push(occ);
        index.documents.push(doc);
    }
    let file = r.path().join(".git").join("crafted.scip");
    std::fs::write(&file, index.write_to_bytes().unwrap()).unwrap();
    let v = r.json(&["graph", "import-scip", file.to_str().unwrap()]);
    assert_eq!(v["imported"], 1, "{v}");
    let reasons: Vec<(String, String)> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap().to_string(), s["reason"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons.iter().all(|(_, why)| why == "path leaves the repository"), "{reasons:?}");
    assert_eq!(r.json(&["--no-dense", "graph", "status"])["stats"]["precise_files"], 1);

    // Another checkout of the same content reading this store as an alternate object
    // directory, even one it trusts to be read in place: precise facts are never taken from there.
    let other = TestRepo::new();
    other.write("a.py", "def f():\n    return 1\n");
    other.commit_all("a");
    let objects = r.path().join(".lynx").join("objects");
    other.write(".lynx/config.toml", &format!("[store]\ntrusted = [{:?}]\n", objects.to_str().unwrap()));
    let out = other
        .cmd(&["--json", "--no-dense", "graph", "status"])
        .env("LYNX_ALTERNATE_OBJECT_DIRECTORIES", &objects)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stats"]["precise_files"], 0, "{v}");

    // Not an index at all: a clear error naming the file and how to make one.
    std::fs::write(&file, b"\xff\xff\xff not protobuf").unwrap();
    let out = r.lynx(&["graph", "import-scip", file.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a SCIP index") && err.contains("scip-python index"), "{err}");
}
