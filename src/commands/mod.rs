//! The commands only the command line has, one module per family: each declares its arguments
//! beside the function that runs it. The questions agents ask (search, impact…) are operations
//! of `ops::registry`, declared once for the CLI, MCP and the UI.

pub mod evaluate;
pub mod graph;
pub mod model;
pub mod serve;
pub mod setup;
pub mod share;
pub mod sources;
pub mod upkeep;

use crate::engine::{Engine, ModelChoice};
use crate::ops::registry::Scope;
use crate::progress::Progress;
use crate::sources::Sources;
use crate::workspace::Workspace;
use anyhow::Result;
use std::path::PathBuf;

/// What a command reads of the global options: where it runs, how it prints, which model.
#[derive(Debug, Clone, Default)]
pub struct Ctx {
    pub dir: Option<PathBuf>,
    pub json: bool,
    pub jsonl: bool,
    pub quiet: bool,
    pub model: Option<String>,
    pub no_dense: bool,
    pub workspace: Option<PathBuf>,
    /// Whether the command may download a missing model (indexing does; questions do not).
    pub downloads: bool,
}

impl Ctx {
    /// Progress lines only for a person: not under `--quiet`, `--json` or `--jsonl`.
    pub fn shows_progress(&self) -> bool {
        !self.quiet && !self.json && !self.jsonl
    }

    /// The repository the command runs in; text answers print paths relative to where it started.
    pub fn workspace(&self) -> Result<Workspace> {
        let ws = Workspace::open_from_env(self.dir.as_deref().unwrap_or(std::path::Path::new(".")))?;
        crate::present::set_worktree(ws.repo.workdir.as_deref());
        Ok(ws)
    }

    pub fn engine(&self) -> Result<Engine> {
        let ws = self.workspace()?;
        let model = self.model_choice(&ws);
        Ok(Engine::new(ws, Progress::new(self.shows_progress()), model))
    }

    fn model_choice(&self, ws: &Workspace) -> ModelChoice {
        let recorded = ModelChoice::recorded(&ws.store.root);
        ModelChoice::from(self.model.as_deref(), self.no_dense, &ws.config, self.downloads, recorded)
    }

    /// The repository and its configured sources, or the repositories of the workspace file.
    pub fn sources(&self) -> Result<Sources> {
        if let Some(file) = &self.workspace {
            let progress = Progress::new(self.shows_progress());
            return Sources::open_workspace(file, &progress, &|ws: &Workspace| self.model_choice(ws));
        }
        let e = std::sync::Arc::new(self.engine()?);
        let progress = e.progress.clone();
        Sources::open(e, crate::env::path(crate::env::RAG_CONFIG_PATH).as_deref(), &progress)
    }

    pub fn shell(&self) -> Shell<'_> {
        Shell { cx: self, repo: Default::default(), sources: Default::default() }
    }
}

/// The command line's scope: the repository, and the configured sources opened only when a
/// command names one (or `ALL`).
pub struct Shell<'a> {
    cx: &'a Ctx,
    repo: std::cell::OnceCell<Engine>,
    sources: std::cell::OnceCell<Sources>,
}

impl Scope for Shell<'_> {
    fn repository(&self) -> Result<&Engine> {
        if self.cx.workspace.is_some() {
            return Ok(&self.sources()?.main().engine);
        }
        if self.repo.get().is_none() {
            let _ = self.repo.set(self.cx.engine()?);
        }
        Ok(self.repo.get().expect("set above"))
    }
    fn sources(&self) -> Result<&Sources> {
        if self.sources.get().is_none() {
            let _ = self.sources.set(self.cx.sources()?);
        }
        Ok(self.sources.get().expect("set above"))
    }
    fn all_by_default(&self) -> bool {
        self.cx.workspace.is_some()
    }
    fn confined(&self) -> bool {
        false
    }
}
