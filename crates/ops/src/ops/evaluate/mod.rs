//! `evaluate mine | run | graph | data-access`: mining question sets from history, running them
//! with their gates, and scoring the graph and data-access facts against hand-checked truth.
//!
//! The machinery: questions mined from a repository's own history (`mine.rs`), run against any
//! mode or model (`run.rs`), with standard metrics (`metrics.rs`) over a simple question format
//! (`dataset.rs`); the graph's and data access's truth files (`graph.rs`, `data.rs`).

pub mod data;
pub mod dataset;
pub mod graph;
pub mod metrics;
pub mod mine;
pub mod run;

use crate::engine::Engine;
use crate::error;
use crate::ops::Answer;
use crate::workspace::Workspace;
use anyhow::Result;
use std::path::{Path, PathBuf};

crate::error::errors! {
    /// A question file, truth file, baseline or option of an evaluation that cannot be used.
    pub enum EvalError: Usage {
        Unreadable { what: String, why: String } => "cannot read {what}: {why}",
        NotJson { path: String, why: String } => "{path} is not valid JSON: {why}",
        /// A file whose top level is not what a question file holds (`want` says what is).
        Shape { path: String, want: &'static str } => "{path}: expected {want}",
        /// A question that does not parse (`at` is the file and the question's number or line).
        Question { at: String, why: String } => "{at}: {why}",
        NoQuestions { path: String } => "{path} contains no questions",
        Incomplete { path: String, id: String } => "{path}: question `{id}` needs a query and at least one expected file",
        NoSplit { file: String, split: String } => "no question of {file} is in split `{split}`",
        NotAReport { path: String, why: String } => "{path} is not a saved evaluation report: {why}",
        NotATruth { path: String, what: String, why: String } => "{path} is not a {what} truth file: {why}",
        RerankFiles {} => "--reranker reorders chunk results: use it with --mode hybrid, dense or sparse",
        DropWithoutBaseline {} => "--max-recall-drop needs --baseline",
        Candidates { path: String, why: String } => "cannot write candidates to {path}: {why}",
        NoReranker { reason: crate::error::Unavailable } => "{reason}",
    }
}

/// Mines questions from the commits of a range. Without `out` the answer's text is the question
/// file itself (what `--out` writes, so `evaluate mine > q.json && evaluate run q.json` works)
/// and the summary is returned beside it for stderr; with `out` the text is the summary.
pub fn mine(ws: &Workspace, opts: &mine::MineOptions, out: Option<&Path>) -> Result<(Answer, String)> {
    let m = mine::mine(&ws.repo, opts)?;
    let mut summary = format!(
        "mined {} questions from {} of {} commits in {}\n",
        m.questions.len(),
        m.commits_kept,
        m.commits_seen,
        m.range
    );
    for (reason, n) in &m.skipped {
        summary.push_str(&format!("  skipped {n}: {reason}\n"));
    }
    let dataset = serde_json::to_string_pretty(&m)? + "\n";
    let text = match out {
        Some(path) => {
            // Commit subjects as queries: searched, they would answer for the code they name.
            ws.repo.note_output(path)?;
            crate::fsutil::write_atomic(path, dataset.as_bytes())?;
            summary.push_str(&format!("wrote {}\n", path.display()));
            std::mem::take(&mut summary)
        }
        None => dataset,
    };
    Ok((Answer::new("evaluate_mine", None, &m, text), summary))
}

/// A truth file to measure against, the revision to answer at, and how much to list.
#[derive(clap::Args, Debug)]
pub struct TruthArgs {
    /// A truth file for this repository (hand-checked edges).
    pub truth: PathBuf,
    /// Answer at this revision instead of the truth file's commit.
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
    /// List every wrong and missed edge.
    #[arg(long)]
    pub details: bool,
}

pub fn data_access(engine: &Engine, args: &TruthArgs) -> Result<Answer> {
    let t = data::load(&args.truth)?;
    let report = data::run(engine, &t, args.rev.as_deref())?;
    let text = data::render(&report, args.details);
    Ok(Answer::new("evaluate_data_access", None, &report, text))
}

pub fn graph(engine: &Engine, args: &TruthArgs) -> Result<Answer> {
    let t = graph::load(&args.truth)?;
    let report = graph::run(engine, &t, args.rev.as_deref())?;
    let text = graph::render(&report, args.details);
    Ok(Answer::new("evaluate_graph", None, &report, text))
}

/// What `evaluate run` is asked for.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The questions (JSON from `evaluate mine`, or a hand-written set).
    pub questions: PathBuf,
    /// hybrid | dense | sparse | bm25-files (whole-file BM25 baseline).
    #[arg(long, default_value = "hybrid")]
    pub mode: String,
    /// Cut-off for Recall@k and NDCG@k.
    #[arg(short = 'k', long = "limit", default_value_t = 10)]
    pub k: usize,
    /// Write the report (JSON) here.
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// A saved report to compare with.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Fail (exit 4) when Recall@10 is below this.
    #[arg(long)]
    pub min_recall: Option<f64>,
    /// Fail (exit 4) when Recall@10 drops more than this below the baseline.
    #[arg(long)]
    pub max_recall_drop: Option<f64>,
    /// Fail (exit 4) when the p95 query latency exceeds this (ms).
    #[arg(long)]
    pub max_p95_ms: Option<f64>,
    /// Include every question's ranking (for error analysis).
    #[arg(long)]
    pub per_question: bool,
    /// Rerank each question's candidates with this cross-encoder (a repo id or folder).
    #[arg(long, value_name = "NAME|PATH")]
    pub reranker: Option<String>,
    /// Only the questions of this split (`dev` or `test`; questions without one are dev).
    #[arg(long)]
    pub split: Option<String>,
    /// Write every question's ranked candidates with what scored them (BM25, cosine, ranks,
    /// priors, boost, file evidence) here, one JSON line per question: the data a ranking change
    /// can be tried on without asking again (scripts/rank-lab.py).
    #[arg(long, value_name = "FILE")]
    pub candidates: Option<PathBuf>,
}

/// Asks every question (of `split`) at its revision; a failed gate makes the answer exit 4.
pub fn run(engine: impl FnOnce() -> Result<Engine>, a: &RunArgs) -> Result<Answer> {
    let mut qs = dataset::load(&a.questions)?;
    if let Some(s) = a.split.as_deref() {
        qs.retain(|q| q.split.as_deref().unwrap_or("dev") == s);
        if qs.is_empty() {
            return Err(EvalError::NoSplit { file: a.questions.display().to_string(), split: s.to_string() }.into());
        }
    }
    let baseline = a
        .baseline
        .as_ref()
        .map(|p| -> Result<run::Report> {
            let t = std::fs::read_to_string(p)
                .map_err(|e| EvalError::Unreadable { what: format!("baseline {}", p.display()), why: e.to_string() })?;
            Ok(serde_json::from_str(&t)
                .map_err(|e| EvalError::NotAReport { path: p.display().to_string(), why: e.to_string() })?)
        })
        .transpose()?;
    if a.reranker.is_some() && a.mode == "bm25-files" {
        return Err(EvalError::RerankFiles {}.into());
    }
    if a.max_recall_drop.is_some() && baseline.is_none() {
        return Err(EvalError::DropWithoutBaseline {}.into());
    }
    let opts = run::RunOptions {
        mode: run::EvalMode::parse(&a.mode)?,
        k: a.k.max(1),
        per_question: a.per_question,
        baseline,
        min_recall: a.min_recall,
        max_recall_drop: a.max_recall_drop,
        max_p95_ms: a.max_p95_ms,
        rerank: a.reranker.clone(),
        candidates: a.candidates.clone(),
    };
    let engine = engine()?;
    let report = run::run(&engine, &qs, &opts)?;
    if let Some(p) = &a.save {
        // A report saved in the working tree is Lynx's output, not the project's code.
        engine.ws.repo.note_output(p)?;
        crate::fsutil::write_atomic(p, serde_json::to_string_pretty(&report)?.as_bytes())?;
    }
    let text = run::render(&report);
    let failed = report.gates.iter().any(|g| !g.passed);
    let answer = Answer::new("evaluate_run", None, &report, text);
    Ok(if failed { answer.with_exit(error::EXIT_GATE_FAILED) } else { answer })
}

/// Reads a hand-checked truth file (`what` names its kind in the error).
pub fn load_truth<T: serde::de::DeserializeOwned>(path: &std::path::Path, what: &str) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EvalError::Unreadable { what: path.display().to_string(), why: e.to_string() })?;
    Ok(serde_json::from_str(&text).map_err(|e| EvalError::NotATruth {
        path: path.display().to_string(),
        what: what.to_string(),
        why: e.to_string(),
    })?)
}
