//! Setting Lynx up for a repository and its people: `init` / `remove` for agent clients,
//! `mcp-config`, `rules`, `migrate-config`, git `hooks`, the manual and shell completions.

use super::Ctx;
use crate::ops::{self, Answer};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct InitArgs {
    /// claude | cursor | codex (default: cursor when `.cursor/` exists, else claude)
    #[arg(long)]
    pub client: Option<String>,
    /// Do not ask; Lynx never prompts when stdin is not a terminal either.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Write the configuration and rules but do not index now.
    #[arg(long)]
    pub no_index: bool,
}

#[derive(Args, Debug)]
pub struct RemoveArgs {
    /// Also delete this repository's index (`.lynx/`).
    #[arg(long)]
    pub store: bool,
}

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// The LynxMCP config.json (default: RAG_CONFIG_PATH, else ./config.json).
    pub file: Option<PathBuf>,
    /// Merge into .lynx/config.toml instead of printing.
    #[arg(long)]
    pub write: bool,
}

#[derive(Args, Debug)]
pub struct McpConfigArgs {
    /// claude | cursor | codex | generic
    #[arg(default_value = "generic")]
    pub client: String,
}

#[derive(Args, Debug)]
pub struct RulesArgs {
    /// claude | agents | cursor | lynx
    #[arg(default_value = "claude")]
    pub target: String,
    /// Print instead of writing the file.
    #[arg(long)]
    pub print: bool,
}

#[derive(Subcommand, Debug)]
pub enum HooksCmd {
    /// Install the hooks (existing hooks are kept and run first).
    Install,
    /// Remove the hooks (restoring the ones they chained).
    Uninstall,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write git-lynx.1 and git-lynx-<command>.1 instead of printing.
    #[arg(long)]
    pub install: bool,
    /// Where to install (default: share/man/man1 beside the PATH directory holding
    /// git-lynx, which man-db searches without MANPATH, e.g. ~/.cargo/share/man for
    /// ~/.cargo/bin; else ~/.local/share/man/man1). The first command run at a terminal
    /// installs them there when missing.
    #[arg(long = "dir", id = "man_dir", value_name = "DIR", requires = "install")]
    pub man_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

pub fn init(cx: &Ctx, a: &InitArgs) -> Result<Answer> {
    crate::integrate::init_answer(cx.dir.as_deref(), a.client.as_deref(), || {
        if a.no_index { Ok(None) } else { cx.engine().map(Some) }
    })
}

pub fn remove(cx: &Ctx, a: &RemoveArgs) -> Result<Answer> {
    let store_dir = if a.store { Some(cx.workspace()?.store.root.clone()) } else { None };
    crate::integrate::remove(cx.dir.as_deref(), store_dir.as_deref())
}

pub fn migrate_config(cx: &Ctx, a: &MigrateArgs) -> Result<Answer> {
    let file = a
        .file
        .clone()
        .or_else(|| crate::env::path(crate::env::RAG_CONFIG_PATH))
        .unwrap_or_else(|| PathBuf::from("config.json"));
    ops::setup::migrate_config(&file, if a.write { Some(cx.workspace()?) } else { None }.as_ref())
}

pub fn mcp_config(cx: &Ctx, a: &McpConfigArgs) -> Result<Answer> {
    crate::integrate::mcp_config(cx.dir.as_deref(), &a.client)
}

pub fn rules(cx: &Ctx, a: &RulesArgs) -> Result<Answer> {
    crate::integrate::rules(cx.dir.as_deref(), &a.target, a.print)
}

pub fn hooks(cx: &Ctx, what: &HooksCmd) -> Result<Answer> {
    let ws = cx.workspace()?;
    match what {
        HooksCmd::Install => crate::hooks::install(&ws),
        HooksCmd::Uninstall => crate::hooks::uninstall(&ws),
    }
}

/// `tree` is the whole command tree, whose help the pages render.
pub fn man(a: &ManArgs, tree: clap::Command) -> Result<Answer> {
    ops::setup::man(tree, a.install, a.man_dir.as_deref())
}

/// `tree` is the whole command tree the script completes.
pub fn completions(a: &CompletionsArgs, tree: clap::Command) -> Result<Answer> {
    let shell = a.shell;
    let mut buf = Vec::new();
    let mut cmd = tree.bin_name("git-lynx");
    clap_complete::generate(shell, &mut cmd, "git-lynx", &mut buf);
    let mut script = String::from_utf8_lossy(&buf).into_owned();
    if shell == clap_complete::Shell::Bash {
        // The subcommands keep the `git lynx` bin name the help text shows; name their
        // branches as the top-level function does.
        script = script.replace("git__subcmd__lynx", "git__lynx");
        // git's own completion calls `_git_lynx` for `git lynx …`: hand it the words as
        // if `git-lynx` had been typed.
        script.push_str(BASH_GIT_SHIM);
    }
    Ok(Answer::new("completions", None, serde_json::json!({"shell": shell.to_string()}), script))
}

const BASH_GIT_SHIM: &str = r#"
_git_lynx() {
    local -a COMP_WORDS=(git-lynx "${COMP_WORDS[@]:2}")
    local COMP_CWORD=$((COMP_CWORD - 1))
    _git__lynx git-lynx "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;
