//! Plain folders as sources (documentation trees, vendored libraries): files listed from disk
//! with extension and glob filters, blob ids computed exactly as git would for the content, so
//! their objects live in the same store as everything else.

use super::{FileEntry, FileList, SkipReason, Skipped};
use anyhow::{Context, Result};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Directories never worth indexing in a plain folder.
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".lynx",
    "node_modules",
    "target",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    "dist",
    "build",
    ".idea",
    ".vscode",
];

pub struct FolderFilter {
    pub extensions: Vec<String>,
    pub ignore: Option<globset::GlobSet>,
}

impl FolderFilter {
    pub fn new(extensions: &[String], ignore: &[String]) -> Result<FolderFilter> {
        let extensions = extensions.iter().map(|e| e.trim_start_matches('.').to_ascii_lowercase()).collect();
        let ignore = super::exclude_set(ignore)?;
        Ok(FolderFilter { extensions, ignore })
    }

    fn wants(&self, rel: &str) -> bool {
        if self.ignore.as_ref().is_some_and(|g| g.is_match(rel)) {
            return false;
        }
        self.extensions.is_empty()
            || rel.rsplit_once('.').is_some_and(|(_, e)| self.extensions.iter().any(|x| x == &e.to_ascii_lowercase()))
    }
}

/// The files under `root` (relative paths), read and hashed in parallel.
pub fn folder_files(root: &Path, filter: &FolderFilter, max_size: u64, hash: gix::hash::Kind) -> Result<FileList> {
    let root = root.canonicalize().with_context(|| format!("source folder {} does not exist", root.display()))?;
    let mut paths: Vec<(String, PathBuf, u64)> = Vec::new();
    let mut skipped = Vec::new();
    // Symbolic links are not followed (reported instead): a source never reaches outside its folder.
    let walk = walkdir::WalkDir::new(&root).min_depth(1).follow_links(false).into_iter().filter_entry(|e| {
        if !e.file_type().is_dir() {
            return true;
        }
        let rel = e.path().strip_prefix(&root).unwrap_or(e.path()).to_string_lossy().replace('\\', "/");
        !SKIP_DIRS.contains(&&*e.file_name().to_string_lossy())
            && !filter.ignore.as_ref().is_some_and(|g| g.is_match(&rel))
    });
    for e in walk.flatten() {
        let ft = e.file_type();
        if ft.is_dir() {
            continue;
        }
        let rel = e.path().strip_prefix(&root).unwrap_or(e.path()).to_string_lossy().replace('\\', "/");
        if ft.is_symlink() {
            skipped.push(Skipped { path: rel, reason: SkipReason::Symlink });
        } else if ft.is_file() && filter.wants(&rel) {
            let size = e.metadata().map(|m| m.len()).unwrap_or(0);
            if size > max_size {
                skipped.push(Skipped { path: rel, reason: SkipReason::TooLarge });
            } else {
                paths.push((rel, e.into_path(), size));
            }
        }
    }
    let files: Vec<Result<FileEntry>> = paths
        .into_par_iter()
        .map(|(rel, abs, size)| {
            let content = std::fs::read(&abs).with_context(|| format!("reading {}", abs.display()))?;
            let blob = gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &content)?;
            Ok(FileEntry { path: rel, blob, size: Some(size), content: Some(Arc::new(content)) })
        })
        .collect();
    let mut list = FileList { files: Vec::with_capacity(files.len()), skipped };
    for f in files {
        match f {
            Ok(f) => list.files.push(f),
            Err(e) => tracing::warn!("{e:#}"),
        }
    }
    list.files.sort_by(|a, b| a.path.cmp(&b.path));
    list.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(list)
}
