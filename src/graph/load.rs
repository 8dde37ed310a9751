//! Assembling a view's code graph from the graph-facts layer of its files.

use crate::chunk::facts::Facts;
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
    let live: Vec<u32> = table.live_files().collect();
    let n = live.len();
    let mut by_segment: HashMap<(usize, String), Vec<(usize, usize, usize)>> = HashMap::new();
    for (i, &f) in live.iter().enumerate() {
        if let Some(found) = cat.get(&table.file_key(f)) {
            by_segment
                .entry((found.dir, cat.segment_name(found).to_string()))
                .or_default()
                .push((i, found.loc.row as usize, found.loc.count as usize));
        }
    }
    let mut facts: Vec<Facts> = vec![Facts::default(); n];
    for ((dir, name), rows) in by_segment {
        let batch = store.read_segment(dir, &name)?;
        for (f, row, count) in rows {
            facts[f] = layer::graph::read_facts(&batch, row, count)?;
        }
    }
    // What imported SCIP indexes say about these blobs, where they said anything.
    let scip_cat = store.catalogs(layer::scip::SCIP, &layer::scip::fingerprint())?;
    let mut precise: Vec<Option<layer::scip::PreciseFacts>> = vec![None; n];
    let mut by_segment: HashMap<(usize, String), Vec<(usize, usize, usize)>> = HashMap::new();
    for (i, &f) in live.iter().enumerate() {
        // Only this store's own imports: precise facts cannot be checked against a blob, so
        // an alternate object directory never supplies them.
        if let Some(found) = scip_cat.get(&table.file_key(f)).filter(|found| found.dir == 0) {
            by_segment.entry((found.dir, scip_cat.segment_name(found).to_string())).or_default().push((i, found.loc.row as usize, found.loc.count as usize));
        }
    }
    for ((dir, name), rows) in by_segment {
        let batch = store.read_segment(dir, &name)?;
        for (f, row, count) in rows {
            precise[f] = Some(layer::scip::read(&batch, row, count)?);
        }
    }
    // Path order, so the graph is the same however the table was assembled.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| table.file_path(live[a]).cmp(table.file_path(live[b])));
    let paths: Vec<String> = live.iter().map(|&f| table.file_path(f).to_string()).collect();
    let files: Vec<FileFacts> =
        order.iter().map(|&i| FileFacts { path: &paths[i], lang: table.file_lang(live[i]), facts: &facts[i], precise: precise[i].as_ref() }).collect();
    Ok(resolve::build(&files))
}
