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
