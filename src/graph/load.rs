//! Assembling a view's code graph from the graph-facts layer of its files.

use crate::chunk::facts::Facts;
use super::model::CodeGraph;
use super::resolve::{self, FileFacts};
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
    for g in scip_cat.by_segment(live.iter().enumerate().map(|(i, &f)| (i, table.file_key(f))), |found| found.dir == 0) {
        let batch = store.read_segment(g.dir, &g.name)?;
        for (&i, row, count) in g.rows() {
            precise[i] = Some(layer::scip::read(&batch, row, count)?);
        }
    }
    // Path order, so the graph is the same however the table was assembled.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| table.file_path(live[a]).cmp(table.file_path(live[b])));
    let paths: Vec<String> = live.iter().map(|&f| table.file_path(f).to_string()).collect();
    let files: Vec<FileFacts> =
        order.iter().map(|&i| FileFacts { path: &paths[i], lang: table.file_lang(live[i]), facts: &facts[i], precise: precise[i].as_ref() }).collect();
    Ok(resolve::build(&files, &go_modules(table)))
}

/// The `module` line of every go.mod in the view, with the directory it is in: how the go tool
/// maps an import path to a package directory.
fn go_modules(table: &ChunkTable) -> Vec<resolve::GoModule> {
    let mut out = Vec::new();
    for f in table.live_files() {
        let path = table.file_path(f);
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        if name != "go.mod" {
            continue;
        }
        // The module line comes first in a go.mod; its first chunk holds it.
        let Some(first) = table.file_ords(f).next() else { continue };
        let text = table.chunk(first).text();
        let module = text.lines().find_map(|l| l.trim().strip_prefix("module ")).map(|m| m.trim().trim_matches('"').to_string());
        if let Some(m) = module.filter(|m| !m.is_empty()) {
            out.push(resolve::GoModule { path: m, dir: dir.to_string() });
        }
    }
    out
}
