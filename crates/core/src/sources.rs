//! Sources: the repository itself (zero configuration) plus extra folders or repositories
//! from `[[sources]]` in the configuration (or a LynxMCP `config.json`). Each source answers
//! through its own engine; all of them share the repository's object store when they are
//! plain folders.

use crate::config::{SourceConfig, SourceType};
use crate::engine::Engine;
use crate::progress::Progress;
use crate::view::ViewSpec;
use crate::workspace::Workspace;
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

crate::error::errors! {
    /// A source name or path that names no source, or one that is already there.
    pub enum SourceError: Usage {
        Unknown { name: String, known: String } => "unknown source `{name}`; sources: {known}",
        Migrated { name: String, path: String } =>
            "a source named `{name}` is already in {path}; remove it (`git lynx source remove {name}`) or rename it in the LynxMCP config",
        Exists { name: String } => "a source named `{name}` already exists",
        NotConfigured { name: String } => "no source named `{name}` in .lynx/config.toml",
        NoPath { path: String } => "{path} does not exist",
        Twice { name: String } => "two sources are named `{name}`; source names must be unique",
        NoUrl {} => "a webdoc source needs `url` (the page to start crawling from)",
        NoPdf { path: String } => "{path} does not exist (a pdf source names a PDF file or a folder of them)",
        NotFolder { path: String } => "{path} is not a folder",
        ConfigVersion { path: String, version: String } =>
            "{path} has config_version {version}; Lynx reads LynxMCP config_version 2 (a `sources` object); migrate it with LynxMCP first",
        NotA { key: String, path: String, what: &'static str } => "`{key}` in {path} is not a {what}",
    }
}

crate::error::errors! {
    /// A workspace file that does not say which repositories to open, or names ones that
    /// cannot be.
    pub enum WorkspaceFileError: Usage {
        Invalid { file: String, why: String } =>
            "{file} is not a valid workspace file: {why}; it lists repositories as [[repo]] tables with `path` and optional `name`, `rev`",
        SameName { file: String, name: String } =>
            "two repositories of {file} are named `{name}`; give one of them another `name`",
        Empty { file: String } => "{file} lists no repository; add one with `git lynx --workspace {file} workspace add PATH`",
        NotTop { path: String, top: String } => "{path} is not the top of a git repository (that is {top})",
        NoneOpened { file: String, why: String } => "no repository of {file} could be opened ({why})",
    }
}

pub struct Source {
    pub name: String,
    pub description: String,
    /// The description comes from the committed `lynx.toml` (quoted wherever it is shown).
    pub committed: bool,
    /// "repository" (a git repository), "folder", "webdoc" or "pdf".
    pub kind: &'static str,
    /// A folder, a PDF file or folder, or (webdoc) the start URL.
    pub path: PathBuf,
    pub graph: bool,
    pub engine: Arc<Engine>,
    /// How it was configured (None for the repository itself).
    pub config: Option<SourceConfig>,
}

pub struct Sources {
    pub list: Vec<Source>,
    /// Fields of a LynxMCP configuration that Lynx does not use.
    pub ignored_fields: Vec<String>,
    /// Repositories a workspace file lists that could not be opened (name, why): skipped, and
    /// said in status and in the first answer.
    pub missing: Vec<(String, String)>,
    /// Whether an answer has said which repositories are missing (the first one does).
    pub missing_said: std::sync::atomic::AtomicBool,
    /// Opened from a workspace file: a question that names no repository asks them all.
    pub workspace: Option<PathBuf>,
}

/// The file name a workspace is conventionally kept in (passed with `--workspace`, never found
/// inside a repository).
pub const WORKSPACE_FILE: &str = "lynx-workspace.toml";

/// One repository of a workspace file.
#[derive(Debug, Clone, serde::Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceRepo {
    /// The repository's directory, absolute or relative to the workspace file.
    pub path: String,
    /// How answers name it (default: its directory's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The revision it is answered at (default: its working tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkspaceToml {
    #[serde(default, rename = "repo")]
    repos: Vec<WorkspaceRepo>,
}

/// The repositories a workspace file lists, each with its name decided and its path resolved
/// against the file's directory. A workspace file is the user's own: it is read only when named
/// (`--workspace`, `LYNX_WORKSPACE`), never looked for inside a repository.
pub fn read_workspace(file: &Path) -> Result<Vec<(WorkspaceRepo, PathBuf)>> {
    let text = std::fs::read_to_string(file).with_context(|| {
        format!("cannot read the workspace file {} (create it with `git lynx workspace add PATH`)", file.display())
    })?;
    let parsed: WorkspaceToml = toml::from_str(&text)
        .map_err(|e| WorkspaceFileError::Invalid { file: file.display().to_string(), why: e.message().to_string() })?;
    let base = file.parent().unwrap_or(Path::new("."));
    let mut out: Vec<(WorkspaceRepo, PathBuf)> = Vec::new();
    for mut r in parsed.repos {
        let path = if Path::new(&r.path).is_absolute() { PathBuf::from(&r.path) } else { base.join(&r.path) };
        let name = match &r.name {
            Some(n) => n.clone(),
            None => path
                .canonicalize()
                .unwrap_or_else(|_| path.clone())
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "repo".into()),
        };
        crate::config::check_source_name(&name)
            .with_context(|| format!("repository {} in {}: give it a `name`", r.path, file.display()))?;
        if out.iter().any(|(o, _)| o.name.as_deref() == Some(&name)) {
            return Err(WorkspaceFileError::SameName { file: file.display().to_string(), name }.into());
        }
        r.name = Some(name);
        out.push((r, path));
    }
    Ok(out)
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SourceInfo {
    pub name: String,
    pub kind: &'static str,
    pub path: String,
    pub graph: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// `lynx.toml` when the description is the committed file's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description_from: Option<&'static str>,
}

impl Source {
    /// What names and describes the source.
    pub fn info(&self) -> SourceInfo {
        SourceInfo {
            name: self.name.clone(),
            kind: self.kind,
            path: self.path.display().to_string(),
            graph: self.graph,
            description: self.description.clone(),
            description_from: self.committed.then_some(crate::config::TEAM_FILE),
        }
    }

    /// The description for a text answer: the tool's own words, or the committed file's,
    /// quoted and attributed.
    pub fn description_text(&self) -> Option<String> {
        if self.description.is_empty() {
            None
        } else if self.committed {
            Some(format!("{} describes it as {:?}", crate::config::TEAM_FILE, self.description))
        } else {
            Some(self.description.clone())
        }
    }
}

/// The repository's own source name, as every answer says it: its directory's name.
pub fn repo_source_name(ws: &crate::workspace::Workspace) -> String {
    let root = ws.repo.workdir.clone().unwrap_or_else(|| ws.repo.common_dir.clone());
    root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "repo".into())
}

impl Sources {
    /// The repository of `main` plus the configured sources. `lynxmcp` is a LynxMCP
    /// `config.json` to read sources from as well.
    pub fn open(main: Arc<Engine>, lynxmcp: Option<&Path>, progress: &Progress) -> Result<Sources> {
        let root = main.ws.repo.workdir.clone().unwrap_or_else(|| main.ws.repo.common_dir.clone());
        let repo_name = repo_source_name(&main.ws);
        let mut list = vec![Source {
            name: repo_name,
            description: "this repository".into(),
            committed: false,
            kind: "repository",
            path: root.clone(),
            graph: true,
            engine: main.clone(),
            config: None,
        }];
        let mut configs = main.ws.config.sources.clone();
        let mut ignored_fields = Vec::new();
        if let Some(p) = lynxmcp {
            let (mut extra, ignored) = read_lynxmcp(p)?;
            configs.append(&mut extra);
            ignored_fields = ignored;
        }
        for sc in configs {
            let path = match sc.kind {
                SourceType::Webdoc => PathBuf::from(sc.url.first().cloned().unwrap_or_default()),
                _ if Path::new(&sc.path).is_absolute() => PathBuf::from(&sc.path),
                _ => root.join(&sc.path),
            };
            if list.iter().any(|s| s.name == sc.name) {
                return Err(SourceError::Twice { name: sc.name.clone() }.into());
            }
            let source = open_source(&main, &sc, &path, progress)
                .with_context(|| format!("opening source `{}` ({})", sc.name, path.display()))?;
            list.push(source);
        }
        Ok(Sources { list, ignored_fields, missing: Vec::new(), missing_said: Default::default(), workspace: None })
    }

    /// The repositories of a workspace file, the first one that opens answering as the main
    /// one, plus the sources configured beside it. A listed repository that is missing or not
    /// a git repository is skipped and named in `missing`; the others answer.
    pub fn open_workspace(
        file: &Path,
        progress: &Progress,
        model: &dyn Fn(&Workspace) -> crate::engine::ModelChoice,
    ) -> Result<Sources> {
        let repos = read_workspace(file)?;
        if repos.is_empty() {
            return Err(WorkspaceFileError::Empty { file: file.display().to_string() }.into());
        }
        let mut opened_all: Vec<(WorkspaceRepo, PathBuf, Engine)> = Vec::new();
        let mut missing = Vec::new();
        for (r, path) in repos {
            let name = r.name.clone().unwrap_or_default();
            let opened = (|| -> Result<Engine> {
                if !path.exists() {
                    return Err(SourceError::NoPath { path: path.display().to_string() }.into());
                }
                let repo = crate::repo::Repo::discover(&path)
                    .with_context(|| format!("{} is not a git repository", path.display()))?;
                let root = repo.workdir.clone().unwrap_or_else(|| repo.common_dir.clone());
                if root.canonicalize().ok() != path.canonicalize().ok() {
                    return Err(WorkspaceFileError::NotTop {
                        path: path.display().to_string(),
                        top: root.display().to_string(),
                    }
                    .into());
                }
                let ws = Workspace::open(&path)?;
                let choice = model(&ws);
                let mut e = Engine::new(ws, progress.clone(), choice);
                if let Some(rev) = &r.rev {
                    e.ws.repo.resolve(rev).with_context(|| format!("revision `{rev}` of {}", path.display()))?;
                    e.pinned = Some(rev.clone());
                }
                Ok(e)
            })();
            match opened {
                Ok(e) => opened_all.push((r, path, e)),
                Err(e) => {
                    tracing::warn!("workspace repository `{name}` skipped: {e:#}");
                    missing.push((name, format!("{e:#}")));
                }
            }
        }
        // Each repository reads the others' objects in place: what one of them indexed is not
        // indexed again by another (forks, vendored copies, the same file at two revisions).
        // A segment's name is its content's hash, so the shards opened from it are one
        // process-wide: a segment two repositories share is held in memory once.
        let objects: Vec<PathBuf> = opened_all.iter().map(|(_, _, e)| e.ws.store.objects().to_path_buf()).collect();
        let shards: Arc<crate::shard::Registry> = Default::default();
        let mut list: Vec<Source> = Vec::new();
        for (r, path, mut e) in opened_all {
            e.ws.store.read_also(&objects);
            e.ws.shards = shards.clone();
            let name = r.name.clone().unwrap_or_default();
            list.push(Source {
                name,
                description: r
                    .rev
                    .as_ref()
                    .map(|v| format!("repository at {v}"))
                    .unwrap_or_else(|| "repository".into()),
                committed: false,
                kind: "repository",
                path: path.clone(),
                graph: true,
                engine: Arc::new(e),
                config: None,
            });
        }
        if list.is_empty() {
            let why: Vec<String> = missing.iter().map(|(n, w)| format!("{n}: {w}")).collect();
            return Err(WorkspaceFileError::NoneOpened { file: file.display().to_string(), why: why.join("; ") }.into());
        }
        Ok(Sources {
            list,
            ignored_fields: Vec::new(),
            missing,
            missing_said: Default::default(),
            workspace: Some(file.to_path_buf()),
        })
    }

    /// For a server answering from several repositories, for its whole life (a thread of its
    /// own): lets go of the views of a repository nobody asked about for `idle`, and while the
    /// process holds more than `bound` bytes, of the least recently asked repositories' views
    /// (never the last one asked).
    pub fn hold_memory(&self, idle: Option<std::time::Duration>, bound: Option<u64>) {
        use std::time::{Duration, Instant};
        let tick =
            idle.map_or(Duration::from_secs(2), |i| (i / 4).clamp(Duration::from_millis(200), Duration::from_secs(2)));
        let tick = if bound.is_some() { tick.min(Duration::from_millis(500)) } else { tick };
        loop {
            std::thread::sleep(tick);
            let mut released = Vec::new();
            if let Some(idle) = idle {
                let now = Instant::now();
                for s in &self.list {
                    if s.engine.last_used().is_some_and(|t| now.duration_since(t) >= idle) && s.engine.forget() {
                        released.push(s.name.as_str());
                    }
                }
            }
            if !released.is_empty() {
                crate::memory::release();
                tracing::info!("let go of the views of {} (not asked about for a while)", released.join(", "));
            }
            let Some(bound) = bound else { continue };
            if crate::memory::resident_bytes().is_none_or(|r| r <= bound) {
                continue;
            }
            let mut held: Vec<(Instant, &Source)> =
                self.list.iter().filter_map(|s| s.engine.last_used().map(|t| (t, s))).collect();
            held.sort_by_key(|(t, _)| *t);
            held.pop();
            for (_, s) in held {
                s.engine.forget();
                crate::memory::release();
                let now = crate::memory::resident_bytes().unwrap_or(0);
                tracing::info!(
                    "let go of the views of {} (resident {} MiB, bound {} MiB)",
                    s.name,
                    now >> 20,
                    bound >> 20
                );
                if now <= bound {
                    break;
                }
            }
        }
    }

    pub fn main(&self) -> &Source {
        &self.list[0]
    }

    /// The workspace's repositories that could not be opened, said once (the first answer
    /// after the server or command opened them).
    pub fn missing_note(&self) -> Option<String> {
        if self.missing.is_empty() || self.missing_said.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let each: Vec<String> = self.missing.iter().map(|(n, why)| format!("`{n}` ({why})")).collect();
        Some(format!("note: skipped workspace repositories: {}\n", each.join("; ")))
    }

    /// The source named `name` (`repo` means the repository itself).
    pub fn get(&self, name: &str) -> Result<&Source> {
        if matches!(name, "repo" | "default" | ".") {
            return Ok(self.main());
        }
        self.list.iter().find(|s| s.name == name).ok_or_else(|| {
            let known = self.list.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ");
            SourceError::Unknown { name: name.to_string(), known }.into()
        })
    }

    /// One source by name, or all of them.
    pub fn select(&self, name: Option<&str>) -> Result<Vec<&Source>> {
        match name.filter(|n| !n.is_empty() && !n.eq_ignore_ascii_case("all")) {
            Some(n) => Ok(vec![self.get(n)?]),
            None => Ok(self.list.iter().collect()),
        }
    }
}

fn open_source(main: &Arc<Engine>, sc: &SourceConfig, path: &Path, progress: &Progress) -> Result<Source> {
    if sc.kind != SourceType::Folder {
        if sc.kind == SourceType::Webdoc && sc.url.is_empty() {
            return Err(SourceError::NoUrl {}.into());
        }
        if sc.kind == SourceType::Pdf && !path.exists() {
            return Err(SourceError::NoPdf { path: path.display().to_string() }.into());
        }
        // Its snapshots live in the repository's store, like a folder's objects.
        let ws = Workspace::open(main.ws.repo.workdir.as_deref().unwrap_or(&main.ws.repo.common_dir))?;
        let mut e = Engine::new(ws, progress.clone(), main.model.clone());
        e.folder = Some(ViewSpec::Snapshot { source: sc.name.clone(), id: None });
        let source = Source {
            name: sc.name.clone(),
            description: one_line(&sc.description, 200),
            committed: sc.committed,
            kind: sc.kind.name(),
            path: path.to_path_buf(),
            graph: false,
            engine: Arc::new(e),
            config: Some(sc.clone()),
        };
        return Ok(source);
    }
    let is_repo = path.join(".git").exists();
    let model = main.model.clone();
    let (engine, kind) = if is_repo && sc.extensions.is_empty() && sc.ignore.is_empty() {
        let ws = Workspace::open(path)?;
        (Engine::new(ws, progress.clone(), model), "repository")
    } else {
        if !path.is_dir() {
            return Err(SourceError::NotFolder { path: path.display().to_string() }.into());
        }
        // A plain folder shares the repository's store (objects are content-addressed).
        let ws = Workspace::open(main.ws.repo.workdir.as_deref().unwrap_or(&main.ws.repo.common_dir))?;
        let mut e = Engine::new(ws, progress.clone(), model);
        e.folder = Some(ViewSpec::Folder {
            root: path.to_path_buf(),
            extensions: sc.extensions.clone(),
            ignore: sc.ignore.clone(),
        });
        (e, "folder")
    };
    Ok(Source {
        name: sc.name.clone(),
        description: one_line(&sc.description, 200),
        committed: sc.committed,
        kind,
        path: path.to_path_buf(),
        graph: sc.graph,
        engine: Arc::new(engine),
        config: Some(sc.clone()),
    })
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
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))?;
    let version =
        v["config_version"].as_u64().unwrap_or(if v["sources"].is_object() || v["sources"].is_array() { 2 } else { 0 });
    if version != 2 {
        return Err(
            SourceError::ConfigVersion { path: path.display().to_string(), version: version.to_string() }.into()
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
        let name =
            key.clone().or_else(|| s["name"].as_str().map(String::from)).unwrap_or_else(|| format!("source{}", i + 1));
        if crate::config::check_source_name(&name).is_err() {
            ignored.push(format!(
                "sources[{}] (not a valid source name: letters, digits, `-`, `_`, `.`)",
                name.chars().take(40).collect::<String>()
            ));
            continue;
        }
        if typ == "webdoc" || typ == "pdf" {
            match doc_source(&name, typ, s, base, &mut ignored) {
                Some(sc) => out.push(sc),
                None => continue,
            }
            continue;
        }
        if !matches!(typ, "codebase" | "code" | "docs" | "documentation" | "folder" | "local") {
            ignored
                .push(format!("sources[{name}] (type `{typ}`: Lynx reads codebase, folder, webdoc and pdf sources)"));
            continue;
        }
        let Some(p) = s["path"].as_str().or_else(|| s["root"].as_str()) else {
            ignored.push(format!("sources[{name}] (no path)"));
            continue;
        };
        let p = if Path::new(p).is_absolute() { PathBuf::from(p) } else { base.join(p) };
        let list = |key: &str| -> Vec<String> {
            s[key]
                .as_array()
                .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
                .unwrap_or_default()
        };
        if let Some(obj) = s.as_object() {
            for k in obj.keys() {
                let known = matches!(
                    k.as_str(),
                    "name"
                        | "type"
                        | "path"
                        | "root"
                        | "extensions"
                        | "file_extensions"
                        | "supported_extensions"
                        | "ignore"
                        | "ignore_patterns"
                        | "ignored_path_fragments"
                        | "exclude"
                        | "graph"
                        | "enable_graph"
                        | "description"
                        | "git_integration"
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
        for f in list("ignored_path_fragments").iter().filter(|f| !f.is_empty()) {
            ignore.push(format!("*{}*", globset::escape(f)));
            // LynxMCP matches against absolute paths; a fragment starting with `/` also
            // matches a top-level folder of the source.
            if let Some(rest) = f.strip_prefix('/').filter(|r| !r.is_empty()) {
                ignore.push(format!("{}*", globset::escape(rest)));
            }
        }
        let mut extensions = list("extensions");
        extensions.extend(list("file_extensions"));
        extensions.extend(list("supported_extensions"));
        let graph = match &s["graph"] {
            serde_json::Value::Bool(b) => *b,
            serde_json::Value::Object(g) => g.get("enabled").and_then(|e| e.as_bool()).unwrap_or(false),
            _ => s["enable_graph"].as_bool().unwrap_or(typ.starts_with("code")),
        };
        out.push(SourceConfig {
            name,
            path: p.display().to_string(),
            extensions,
            ignore,
            graph,
            description: s["description"].as_str().unwrap_or("").to_string(),
            ..Default::default()
        });
    }
    Ok((out, ignored))
}

/// A LynxMCP `webdoc` or `pdf` source in Lynx's terms (same field names, flattened extractor
/// settings); fields with no equivalent are named in `ignored`.
fn doc_source(
    name: &str,
    typ: &str,
    s: &serde_json::Value,
    base: &Path,
    ignored: &mut Vec<String>,
) -> Option<SourceConfig> {
    let list = |key: &str| -> Vec<String> {
        s[key].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
    };
    let count = |v: &serde_json::Value| v.as_u64().map(|n| n as usize);
    let mut sc = SourceConfig {
        name: name.to_string(),
        graph: false,
        description: s["description"].as_str().unwrap_or("").to_string(),
        ..Default::default()
    };
    let known: &[&str] = if typ == "webdoc" {
        sc.kind = SourceType::Webdoc;
        sc.url = match &s["url"] {
            serde_json::Value::String(u) => vec![u.clone()],
            _ => list("url"),
        };
        if sc.url.is_empty() {
            ignored.push(format!("sources[{name}] (webdoc without a url)"));
            return None;
        }
        sc.max_depth = count(&s["max_depth"]);
        sc.max_pages = count(&s["max_pages"]);
        sc.include_url_patterns = list("include_url_patterns");
        sc.exclude_url_patterns = list("exclude_url_patterns");
        sc.request_delay_seconds = s["request_delay_seconds"].as_f64();
        sc.request_timeout_seconds = s["request_timeout_seconds"].as_f64();
        sc.user_agent = s["user_agent"].as_str().map(String::from);
        sc.render_js = s["render_js"].as_bool().unwrap_or(false);
        &[
            "name",
            "type",
            "url",
            "max_depth",
            "max_pages",
            "same_origin_only",
            "include_url_patterns",
            "exclude_url_patterns",
            "request_delay_seconds",
            "request_timeout_seconds",
            "user_agent",
            "render_js",
            "description",
        ]
    } else {
        sc.kind = SourceType::Pdf;
        let Some(p) = s["path"].as_str() else {
            ignored.push(format!("sources[{name}] (pdf without a path)"));
            return None;
        };
        sc.path = if Path::new(p).is_absolute() { p.to_string() } else { base.join(p).display().to_string() };
        sc.max_file_mb = s["extractor"]["max_file_mb"].as_u64();
        sc.max_pages_per_file = count(&s["extractor"]["max_pages_per_file"]);
        &["name", "type", "path", "recursive", "file_glob", "extractor", "watcher", "description"]
    };
    if let Some(obj) = s.as_object() {
        ignored.extend(obj.keys().filter(|k| !known.contains(&k.as_str())).map(|k| format!("sources[{name}].{k}")));
    }
    Some(sc)
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

/// A LynxMCP `config.json` as Lynx settings: its sources (as `read_lynxmcp` maps them) and the
/// shared settings Lynx has an equivalent for, as one TOML table for `.lynx/config.toml`; and
/// what was not carried over, with why.
pub fn migrate_lynxmcp(path: &Path) -> Result<(toml::Table, Vec<String>)> {
    let (sources, mut skipped) = read_lynxmcp(path)?;
    // `read_lynxmcp` names every top-level section; the ones mapped below are not skipped.
    skipped.retain(|s| !["embedding ", "search ", "tools ", "watcher "].iter().any(|k| s.starts_with(k)));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let mut out = toml::Table::new();
    let mut section = |name: &str, entries: Vec<(&str, Option<toml::Value>)>| {
        let t: toml::Table = entries.into_iter().filter_map(|(k, v)| v.map(|v| (k.to_string(), v))).collect();
        if !t.is_empty() {
            out.insert(name.into(), toml::Value::Table(t));
        }
    };
    let s = &v["search"];
    let str_of = |x: &serde_json::Value| x.as_str().map(|s| toml::Value::String(s.to_string()));
    let int_of = |x: &serde_json::Value| x.as_u64().map(|n| toml::Value::Integer(n as i64));
    let reranker = &s["reranker"];
    // LynxMCP reranks the first `top_n_before_rerank` candidates; Lynx reranks the pool.
    let pool =
        [s["candidate_pool_size"].as_u64(), reranker["top_n_before_rerank"].as_u64()].into_iter().flatten().max();
    section(
        "search",
        vec![
            ("k", int_of(&s["default_top_k"])),
            ("mode", str_of(&s["mode"])),
            ("rrf_k", s["rrf_k"].as_f64().map(toml::Value::Float)),
            ("pool", pool.map(|n| toml::Value::Integer(n as i64))),
            ("deep_min_results", int_of(&s["deep"]["min_results"])),
            ("rerank", reranker["enabled"].as_bool().map(toml::Value::Boolean)),
        ],
    );
    section(
        "model",
        vec![("name", str_of(&v["embedding"]["model_name"])), ("reranker", str_of(&reranker["model_name"]))],
    );
    let t = &v["tools"];
    let list = |x: &serde_json::Value| {
        x.as_array().map(|a| {
            toml::Value::Array(a.iter().filter_map(|s| s.as_str().map(|s| toml::Value::String(s.into()))).collect())
        })
    };
    section(
        "tools",
        vec![("profile", str_of(&t["profile"])), ("include", list(&t["include"])), ("exclude", list(&t["exclude"]))],
    );
    // One watcher for the repository: the first source's debounce.
    let debounce = match &v["sources"] {
        serde_json::Value::Object(m) => m.values().find_map(|s| s["watcher"]["debounce_seconds"].as_f64()),
        serde_json::Value::Array(a) => a.iter().find_map(|s| s["watcher"]["debounce_seconds"].as_f64()),
        _ => None,
    };
    section("watch", vec![("debounce_ms", debounce.map(|d| toml::Value::Integer((d * 1000.0).round() as i64)))]);
    if debounce.is_some() {
        skipped.retain(|s| !(s.starts_with("sources[") && s.ends_with("].watcher")));
        skipped.push("sources[…].watcher (one watcher per repository: the first source's debounce_seconds became watch.debounce_ms)".into());
    }
    if s["deep"]["score_thresholds"].is_object() {
        skipped.push("search.deep.score_thresholds (Lynx judges strength per retriever on its own scales; deep_search `min_score` overrides per call)".into());
    }
    for k in ["storage_path", "loading_timeout_seconds"] {
        if !v[k].is_null() {
            skipped
                .push(format!("{k} (Lynx keeps its index in the repository's .lynx and never blocks the handshake)"));
        }
    }
    skipped.retain(|s| !s.starts_with("storage_path (LynxMCP") && !s.starts_with("loading_timeout_seconds (LynxMCP"));
    if !sources.is_empty() {
        out.insert("sources".into(), toml::Value::try_from(&sources)?);
    }
    Ok((out, skipped))
}

/// Merges migrated settings into `.lynx/config.toml`: its sections' keys are set (the migrated
/// value wins), its sources added (a name already configured is an error, nothing written).
pub fn write_migrated(lynx_dir: &Path, migrated: toml::Table) -> Result<PathBuf> {
    let path = lynx_dir.join(crate::config::LOCAL_FILE);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut table: toml::Table = text.parse().with_context(|| format!("{} is not valid TOML", path.display()))?;
    for (k, v) in migrated {
        match (k.as_str(), v) {
            ("sources", toml::Value::Array(new)) => {
                let list = table.entry("sources").or_insert_with(|| toml::Value::Array(Vec::new()));
                let toml::Value::Array(list) = list else {
                    return Err(SourceError::NotA {
                        key: "sources".into(),
                        path: path.display().to_string(),
                        what: "list",
                    }
                    .into());
                };
                for s in new {
                    let name = s.get("name").and_then(|n| n.as_str()).unwrap_or("").to_string();
                    if list.iter().any(|x| x.get("name").and_then(|n| n.as_str()) == Some(name.as_str())) {
                        return Err(SourceError::Migrated { name, path: path.display().to_string() }.into());
                    }
                    list.push(s);
                }
            }
            (_, toml::Value::Table(section)) => {
                let into = table.entry(k.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                let toml::Value::Table(into) = into else {
                    return Err(SourceError::NotA {
                        key: k.to_string(),
                        path: path.display().to_string(),
                        what: "table",
                    }
                    .into());
                };
                into.extend(section);
            }
            (_, other) => {
                table.insert(k, other);
            }
        }
    }
    std::fs::create_dir_all(lynx_dir)?;
    crate::fsutil::write_atomic(&path, toml::to_string_pretty(&table)?.as_bytes())?;
    Ok(path)
}
