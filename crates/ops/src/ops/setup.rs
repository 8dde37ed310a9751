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
        serde_json::json!({"file": file.display().to_string(), "settings": table, "not_carried_over": skipped, "written": written}),
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

/// The manual pages of the command tree `root`: `git-lynx.1` and one per visible command
/// (`git-lynx-search.1`), printed or installed.
pub fn man(root: clap::Command, install: bool, dir: Option<&std::path::Path>) -> Result<Answer> {
    let render = |mut cmd: clap::Command| -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        // The manual's synopsis is clap's own usage line: clap_mangen's drops option values
        // (`[-C ]`).
        let usage = cmd.render_usage().to_string();
        let usage = usage.trim_start_matches("Usage:").trim().to_string();
        let cmd = cmd.override_usage(usage);
        clap_mangen::Man::new(cmd).render(&mut buf)?;
        Ok(buf)
    };
    if !install {
        let page = render(root)?;
        return Ok(Answer::new(
            "man",
            None,
            serde_json::json!({"page": "git-lynx.1"}),
            String::from_utf8_lossy(&page).into_owned(),
        ));
    }
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => {
            let exe = std::env::current_exe().context("locating the git-lynx binary")?;
            let bin = exe.parent().context("the binary has no directory")?;
            bin.parent().unwrap_or(bin).join("share").join("man").join("man1")
        }
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for sub in root.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        let name = format!("git-lynx-{}", sub.get_name());
        // clap names are 'static; a handful of short strings for the life of one command.
        let page = render(sub.clone().name(&*Box::leak(name.clone().into_boxed_str())))?;
        let path = dir.join(format!("{name}.1"));
        crate::fsutil::write_atomic(&path, &page)?;
        written.push(path.display().to_string());
    }
    let path = dir.join("git-lynx.1");
    crate::fsutil::write_atomic(&path, &render(root)?)?;
    written.insert(0, path.display().to_string());
    // `man` finds pages under MANPATH or the system's standard trees only.
    let man_root = dir.parent().unwrap_or(&dir).to_path_buf();
    let on_manpath = crate::env::get_os(crate::env::MANPATH)
        .is_some_and(|m| std::env::split_paths(&m).any(|p| p == man_root))
        || ["/usr/share/man", "/usr/local/share/man"].iter().any(|p| man_root == std::path::Path::new(p));
    let text = if on_manpath {
        format!(
            "installed {} manual pages in {}\n`man git-lynx` and `git help lynx` now show them\n",
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
    Ok(Answer::new("man", None, serde_json::json!({"dir": dir.display().to_string(), "pages": written}), text))
}
