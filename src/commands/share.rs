//! Sharing the index: `objects export|import`, and `push` / `fetch` through the git remote or
//! a shared object store.

use super::Ctx;
use crate::ops::{self, Answer};
use anyhow::Result;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum ObjectsCmd {
    /// Write the segments of these revisions (default HEAD) to a directory (usable as an
    /// alternate) or a single `.lynxpack` file.
    Export(ops::objects::ExportArgs),
    /// Import a directory or `.lynxpack`: hashes verified, then each blob's objects checked
    /// against the blob in this repository before they are used (docs/SECURITY.md).
    Import(ops::objects::ImportArgs),
    /// Remove from a shared object store what no kept push manifest reaches (manifests older
    /// than --keep-days, then the segments and catalog entries only they named).
    Gc(ops::remote::StoreGcArgs),
}

pub fn objects(cx: &Ctx, what: &ObjectsCmd) -> Result<Answer> {
    match what {
        ObjectsCmd::Export(a) => ops::objects::export(&cx.engine()?, a),
        ObjectsCmd::Import(a) => ops::objects::import(&cx.engine()?, a),
        ObjectsCmd::Gc(a) => ops::remote::store_gc(&cx.engine()?, a),
    }
}

pub fn push(cx: &Ctx, a: &ops::remote::PushArgs) -> Result<Answer> {
    ops::remote::push(&cx.engine()?, a)
}

pub fn fetch(cx: &Ctx, a: &ops::remote::FetchArgs) -> Result<Answer> {
    ops::remote::fetch(&cx.engine()?, a)
}
