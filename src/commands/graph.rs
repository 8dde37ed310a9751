//! `git lynx graph …`: queries, counts, SCIP imports and the HTML export.

use super::Ctx;
use crate::ops::registry::{self, Operation};
use crate::ops::{self, Answer};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum GraphCmd {
    /// callers | callees | subclasses | superclasses | imports | neighbors | shortest_path | overview | surprising_connections | status
    Query {
        /// callers, callees, subclasses, superclasses, imports, neighbors, shortest_path,
        /// overview, surprising_connections (or --op).
        #[arg(
            value_name = "OP",
            required_unless_present = "op",
            conflicts_with = "op",
            value_enum,
            hide_possible_values = true
        )]
        operation: Option<ops::graph::GraphOp>,
        /// The symbol (or --symbol).
        #[arg(value_name = "SYMBOL", conflicts_with = "symbol")]
        name: Option<String>,
        #[command(flatten)]
        args: ops::graph::GraphArgs,
    },
    /// Node and edge counts by language, kind and relation.
    Status(ViewOnly),
    /// Import a SCIP index (scip-python, scip-typescript, rust-analyzer, scip-java, scip-go…)
    /// made for this checkout: its files' calls, imports and bases become `precise`.
    ImportScip {
        /// The index file (`index.scip`).
        index: PathBuf,
        /// The revision the index was made from (default: the working tree).
        #[arg(long, value_name = "REV")]
        rev: Option<String>,
    },
    /// Forget every imported SCIP index (the graph is heuristic again).
    ClearScip,
    /// Write an offline HTML view of a symbol's blast radius or a module's hub.
    Export(ops::export::ExportArgs),
}

#[derive(Args, Debug)]
pub struct ViewOnly {
    /// Revision to answer from (default: the working tree).
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
}

impl GraphCmd {
    /// The operation's name in answers and errors.
    pub fn name(&self) -> &'static str {
        match self {
            GraphCmd::Export(_) => registry::ExportGraph::NAME,
            GraphCmd::ImportScip { .. } => "import_scip",
            GraphCmd::ClearScip => "clear_scip",
            GraphCmd::Query { .. } | GraphCmd::Status(_) => registry::GraphQuery::NAME,
        }
    }
}

pub fn run(cx: &Ctx, what: &GraphCmd) -> Result<Answer> {
    match what {
        GraphCmd::Query { operation, name, args } => {
            let args = ops::graph::GraphArgs {
                op: args.op.or(*operation),
                symbol: args.symbol.clone().or_else(|| name.clone()),
                ..args.clone()
            };
            registry::GraphQuery::run(&cx.shell(), &args)
        }
        GraphCmd::Status(v) => {
            let args = ops::graph::GraphArgs {
                at: ops::args::Rev { rev: v.rev.clone() },
                ..ops::graph::GraphArgs::of(ops::graph::GraphOp::Status)
            };
            ops::graph::run(&cx.engine()?, &args)
        }
        GraphCmd::ImportScip { index, rev } => ops::graph::import_scip(&cx.engine()?, index, rev.as_deref()),
        GraphCmd::ClearScip => ops::graph::clear_scip(&cx.engine()?),
        GraphCmd::Export(a) => registry::ExportGraph::run(&cx.shell(), a),
    }
}
