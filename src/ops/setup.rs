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
        return Err(error::usage(format!("no LynxMCP config at {} (name the file: `git lynx migrate-config path/to/config.json`)", file.display())));
    }
    let (table, skipped) = crate::sources::migrate_lynxmcp(file)?;
    let mut text = String::new();
    let written = match write_to {
        Some(ws) => {
            let path = crate::sources::write_migrated(&ws.store.root, table.clone())?;
            // What was written must load.
            crate::config::Config::load(ws.repo.workdir.as_deref(), &ws.store.root)
                .with_context(|| format!("the migrated settings in {} do not load; fix or remove them", path.display()))?;
            text.push_str(&format!("wrote the settings of {} to {}\n", file.display(), path.display()));
            Some(path.display().to_string())
        }
        None => {
            text.push_str(&format!("# Lynx settings from {} (for .lynx/config.toml; `--write` merges them)\n", file.display()));
            text.push_str(&toml::to_string_pretty(&table)?);
            None
        }
    };
    for s in &skipped {
        text.push_str(&format!("# not carried over: {s}\n"));
    }
    Ok(Answer::new("migrate_config", None, serde_json::json!({"file": file.display().to_string(), "settings": table, "not_carried_over": skipped, "written": written}), text))
}
