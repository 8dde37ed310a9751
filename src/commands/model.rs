//! `git lynx model …`: embedding models pulled, listed, imported, distilled and exported.

use super::Ctx;
use crate::ops::{self, Answer};
use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum ModelCmd {
    /// Download a model (default: the configured one) into the HuggingFace cache.
    Pull {
        /// A HuggingFace repo id (`owner/name`).
        name: Option<String>,
    },
    /// Models in the HuggingFace cache.
    List,
    /// Import a model folder or archive (tar, tar.gz, tar.zst) for offline use.
    Import {
        /// A model folder or archive.
        path: PathBuf,
        /// Repo id to file it under (default: the archive's manifest).
        #[arg(long)]
        name: Option<String>,
    },
    /// Distil a static model from a local transformer (the model2vec recipe), optionally with
    /// this repository's identifier words added to its vocabulary.
    Distill {
        /// The transformer: a repo id in the HuggingFace cache, a folder or an `.onnx` file.
        from: String,
        /// The folder to write (must not exist).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Dimensions kept by PCA.
        #[arg(long, default_value_t = 256)]
        dims: usize,
        /// How the table is stored: int8 is half of f16's size (a scale per row).
        #[arg(long, value_enum, default_value_t = crate::embed::distill::TableType::F16)]
        dtype: crate::embed::distill::TableType,
        /// Keep only tokens written in ASCII (a smaller model for code).
        #[arg(long)]
        ascii_only: bool,
        /// Add the N most frequent identifier words of HEAD's source files.
        #[arg(long, value_name = "N", default_value_t = 0)]
        repo_words: usize,
        /// Add the words of this file (one per line).
        #[arg(long, value_name = "FILE")]
        words: Option<PathBuf>,
    },
    /// Write a model to an archive for an air-gapped machine (.tar, .tar.gz or .tar.zst).
    Export {
        /// The model: a repo id in the HuggingFace cache, or a folder.
        name: String,
        /// The archive to write (also --to, as `objects export`).
        #[arg(value_name = "FILE", required_unless_present = "to", conflicts_with = "to")]
        file: Option<PathBuf>,
        /// The archive to write.
        #[arg(long, value_name = "FILE")]
        to: Option<PathBuf>,
    },
}

pub fn run(cx: &Ctx, what: &ModelCmd) -> Result<Answer> {
    let configured = || -> String { ops::model::configured_name(cx.model.as_deref(), cx.workspace().ok().as_ref()) };
    let shows_progress = !cx.quiet && !cx.json;
    match what {
        ModelCmd::Pull { name } => ops::model::pull(&name.clone().unwrap_or_else(configured), shows_progress),
        ModelCmd::List => ops::model::list(&configured()),
        ModelCmd::Import { path, name } => ops::model::import(path, name.as_deref()),
        ModelCmd::Distill { from, out, dims, dtype, ascii_only, repo_words, words } => {
            let engine = if *repo_words > 0 { Some(cx.engine()?) } else { None };
            let args = ops::model::DistillArgs {
                from,
                out,
                shape: crate::embed::distill::DistillOptions { dims: *dims, table: *dtype, ascii_only: *ascii_only },
                words_file: words.as_deref(),
                repo_words: *repo_words,
                threads: engine.as_ref().map_or(0, |e| e.ws.config.model.threads),
                ort_setting: engine.as_ref().and_then(|e| e.ws.config.model.ort_dylib.as_deref()),
            };
            ops::model::distill(&args, engine.as_ref().map(|e| &e.ws), shows_progress)
        }
        ModelCmd::Export { name, file, to } => {
            ops::model::export(name, file.as_ref().or(to.as_ref()).expect("clap requires FILE or --to"))
        }
    }
}
