//! What Lynx answers from besides the repository: `source …` (folders, sites, PDFs) and
//! `workspace …` (the repositories of a workspace file).

use super::Ctx;
use crate::ops::{self, Answer};
use anyhow::Result;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum WorkspaceCmd {
    /// Add a repository (the file is created if needed).
    Add(ops::workspace::AddArgs),
    /// Remove the repository named NAME.
    Remove {
        /// The repository's name in the workspace.
        name: String,
    },
    /// The listed repositories and whether each exists.
    List,
    /// The repositories as a server opens them: which answer, which are skipped and why.
    Status,
}

#[derive(Subcommand, Debug)]
pub enum SourceCmd {
    /// Add a folder or repository, a documentation site (`--type webdoc`) or PDFs (`--type pdf`)
    /// as a source; a site is crawled and PDFs are read at once (`update-source-index` again later).
    Add(ops::source::AddArgs),
    /// Remove a source from .lynx/config.toml.
    Remove {
        /// The source's name.
        name: String,
    },
    /// List sources.
    List,
}

pub fn workspace_cmd(cx: &Ctx, what: &WorkspaceCmd) -> Result<Answer> {
    let Some(file) = &cx.workspace else {
        return Err(ops::workspace::WorkspaceError::NoFile {}.into());
    };
    match what {
        WorkspaceCmd::Add(a) => ops::workspace::add(file, a),
        WorkspaceCmd::Remove { name } => ops::workspace::remove(file, name),
        WorkspaceCmd::List => ops::workspace::list(file, None),
        WorkspaceCmd::Status => ops::workspace::list(file, Some(&cx.sources()?)),
    }
}

pub fn source_cmd(cx: &Ctx, what: &SourceCmd) -> Result<Answer> {
    match what {
        SourceCmd::Add(a) => ops::source::add(&cx.workspace()?, a.config(), (!a.no_fetch).then_some(|| cx.sources())),
        SourceCmd::Remove { name } => ops::source::remove(&cx.workspace()?, name),
        SourceCmd::List => ops::status::list_sources(&cx.sources()?),
    }
}
