//! `evaluate data-access TRUTH.json`: data-access facts against a hand-checked table → symbol
//! set (docs/eval/data/). An edge is (table, file, symbol); precision and recall are over the
//! distinct edges, overall and per access kind of the truth (read, write, ddl, map,
//! repository, call), so a missed mapping and a missed query show apart.

use crate::engine::Engine;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[derive(Debug, Deserialize)]
pub struct Truth {
    pub repo: String,
    pub commit: String,
    pub edges: Vec<TruthEdge>,
}

#[derive(Debug, Deserialize)]
pub struct TruthEdge {
    pub table: String,
    pub file: String,
    pub symbol: String,
    pub access: String,
}

pub fn load(path: &Path) -> Result<Truth> {
    super::load_truth(path, "data-access")
}

#[derive(Debug, Default, Serialize)]
pub struct Score {
    pub truth: usize,
    pub found: usize,
    pub correct: usize,
    pub precision: f64,
    pub recall: f64,
}

impl Score {
    fn finish(&mut self) {
        self.precision = if self.found == 0 { 1.0 } else { self.correct as f64 / self.found as f64 };
        self.recall = if self.truth == 0 { 1.0 } else { self.correct as f64 / self.truth as f64 };
    }
}

#[derive(Debug, Serialize)]
pub struct DataReport {
    pub repo: String,
    pub commit: String,
    pub overall: Score,
    /// Recall per access kind of the truth edges.
    pub by_access: BTreeMap<String, Score>,
    pub wrong: Vec<String>,
    pub missed: Vec<String>,
}

type Edge = (String, String, String);

fn show(e: &Edge) -> String {
    format!("{} ← {}:{}", e.0, e.1, if e.2.is_empty() { "<file>" } else { &e.2 })
}

pub fn run(engine: &Engine, t: &Truth, rev: Option<&str>) -> Result<DataReport> {
    let rev = rev.unwrap_or(&t.commit);
    let ctx = crate::ops::nav::open(engine, Some(rev))?;
    let g = &ctx.graph;
    let mut truth: BTreeMap<Edge, BTreeSet<String>> = BTreeMap::new();
    for e in &t.edges {
        truth
            .entry((e.table.to_ascii_lowercase(), e.file.clone(), e.symbol.clone()))
            .or_default()
            .insert(e.access.clone());
    }
    let found: BTreeSet<Edge> = g
        .data
        .iter()
        .map(|a| {
            (
                a.table.clone(),
                g.files[a.file as usize].path.clone(),
                a.def.map(|d| g.defs[d as usize].qualified.clone()).unwrap_or_default(),
            )
        })
        .collect();
    let mut overall = Score { truth: truth.len(), found: found.len(), ..Score::default() };
    let mut by_access: BTreeMap<String, Score> = BTreeMap::new();
    for (e, kinds) in &truth {
        let hit = found.contains(e);
        overall.correct += hit as usize;
        for k in kinds {
            let s = by_access.entry(k.clone()).or_default();
            s.truth += 1;
            s.found += hit as usize;
            s.correct += hit as usize;
        }
    }
    overall.finish();
    for s in by_access.values_mut() {
        s.finish();
    }
    let wrong = found.iter().filter(|e| !truth.contains_key(*e)).map(show).collect();
    let missed = truth.keys().filter(|e| !found.contains(*e)).map(show).collect();
    Ok(DataReport { repo: t.repo.clone(), commit: t.commit.clone(), overall, by_access, wrong, missed })
}

pub fn render(r: &DataReport, details: bool) -> String {
    let o = &r.overall;
    let mut out = format!(
        "{} @ {}\ndata access: precision {:.3} ({} of {} found), recall {:.3} ({} of {} hand-checked)\n",
        r.repo,
        &r.commit[..12.min(r.commit.len())],
        o.precision,
        o.correct,
        o.found,
        o.recall,
        o.correct,
        o.truth
    );
    for (k, s) in &r.by_access {
        out.push_str(&format!("  {k:<10} recall {:.3} ({} of {})\n", s.recall, s.correct, s.truth));
    }
    if details {
        for w in &r.wrong {
            out.push_str(&format!("  wrong:  {w}\n"));
        }
        for m in &r.missed {
            out.push_str(&format!("  missed: {m}\n"));
        }
    } else if !r.wrong.is_empty() || !r.missed.is_empty() {
        out.push_str(&format!("  ({} wrong, {} missed: --details lists them)\n", r.wrong.len(), r.missed.len()));
    }
    out
}

results!(DataReport);
