//! `migrate-config`: LynxMCP settings carried over to Lynx's.

use super::Answer;
use crate::error;
use crate::workspace::Workspace;
use anyhow::{Context, Result};
use std::path::Path;

/// The Lynx settings a LynxMCP `config.json` amounts to; merged into `.lynx/config.toml` when
/// `write_to` is given (and checked to load), printed otherwise.
pub fn migrate_config(file: &Path, write_to: Option<&Workspace>) -> Result<Answer> {
    if !file.is_file() {
        return Err(error::usage(format!(
            "no LynxMCP config at {} (name the file: `git lynx migrate-config path/to/config.json`)",
            file.display()
        )));
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
