//! Assembling a view's code graph from the graph-facts layer of its files.

use super::facts::Facts;
use super::model::CodeGraph;
use super::resolve::{self, FileFacts};
use crate::layer;
use crate::store::Store;
use crate::view::table::ChunkTable;
use anyhow::Result;
use std::collections::HashMap;

/// The resolved graph of the files in a view's chunk table (path order).
pub fn build_for_table(store: &Store, table: &ChunkTable) -> Result<CodeGraph> {
    let cat = store.catalogs(layer::GRAPH, &layer::graph_fingerprint())?;
    let n = table.file_count();
    let mut by_segment: HashMap<(usize, String), Vec<(usize, usize, usize)>> = HashMap::new();
    for f in 0..n as u32 {
        if let Some(found) = cat.get(&table.file_key(f)) {
            by_segment
                .entry((found.dir, cat.segment_name(found).to_string()))
                .or_default()
                .push((f as usize, found.loc.row as usize, found.loc.count as usize));
        }
    }
    let mut facts: Vec<Facts> = vec![Facts::default(); n];
    for ((dir, name), rows) in by_segment {
        let batch = crate::store::read_segment_file(&store.segment_path(dir, &name))?;
        for (f, row, count) in rows {
            facts[f] = layer::graph::read_facts(&batch, row, count)?;
        }
    }
    let paths: Vec<String> = (0..n as u32).map(|f| table.file_path(f).to_string()).collect();
    let files: Vec<FileFacts> =
        (0..n).map(|f| FileFacts { path: &paths[f], lang: table.file_lang(f as u32), facts: &facts[f] }).collect();
    Ok(resolve::build(&files))
}
