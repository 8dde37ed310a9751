//! A workspace: the repository, its object store and its configuration, opened once per
//! command (or once per server).

use crate::config::Config;
use crate::repo::Repo;
use crate::store::Store;
use anyhow::Result;
use std::path::Path;

pub struct Workspace {
    pub repo: Repo,
    pub store: Store,
    pub config: Config,
    /// The store's shards opened so far (shared by every view of this process).
    pub shards: std::sync::Arc<crate::shard::Registry>,
}

impl Workspace {
    /// Opens the repository containing `path`, creating `.lynx` (excluded from commits via
    /// `info/exclude`) on first use.
    pub fn open(path: &Path) -> Result<Workspace> {
        Self::with_repo(Repo::discover(path)?)
    }

    /// The workspace a command runs in: as `open`, honouring git's `GIT_DIR` / `GIT_WORK_TREE`.
    pub fn open_from_env(path: &Path) -> Result<Workspace> {
        Self::with_repo(Repo::discover_from_env(path)?)
    }

    fn with_repo(repo: Repo) -> Result<Workspace> {
        let config = Config::load(repo.workdir.as_deref(), &repo.lynx_dir)?;
        let mut store = Store::open(&repo.lynx_dir, &config.store.trusted)?;
        store.remote = crate::store::remote::configured(None, &config).map(|c| c.url);
        // Checked every time: `.lynx` may have been created by hand (a config file) first.
        exclude_store(&repo)?;
        Ok(Workspace { repo, store, config, shards: Default::default() })
    }

    pub fn root(&self) -> &Path {
        &self.store.root
    }
}

/// Adds `/.lynx/` to the repository's `info/exclude` so the store never shows as untracked.
fn exclude_store(repo: &Repo) -> Result<()> {
    if repo.lynx_dir.file_name().is_none_or(|n| n != ".lynx") {
        return Ok(()); // bare repository: the store lives inside the git directory
    }
    let path = repo.common_dir.join("info").join("exclude");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current.lines().any(|l| matches!(l.trim(), "/.lynx/" | "/.lynx" | ".lynx/" | ".lynx")) {
        return Ok(());
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# Lynx code index (git lynx)\n/.lynx/\n");
    crate::fsutil::write_atomic(&path, text.as_bytes())
}
