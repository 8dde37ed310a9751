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

    /// Local branches and tags, as (short name, commit id), sorted by name.
    pub fn branches_and_tags(&self) -> Result<(Vec<(String, String)>, Vec<(String, String)>)> {
        let repo = self.local();
        let platform = repo.references()?;
        let list = |iter: gix::reference::iter::Iter<'_, '_>| -> Vec<(String, String)> {
            let mut out: Vec<(String, String)> = iter
                .flatten()
                .filter_map(|mut r| {
                    let id = r.peel_to_id().ok()?.detach();
                    Some((r.name().shorten().to_string(), id.to_string()))
                })
                .collect();
            out.sort();
            out
        };
        let branches = list(platform.local_branches()?);
        let tags = list(platform.tags()?);
        Ok((branches, tags))
    }

    /// Working-tree roots of this repository (main and linked worktrees).
    pub fn worktree_dirs(&self) -> Result<Vec<PathBuf>> {
        let repo = self.local();
        let mut out = Vec::new();
        if let Some(w) = &self.workdir {
            out.push(w.clone());
        }
        // Run from a linked worktree, the main one is the parent of the common `.git`.
        if self.common_dir.file_name().is_some_and(|n| n == ".git")
            && let Some(main) = self.common_dir.parent()
            && !out.iter().any(|p| p == main)
        {
            out.push(main.to_path_buf());
        }
        for wt in repo.worktrees()? {
            if let Ok(base) = wt.base()
                && !out.contains(&base)
            {
                out.push(base);
            }
        }
        Ok(out)
    }
}

impl Repo {
    /// The merge base of two commits (None when unrelated).
    pub fn merge_base(&self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
        let repo = self.local();
        Ok(repo.merge_base(a, b)?.map(|id| id.detach()))
    }

    /// The current branch's short name (None when detached or unborn).
    pub fn current_branch(&self) -> Result<Option<String>> {
        let repo = self.local();
        let head = repo.head()?;
        Ok(head.referent_name().map(|n| n.shorten().to_string()))
    }

    /// The base to compare the current branch against: its upstream, else the first of
    /// main / master / trunk / develop (local, then origin/) that exists and is not the
    /// current branch.
    pub fn default_base(&self) -> Result<Option<String>> {
        let repo = self.local();
        let head = repo.head()?;
        let current = head.referent_name().map(|n| n.to_owned());
        if let Some(name) = &current
            && let Some(Ok(up)) = repo.branch_remote_tracking_ref_name(name.as_ref(), gix::remote::Direction::Fetch)
            && repo.try_find_reference(up.as_ref())?.is_some()
        {
            return Ok(Some(up.shorten().to_string()));
        }
        let cur_short = current.as_ref().map(|n| n.shorten().to_string());
        for cand in
            ["main", "master", "trunk", "develop", "origin/main", "origin/master", "origin/trunk", "origin/develop"]
        {
            if Some(cand) == cur_short.as_deref() {
                continue;
            }
            if repo.rev_parse_single(cand).is_ok() {
                return Ok(Some(cand.to_string()));
            }
        }
        Ok(None)
    }
}

/// One commit of a range, with what a question miner needs.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: ObjectId,
    pub parents: Vec<ObjectId>,
    pub subject: String,
    pub body: String,
    pub time: i64,
}

impl Repo {
    /// The ids and parents of at most `max` commits reachable from `tip`, newest first, in the
    /// order `commits_in_range` gives them — without reading their messages.
    pub fn walk_ids(&self, tip: &str, max: usize) -> Result<Vec<(ObjectId, Vec<ObjectId>)>> {
        let repo = self.local();
        let tip = self.resolve(tip)?.commit;
        let mut out = Vec::with_capacity(max.min(4096));
        for info in repo.rev_walk([tip]).all()? {
            let info = info?;
            out.push((info.id, info.parent_ids.iter().copied().collect()));
            if out.len() >= max {
                break;
            }
        }
        Ok(out)
    }

    /// A commit's subject and time.
    pub fn subject_and_time(&self, id: ObjectId) -> Result<(String, i64)> {
        let repo = self.local();
        let commit = repo.find_commit(id)?;
        Ok((bounded_summary(commit.message_raw()?), commit.time().map(|t| t.seconds).unwrap_or(0)))
    }

    /// Commits reachable from `to` but not from `from` (`from..to`), newest first.
    pub fn commits_in_range(&self, from: Option<&str>, to: &str, max: usize) -> Result<Vec<CommitInfo>> {
        let repo = self.local();
        let tip = self.resolve(to)?.commit;
        let mut walk = repo.rev_walk([tip]);
        if let Some(f) = from {
            walk = walk.with_hidden([self.resolve(f)?.commit]);
        }
        let mut out = Vec::new();
        for info in walk.all()? {
            let info = info?;
            let commit = info.object()?;
            let raw = commit.message_raw()?;
            let subject = bounded_summary(raw);
            let body = gix::objs::commit::MessageRef::from_bytes(raw)
                .body()
                .map(|b| bounded_body(b.without_trailer()))
                .unwrap_or_default();
            let time = commit.time().map(|t| t.seconds).unwrap_or(0);
            out.push(CommitInfo {
                id: info.id,
                parents: info.parent_ids.iter().copied().collect(),
                subject,
                body: body.trim().to_string(),
                time,
            });
            if out.len() >= max {
                break;
            }
        }
        Ok(out)
    }

    /// Paths changed between two commits' trees (blobs only): (path, status A/M/D).
    /// The file paths that differ between two commits' trees (a rename names both paths), by
    /// a plain tree diff: no rename detection, so no diff resource cache, whose set-up loads or
    /// builds a git index every call (most of what computing a commit's history facts cost).
    pub fn paths_changed(&self, old: ObjectId, new: ObjectId) -> Result<Vec<String>> {
        let repo = self.local();
        let old_tree = repo.find_commit(old)?.tree()?;
        let new_tree = repo.find_commit(new)?.tree()?;
        let mut rec = gix::diff::tree::Recorder::default();
        gix::diff::tree(
            gix::objs::TreeRefIter::from_bytes(&old_tree.data, old_tree.id.kind()),
            gix::objs::TreeRefIter::from_bytes(&new_tree.data, new_tree.id.kind()),
            gix::diff::tree::State::default(),
            &repo.objects,
            &mut rec,
        )?;
        use gix::diff::tree::recorder::Change as C;
        let mut out: Vec<String> = rec
            .records
            .into_iter()
            .filter_map(|c| match c {
                C::Addition { entry_mode, path, .. }
                | C::Deletion { entry_mode, path, .. }
                | C::Modification { entry_mode, path, .. } => (!entry_mode.is_tree()).then(|| path.to_string()),
            })
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }

    pub fn changed_paths(&self, old: ObjectId, new: ObjectId) -> Result<Vec<(String, char)>> {
        let repo = self.local();
        let old_tree = repo.find_commit(old)?.tree()?;
        let new_tree = repo.find_commit(new)?.tree()?;
        let changes = repo.diff_tree_to_tree(&old_tree, &new_tree, gix::diff::Options::default())?;
        use gix::object::tree::diff::ChangeDetached as C;
        let mut out = Vec::new();
        for c in changes {
            match c {
                C::Addition { location, entry_mode, .. } if !entry_mode.is_tree() => {
                    out.push((location.to_string(), 'A'))
                }
                C::Deletion { location, entry_mode, .. } if !entry_mode.is_tree() => {
                    out.push((location.to_string(), 'D'))
                }
                C::Modification { location, entry_mode, .. } if !entry_mode.is_tree() => {
                    out.push((location.to_string(), 'M'))
                }
                C::Rewrite { location, entry_mode, .. } if !entry_mode.is_tree() => {
                    out.push((location.to_string(), 'A'))
                }
                _ => {}
            }
        }
        out.sort();
        Ok(out)
    }
}

/// Bytes of a commit's subject that are kept: what ranking needs of it. A repository may carry
/// megabyte subjects; kept whole, a thousand of them would cost gigabytes to index and store.
pub const SUBJECT_MAX: usize = 1024;

/// `subject` cut to at most `SUBJECT_MAX` bytes, at the last word boundary that fits (at a
/// character boundary when one word is longer).
pub fn bounded_subject(subject: &str) -> &str {
    if subject.len() <= SUBJECT_MAX {
        return subject;
    }
    let mut end = SUBJECT_MAX;
    while !subject.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &subject[..end];
    match cut.rfind(char::is_whitespace) {
        Some(at) if at > 0 => cut[..at].trim_end(),
        _ => cut,
    }
}

/// A message's summary (its first paragraph on one line), read from a bounded prefix of the
/// message and cut to `SUBJECT_MAX` bytes: a megabyte subject costs what a short one does.
fn bounded_summary(raw: &gix::bstr::BStr) -> String {
    use gix::bstr::ByteSlice;
    // Whitespace folding only shrinks the summary, so a prefix of four times the bound is enough.
    let prefix = &raw[..raw.len().min(4 * SUBJECT_MAX)];
    let summary = gix::objs::commit::MessageRef::from_bytes(prefix).summary();
    bounded_subject(&summary.to_str_lossy()).to_string()
}

/// Bytes of a commit's body that are kept for display.
const BODY_MAX: usize = 8 * 1024;

fn bounded_body(body: &gix::bstr::BStr) -> String {
    use gix::bstr::ByteSlice;
    let cut: &[u8] = &body[..body.len().min(BODY_MAX)];
    cut.to_str_lossy().trim_end_matches('\u{fffd}').to_string()
}
