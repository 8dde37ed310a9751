//! Sources: the repository itself (zero configuration) plus extra folders or repositories
//! from `[[sources]]` in the configuration (or a LynxMCP `config.json`). Each source answers
//! through its own engine; all of them share the repository's object store when they are
//! plain folders.

use crate::config::SourceConfig;
use crate::engine::Engine;
use crate::progress::Progress;
use crate::view::ViewSpec;
use crate::workspace::Workspace;
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Source {
    pub name: String,
    pub description: String,
    /// "repository" (a git repository) or "folder".
    pub kind: &'static str,
    pub path: PathBuf,
    pub graph: bool,
    pub engine: Arc<Engine>,
}

pub struct Sources {
    pub list: Vec<Source>,
    /// Fields of a LynxMCP configuration that Lynx does not use.
    pub ignored_fields: Vec<String>,
}

#[derive(Serialize)]
pub struct SourceInfo {
    pub name: String,
    pub kind: &'static str,
    pub path: String,
    pub graph: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
}

impl Sources {
    /// The repository of `main` plus the configured sources. `lynxmcp` is a LynxMCP
    /// `config.json` to read sources from as well.
    pub fn open(main: Arc<Engine>, lynxmcp: Option<&Path>, progress: &Progress) -> Result<Sources> {
        let root = main.ws.repo.workdir.clone().unwrap_or_else(|| main.ws.repo.common_dir.clone());
        let repo_name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "repo".into());
        let mut list = vec![Source { name: repo_name, description: "this repository".into(), kind: "repository", path: root.clone(), graph: true, engine: main.clone() }];
        let mut configs = main.ws.config.sources.clone();
        let mut ignored_fields = Vec::new();
        if let Some(p) = lynxmcp {
            let (mut extra, ignored) = read_lynxmcp(p)?;
            configs.append(&mut extra);
            ignored_fields = ignored;
        }
        for sc in configs {
            let path = if Path::new(&sc.path).is_absolute() { PathBuf::from(&sc.path) } else { root.join(&sc.path) };
            if list.iter().any(|s| s.name == sc.name) {
                bail!("two sources are named `{}`; source names must be unique", sc.name);
            }
            let source = open_source(&main, &sc, &path, progress).with_context(|| format!("opening source `{}` ({})", sc.name, path.display()))?;
            list.push(source);
        }
        Ok(Sources { list, ignored_fields })
    }

    pub fn main(&self) -> &Source {
        &self.list[0]
    }

    /// The source named `name` (`repo` means the repository itself).
    pub fn get(&self, name: &str) -> Result<&Source> {
        if matches!(name, "repo" | "default" | ".") {
            return Ok(self.main());
        }
        self.list.iter().find(|s| s.name == name).ok_or_else(|| {
            crate::error::usage(format!(
                "unknown source `{name}`; sources: {}",
                self.list.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// One source by name, or all of them.
    pub fn select(&self, name: Option<&str>) -> Result<Vec<&Source>> {
        match name.filter(|n| !n.is_empty()) {
            Some(n) => Ok(vec![self.get(n)?]),
            None => Ok(self.list.iter().collect()),
        }
    }

    pub fn infos(&self) -> Vec<SourceInfo> {
        self.list
            .iter()
            .map(|s| SourceInfo { name: s.name.clone(), kind: s.kind, path: s.path.display().to_string(), graph: s.graph, description: s.description.clone() })
            .collect()
    }
}

fn open_source(main: &Arc<Engine>, sc: &SourceConfig, path: &Path, progress: &Progress) -> Result<Source> {
    let is_repo = path.join(".git").exists();
    let model = main.model.clone();
    let (engine, kind) = if is_repo && sc.extensions.is_empty() && sc.ignore.is_empty() {
        let ws = Workspace::open(path)?;
        (Engine::new(ws, progress.clone(), model), "repository")
    } else {
        if !path.is_dir() {
            bail!("{} is not a folder", path.display());
        }
        // A plain folder shares the repository's store (objects are content-addressed).
        let ws = Workspace::open(main.ws.repo.workdir.as_deref().unwrap_or(&main.ws.repo.common_dir))?;
        let mut e = Engine::new(ws, progress.clone(), model);
        e.folder = Some(ViewSpec::Folder { root: path.to_path_buf(), extensions: sc.extensions.clone(), ignore: sc.ignore.clone() });
        (e, "folder")
    };
    Ok(Source { name: sc.name.clone(), description: one_line(&sc.description, 200), kind, path: path.to_path_buf(), graph: sc.graph, engine: Arc::new(engine) })
}

/// A description as shown in answers: one line, no control characters, at most `max` chars.
fn one_line(s: &str, max: usize) -> String {
    s.lines().next().unwrap_or("").chars().filter(|c| !c.is_control()).take(max).collect()
}

/// Maps a LynxMCP `config.json` (config_version 2; `sources` keyed by name as its manual
/// writes it, or a list of objects with a `name`) to sources: its codebase and document folder
/// sources become Lynx sources; everything else is named in the returned list of what was
/// ignored, so nothing is dropped without a word.
pub fn read_lynxmcp(path: &Path) -> Result<(Vec<SourceConfig>, Vec<String>)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading LynxMCP config {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))?;
    let version = v["config_version"].as_u64().unwrap_or(if v["sources"].is_object() || v["sources"].is_array() { 2 } else { 0 });
    if version != 2 {
        bail!(
            "{} has config_version {version}; Lynx reads LynxMCP config_version 2 (a `sources` object); migrate it with LynxMCP first",
            path.display()
        );
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    if let Some(obj) = v.as_object() {
        for k in obj.keys() {
            if !matches!(k.as_str(), "config_version" | "sources") {
                ignored.push(format!("{k} (LynxMCP setting with no Lynx equivalent here; see docs/CONFIG.md)"));
            }
        }
    }
    let entries: Vec<(Option<String>, serde_json::Value)> = match &v["sources"] {
        serde_json::Value::Object(m) => m.iter().map(|(k, s)| (Some(k.clone()), s.clone())).collect(),
        serde_json::Value::Array(a) => a.iter().map(|s| (None, s.clone())).collect(),
        _ => Vec::new(),
    };
    for (i, (key, s)) in entries.iter().enumerate() {
        let typ = s["type"].as_str().unwrap_or("codebase");
        let name = key.clone().or_else(|| s["name"].as_str().map(String::from)).unwrap_or_else(|| format!("source{}", i + 1));
        if crate::config::check_source_name(&name).is_err() {
            ignored.push(format!("sources[{}] (not a valid source name: letters, digits, `-`, `_`, `.`)", name.chars().take(40).collect::<String>()));
            continue;
        }
        if !matches!(typ, "codebase" | "code" | "docs" | "documentation" | "folder" | "local") {
            ignored.push(format!("sources[{name}] (type `{typ}`: only local folders are supported)"));
            continue;
        }
        let Some(p) = s["path"].as_str().or_else(|| s["root"].as_str()) else {
            ignored.push(format!("sources[{name}] (no path)"));
            continue;
        };
        let p = if Path::new(p).is_absolute() { PathBuf::from(p) } else { base.join(p) };
        let list = |key: &str| -> Vec<String> { s[key].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default() };
        if let Some(obj) = s.as_object() {
            for k in obj.keys() {
                let known = matches!(
                    k.as_str(),
                    "name" | "type" | "path" | "root" | "extensions" | "file_extensions" | "supported_extensions" | "ignore" | "ignore_patterns"
                        | "ignored_path_fragments" | "exclude" | "graph" | "enable_graph" | "description" | "git_integration"
                );
                if !known {
                    ignored.push(format!("sources[{name}].{k}"));
                }
            }
        }
        let mut ignore = list("ignore");
        ignore.extend(list("ignore_patterns"));
        ignore.extend(list("exclude"));
        // A LynxMCP fragment is a plain substring of the path.
        ignore.extend(list("ignored_path_fragments").iter().filter(|f| !f.is_empty()).map(|f| format!("*{}*", globset::escape(f))));
        let mut extensions = list("extensions");
        extensions.extend(list("file_extensions"));
        extensions.extend(list("supported_extensions"));
        let graph = match &s["graph"] {
            serde_json::Value::Bool(b) => *b,
            serde_json::Value::Object(g) => g.get("enabled").and_then(|e| e.as_bool()).unwrap_or(false),
            _ => s["enable_graph"].as_bool().unwrap_or(typ.starts_with("code")),
        };
        out.push(SourceConfig { name, path: p.display().to_string(), extensions, ignore, graph, description: s["description"].as_str().unwrap_or("").to_string() });
    }
    Ok((out, ignored))
}

/// `git lynx source add|remove`: edits `[[sources]]` in `.lynx/config.toml`.
pub fn edit_local_config(lynx_dir: &Path, f: impl FnOnce(&mut Vec<SourceConfig>) -> Result<()>) -> Result<()> {
    let path = lynx_dir.join(crate::config::LOCAL_FILE);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut table: toml::Table = text.parse().with_context(|| format!("{} is not valid TOML", path.display()))?;
    let mut sources: Vec<SourceConfig> = match table.remove("sources") {
        Some(v) => v.try_into().context("invalid [[sources]] in the local configuration")?,
        None => Vec::new(),
    };
    f(&mut sources)?;
    if !sources.is_empty() {
        table.insert("sources".into(), toml::Value::try_from(&sources)?);
    }
    crate::fsutil::write_atomic(&path, toml::to_string_pretty(&table)?.as_bytes())
}
