//! `git lynx evaluate …`: questions mined from history, and retrieval, graph and data-access
//! quality measured against them or against hand-checked truth.

use super::Ctx;
use crate::ops::{self, Answer};
use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum EvalCmd {
    /// Mine questions from commits: subject (and subject + body) → the source files modified.
    Mine {
        /// Commits to mine: `A..B`, or a revision (its history).
        #[arg(long, default_value = "HEAD")]
        rev_range: String,
        /// Commits to keep at most.
        #[arg(long, default_value_t = 100)]
        max: usize,
        /// Skip commits modifying more source files than this.
        #[arg(long, default_value_t = 4)]
        max_files: usize,
        /// Write the questions here (JSON with the rules). Default: print that file on stdout
        /// (`evaluate mine > q.json`; the summary goes to stderr); with --json, the usual
        /// envelope, which `evaluate run` reads too.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Precision and recall of data-access facts against a hand-checked table → symbol set
    /// (docs/eval/data/).
    DataAccess(ops::evaluate::TruthArgs),
    /// Precision and recall of the code graph against hand-checked edges (docs/eval/graph/),
    /// per edge kind and confidence level.
    Graph(ops::evaluate::TruthArgs),
    /// Ask every question at its revision and report Recall@k, MRR, NDCG, latency.
    Run(ops::evaluate::RunArgs),
}

impl EvalCmd {
    /// The operation's name in answers and errors.
    pub fn name(&self) -> &'static str {
        match self {
            EvalCmd::Mine { .. } => "evaluate_mine",
            EvalCmd::Graph(_) => "evaluate_graph",
            EvalCmd::DataAccess(_) => "evaluate_data_access",
            EvalCmd::Run(_) => "evaluate_run",
        }
    }
}

pub fn run(cx: &Ctx, what: &EvalCmd) -> Result<Answer> {
    match what {
        EvalCmd::Mine { rev_range, max, max_files, out } => {
            let opts = ops::evaluate::mine::MineOptions { range: rev_range.clone(), max: *max, max_files: *max_files };
            let (answer, summary) = ops::evaluate::mine(&cx.workspace()?, &opts, out.as_deref())?;
            // Stdout is the question file; what was mined and skipped is for the person.
            if !cx.quiet && !cx.json && !cx.jsonl {
                eprint!("{summary}");
            }
            Ok(answer)
        }
        EvalCmd::DataAccess(a) => ops::evaluate::data_access(&cx.engine()?, a),
        EvalCmd::Graph(a) => ops::evaluate::graph(&cx.engine()?, a),
        EvalCmd::Run(a) => ops::evaluate::run(|| cx.engine(), a),
    }
}
