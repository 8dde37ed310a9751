//! `migrate-config`: LynxMCP settings carried over to Lynx's; `man`: the manual pages.

use super::Answer;
use crate::workspace::Workspace;
use anyhow::{Context, Result};
use std::path::Path;

crate::error::errors! {
    /// A setup step that has nothing to work from.
    pub enum SetupError: Usage {
        NoLynxMcpConfig { path: String } =>
            "no LynxMCP config at {path} (name the file: `git lynx migrate-config path/to/config.json`)",
    }
}

/// The Lynx settings a LynxMCP `config.json` amounts to; merged into `.lynx/config.toml` when
/// `write_to` is given (and checked to load), printed otherwise.
pub fn migrate_config(file: &Path, write_to: Option<&Workspace>) -> Result<Answer> {
    if !file.is_file() {
        return Err(SetupError::NoLynxMcpConfig { path: file.display().to_string() }.into());
    }
    let (mut table, mut skipped) = crate::sources::migrate_lynxmcp(file)?;
    let mut text = String::new();
    let written = match write_to {
        Some(ws) => {
            if let Some(rel) = tracked_in(ws, file) {
                // A committed file is the repository's word, not the user's: it is carried over
                // with the restrictions of a committed lynx.toml, and names no model to fetch.
                let root = ws.repo.workdir.clone().unwrap_or_default();
                for w in crate::config::restrict_team_table(&mut table, &root) {
                    skipped.push(format!("{w} ({rel} is committed to the repository)"));
                }
                if let Some(toml::Value::Table(model)) = table.get_mut("model") {
                    for key in ["name", "reranker"] {
                        if model.remove(key).is_some() {
                            skipped.push(format!(
                                "model.{key} ({rel} is committed to the repository, and a committed file may not choose a model to download; set it yourself)"
                            ));
                        }
                    }
                    if model.is_empty() {
                        table.remove("model");
                    }
                }
                if let Some(toml::Value::Table(tools)) = table.get_mut("tools") {
                    let (profile, include) = (tools.remove("profile"), tools.remove("include"));
                    if profile.is_some() || include.is_some() {
                        skipped.push(format!("tools.profile / tools.include ({rel} is committed to the repository, and a committed file may not widen the tools an agent gets)"));
                    }
                }
            }
            let path = crate::sources::write_migrated(&ws.store.root, table.clone())?;
            // What was written must load.
            crate::config::Config::load(ws.repo.workdir.as_deref(), &ws.store.root).with_context(|| {
                format!("the migrated settings in {} do not load; fix or remove them", path.display())
            })?;
            text.push_str(&format!("wrote the settings of {} to {}\n", file.display(), path.display()));
            Some(path.display().to_string())
        }
        None => {
            text.push_str(&format!(
                "# Lynx settings from {} (for .lynx/config.toml; `--write` merges them)\n",
                file.display()
            ));
            text.push_str(&toml::to_string_pretty(&table)?);
            None
        }
    };
    for s in &skipped {
        text.push_str(&format!("# not carried over: {s}\n"));
    }
    Ok(Answer::new(
        "migrate_config",
        None,
        Migrated { file: file.display().to_string(), settings: table, not_carried_over: skipped, written },
        text,
    ))
}

/// The repository-relative path of `file` when git tracks it in this repository.
fn tracked_in(ws: &Workspace, file: &Path) -> Option<String> {
    let root = ws.repo.workdir.as_ref()?.canonicalize().ok()?;
    let abs = file.canonicalize().ok()?;
    let rel = abs.strip_prefix(&root).ok()?.to_string_lossy().replace('\\', "/");
    ws.repo.explain_path(&rel).ok().filter(|f| f.tracked).map(|_| rel)
}

/// Renders one manual page; the synopsis is clap's own usage line (clap_mangen's drops option
/// values: `[-C ]`).
fn render_page(mut cmd: clap::Command) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let usage = cmd.render_usage().to_string();
    let usage = usage.trim_start_matches("Usage:").trim().to_string();
    let cmd = cmd.override_usage(usage);
    clap_mangen::Man::new(cmd).render(&mut buf)?;
    Ok(buf)
}

/// The manual pages of the command tree `root`: `git-lynx.1` and one per visible command
/// (`git-lynx-search.1`), printed or installed.
pub fn man(root: clap::Command, install: bool, dir: Option<&std::path::Path>) -> Result<Answer> {
    if !install {
        let page = render_page(root)?;
        return Ok(Answer::new(
            "man",
            None,
            ManPages { page: Some("git-lynx.1"), dir: None, pages: Vec::new() },
            String::from_utf8_lossy(&page).into_owned(),
        ));
    }
    let (dir, written) = match dir {
        Some(d) => (d.to_path_buf(), install_pages(&root, d)?),
        None => install_default(&root)?,
    };
    let man_root = dir.parent().unwrap_or(&dir).to_path_buf();
    let text = if man_finds(&man_root) {
        format!(
            "installed {} manual pages in {}\n`git lynx --help`, `git help lynx` and `man git-lynx` now show them\n",
            written.len(),
            dir.display()
        )
    } else {
        format!(
            "installed {} manual pages in {}\n{} is not on MANPATH: `export MANPATH=\"{}:$MANPATH\"` for `man git-lynx` and `git help lynx` to find them\n",
            written.len(),
            dir.display(),
            man_root.display(),
            man_root.display()
        )
    };
    Ok(Answer::new("man", None, ManPages { page: None, dir: Some(dir.display().to_string()), pages: written }, text))
}

/// LynxMCP settings as Lynx's, what could not be carried over, and where they were written.
#[derive(Debug, serde::Serialize)]
pub struct Migrated {
    pub file: String,
    pub settings: toml::Table,
    pub not_carried_over: Vec<String>,
    pub written: Option<String>,
}

/// The page printed, or the directory the pages were installed in and their names.
#[derive(Debug, serde::Serialize)]
pub struct ManPages {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<String>,
}

results!(Migrated, ManPages);

/// Installs the manual pages when `git-lynx.1` is in none of the default places, or is another
/// version's; the first command run on a fresh install calls this so that `git lynx --help`
/// (git's `man git-lynx`) finds a page. Returns the directory written to, `None` when nothing
/// was needed or nothing could be written (a read-only install is no error for the command
/// that happened to run).
pub fn install_man_if_missing(root: &clap::Command) -> Option<std::path::PathBuf> {
    let candidates = default_man_dirs();
    let current = format!("{} {}", root.get_name(), root.get_version().unwrap_or_default());
    let installed = candidates.iter().any(|d| {
        // The page's title line names the version it documents (`.TH git-lynx 1 "git-lynx 0.4.0"`).
        std::fs::read(d.join("git-lynx.1")).is_ok_and(|page| {
            let head = String::from_utf8_lossy(&page[..page.len().min(2048)]).into_owned();
            head.lines().any(|l| l.starts_with(".TH") && l.contains(&current))
        })
    });
    if installed {
        return None;
    }
    match install_default(root) {
        Ok((dir, _)) => Some(dir),
        Err(e) => {
            tracing::debug!("the manual pages were not installed: {e:#}");
            None
        }
    }
}

/// Where `man --install` puts the pages, in order of preference: `share/man/man1` beside the
/// directory of the `git-lynx` that runs (found on PATH as git finds it, so a symlinked binary
/// counts where its link is), which man-db searches for every directory on PATH
/// (`~/.cargo/bin` → `~/.cargo/share/man`); else `~/.local/share/man/man1`.
fn default_man_dirs() -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    if let Some(bin) = running_bin_dir() {
        dirs.push(bin.parent().unwrap_or(&bin).join("share").join("man").join("man1"));
    }
    if let Some(home) = crate::env::path(crate::env::HOME) {
        let local = home.join(".local").join("share").join("man").join("man1");
        if !dirs.contains(&local) {
            dirs.push(local);
        }
    }
    dirs
}

/// The PATH directory whose `git-lynx` is this binary (the one git runs for `git lynx`), else
/// the binary's own directory.
fn running_bin_dir() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let real = exe.canonicalize().unwrap_or_else(|_| exe.clone());
    let on_path = crate::env::get_os(crate::env::PATH).and_then(|p| {
        std::env::split_paths(&p)
            .filter(|d| d.is_absolute())
            .find(|d| d.join("git-lynx").canonicalize().is_ok_and(|c| c == real))
    });
    on_path.or_else(|| exe.parent().map(Path::to_path_buf))
}

/// Writes the pages into the first default directory that takes them.
fn install_default(root: &clap::Command) -> Result<(std::path::PathBuf, Vec<String>)> {
    let mut failures = Vec::new();
    for dir in default_man_dirs() {
        match install_pages(root, &dir) {
            Ok(written) => return Ok((dir, written)),
            Err(e) => failures.push(format!("{e:#}")),
        }
    }
    anyhow::bail!(
        "could not install the manual pages ({}); name a writable directory with `git lynx man --install --dir DIR`",
        if failures.is_empty() { "no HOME and no binary directory".to_string() } else { failures.join("; ") }
    )
}

fn install_pages(root: &clap::Command, dir: &Path) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for sub in root.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        let name = format!("git-lynx-{}", sub.get_name());
        // clap names are 'static; a handful of short strings for the life of one command.
        let page = render_page(sub.clone().name(&*Box::leak(name.clone().into_boxed_str())))?;
        let path = dir.join(format!("{name}.1"));
        crate::fsutil::write_atomic(&path, &page)?;
        written.push(path.display().to_string());
    }
    // The main page last: its presence says the set is complete.
    let path = dir.join("git-lynx.1");
    crate::fsutil::write_atomic(&path, &render_page(root.clone())?)?;
    written.insert(0, path.display().to_string());
    Ok(written)
}

/// Whether man-db looks in `man_root`: MANPATH when set (an empty element adds the default
/// search), else the standard trees and, for each directory on PATH, `../share/man`, `../man`,
/// `share/man` and `man` beside it.
fn man_finds(man_root: &Path) -> bool {
    let standard = ["/usr/share/man", "/usr/local/share/man", "/usr/local/man", "/usr/man"];
    let by_path = || {
        standard.iter().any(|p| man_root == Path::new(p))
            || crate::env::get_os(crate::env::PATH).is_some_and(|p| {
                std::env::split_paths(&p).filter(|d| d.is_absolute()).any(|d| {
                    let up = d.parent().unwrap_or(&d);
                    [up.join("share/man"), up.join("man"), d.join("share/man"), d.join("man")]
                        .iter()
                        .any(|c| c == man_root)
                })
            })
    };
    match crate::env::get_os(crate::env::MANPATH) {
        Some(m) => {
            let parts: Vec<_> = std::env::split_paths(&m).collect();
            parts.iter().any(|p| p == man_root) || (parts.iter().any(|p| p.as_os_str().is_empty()) && by_path())
        }
        None => by_path(),
    }
}
