//! `source add | remove`: the named folders and repositories searched beside this one, kept in
//! the local configuration (`.lynx/config.toml`), never in the committed team file.

use super::Answer;
use crate::error;
use crate::workspace::Workspace;
use anyhow::Result;

/// What `source add` is asked for.
pub struct AddArgs<'a> {
    pub name: &'a str,
    pub path: &'a str,
    pub extensions: &'a [String],
    pub ignore: &'a [String],
    pub graph: bool,
    pub description: &'a str,
}

pub fn add(ws: &Workspace, a: &AddArgs) -> Result<Answer> {
    crate::config::check_source_name(a.name)?;
    let exists = std::path::Path::new(a.path).exists() || ws.repo.workdir.as_ref().is_some_and(|w| w.join(a.path).exists());
    if !exists {
        return Err(error::usage(format!("{} does not exist", a.path)));
    }
    crate::sources::edit_local_config(&ws.store.root, |list| {
        if list.iter().any(|s| s.name == a.name) {
            return Err(error::usage(format!("a source named `{}` already exists", a.name)));
        }
        list.push(crate::config::SourceConfig {
            name: a.name.to_string(),
            path: a.path.to_string(),
            extensions: a.extensions.to_vec(),
            ignore: a.ignore.to_vec(),
            graph: a.graph,
            description: a.description.to_string(),
        });
        Ok(())
    })?;
    Ok(Answer::new("source", None, serde_json::json!({"added": a.name}), format!("added source `{}` ({})\n", a.name, a.path)))
}

pub fn remove(ws: &Workspace, name: &str) -> Result<Answer> {
    crate::sources::edit_local_config(&ws.store.root, |list| {
        let before = list.len();
        list.retain(|s| s.name != name);
        if list.len() == before {
            return Err(error::usage(format!("no source named `{name}` in .lynx/config.toml")));
        }
        Ok(())
    })?;
    Ok(Answer::new("source", None, serde_json::json!({"removed": name}), format!("removed source `{name}`\n")))
}
