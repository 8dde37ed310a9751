//! History and references: what `gc` must keep (refs, recent reflog entries, worktrees),
//! ranges of commits, merge bases and upstreams.

use super::Repo;
use anyhow::Result;
use gix::ObjectId;
use std::collections::BTreeSet;
use std::path::PathBuf;

impl Repo {
    /// Commits that are tips of any ref, HEAD of any worktree, or in a reflog entry newer
    /// than `cutoff` (Unix seconds).
    pub fn live_commits(&self, cutoff: i64) -> Result<BTreeSet<ObjectId>> {
        let repo = self.local();
        let mut out = BTreeSet::new();
        let platform = repo.references()?;
        for r in platform.all()? {
            let Ok(mut r) = r else { continue };
            if let Ok(id) = r.peel_to_id() {
                out.insert(id.detach());
            }
            let mut log = r.log_iter();
            if let Ok(Some(lines)) = log.all() {
                for line in lines.flatten() {
                    if line.signature.seconds() >= cutoff {
                        out.insert(line.new_oid());
                        out.insert(line.previous_oid());
                    }
                }
            }
        }
        let mut heads = vec![repo.clone()];
        for wt in repo.worktrees()? {
            if let Ok(r) = wt.into_repo() {
                heads.push(r);
            }
        }
        for r in heads {
            let Ok(head) = r.head() else { continue };
            if let Some(id) = head.id() {
                out.insert(id.detach());
            }
            let mut log = head.log_iter();
            if let Ok(Some(lines)) = log.all() {
                for line in lines.flatten() {
                    if line.signature.seconds() >= cutoff {
                        out.insert(line.new_oid());
                        out.insert(line.previous_oid());
                    }
                }
            }
        }
        // Reflog entries can name commits that no longer exist (pruned) or the null id.
        out.retain(|id| !id.is_null() && repo.find_commit(*id).is_ok());
        Ok(out)
    }

    /// Working-tree roots of this repository (main and linked worktrees).
    pub fn worktree_dirs(&self) -> Result<Vec<PathBuf>> {
        let repo = self.local();
        let mut out = Vec::new();
        if let Some(w) = &self.workdir {
            out.push(w.clone());
        }
        // Run from a linked worktree, the main one is the parent of the common `.git`.
        if self.common_dir.file_name().is_some_and(|n| n == ".git") {
            if let Some(main) = self.common_dir.parent() {
                if !out.iter().any(|p| p == main) {
                    out.push(main.to_path_buf());
                }
            }
        }
        for wt in repo.worktrees()? {
            if let Ok(base) = wt.base() {
                if !out.contains(&base) {
                    out.push(base);
                }
            }
        }
        Ok(out)
    }
}
