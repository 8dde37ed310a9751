//! docs/SEGMENTS.md's example queries run in DuckDB (from PyPI, installed by `.ci/run`) over a
//! fixture's object directory and return what the repository holds: the segment format is
//! readable by other engines, as documented.

use crate::common;
use common::*;
use std::process::Command;

/// Rows of a query file, run with the repository as the current directory.
fn query(r: &TestRepo, file: &str) -> Vec<Vec<String>> {
    let sql = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/queries").join(file))
        .unwrap();
    let script = "import duckdb, json, sys\nrows = duckdb.connect().sql(sys.stdin.read()).fetchall()\nprint(json.dumps([[str(c) for c in row] for row in rows]))\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .current_dir(r.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), sql.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn documented_queries_read_the_segments_in_duckdb() {
    if !prerequisite("DUCKDB", python_has("duckdb"), "python3 -m pip install duckdb") {
        return;
    }
    let r = TestRepo::new();
    calc_project(&r);
    r.json(&["index"]);
    let by_lang = query(&r, "chunks_by_language.sql");
    let python_functions: u64 = by_lang
        .iter()
        .filter(|row| row[0] == "python" && row[1] == "function")
        .map(|row| row[2].parse::<u64>().unwrap())
        .sum();
    assert_eq!(python_functions, 3, "add, total, test_add: {by_lang:?}");
    assert!(by_lang.iter().any(|row| row[0] == "markdown"), "{by_lang:?}");
    // Definitions carry the blob ids git prints.
    let defs = query(&r, "definitions.sql");
    let calc_blob = r.git(&["rev-parse", "HEAD:src/calc.py"]).trim().to_string();
    let names: Vec<&str> = defs.iter().filter(|row| row[2] == calc_blob).map(|row| row[0].as_str()).collect();
    assert_eq!(names, ["add", "total"], "{defs:?}");
    assert!(defs.iter().any(|row| row[0] == "Square.area" && row[1] == "method"), "{defs:?}");
}
