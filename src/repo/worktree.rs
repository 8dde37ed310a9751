//! The working tree as a list of (path, blob id): HEAD's tree overlaid with staged, unstaged
//! and untracked (not ignored) files, deleted files removed. Files whose stat data matches the
//! index keep the index's blob id; only the others are read and hashed (with git's to-git
//! filters: `core.autocrlf`, `eol`/`text` attributes and clean drivers, as gix applies them).

use super::{FileEntry, FileList, Repo, SkipReason, Skipped, apply_attributes};
use anyhow::Result;
use gix::ObjectId;
use gix::bstr::{BStr, ByteSlice};
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

enum Pending {
    Known(FileEntry),
    Hash { path: String, size: u64 },
    Skip(Skipped),
}

impl Repo {
    /// The working tree's files. Files over `max_size` are skipped without being read.
    pub fn worktree_files(&self, max_size: u64) -> Result<FileList> {
        let workdir = self.workdir()?.to_path_buf();
        let repo = self.local();
        let index = repo.index_or_empty()?;
        let stamp = index.timestamp();
        let mut pending: Vec<Pending> = Vec::with_capacity(index.entries().len());
        let mut last_path: Option<&BStr> = None;
        for e in index.entries() {
            let rela = e.path(&index);
            if last_path == Some(rela) {
                continue; // conflicted paths appear once per stage
            }
            last_path = Some(rela);
            let path = rela.to_str_lossy().into_owned();
            if let Some(reason) = super::mode_skip(e.mode) {
                pending.push(Pending::Skip(Skipped { path, reason }));
                continue;
            }
            // Outside a sparse checkout's cone: not on disk, and unchanged by definition.
            if e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE) {
                pending.push(Pending::Known(FileEntry { path, blob: e.id, size: None, content: None }));
                continue;
            }
            let abs = workdir.join(&path);
            let Ok(md) = gix::index::fs::Metadata::from_path_no_follow(&abs) else {
                continue; // deleted in the working tree
            };
            if md.is_symlink() {
                pending.push(Pending::Skip(Skipped { path, reason: SkipReason::Symlink }));
                continue;
            }
            if md.is_dir() {
                continue;
            }
            let size = md.len();
            let unchanged = e.stage() == gix::index::entry::Stage::Unconflicted
                && !e.stat.is_racy(stamp, Default::default())
                && gix::index::entry::Stat::from_fs(&md).is_ok_and(|disk| e.stat.matches(&disk, Default::default()));
            if unchanged {
                pending.push(Pending::Known(FileEntry { path, blob: e.id, size: Some(size), content: None }));
            } else {
                pending.push(Pending::Hash { path, size });
            }
        }
        for path in untracked(&repo, &index)? {
            let abs = workdir.join(&path);
            match std::fs::symlink_metadata(&abs) {
                Ok(md) if md.file_type().is_symlink() => {
                    pending.push(Pending::Skip(Skipped { path, reason: SkipReason::Symlink }))
                }
                Ok(md) if md.is_file() => pending.push(Pending::Hash { path, size: md.len() }),
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
                let Pending::Hash { path, size } = p else { continue };
                let (path, size) = (std::mem::take(path), *size);
                *p = if size > max_size {
                    Pending::Skip(Skipped { path, reason: SkipReason::TooLarge })
                } else {
                    match hash_file(&mut pipe, &workdir, &path, hash_kind) {
                        Ok((blob, content)) => {
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

    /// Untracked, not ignored files (nested `.gitignore`, negations, `info/exclude` and
    /// `core.excludesFile` honoured), relative paths.
    pub fn untracked_files(&self) -> Result<Vec<String>> {
        let repo = self.local();
        let index = repo.index_or_empty()?;
        untracked(&repo, &index)
    }
}

fn untracked(repo: &gix::Repository, index: &gix::worktree::Index) -> Result<Vec<String>> {
    let opts = repo
        .dirwalk_options()?
        .emit_untracked(gix::dir::walk::EmissionMode::Matching)
        .emit_ignored(None)
        .emit_tracked(false)
        .recurse_repositories(false)
        .emit_empty_directories(false);
    let mut collect = gix::dir::walk::delegate::Collect::default();
    let none: [&BStr; 0] = [];
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    repo.dirwalk(index, none, &interrupt, opts, &mut collect)?;
    let mut out = Vec::new();
    for (entry, _) in collect.into_entries_by_path() {
        if entry.status == gix::dir::entry::Status::Untracked
            && matches!(entry.disk_kind, Some(gix::dir::entry::Kind::File | gix::dir::entry::Kind::Symlink))
        {
            let p = entry.rela_path.to_str_lossy().into_owned();
            // The store itself is never content (it is also excluded via info/exclude).
            if !p.starts_with(".lynx/") {
                out.push(p);
            }
        }
    }
    Ok(out)
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
