//! The dependency direction of the crate's modules, held: git → blobs → layers → segments →
//! views → retrieval and graph → operations → surfaces (docs/ARCHITECTURE.md). A module may use
//! modules of its own level or below, never above; a back-edge fails this test with the file
//! and the reference that made it.

use std::collections::BTreeMap;
use std::path::Path;

/// Levels, lowest first. Modules of one level may use each other.
const LEVELS: &[&[&str]] = &[
    &["error", "env", "fsutil", "progress", "lang", "analyze", "present", "encoding"],
    &["config"],
    &["repo"],
    &["chunk", "embed"],
    &["store"],
    &["layer"],
    &["shard"],
    &["workspace"],
    &["docsource"],
    &["view"],
    &["index"],
    &["search", "graph"],
    &["engine", "sources"],
    &["ops", "eval", "gc"],
    &["cli", "mcp", "watch", "hooks", "integrate", "ui"],
];

fn level(module: &str) -> Option<usize> {
    LEVELS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn modules_only_use_their_level_or_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut unknown = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let module = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        if matches!(module.as_str(), "lib" | "main") {
            continue;
        }
        let Some(mine) = level(&module) else {
            unknown.insert(module.clone(), rel.clone());
            continue;
        };
        for (n, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + 7..];
                let used: String = rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                if used == module || used.is_empty() {
                    continue;
                }
                match level(&used) {
                    Some(l) if l > mine => {
                        problems.push(format!("{rel}:{}: {module} (level {mine}) uses {used} (level {l})", n + 1))
                    }
                    None => {
                        unknown.insert(used.clone(), rel.clone());
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(unknown.is_empty(), "modules without a level (add them to LEVELS and docs/ARCHITECTURE.md): {unknown:?}");
    assert!(problems.is_empty(), "back-edges against the dependency direction:\n{}", problems.join("\n"));
}

/// The environment is read in one place (`src/env.rs`, which names every variable), so what a
/// variable does is written once and the same rule (an empty value is unset) holds everywhere.
#[test]
fn only_env_rs_reads_environment_variables() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut readers = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "env.rs" {
            continue;
        }
        for (n, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("env::var(") || code.contains("env::var_os(") {
                readers.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    assert!(readers.is_empty(), "read the environment through crate::env instead: {readers:?}");
}

/// The operations use each other in one direction (a rendering helper every operation needs
/// lives below them, in `present`): a circle among `src/ops/*.rs` fails with its path and, for
/// each step, the line that made it.
#[test]
fn operations_form_no_circle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ops");
    let mut names = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(m) = name.strip_suffix(".rs")
            && m != "mod"
        {
            names.push(m.to_string());
        }
    }
    // module → (used module → first line that uses it)
    let mut uses: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for m in &names {
        let text = std::fs::read_to_string(dir.join(format!("{m}.rs"))).unwrap();
        let edges = uses.entry(m.clone()).or_default();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for prefix in ["super::", "crate::ops::"] {
                let mut rest = code;
                while let Some(at) = rest.find(prefix) {
                    rest = &rest[at + prefix.len()..];
                    // `super::{a, b::c}` names several.
                    let used: Vec<String> = match rest.strip_prefix('{') {
                        Some(inner) => inner
                            .split('}')
                            .next()
                            .unwrap_or("")
                            .split(',')
                            .map(|p| p.trim().split("::").next().unwrap_or("").to_string())
                            .collect(),
                        None => vec![rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect()],
                    };
                    for u in used {
                        if u != *m && names.contains(&u) {
                            edges.entry(u).or_insert_with(|| format!("src/ops/{m}.rs:{}", n + 1));
                        }
                    }
                }
            }
        }
    }
    fn walk(
        at: &str,
        uses: &BTreeMap<String, BTreeMap<String, String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
        found: &mut Vec<String>,
    ) {
        if let Some(i) = path.iter().position(|p| p == at) {
            let mut steps: Vec<String> = path[i..].to_vec();
            steps.push(at.to_string());
            let lines: Vec<&str> = steps.windows(2).map(|w| uses[&w[0]][&w[1]].as_str()).collect();
            found.push(format!("{} ({})", steps.join(" → "), lines.join(", ")));
            return;
        }
        if !done.insert(at.to_string()) {
            return;
        }
        path.push(at.to_string());
        for next in uses.get(at).into_iter().flat_map(|e| e.keys()) {
            walk(next, uses, path, done, found);
        }
        path.pop();
    }
    let (mut done, mut found) = (Default::default(), Vec::new());
    for m in &names {
        walk(m, &uses, &mut Vec::new(), &mut done, &mut found);
    }
    assert!(uses.values().map(|e| e.len()).sum::<usize>() > 5, "the scan found almost no uses: {uses:?}");
    assert!(found.is_empty(), "circles among the operations:\n{}", found.join("\n"));
}
