//! Git access through gix: finding the repository and its Lynx store, resolving revisions,
//! listing the files of a tree or of the working tree (with git's own blob ids), reading blob
//! content, and the path-level reasons a file is left out.

pub mod explain;
pub mod folder;
pub mod history;
mod settled;
mod stamp;
mod untracked;
pub mod worktree;

use crate::lang;
use anyhow::{Context, Result, bail};
use gix::ObjectId;
use gix::bstr::ByteSlice;
use std::path::{Path, PathBuf};
use std::sync::Arc;

crate::error::errors! {
    /// What keeps a directory, a revision or a path pattern from naming something in git.
    pub enum RepoError: Usage {
        NoDirectory { path: String, why: String } => "no such directory: {path} ({why})",
        NotARepository { path: String, hint: &'static str, why: String } =>
            "{path} is not inside a git repository{hint} ({why}); run `git init` or pass -C <repo>",
        Bare {} => "this is a bare repository: the working tree view needs a checkout (use --rev)",
        Unborn { rev: String } =>
            "`{rev}`: the repository has no commits yet (the branch is unborn); commit first, or leave out --rev to ask about the working tree",
        UnknownRevision { rev: String, why: String } =>
            "unknown revision `{rev}`: {why} (try a branch, tag, commit id or HEAD~N)",
        NotACommit { rev: String, why: String } => "`{rev}` does not point at a commit: {why}",
        InvalidGlob { what: String, given: String, why: String } => "invalid {what} `{given}`: {why}",
    }
}

/// An opened repository. Cheap to share between threads (`local()` per thread).
pub struct Repo {
    sync: gix::ThreadSafeRepository,
    /// Canonical root of this checkout (None for bare repositories).
    pub workdir: Option<PathBuf>,
    /// Canonical git directory shared by all worktrees (`.git` of the main worktree).
    pub common_dir: PathBuf,
    /// Where Lynx keeps its store: beside the main worktree's `.git` (shared by linked
    /// worktrees), or inside the git directory of a bare repository.
    pub lynx_dir: PathBuf,
}

/// Why a path is not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    Binary,
    TooLarge,
    LfsPointer,
    Submodule,
    Symlink,
    Generated,
    Vendored,
    NoDiff,
    Excluded,
    Unreadable,
}

impl SkipReason {
    pub const ALL: [SkipReason; 10] = [
        SkipReason::Binary,
        SkipReason::TooLarge,
        SkipReason::LfsPointer,
        SkipReason::Submodule,
        SkipReason::Symlink,
        SkipReason::Generated,
        SkipReason::Vendored,
        SkipReason::NoDiff,
        SkipReason::Excluded,
        SkipReason::Unreadable,
    ];

    /// The reason `name` names (the inverse of `name`).
    pub fn from_name(name: &str) -> Option<SkipReason> {
        SkipReason::ALL.into_iter().find(|r| r.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::TooLarge => "too_large",
            SkipReason::LfsPointer => "lfs_pointer",
            SkipReason::Submodule => "submodule",
            SkipReason::Symlink => "symlink",
            SkipReason::Generated => "generated",
            SkipReason::Vendored => "vendored",
            SkipReason::NoDiff => "no_diff",
            SkipReason::Excluded => "excluded",
            SkipReason::Unreadable => "unreadable",
        }
    }

    pub fn explain(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary content (a NUL byte in the first 8 KiB, and no UTF-16 byte-order mark)",
            SkipReason::TooLarge => "larger than the size cap (index.max_file_size)",
            SkipReason::LfsPointer => "a Git LFS pointer, not the file's content",
            SkipReason::Submodule => "a submodule (gitlink)",
            SkipReason::Symlink => "a symbolic link",
            SkipReason::Generated => {
                "generated: marked linguist-generated in .gitattributes, or a minified file, source map or lockfile by its name (`-linguist-generated` keeps it)"
            }
            SkipReason::Vendored => "marked linguist-vendored in .gitattributes",
            SkipReason::NoDiff => "marked -diff in .gitattributes",
            SkipReason::Excluded => "matched an index.exclude pattern in the Lynx configuration",
            SkipReason::Unreadable => "could not be read",
        }
    }
}

/// A file of a view: where it is and which blob it holds.
#[derive(Debug, Clone)]
pub struct FileEntry {
    pub path: String,
    pub blob: ObjectId,
    /// Size in bytes when known without reading the object (working-tree files).
    pub size: Option<u64>,
    /// Content already in memory (working-tree files that are not in git's object database).
    pub content: Option<Arc<Vec<u8>>>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: SkipReason,
}

/// The files of a tree or of the working tree, before content-level checks.
#[derive(Debug, Default, Clone)]
pub struct FileList {
    pub files: Vec<FileEntry>,
    pub skipped: Vec<Skipped>,
}

/// A resolved revision.
#[derive(Debug, Clone, Copy)]
pub struct Resolved {
    pub commit: ObjectId,
    pub tree: ObjectId,
}

/// Whether git tracks `.lynx` (or anything under it) in this checkout's index.
fn store_is_committed(repo: &gix::Repository) -> bool {
    let Ok(index) = repo.index_or_empty() else { return false };
    index.entries().iter().any(|e| {
        let p = e.path(&index);
        p == ".lynx" || p.starts_with(b".lynx/")
    })
}

impl Repo {
    /// Opens the repository containing `path` (any subdirectory, linked worktrees included).
    pub fn discover(path: &Path) -> Result<Repo> {
        Self::discover_with(path, false)
    }

    /// The repository a command runs in, found as git finds it: `GIT_DIR` and `GIT_WORK_TREE`
    /// (which `git --git-dir=… lynx` sets) when present, else upwards from `path`.
    pub fn discover_from_env(path: &Path) -> Result<Repo> {
        Self::discover_with(path, true)
    }

    fn discover_with(path: &Path, environment: bool) -> Result<Repo> {
        let abs = path
            .canonicalize()
            .map_err(|e| RepoError::NoDirectory { path: path.display().to_string(), why: e.to_string() })?;
        let found = if environment { gix::discover_with_environment_overrides(&abs) } else { gix::discover(&abs) };
        let repo = found.map_err(|e| {
            let hint = if environment && crate::env::is_set(crate::env::GIT_DIR) { " (GIT_DIR is set)" } else { "" };
            RepoError::NotARepository { path: abs.display().to_string(), hint, why: e.to_string() }
        })?;
        let workdir = repo.workdir().map(|w| w.canonicalize()).transpose()?;
        let common_dir = repo.common_dir().canonicalize()?;
        let mut lynx_dir = match (repo.kind(), common_dir.file_name()) {
            // The main worktree's root is the parent of the common `.git` directory.
            (_, Some(name)) if name == ".git" => common_dir.parent().unwrap_or(&common_dir).join(".lynx"),
            _ => common_dir.join("lynx"),
        };
        // A `.lynx` that arrived with the repository is untrusted content: its objects,
        // catalogs and configuration are never used. The store moves into the git directory.
        if lynx_dir.file_name().is_some_and(|n| n == ".lynx")
            && lynx_dir.symlink_metadata().is_ok()
            && store_is_committed(&repo)
        {
            tracing::warn!(
                "this repository commits a `.lynx` directory; Lynx never uses committed store content, so its own store is {}",
                common_dir.join("lynx").display()
            );
            lynx_dir = common_dir.join("lynx");
        }
        let sync = repo.into_sync();
        Ok(Repo { sync, workdir, common_dir, lynx_dir })
    }

    /// A repository handle for the current thread.
    pub fn local(&self) -> gix::Repository {
        let mut r = self.sync.to_thread_local();
        r.object_cache_size_if_unset(4 * 1024 * 1024);
        r
    }

    pub fn workdir(&self) -> Result<&Path> {
        self.workdir.as_deref().ok_or_else(|| RepoError::Bare {}.into())
    }

    pub fn object_hash(&self) -> gix::hash::Kind {
        self.sync.to_thread_local().object_hash()
    }

    /// Resolves `HEAD`, a branch, tag, abbreviated id, `HEAD~3`, … to a commit and its tree.
    pub fn resolve(&self, rev: &str) -> Result<Resolved> {
        let repo = self.local();
        let id = repo.rev_parse_single(rev).map_err(|e| {
            // On an unborn branch every HEAD-relative revision fails the same opaque way.
            let unborn = repo.head().is_ok_and(|h| h.is_unborn());
            if unborn && (rev.starts_with("HEAD") || rev.starts_with('@')) {
                RepoError::Unborn { rev: rev.to_string() }
            } else {
                RepoError::UnknownRevision { rev: rev.to_string(), why: e.to_string() }
            }
        })?;
        let commit = id
            .object()?
            .peel_to_commit()
            .map_err(|e| RepoError::NotACommit { rev: rev.to_string(), why: e.to_string() })?;
        let tree = commit.tree_id()?.detach();
        Ok(Resolved { commit: commit.id, tree })
    }

    /// HEAD's commit, or None on an unborn branch.
    pub fn head(&self) -> Result<Option<Resolved>> {
        let repo = self.local();
        let mut head = repo.head()?;
        match head.try_peel_to_id()? {
            Some(id) => {
                let commit = id.object()?.peel_to_commit()?;
                Ok(Some(Resolved { commit: commit.id, tree: commit.tree_id()?.detach() }))
            }
            None => Ok(None),
        }
    }

    /// The files of a tree, in git's path order, with path-level skips applied.
    pub fn tree_files(&self, tree: ObjectId) -> Result<FileList> {
        self.with_kept(|repo| Repo::list_tree(repo, tree))
    }

    /// Runs `f` with this thread's long-lived handle on the repository. A fresh handle starts
    /// with empty object and delta caches, and listing a revision's tree re-inflated every
    /// delta chain under it: the kept one reuses the trees and bases that revisions share.
    fn with_kept<R>(&self, f: impl FnOnce(&gix::Repository) -> R) -> R {
        thread_local! {
            static KEPT: std::cell::RefCell<Vec<(PathBuf, gix::Repository)>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            let i = match kept.iter().position(|(dir, _)| *dir == self.common_dir) {
                Some(i) => i,
                None => {
                    // One or two repositories per process; more means tests or sources come and go.
                    if kept.len() >= 4 {
                        kept.remove(0);
                    }
                    let mut repo = self.local();
                    // Room for the bases of a few trees' delta chains (depth 50 by default),
                    // where the default keeps 64 entries and a chain evicted its own bases.
                    repo.objects.set_pack_cache(|| {
                        Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(16 * 1024 * 1024))
                    });
                    kept.push((self.common_dir.clone(), repo));
                    kept.len() - 1
                }
            };
            f(&kept[i].1)
        })
    }

    fn list_tree(repo: &gix::Repository, tree: ObjectId) -> Result<FileList> {
        let index = repo.index_from_tree(&tree).with_context(|| format!("reading tree {tree}"))?;
        let mut list = FileList::default();
        for e in index.entries() {
            let path = e.path(&index).to_str_lossy().into_owned();
            match mode_skip(e.mode) {
                Some(reason) => list.skipped.push(Skipped { path, reason }),
                None => list.files.push(FileEntry { path, blob: e.id, size: None, content: None }),
            }
        }
        let state = gix::worktree::IndexPersistedOrInMemory::InMemory(index);
        apply_attributes(repo, &state, gix::worktree::stack::state::attributes::Source::IdMapping, &mut list)?;
        Ok(list)
    }

    /// Reads a blob's content from the object database.
    pub fn read_blob(repo: &gix::Repository, id: ObjectId) -> Result<Vec<u8>> {
        Ok(repo.find_blob(id).with_context(|| format!("reading blob {id}"))?.detach().data)
    }

    /// Size of an object without reading its content.
    pub fn blob_size(repo: &gix::Repository, id: ObjectId) -> Result<u64> {
        Ok(repo.find_header(id).with_context(|| format!("reading object header {id}"))?.size())
    }
}

fn mode_skip(mode: gix::index::entry::Mode) -> Option<SkipReason> {
    use gix::index::entry::Mode;
    if mode.contains(Mode::COMMIT) {
        Some(SkipReason::Submodule)
    } else if mode.contains(Mode::SYMLINK) {
        Some(SkipReason::Symlink)
    } else {
        None
    }
}

/// Applies `linguist-generated`, `linguist-vendored` and `-diff` from `.gitattributes` (the
/// tree's own files for a revision, the working tree's for the working tree).
pub(crate) fn apply_attributes(
    repo: &gix::Repository,
    index: &gix::worktree::IndexPersistedOrInMemory,
    source: gix::worktree::stack::state::attributes::Source,
    list: &mut FileList,
) -> Result<()> {
    let has_attributes = list.files.iter().any(|f| f.path == ".gitattributes" || f.path.ends_with("/.gitattributes"))
        || list.skipped.iter().any(|f| f.path.ends_with(".gitattributes"))
        || repo.common_dir().join("info").join("attributes").exists();
    let mut attrs = if has_attributes {
        let stack = repo.attributes_only(index, source)?;
        let out = stack.selected_attribute_matches(["linguist-generated", "linguist-vendored", "diff"]);
        Some((stack, out))
    } else {
        None
    };
    let mut keep = Vec::with_capacity(list.files.len());
    for f in std::mem::take(&mut list.files) {
        let mut reason = None;
        let mut generated = None;
        if let Some((stack, out)) = attrs.as_mut() {
            out.reset();
            stack.at_entry(f.path.as_str(), None)?.matching_attributes(out);
            for m in out.iter_selected() {
                let set = match m.assignment.state {
                    gix::attrs::StateRef::Set => true,
                    gix::attrs::StateRef::Value(v) => v.as_bstr() != "false",
                    _ => false,
                };
                match (m.assignment.name.as_str(), m.assignment.state) {
                    ("linguist-generated", gix::attrs::StateRef::Unspecified) => {}
                    ("linguist-generated", _) => generated = Some(set),
                    ("linguist-vendored", _) if set => reason = reason.or(Some(SkipReason::Vendored)),
                    ("diff", gix::attrs::StateRef::Unset) => reason = reason.or(Some(SkipReason::NoDiff)),
                    _ => {}
                }
            }
        }
        // `-linguist-generated` (or `=false`) keeps a file the name rule would leave out.
        if generated.unwrap_or_else(|| generated_by_name(&f.path)) {
            reason = Some(SkipReason::Generated);
        }
        match reason {
            Some(reason) => list.skipped.push(Skipped { path: f.path, reason }),
            None => keep.push(f),
        }
    }
    list.files = keep;
    Ok(())
}

/// Files that are generated by their name, as GitHub's linguist sees them: minified scripts
/// and styles, source maps and package-manager lockfiles. Their text is noise to a search.
pub fn generated_by_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    const SUFFIXES: &[&str] = &[
        ".min.js",
        ".min.mjs",
        ".min.cjs",
        ".min.css",
        ".js.map",
        ".mjs.map",
        ".css.map",
        "-min.js",
        ".bundle.min.js",
    ];
    const LOCKFILES: &[&str] = &[
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "cargo.lock",
        "go.sum",
        "composer.lock",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "gemfile.lock",
        "podfile.lock",
        "packages.lock.json",
        "flake.lock",
        "mix.lock",
        "pubspec.lock",
    ];
    SUFFIXES.iter().any(|s| name.ends_with(s)) || LOCKFILES.contains(&name.as_str())
}

/// Content-level reasons to skip a blob: binary (NUL in the first 8 KiB) or an LFS pointer.
pub fn content_skip(content: &[u8]) -> Option<SkipReason> {
    if content.starts_with(b"version https://git-lfs.github.com/spec/") {
        return Some(SkipReason::LfsPointer);
    }
    let head = &content[..content.len().min(8192)];
    (head.contains(&0) && !crate::encoding::is_utf16(content)).then_some(SkipReason::Binary)
}

/// Language hint stored with a blob's objects: the path decides the language except for `.h`
/// and extensionless files, which are decided by content (hint 255).
pub fn lang_hint(path: &str) -> u8 {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".h") {
        return 255;
    }
    match lang::by_path(path) {
        Some(l) => l as u8,
        None => 255,
    }
}

/// The hex id of an object.
pub fn hex(id: &ObjectId) -> String {
    id.to_hex().to_string()
}

pub fn parse_oid(hex: &str) -> Result<ObjectId> {
    ObjectId::from_hex(hex.as_bytes()).map_err(|e| anyhow::anyhow!("invalid object id `{hex}`: {e}"))
}

pub fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<()> {
    if !cond {
        bail!(msg());
    }
    Ok(())
}

/// Globs from `index.exclude` and source `ignore` lists (see `path_globs`).
pub fn exclude_set(patterns: &[String]) -> Result<Option<globset::GlobSet>> {
    path_globs(patterns.iter().map(String::as_str), "index.exclude pattern")
}

/// The one rule for path globs, gitignore-like: a pattern without `/` matches at any depth
/// (`*.rs`, `vendor`); one with `/` is anchored at the root (a leading `/` only says so); `*`
/// also crosses `/`; a pattern without wildcards also covers everything under it (a folder).
pub fn path_globs<'a>(patterns: impl IntoIterator<Item = &'a str>, what: &str) -> Result<Option<globset::GlobSet>> {
    let mut b = globset::GlobSetBuilder::new();
    let mut any = false;
    for given in patterns {
        let glob = |p: &str| {
            globset::GlobBuilder::new(p).literal_separator(false).build().map_err(|e| RepoError::InvalidGlob {
                what: what.to_string(),
                given: given.to_string(),
                why: e.kind().to_string(),
            })
        };
        let p = given;
        let p = p.trim_start_matches('/');
        let pat = if p.contains('/') { p.to_string() } else { format!("**/{p}") };
        b.add(glob(&pat)?);
        if !p.contains(['*', '?', '[', '{']) {
            b.add(glob(&format!("{}/**", pat.trim_end_matches('/')))?);
        }
        any = true;
    }
    Ok(if any { Some(b.build()?) } else { None })
}

#[cfg(test)]
mod glob_tests {
    #[test]
    fn one_rule_for_path_globs() {
        let set = super::path_globs(["*.md", "/src/gen/*.rs", "vendor", "docs/api"], "test").unwrap().unwrap();
        for yes in [
            "README.md",
            "a/b/NOTES.md",
            "src/gen/x.rs",
            "src/gen/deep/y.rs",
            "vendor/lib.c",
            "x/vendor/y/z.c",
            "docs/api/index.html",
            "docs/api",
        ] {
            assert!(set.is_match(yes), "{yes} should match");
        }
        for no in ["src/main.rs", "other/src/gen/x.rs", "vendored.c", "docs/apis/x", "xdocs/api/y"] {
            assert!(!set.is_match(no), "{no} should not match");
        }
        assert!(super::path_globs(Vec::<&str>::new(), "test").unwrap().is_none());
        let err = super::path_globs(["a[b"], "--glob").unwrap_err().to_string();
        assert!(err.contains("invalid --glob `a[b`"), "{err}");
    }
}

#[cfg(test)]
mod error_tests {
    use super::{Repo, RepoError};
    use crate::error::{Kind, find};

    fn git(dir: &std::path::Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn what_names_no_commit_is_a_typed_usage_error_with_its_fix() {
        let outside = tempfile::tempdir().unwrap();
        let e = Repo::discover(outside.path()).err().expect("not a repository");
        assert!(matches!(find::<RepoError>(&e), Some(RepoError::NotARepository { .. })), "{e:#}");
        assert_eq!(Kind::of(&e), Kind::Usage);

        let d = tempfile::tempdir().unwrap();
        git(d.path(), &["init", "-q"]);
        let repo = Repo::discover(d.path()).unwrap();
        let e = repo.resolve("HEAD~1").unwrap_err();
        assert_eq!(find::<RepoError>(&e), Some(&RepoError::Unborn { rev: "HEAD~1".into() }), "{e:#}");
        std::fs::write(d.path().join("a.txt"), "a\n").unwrap();
        git(d.path(), &["add", "a.txt"]);
        git(d.path(), &["commit", "-q", "-m", "a"]);
        let e = repo.resolve("no-such-branch").unwrap_err();
        match find::<RepoError>(&e) {
            Some(RepoError::UnknownRevision { rev, .. }) => assert_eq!(rev, "no-such-branch"),
            other => panic!("{other:?}: {e:#}"),
        }
        assert!(e.to_string().contains("try a branch, tag, commit id or HEAD~N"), "{e}");
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        assert!(repo.resolve("HEAD").is_ok());
    }
}
