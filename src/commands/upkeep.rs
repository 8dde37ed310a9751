//! Keeping the store healthy and looking inside it: `index`, `status`, `doctor`, `gc`, and the
//! developer aids of `debug`.

use super::Ctx;
use crate::ops::{self, Answer};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// Revisions to index (any git revision); default: the working tree.
    #[arg(long = "rev", value_name = "REV")]
    pub revs: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub enum DebugCmd {
    /// Print the tree-sitter syntax tree of a file.
    Parse {
        file: PathBuf,
        #[arg(long)]
        lang: Option<String>,
    },
    /// Print the chunks of a file.
    Chunks {
        file: PathBuf,
        #[arg(long)]
        lang: Option<String>,
    },
}

pub fn index(cx: &Ctx, a: &IndexArgs) -> Result<Answer> {
    crate::shard::release_read_pages();
    if cx.workspace.is_some() {
        return ops::index::run_workspace(&cx.sources()?, &a.revs);
    }
    ops::index::run(&cx.engine()?, &a.revs)
}

pub fn status(cx: &Ctx) -> Result<Answer> {
    ops::status::run(&cx.engine()?)
}

pub fn doctor(cx: &Ctx, a: &ops::doctor::DoctorArgs) -> Result<Answer> {
    ops::doctor::run(&cx.engine()?, a)
}

pub fn gc(cx: &Ctx, a: &ops::upkeep::GcArgs) -> Result<Answer> {
    ops::upkeep::gc(&cx.engine()?, a)
}

pub fn debug(what: &DebugCmd) -> Result<Answer> {
    match what {
        DebugCmd::Parse { file, lang } => ops::debug::parse(file, lang.as_deref()),
        DebugCmd::Chunks { file, lang } => ops::debug::chunks(file, lang.as_deref()),
    }
}
