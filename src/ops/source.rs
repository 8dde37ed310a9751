//! `source add | remove`: the named folders, repositories, documentation sites and PDFs searched
//! beside this one, kept in
//! the local configuration (`.lynx/config.toml`), never in the committed team file.

use super::Answer;
use crate::config::{SourceConfig, SourceType};
use crate::error;
use crate::workspace::Workspace;
use anyhow::Result;

/// Records a source in the local configuration. A documentation source is then crawled or
/// extracted and indexed at once when `fetch` can open the sources (the first snapshot).
pub fn add(
    ws: &Workspace,
    sc: SourceConfig,
    fetch: Option<impl FnOnce() -> Result<crate::sources::Sources>>,
) -> Result<Answer> {
    crate::config::check_source_name(&sc.name)?;
    crate::docsource::check_settings(&sc)?;
    let shown = match sc.kind {
        SourceType::Webdoc => sc.url.join(" "),
        _ => {
            let exists = std::path::Path::new(&sc.path).exists()
                || ws.repo.workdir.as_ref().is_some_and(|w| w.join(&sc.path).exists());
            if !exists {
                return Err(error::usage(format!("{} does not exist", sc.path)));
            }
            sc.path.clone()
        }
    };
    let (name, kind) = (sc.name.clone(), sc.kind);
    crate::sources::edit_local_config(&ws.store.root, |list| {
        if list.iter().any(|s| s.name == sc.name) {
            return Err(error::usage(format!("a source named `{}` already exists", sc.name)));
        }
        list.push(sc);
        Ok(())
    })?;
    let mut text = format!("added {} source `{name}` ({shown})\n", kind.name());
    let mut data = serde_json::json!({"added": name, "type": kind.name()});
    if let (Some(open), true) = (fetch, kind != SourceType::Folder) {
        let fetched = super::status::update_source(&open()?, Some(&name), false)?;
        text.push_str(&fetched.text);
        data["fetched"] = fetched.json();
    }
    Ok(Answer::new("source", None, data, text))
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
