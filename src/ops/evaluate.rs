//! `evaluate mine | run | graph | data-access`: mining question sets from history, running them
//! with their gates, and scoring the graph and data-access facts against hand-checked truth.

use super::Answer;
use crate::engine::Engine;
use crate::error;
use crate::eval;
use crate::workspace::Workspace;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Mines questions from the commits of a range; writes them to `out` or lists them.
pub fn mine(ws: &Workspace, opts: &eval::mine::MineOptions, out: Option<&Path>) -> Result<Answer> {
    let m = eval::mine::mine(&ws.repo, opts)?;
    let mut text = format!(
        "mined {} questions from {} of {} commits in {}\n",
        m.questions.len(),
        m.commits_kept,
        m.commits_seen,
        m.range
    );
    for (reason, n) in &m.skipped {
        text.push_str(&format!("  skipped {n}: {reason}\n"));
    }
    if let Some(path) = out {
        crate::fsutil::write_atomic(path, serde_json::to_string_pretty(&m)?.as_bytes())?;
        text.push_str(&format!("wrote {}\n", path.display()));
    } else {
        for q in &m.questions {
            text.push_str(&format!("{}\n", serde_json::to_string(q)?));
        }
    }
    Ok(Answer::new("evaluate_mine", None, &m, text))
}

pub fn data_access(engine: &Engine, truth: &Path, rev: Option<&str>, details: bool) -> Result<Answer> {
    let t = eval::data::load(truth)?;
    let report = eval::data::run(engine, &t, rev)?;
    let text = eval::data::render(&report, details);
    Ok(Answer::new("evaluate_data_access", None, &report, text))
}

pub fn graph(engine: &Engine, truth: &Path, rev: Option<&str>, details: bool) -> Result<Answer> {
    let t = eval::graph::load(truth)?;
    let report = eval::graph::run(engine, &t, rev)?;
    let text = eval::graph::render(&report, details);
    Ok(Answer::new("evaluate_graph", None, &report, text))
}

/// What `evaluate run` is asked for.
pub struct RunArgs<'a> {
    pub questions: &'a Path,
    pub mode: &'a str,
    pub k: usize,
    pub save: Option<&'a PathBuf>,
    pub baseline: Option<&'a PathBuf>,
    pub min_recall: Option<f64>,
    pub max_recall_drop: Option<f64>,
    pub max_p95_ms: Option<f64>,
    pub per_question: bool,
    pub reranker: Option<&'a str>,
    pub split: Option<&'a str>,
}

/// Asks every question (of `split`) at its revision; a failed gate makes the answer exit 4.
pub fn run(engine: impl FnOnce() -> Result<Engine>, a: &RunArgs) -> Result<Answer> {
    let mut qs = eval::dataset::load(a.questions)?;
    if let Some(s) = a.split {
        qs.retain(|q| q.split.as_deref().unwrap_or("dev") == s);
        if qs.is_empty() {
            return Err(error::usage(format!("no question of {} is in split `{s}`", a.questions.display())));
        }
    }
    let baseline = a
        .baseline
        .map(|p| -> Result<eval::run::Report> {
            let t = std::fs::read_to_string(p)
                .map_err(|e| error::usage(format!("cannot read baseline {}: {e}", p.display())))?;
            serde_json::from_str(&t)
                .map_err(|e| error::usage(format!("{} is not a saved evaluation report: {e}", p.display())))
        })
        .transpose()?;
    if a.reranker.is_some() && a.mode == "bm25-files" {
        return Err(error::usage("--reranker reorders chunk results: use it with --mode hybrid, dense or sparse"));
    }
    if a.max_recall_drop.is_some() && baseline.is_none() {
        return Err(error::usage("--max-recall-drop needs --baseline"));
    }
    let opts = eval::run::RunOptions {
        mode: eval::run::EvalMode::parse(a.mode)?,
        k: a.k.max(1),
        per_question: a.per_question,
        baseline,
        min_recall: a.min_recall,
        max_recall_drop: a.max_recall_drop,
        max_p95_ms: a.max_p95_ms,
        rerank: a.reranker.map(str::to_string),
    };
    let report = eval::run::run(&engine()?, &qs, &opts)?;
    if let Some(p) = a.save {
        crate::fsutil::write_atomic(p, serde_json::to_string_pretty(&report)?.as_bytes())?;
    }
    let text = eval::run::render(&report);
    let failed = report.gates.iter().any(|g| !g.passed);
    let answer = Answer::new("evaluate_run", None, &report, text);
    Ok(if failed { answer.with_exit(error::EXIT_GATE_FAILED) } else { answer })
}
