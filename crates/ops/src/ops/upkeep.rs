//! `gc`: what garbage collection removed (or would), said once for the CLI and `--json`.

use super::Answer;
use crate::engine::Engine;
use anyhow::Result;

/// What `gc` is asked to keep and whether to remove anything.
#[derive(clap::Args, Debug)]
pub struct GcArgs {
    /// Only report what would be removed.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep objects that reflog entries newer than this many days need.
    #[arg(long, default_value_t = 30)]
    pub reflog_days: u64,
}

pub fn gc(engine: &Engine, args: &GcArgs) -> Result<Answer> {
    let r = crate::gc::gc(&engine.ws, args.dry_run, args.reflog_days)?;
    let mut text = format!(
        "{}{} of {} segments ({}), {} temp files; kept what {} commits and {} worktrees need\n",
        if r.dry_run { "would remove " } else { "removed " },
        r.segments_removed,
        r.segments_total,
        indicatif::HumanBytes(r.bytes_removed),
        r.temp_files_removed,
        r.live_commits,
        r.worktrees
    );
    if r.doc_snapshots_removed + r.doc_texts_removed > 0 {
        text.push_str(&format!(
            "{}{} older documentation snapshots and {} page texts (each source keeps its current snapshot)\n",
            if r.dry_run { "would remove " } else { "removed " },
            r.doc_snapshots_removed,
            r.doc_texts_removed
        ));
    }
    Ok(Answer::new("gc", None, &r, text))
}

results!(crate::gc::GcReport);
