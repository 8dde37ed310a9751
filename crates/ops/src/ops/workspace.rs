//! `workspace add | remove | list | status`: the repositories a workspace file lists
//! (`lynx-workspace.toml`, the user's own, named with `--workspace`), edited in place so the
//! user's comments and order stay.

use super::Answer;
use crate::sources::{Sources, WorkspaceRepo, read_workspace};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

crate::error::errors! {
    /// A workspace command without a workspace file to work on.
    pub enum WorkspaceError: Usage {
        NoFile {} =>
            "workspace commands edit a workspace file: name it with --workspace FILE (or LYNX_WORKSPACE), e.g. `git lynx --workspace ~/lynx-workspace.toml workspace add .`",
        NotTop { path: String } => "{path} is not the top of a git repository (a workspace lists repositories)",
        Taken { file: String, name: String } =>
            "{file} already lists a repository named `{name}`; pass --name to add it under another",
        Unknown { file: String, name: String, known: String } => "{file} lists no repository named `{name}`; it lists: {known}",
    }
}

/// `workspace add`'s arguments.
#[derive(clap::Args, Debug)]
pub struct AddArgs {
    /// The repository's directory (stored relative to the workspace file when inside its folder).
    pub path: String,
    /// How answers name it (default: its directory's name).
    #[arg(long)]
    pub name: Option<String>,
    /// Answer it at this revision (default: its working tree).
    #[arg(long)]
    pub rev: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct WorkspaceList {
    /// The workspace file.
    pub file: String,
    pub repositories: Vec<RepoState>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RepoState {
    pub name: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// `ok`, or why it is skipped (missing, not a git repository, an unknown revision).
    pub state: String,
}

results!(WorkspaceList => "repositories");

fn edit(file: &Path, change: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<()>) -> Result<()> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let mut doc: toml_edit::DocumentMut =
        text.parse().with_context(|| format!("{} is not valid TOML; fix or remove it", file.display()))?;
    change(&mut doc)?;
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    crate::fsutil::write_atomic(file, doc.to_string().as_bytes())?;
    // What was written must read back as a workspace file.
    read_workspace(file)?;
    Ok(())
}

/// Adds a repository to the workspace file (creating the file).
pub fn add(file: &Path, a: &AddArgs) -> Result<Answer> {
    let given = Path::new(&a.path);
    let abs = std::path::absolute(given).with_context(|| format!("cannot resolve {}", a.path))?;
    if !abs.join(".git").exists() {
        return Err(WorkspaceError::NotTop { path: abs.display().to_string() }.into());
    }
    let base = std::path::absolute(file.parent().unwrap_or(Path::new(".")))?;
    let stored = match abs.strip_prefix(&base) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => abs.to_string_lossy().into_owned(),
    };
    let existing = if file.exists() { read_workspace(file)? } else { Vec::new() };
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| abs.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "repo".into()));
    crate::config::check_source_name(&name)?;
    if existing.iter().any(|(r, _)| r.name.as_deref() == Some(&name)) {
        return Err(WorkspaceError::Taken { file: file.display().to_string(), name }.into());
    }
    edit(file, |doc| {
        let repos = doc
            .entry("repo")
            .or_insert(toml_edit::Item::ArrayOfTables(Default::default()))
            .as_array_of_tables_mut()
            .context("`repo` in the workspace file is not a list of [[repo]] tables")?;
        let mut t = toml_edit::Table::new();
        t["path"] = toml_edit::value(stored.clone());
        if a.name.is_some() {
            t["name"] = toml_edit::value(name.clone());
        }
        if let Some(rev) = &a.rev {
            t["rev"] = toml_edit::value(rev.clone());
        }
        repos.push(t);
        Ok(())
    })?;
    let text = format!("added `{name}` ({}) to {}\n", abs.display(), file.display());
    Ok(Answer::new(
        "workspace_add",
        None,
        WorkspaceEdited { file: file.display().to_string(), name: name.to_string(), path: Some(stored.to_string()) },
        text,
    ))
}

/// Removes the repository named `name` from the workspace file.
pub fn remove(file: &Path, name: &str) -> Result<Answer> {
    let repos = read_workspace(file)?;
    let Some(at) = repos.iter().position(|(r, _)| r.name.as_deref() == Some(name)) else {
        let known: Vec<&str> = repos.iter().filter_map(|(r, _)| r.name.as_deref()).collect();
        return Err(WorkspaceError::Unknown {
            file: file.display().to_string(),
            name: name.to_string(),
            known: known.join(", "),
        }
        .into());
    };
    edit(file, |doc| {
        let list = doc["repo"].as_array_of_tables_mut().context("`repo` is not a list of [[repo]] tables")?;
        list.remove(at);
        Ok(())
    })?;
    let text = format!("removed `{name}` from {}\n", file.display());
    Ok(Answer::new(
        "workspace_remove",
        None,
        WorkspaceEdited { file: file.display().to_string(), name: name.to_string(), path: None },
        text,
    ))
}

/// A repository added to (with the path the file records) or removed from a workspace file.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct WorkspaceEdited {
    pub file: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

results!(WorkspaceEdited);

/// The repositories of the workspace file and whether each one opens; `opened` (status) also
/// says which ones answer.
pub fn list(file: &Path, opened: Option<&Sources>) -> Result<Answer> {
    let repos = read_workspace(file)?;
    let mut out = Vec::new();
    for (r, path) in repos {
        let WorkspaceRepo { name, rev, .. } = r;
        let name = name.unwrap_or_default();
        let state = match opened {
            Some(s) => match s.missing.iter().find(|(n, _)| *n == name) {
                Some((_, why)) => why.clone(),
                None => match s.list.iter().find(|x| x.name == name) {
                    // A writer holding its store answers only from what is indexed, or is
                    // skipped by an answer that needs to index it.
                    Some(x) => match crate::store::lock::StoreLock::holder(&x.engine.ws.store.root, "lock") {
                        Some(holder) => format!("ok; its store is being written by {holder}"),
                        None => "ok".into(),
                    },
                    None => "not opened".into(),
                },
            },
            None if !path.exists() => format!("{} does not exist", path.display()),
            None if !path.join(".git").exists() => format!("{} is not a git repository", path.display()),
            None => "ok".into(),
        };
        out.push(RepoState { name, path: path.display().to_string(), rev, state });
    }
    let mut text = format!("{} ({})\n", file.display(), crate::present::count(out.len(), "repository", "repositories"));
    for r in &out {
        text.push_str(&format!(
            "  {} {}{} — {}\n",
            r.name,
            r.path,
            r.rev.as_ref().map(|v| format!(" @ {v}")).unwrap_or_default(),
            r.state
        ));
    }
    let op = if opened.is_some() { "workspace_status" } else { "workspace_list" };
    Ok(Answer::new(op, None, WorkspaceList { file: file.display().to_string(), repositories: out }, text))
}
