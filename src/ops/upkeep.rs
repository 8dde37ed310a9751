//! `gc`: what garbage collection removed (or would), said once for the CLI and `--json`.

use super::Answer;
use crate::engine::Engine;
use anyhow::Result;

pub fn gc(engine: &Engine, dry_run: bool, reflog_days: u64) -> Result<Answer> {
    let r = crate::gc::gc(&engine.ws, dry_run, reflog_days)?;
    let text = format!(
        "{}{} of {} segments ({}), {} temp files; kept what {} commits and {} worktrees need\n",
        if r.dry_run { "would remove " } else { "removed " },
        r.segments_removed,
        r.segments_total,
        indicatif::HumanBytes(r.bytes_removed),
        r.temp_files_removed,
        r.live_commits,
        r.worktrees
    );
    Ok(Answer::new("gc", None, &r, text))
}
