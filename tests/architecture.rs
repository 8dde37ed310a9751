//! The dependency direction of the modules, held: git → blobs → layers → segments → views →
//! retrieval and graph → documentation collectors → operations → watcher → servers → command
//! line (docs/ARCHITECTURE.md), one crate per layer (`lynx-core`, `lynx-docs`, `lynx-ops`,
//! `lynx-watch`, `lynx-mcp` and `lynx-ui`, `git-lynx`): the compiler keeps each from using anything above it; inside each crate a
//! module may use modules of its own level or below, never above, and a back-edge fails this
//! test with the file and the reference that made it.

use std::collections::BTreeMap;
use std::path::Path;

/// Levels, lowest first. Modules of one level may use each other.
const LEVELS: &[&[&str]] = &[
    &["error", "env", "fsutil", "memory", "progress", "lang", "analyze", "present", "encoding"],
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
    &["crawl", "html", "pdf", "pdf_stream"],
    &["ops", "gc"],
    &["watch"],
    &["mcp", "ui"],
    &["commands", "hooks", "integrate"],
    &["cli"],
];

/// The crates, lowest first, each with its source root and the levels it holds (from, to):
/// `lynx-core` everything below the operations, `lynx-docs` what takes snapshots of
/// documentation sources, `lynx-ops` the operations, then the watcher, the two servers (one
/// crate each) and the command line.
const CRATES: [(&str, &str, (usize, usize)); 7] = [
    ("lynx-core", "crates/core/src", (0, 13)),
    ("lynx-docs", "crates/docs/src", (13, 14)),
    ("lynx-ops", "crates/ops/src", (14, 15)),
    ("lynx-watch", "crates/watch/src", (15, 16)),
    ("lynx-mcp", "crates/mcp/src", (16, 17)),
    ("lynx-ui", "crates/ui/src", (16, 17)),
    ("git-lynx", "src", (17, 19)),
];

/// The source roots of the crates, each with the files under it.
fn crate_sources() -> Vec<(std::path::PathBuf, Vec<std::path::PathBuf>)> {
    CRATES
        .iter()
        .map(|c| {
            let root = c.1;
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(root);
            let mut files = Vec::new();
            rust_files(&root, &mut files);
            (root, files)
        })
        .collect()
}

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
    let mut problems = Vec::new();
    let mut unknown = BTreeMap::new();
    for (src, f) in
        crate_sources().into_iter().flat_map(|(root, files)| files.into_iter().map(move |f| (root.clone(), f)))
    {
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

/// The environment is read in one place (`crates/core/src/env.rs`, which names every variable), so what a
/// variable does is written once and the same rule (an empty value is unset) holds everywhere.
#[test]
fn only_env_rs_reads_environment_variables() {
    let mut readers = Vec::new();
    for (src, f) in
        crate_sources().into_iter().flat_map(|(root, files)| files.into_iter().map(move |f| (root.clone(), f)))
    {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "env.rs" {
            continue;
        }
        for (n, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            // Readers by another name too: a library's own environment lookup, or a variable
            // named in a string (`"LYNX_…"`) instead of by its constant.
            let named = code.contains("\"LYNX_") && !code.contains("env!(\"LYNX_");
            if code.contains("env::var(") || code.contains("env::var_os(") || code.contains("try_from_env(") || named {
                readers.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    assert!(readers.is_empty(), "read the environment through crate::env instead: {readers:?}");
}

/// No module uses another that uses it back, anywhere in the crate (a file is a module; a
/// module and its own submodules are one place): a circle fails with its path and, for each
/// step, the line that made it. References are `crate::a::b` and `super::x` paths outside test
/// modules, resolved to the longest module path they name.
#[test]
fn modules_form_no_circle() {
    // module path ("ops::search") → file; the crates' modules are one namespace, as the
    // higher crates re-export the lower ones' under their own names.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut modules: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
    for (src, files) in crate_sources() {
        for path in files {
            let Some(rel) = path.strip_prefix(&src).unwrap().to_str().and_then(|r| r.strip_suffix(".rs")) else {
                continue;
            };
            let mut parts: Vec<&str> = rel.split('/').collect();
            if parts.last() == Some(&"mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                continue;
            }
            modules.insert(parts.join("::"), path);
        }
    }
    let resolve = |parts: &[String]| -> Option<String> {
        (1..=parts.len()).rev().map(|n| parts[..n].join("::")).find(|m| modules.contains_key(m))
    };
    let related = |a: &str, b: &str| a == b || a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"));
    // module → (used module → first line that uses it)
    let mut uses: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (m, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        let here: Vec<String> = m.split("::").map(str::to_string).collect();
        let edges = uses.entry(m.clone()).or_default();
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("#[cfg(test)]") {
                break;
            }
            let code = line.split("//").next().unwrap_or("");
            for (prefix, base) in [("crate::", Vec::new()), ("super::", here[..here.len() - 1].to_vec())] {
                let mut rest = code;
                while let Some(at) = rest.find(prefix) {
                    let word_start = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
                    rest = &rest[at + prefix.len()..];
                    if !word_start {
                        continue;
                    }
                    // `crate::{a, b::c}` names several.
                    let paths: Vec<String> = match rest.strip_prefix('{') {
                        Some(inner) => {
                            inner.split('}').next().unwrap_or("").split(',').map(|p| p.trim().to_string()).collect()
                        }
                        None => {
                            vec![rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect()]
                        }
                    };
                    for p in paths {
                        let mut parts = base.clone();
                        parts.extend(p.split("::").filter(|s| !s.is_empty()).map(str::to_string));
                        if let Some(used) = resolve(&parts)
                            && !related(m, &used)
                        {
                            edges.entry(used).or_insert_with(|| {
                                format!("{}:{}", file.strip_prefix(manifest).unwrap().display(), n + 1)
                            });
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
    // Circles between top-level modules, then between modules anywhere.
    let top = |m: &str| m.split("::").next().unwrap().to_string();
    let mut top_uses: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (m, edges) in &uses {
        for (u, line) in edges {
            if top(m) != top(u) {
                top_uses.entry(top(m)).or_default().entry(top(u)).or_insert_with(|| line.clone());
            }
        }
    }
    let mut found = Vec::new();
    for graph in [&top_uses, &uses] {
        let mut done = Default::default();
        for m in graph.keys() {
            walk(m, graph, &mut Vec::new(), &mut done, &mut found);
        }
    }
    let ops_uses = uses.iter().filter(|(m, _)| m.starts_with("ops::")).map(|(_, e)| e.len()).sum::<usize>();
    assert!(ops_uses > 5 && uses.len() > 50, "the scan found almost no uses: {uses:?}");
    assert!(found.is_empty(), "circles among modules:\n{}", found.join("\n"));
}

/// The crate boundaries are level boundaries: `lynx-core` holds every module below the
/// operations, `lynx-docs` the documentation collectors, `lynx-ops` the operations, then the watcher, the MCP server, the web UI and the
/// command line each a crate, so the compiler enforces the direction the levels describe; and a
/// lower crate's manifest names no crate of a higher one's (a core change never compiles the
/// collectors', the operations' or the surfaces' dependencies, the MCP server never the web
/// UI's).
#[test]
fn each_crate_holds_its_levels() {
    let top_modules = |root: &Path| -> Vec<String> {
        std::fs::read_dir(root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().trim_end_matches(".rs").to_string())
            .filter(|m| m != "lib" && m != "main")
            .collect()
    };
    let sources = crate_sources();
    let mut misplaced = Vec::new();
    for (i, (root, _)) in sources.iter().enumerate() {
        let (from, to) = CRATES[i].2;
        let found = top_modules(root);
        assert!(!found.is_empty(), "no modules under {}", root.display());
        for m in found {
            let l = level(&m).unwrap_or_else(|| panic!("module {m} has no level (add it to LEVELS)"));
            if !(from..to).contains(&l) {
                misplaced.push(format!("{m} (level {l}) is in {} ({})", CRATES[i].0, root.display()));
            }
        }
    }
    assert!(misplaced.is_empty(), "modules in the wrong crate:\n{}", misplaced.join("\n"));
    assert_eq!(CRATES.last().unwrap().2.1, LEVELS.len(), "every level is in a crate");
    assert_eq!(LEVELS[CRATES[2].2.0][0], "ops");

    let dependencies = |root: &Path| -> Vec<String> {
        let manifest = std::fs::read_to_string(root.parent().unwrap().join("Cargo.toml")).unwrap();
        let deps = manifest.split("\n[dependencies]").nth(1).expect("a [dependencies] table");
        let deps = deps.split("\n[").next().unwrap();
        deps.lines().filter_map(|l| l.split('=').next()).map(|d| d.trim().to_string()).collect()
    };
    let core = dependencies(&sources[0].0);
    assert!(
        core.iter().any(|d| d == "gix") && core.iter().any(|d| d == "parquet"),
        "the scan read no dependencies: {core:?}"
    );
    // What each crate's manifest must not name: the crates above it and what only they use.
    let cli = ["git-lynx", "clap_complete", "tracing-subscriber"];
    let mcp = ["lynx-mcp", "rmcp"];
    let ui = ["lynx-ui", "axum"];
    let servers = ["lynx-watch", "notify", "tokio"];
    let docs = ["lynx-docs", "scraper", "texting_robots", "pdf-extract"];
    let ops = ["lynx-ops", "clap_mangen"];
    // The core names tokio for one thing: the object store client of `store::remote`, which is
    // async and runs on a current-thread runtime inside that module (its calls block).
    let core_servers: Vec<&str> = servers.iter().copied().filter(|d| *d != "tokio").collect();
    let above: [Vec<&str>; 6] = [
        [&cli[..], &mcp, &ui, &core_servers, &ops, &docs].concat(),
        [&cli[..], &mcp, &ui, &servers, &ops].concat(),
        [&cli[..], &mcp, &ui, &servers].concat(),
        [&cli[..], &mcp, &ui, &["tokio"]].concat(),
        [&cli[..], &ui].concat(),
        [&cli[..], &mcp].concat(),
    ];
    for (i, forbidden) in above.iter().enumerate() {
        let named = dependencies(&sources[i].0);
        assert!(i == 0 || named.iter().any(|d| d.starts_with("lynx-")), "the scan read no dependencies: {named:?}");
        for d in forbidden {
            assert!(!named.iter().any(|n| n == d), "{} depends on {d}, a crate of a layer above it", CRATES[i].0);
        }
    }
}

#[test]
fn every_public_function_is_called_somewhere() {
    // `pub` hides dead code from the compiler across crates: a public function whose name
    // appears nowhere but its own definition (sources, tests, benchmarks) is dead.
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<std::path::PathBuf> = crate_sources().into_iter().flat_map(|(_, f)| f).collect();
    for extra in ["tests", "benches"] {
        if base.join(extra).is_dir() {
            rust_files(&base.join(extra), &mut files);
        }
    }
    let texts: Vec<(std::path::PathBuf, String)> =
        files.iter().map(|p| (p.clone(), std::fs::read_to_string(p).unwrap())).collect();
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    let mut defined: BTreeMap<String, String> = BTreeMap::new();
    for (path, text) in &texts {
        for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()) {
            *uses.entry(word.to_string()).or_default() += 1;
        }
        for line in text.lines() {
            let t = line.trim_start();
            let rest = t.strip_prefix("pub fn ").or_else(|| t.strip_prefix("pub(crate) fn "));
            if let Some(name) = rest.and_then(|r| r.split(['(', '<']).next()) {
                defined.entry(name.to_string()).or_insert_with(|| path.display().to_string());
            }
        }
    }
    // Entry points called from outside Rust code.
    let external = ["main"];
    let dead: Vec<String> = defined
        .iter()
        .filter(|(name, _)| !external.contains(&name.as_str()) && uses.get(*name).copied().unwrap_or(0) <= 1)
        .map(|(name, file)| format!("{name} ({file})"))
        .collect();
    assert!(dead.is_empty(), "public functions nothing calls (remove them, or use them): {dead:?}");
}

/// A crate's modules are its own: none re-exports another crate's modules (`pub use
/// lynx_core::…`, `pub use lynx_ops::…`), so each crate's public surface is what it declares and
/// a crate that needs a lower one's module depends on that crate by name.
#[test]
fn no_crate_re_exports_another_crates_modules() {
    let names: Vec<String> = CRATES.iter().map(|c| c.0.replace('-', "_")).collect();
    let mut found = Vec::new();
    for (_, files) in crate_sources() {
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            // A `pub use` may span lines: look at each statement from `pub use` to its `;`.
            let mut rest = text.as_str();
            while let Some(at) = rest.find("pub use ") {
                let stmt = &rest[at..rest[at..].find(';').map_or(rest.len(), |e| at + e)];
                let line = text[..text.len() - rest.len() + at].lines().count() + 1;
                let path = stmt.trim_start_matches("pub use ").trim_start_matches("::");
                if names.iter().any(|n| path.starts_with(&format!("{n}::"))) {
                    let rel = f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&f).display().to_string();
                    found.push(format!("{rel}:{line}: {}", stmt.split_whitespace().collect::<Vec<_>>().join(" ")));
                }
                rest = &rest[at + 8..];
            }
        }
    }
    assert!(
        found.is_empty(),
        "re-exports of another crate's modules (import with `use`, or depend on that crate):\n{}",
        found.join("\n")
    );
}
