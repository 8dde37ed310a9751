//! The working tree as a list of (path, blob id): HEAD's tree overlaid with staged, unstaged
//! and untracked (not ignored) files, deleted files removed. Files whose stat data matches the
//! index keep the index's blob id; only the others are read and hashed (with git's to-git
//! filters: `core.autocrlf`, `eol`/`text` attributes and clean drivers, as gix applies them).

use super::settled::Settled;
use super::stamp::Stamp;
use super::{FileEntry, FileList, Repo, SkipReason, Skipped, apply_attributes};
use anyhow::Result;
use gix::ObjectId;
use gix::bstr::{BStr, ByteSlice};
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

enum Pending {
    Known(FileEntry),
    /// To read and hash; `entry` is a tracked file's index blob and stat data.
    Hash {
        path: String,
        size: u64,
        entry: Option<(ObjectId, Stamp)>,
    },
    Skip(Skipped),
}

impl Repo {
    /// The working tree's files. Files over `max_size` are skipped without being read.
    pub fn worktree_files(&self, max_size: u64) -> Result<FileList> {
        let workdir = self.workdir()?.to_path_buf();
        let repo = self.local();
        let index = repo.index_or_empty()?;
        let stamp = index.timestamp();
        let cache = self.lynx_dir.is_dir().then(|| self.lynx_dir.join("cache"));
        let settled = Settled::open(&repo, &index, &workdir, cache.as_deref());
        // Which entries need a look at the disk is decided in order; the lookups (one lstat
        // each, most of a warm listing) run on every core.
        let mut steps: Vec<Result<Pending, (&gix::index::Entry, String)>> = Vec::with_capacity(index.entries().len());
        let mut last_path: Option<&BStr> = None;
        for e in index.entries() {
            let rela = e.path(&index);
            if last_path == Some(rela) {
                continue; // conflicted paths appear once per stage
            }
            last_path = Some(rela);
            let path = rela.to_str_lossy().into_owned();
            if let Some(reason) = super::mode_skip(e.mode) {
                steps.push(Ok(Pending::Skip(Skipped { path, reason })));
            } else if e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE) {
                // Outside a sparse checkout's cone: not on disk, and unchanged by definition.
                steps.push(Ok(Pending::Known(FileEntry { path, blob: e.id, size: None, content: None })));
            } else {
                steps.push(Err((e, path)));
            }
        }
        let mut pending: Vec<Pending> = steps
            .into_par_iter()
            .with_min_len(256)
            .filter_map(|step| {
                let (e, path) = match step {
                    Ok(p) => return Some(p),
                    Err(look) => look,
                };
                // Deleted in the working tree when it cannot be stat'ed.
                let md = gix::index::fs::Metadata::from_path_no_follow(&workdir.join(&path)).ok()?;
                if md.is_symlink() {
                    return Some(Pending::Skip(Skipped { path, reason: SkipReason::Symlink }));
                }
                if md.is_dir() {
                    return None;
                }
                let size = md.len();
                let unchanged = e.stage() == gix::index::entry::Stage::Unconflicted
                    && !e.stat.is_racy(stamp, Default::default())
                    && gix::index::entry::Stat::from_fs(&md)
                        .is_ok_and(|disk| e.stat.matches(&disk, Default::default()));
                if unchanged {
                    return Some(Pending::Known(FileEntry { path, blob: e.id, size: Some(size), content: None }));
                }
                // Unchanged since a listing that hashed it, though its stat data does not say so
                // to the index (racily clean, or touched).
                let stamp = Stamp::of_index(&md);
                if e.stage() == gix::index::entry::Stage::Unconflicted
                    && let Some(blob) = settled.as_ref().and_then(|kept| kept.blob(&path, stamp, e.id))
                {
                    return Some(Pending::Known(FileEntry { path, blob, size: Some(size), content: None }));
                }
                let unconflicted = e.stage() == gix::index::entry::Stage::Unconflicted;
                Some(Pending::Hash { path, size, entry: unconflicted.then_some((e.id, stamp)) })
            })
            .collect();
        // What Lynx wrote into the tree (an exported graph) is its answer, not the project's code.
        let outputs = self.outputs();
        for path in super::untracked::untracked(&repo, &index, &workdir, cache.as_deref())? {
            if outputs.contains(&path) {
                continue;
            }
            let abs = workdir.join(&path);
            match std::fs::symlink_metadata(&abs) {
                Ok(md) if md.file_type().is_symlink() => {
                    pending.push(Pending::Skip(Skipped { path, reason: SkipReason::Symlink }))
                }
                Ok(md) if md.is_file() => pending.push(Pending::Hash { path, size: md.len(), entry: None }),
                _ => {}
            }
        }

        let hash_kind = repo.object_hash();
        // A filter pipeline borrows its repository, so each batch builds both.
        pending.par_chunks_mut(64).for_each(|batch| {
            if !batch.iter().any(|p| matches!(p, Pending::Hash { .. })) {
                return;
            }
            let r = self.local();
            let mut pipe = r.filter_pipeline(None).ok();
            for p in batch.iter_mut() {
                let Pending::Hash { path, size, entry } = p else { continue };
                let (path, size, entry) = (std::mem::take(path), *size, *entry);
                *p = if size > max_size {
                    Pending::Skip(Skipped { path, reason: SkipReason::TooLarge })
                } else {
                    match hash_file(&mut pipe, &workdir, &path, hash_kind) {
                        Ok((blob, content)) => {
                            if let (Some((indexed, stat)), Some(kept)) = (entry, &settled)
                                && indexed == blob
                            {
                                kept.note(&path, stat, blob);
                            }
                            Pending::Known(FileEntry { path, blob, size: Some(size), content: Some(Arc::new(content)) })
                        }
                        Err(e) => {
                            tracing::warn!("cannot read {path}: {e:#}");
                            Pending::Skip(Skipped { path, reason: SkipReason::Unreadable })
                        }
                    }
                };
            }
        });
        let resolved = pending;
        if let Some(kept) = settled
            && let Err(e) = kept.save()
        {
            tracing::debug!("cannot keep the settled files: {e:#}");
        }

        let mut list = FileList::default();
        for p in resolved {
            match p {
                Pending::Known(f) => list.files.push(f),
                Pending::Skip(s) => list.skipped.push(s),
                Pending::Hash { .. } => unreachable!("hashed above"),
            }
        }
        list.files.sort_by(|a, b| a.path.cmp(&b.path));
        list.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        let state = gix::worktree::IndexPersistedOrInMemory::Persisted(index);
        apply_attributes(
            &repo,
            &state,
            gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
            &mut list,
        )?;
        Ok(list)
    }

    /// The staged state: the index's entries (what `git commit` would record).
    pub fn index_files(&self) -> Result<FileList> {
        let repo = self.local();
        let index = repo.index_or_empty()?;
        let mut list = FileList::default();
        for e in index.entries() {
            if e.stage() != gix::index::entry::Stage::Unconflicted {
                continue;
            }
            let path = e.path(&index).to_str_lossy().into_owned();
            match super::mode_skip(e.mode) {
                Some(reason) => list.skipped.push(Skipped { path, reason }),
                None => list.files.push(FileEntry { path, blob: e.id, size: None, content: None }),
            }
        }
        let state = gix::worktree::IndexPersistedOrInMemory::Persisted(index);
        apply_attributes(&repo, &state, gix::worktree::stack::state::attributes::Source::IdMapping, &mut list)?;
        Ok(list)
    }
}

/// Reads a working-tree file, applies the to-git conversion and computes its blob id.
fn hash_file(
    pipe: &mut Option<(gix::filter::Pipeline<'_>, gix::worktree::IndexPersistedOrInMemory)>,
    workdir: &Path,
    rela: &str,
    kind: gix::hash::Kind,
) -> Result<(ObjectId, Vec<u8>)> {
    let abs = workdir.join(rela);
    let raw = std::fs::read(&abs)?;
    let content = match pipe {
        Some((pipeline, index)) => {
            let mut out = pipeline.convert_to_git(raw.as_slice(), Path::new(rela), index)?;
            let mut buf = Vec::with_capacity(raw.len());
            std::io::Read::read_to_end(&mut out, &mut buf)?;
            buf
        }
        None => raw,
    };
    let id = gix::objs::compute_hash(kind, gix::objs::Kind::Blob, &content)?;
    Ok((id, content))
}
