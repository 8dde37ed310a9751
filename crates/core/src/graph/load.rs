//! Assembling a view's code graph from the graph-facts layer of its files.

use super::files::FileFacts;
use super::model::CodeGraph;
use super::resolve;
use crate::chunk::facts::Facts;
use crate::layer;
use crate::store::Store;
use crate::view::table::ChunkTable;
use anyhow::Result;

/// The resolved graph of the files in a view's chunk table (path order).
pub fn build_for_table(store: &Store, table: &ChunkTable) -> Result<CodeGraph> {
    let cat = store.catalogs(layer::GRAPH, &layer::graph_fingerprint())?;
    let live: Vec<u32> = table.live_files().collect();
    let n = live.len();
    let mut facts: Vec<Facts> = vec![Facts::default(); n];
    for g in cat.by_segment(live.iter().enumerate().map(|(i, &f)| (i, table.file_key(f))), |_| true) {
        let batch = store.read_segment(g.dir, &g.name)?;
        for (&i, row, count) in g.rows() {
            facts[i] = layer::graph::read_facts(&batch, row, count)?;
        }
    }
    // What imported SCIP indexes say about these blobs, where they said anything.
    let scip_cat = store.catalogs(layer::scip::SCIP, &layer::scip::fingerprint())?;
    let mut precise: Vec<Option<layer::scip::PreciseFacts>> = vec![None; n];
    // Only this store's own imports: precise facts cannot be checked against a blob, so an
    // alternate object directory never supplies them.
    for g in scip_cat.by_segment(live.iter().enumerate().map(|(i, &f)| (i, table.file_key(f))), |found| found.dir == 0)
    {
        let batch = store.read_segment(g.dir, &g.name)?;
        for (&i, row, count) in g.rows() {
            precise[i] = Some(layer::scip::read(&batch, row, count)?);
        }
    }
    // Path order, so the graph is the same however the table was assembled.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| table.file_path(live[a]).cmp(table.file_path(live[b])));
    let paths: Vec<String> = live.iter().map(|&f| table.file_path(f).to_string()).collect();
    let files: Vec<FileFacts> = order
        .iter()
        .map(|&i| FileFacts {
            path: &paths[i],
            lang: table.file_lang(live[i]),
            facts: &facts[i],
            precise: precise[i].as_ref(),
        })
        .collect();
    Ok(resolve::build(&files, &manifests(table)?))
}

/// A file's text from its chunks (line windows may overlap: each line is taken once).
fn file_text(table: &ChunkTable, f: u32) -> Result<String> {
    let mut out = String::new();
    let mut next = 1u32;
    for ord in table.file_ords(f) {
        let c = table.chunk(ord);
        if c.end_line < next {
            continue;
        }
        let skip = next.saturating_sub(c.start_line) as usize;
        for line in c.text()?.lines().skip(skip) {
            out.push_str(line);
            out.push('\n');
        }
        next = c.end_line + 1;
    }
    Ok(out)
}

/// What the view's manifests say about resolving imports: go.mod module paths, tsconfig
/// `paths`/`baseUrl`, and the names of the JavaScript packages inside the repository.
fn manifests(table: &ChunkTable) -> Result<resolve::Manifests> {
    let mut m = resolve::Manifests::default();
    for f in table.live_files() {
        let path = table.file_path(f);
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let is_tsconfig = (name.starts_with("tsconfig") || name.starts_with("jsconfig")) && name.ends_with(".json");
        let is_csproj = name.ends_with(".csproj");
        if name != "go.mod" && name != "package.json" && !is_tsconfig && !is_csproj {
            continue;
        }
        // Manifests of vendored or installed code say nothing about this repository.
        if path.split('/').any(|s| s == "node_modules" || s == "vendor") {
            continue;
        }
        let text = file_text(table, f)?;
        if is_csproj {
            // `<ProjectReference Include="..\Core\Core.csproj" />`: the referenced project's directory.
            let refs = text
                .split("<ProjectReference")
                .skip(1)
                .filter_map(|r| {
                    r.split_once("Include=\"")
                        .and_then(|(_, rest)| rest.split_once('"'))
                        .map(|(p, _)| p.replace('\\', "/"))
                })
                .map(|p| resolve::join_dir(dir, p.rsplit_once('/').map_or("", |(d, _)| d)))
                .collect();
            m.cs_projects.push((dir.to_string(), refs));
        } else if name == "go.mod" {
            // The module line comes first in a go.mod.
            let module = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("module "))
                .map(|m| m.trim().trim_matches('"').to_string());
            if let Some(path) = module.filter(|p| !p.is_empty()) {
                m.go_modules.push(resolve::GoModule { path, dir: dir.to_string() });
            }
        } else if name == "package.json" {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
            if let Some(n) = v["name"].as_str().filter(|n| !n.is_empty()) {
                m.packages.push((n.to_string(), dir.to_string()));
            }
        } else if let Ok(v) = serde_json::from_str::<serde_json::Value>(&json_without_comments(&text)) {
            let opts = &v["compilerOptions"];
            let base = match opts["baseUrl"].as_str() {
                Some(b) => resolve::join_dir(dir, b),
                None => dir.to_string(),
            };
            if opts["baseUrl"].is_string() {
                m.base_urls.push(base.clone());
            }
            if let Some(paths) = opts["paths"].as_object() {
                for (pattern, targets) in paths {
                    let targets: Vec<String> = targets
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|t| t.as_str())
                        .map(|t| resolve::join_dir(&base, t))
                        .collect();
                    m.ts_paths.push((pattern.clone(), targets));
                }
            }
        }
    }
    Ok(m)
}

/// tsconfig.json is JSON with comments and trailing commas.
fn json_without_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 2;
                continue;
            }
            in_str = c != b'"';
            i += 1;
        } else if c == b'"' {
            in_str = true;
            out.push(c);
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if c == b',' {
            // A trailing comma: the next significant byte closes the object or array.
            let next = b[i + 1..].iter().find(|x| !x.is_ascii_whitespace());
            if !matches!(next, Some(b'}') | Some(b']')) {
                out.push(c);
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn tsconfig_comments_and_trailing_commas_are_read() {
        let text = "{\n  // paths\n  \"compilerOptions\": { /* x */ \"paths\": {\"@a/*\": [\"./p/*/src\",],}, \"s\": \"a//b\" },\n}";
        let v: serde_json::Value = serde_json::from_str(&super::json_without_comments(text)).unwrap();
        assert_eq!(v["compilerOptions"]["paths"]["@a/*"][0], "./p/*/src");
        assert_eq!(v["compilerOptions"]["s"], "a//b");
    }
}
