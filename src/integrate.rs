//! Client integration: `git lynx mcp-config` prints the server entry for an MCP client, as a
//! valid file for that client; `git lynx rules` writes a section that teaches an agent when to
//! call which tool; `git lynx init` does both and indexes, `git lynx remove` undoes it.
//!
//! Entries are portable: they name `git-lynx` (found on PATH) and no repository path — the
//! client starts the server in the project (Claude Code, Codex) or passes its workspace folder
//! (Cursor) — so a committed `.mcp.json` works for every teammate.

use crate::ops::Answer;
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

crate::error::errors! {
    /// A client, rules target or file that setting up (and undoing it) cannot use.
    pub enum IntegrationError: Usage {
        UnknownClient { given: String, known: String } => "unknown client `{given}`: {known}",
        UnknownTarget { given: String } => "unknown rules target `{given}`: claude, agents, cursor or lynx",
        Link { path: String } =>
            "{path} is a symbolic link; Lynx does not read or write through links in the repository (one could lead outside it): replace it with a real file or folder, or add the Lynx section yourself (`git lynx rules … --print`)",
        Generic {} =>
            "init needs a client it can configure: claude, cursor, codex or antigravity (`mcp-config generic` prints a generic entry)",
        OutsideStore { path: String } =>
            "the index at {path} is outside this repository (shared?); remove it yourself if you mean to",
    }
}

pub const CLIENTS: &[&str] = &["claude", "cursor", "codex", "antigravity", "generic"];

fn root(dir: Option<&Path>) -> Result<PathBuf> {
    let repo = crate::repo::Repo::discover(dir.unwrap_or(Path::new(".")))?;
    Ok(repo.workdir.clone().unwrap_or(repo.common_dir.clone()))
}

/// The command a client runs: `git-lynx` when it is on PATH (portable), else this executable's
/// absolute path (with a warning: the entry then only works on this machine).
fn command() -> Result<String> {
    let exe = std::env::current_exe().context("cannot find the git-lynx executable")?;
    let on_path = crate::env::get_os(crate::env::PATH).is_some_and(|p| {
        std::env::split_paths(&p)
            .any(|d| d.join("git-lynx").canonicalize().ok().is_some_and(|c| exe.canonicalize().ok() == Some(c)))
    });
    if on_path {
        return Ok("git-lynx".into());
    }
    eprintln!("note: git-lynx is not on PATH; the entry names {} and works on this machine only", exe.display());
    Ok(exe.display().to_string())
}

/// The server entry for `client` in the repository at `root`: (command, args).
fn entry(client: &str, root: &Path) -> Result<(String, Vec<String>)> {
    let cmd = command()?;
    let args = match client {
        // Cursor starts servers outside the project: it passes the folder.
        "cursor" => vec!["-C".into(), "${workspaceFolder}".into(), "serve".into()],
        // Antigravity has only a per-user file: one entry per repository, by path.
        "antigravity" => vec!["-C".into(), root.display().to_string(), "serve".into()],
        "claude" | "codex" | "generic" => vec!["serve".into()],
        other => {
            return Err(IntegrationError::UnknownClient { given: other.to_string(), known: CLIENTS.join(", ") }.into());
        }
    };
    Ok((cmd, args))
}

/// Antigravity's per-user configuration file.
fn antigravity_file() -> Option<PathBuf> {
    crate::env::home().map(|h| h.join(".gemini/antigravity/mcp_config.json"))
}

/// Codex's per-user configuration file: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
fn codex_file() -> Option<PathBuf> {
    crate::env::path(crate::env::CODEX_HOME)
        .or_else(|| crate::env::home().map(|h| h.join(".codex")))
        .map(|d| d.join("config.toml"))
}

/// Adds (or replaces) `[mcp_servers.lynx]` in Codex's TOML file, editing it in place so that
/// every other table, comment and blank line stays as it was.
fn add_codex_server(path: &Path, command: &str, args: &[String]) -> Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML; fix it or move it away, then run again", path.display()))?;
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        // `[mcp_servers.lynx]` alone, without an empty `[mcp_servers]` header above it.
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        toml_edit::Item::Table(t)
    });
    let servers = servers.as_table_mut().with_context(|| {
        format!(
            "`mcp_servers` in {} is not a table; make it `[mcp_servers.NAME]` tables, then run again",
            path.display()
        )
    })?;
    let mut lynx = toml_edit::Table::new();
    lynx.insert("command", toml_edit::value(command));
    lynx.insert("args", toml_edit::value(args.iter().map(String::as_str).collect::<toml_edit::Array>()));
    servers.insert("lynx", toml_edit::Item::Table(lynx));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    crate::fsutil::write_atomic(path, doc.to_string().as_bytes())
}

/// Takes `[mcp_servers.lynx]` out of Codex's file (and `mcp_servers` when only it made it
/// exist); a file left with nothing goes.
fn remove_codex_server(path: &Path) -> Result<bool> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(false) };
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else { return Ok(false) };
    let Some(servers) = doc.get_mut("mcp_servers").and_then(|s| s.as_table_mut()) else { return Ok(false) };
    if servers.remove("lynx").is_none() {
        return Ok(false);
    }
    if servers.is_empty() && servers.is_implicit() {
        doc.remove("mcp_servers");
    }
    let rest = doc.to_string();
    if rest.trim().is_empty() {
        std::fs::remove_file(path)?;
    } else {
        crate::fsutil::write_atomic(path, rest.as_bytes())?;
    }
    Ok(true)
}

/// The name of a repository's entry in a per-user configuration.
fn user_entry_name(root: &Path) -> String {
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '-' })
        .collect();
    // Two checkouts with the same folder name get different entries.
    let id = blake3::hash(root.display().to_string().as_bytes()).to_hex();
    format!("lynx-{name}-{}", &id[..6])
}

/// The client's project configuration file, when it has one Lynx may edit.
fn project_file(client: &str) -> Option<&'static str> {
    match client {
        "claude" => Some(".mcp.json"),
        "cursor" => Some(".cursor/mcp.json"),
        _ => None,
    }
}

pub fn mcp_config(dir: Option<&Path>, client: &str) -> Result<Answer> {
    let root = root(dir)?;
    let (cmd, args) = entry(client, &root)?;
    let text = match client {
        "claude" | "cursor" => {
            serde_json::to_string_pretty(&json!({"mcpServers": {"lynx": {"command": cmd, "args": args}}}))? + "\n"
        }
        "antigravity" => {
            serde_json::to_string_pretty(
                &json!({"mcpServers": {user_entry_name(&root): {"command": cmd, "args": args, "type": "stdio"}}}),
            )? + "\n"
        }
        "codex" => {
            format!("[mcp_servers.lynx]\ncommand = {}\nargs = {}\n", toml_str(&cmd), serde_json::to_string(&args)?)
        }
        _ => serde_json::to_string_pretty(&json!({"command": cmd, "args": args, "transport": "stdio"}))? + "\n",
    };
    if let Some(f) = project_file(client) {
        eprintln!("(this is {f}; `git lynx init --client {client}` writes it for you)");
    } else if client == "antigravity" {
        eprintln!(
            "(merge this into ~/.gemini/antigravity/mcp_config.json; `git lynx init --client antigravity` does it)"
        );
    } else if client == "codex" {
        eprintln!(
            "(add this to ~/.codex/config.toml; Codex starts it in the project you run codex in; `git lynx init --client codex` does it)"
        );
    }
    Ok(Answer::new(
        "mcp_config",
        None,
        json!({"client": client, "command": cmd, "args": args, "file": project_file(client)}),
        text,
    ))
}

fn toml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

const BEGIN: &str = "<!-- lynx:begin -->";
const END: &str = "<!-- lynx:end -->";

/// The rules section (tool names match the MCP server's).
pub fn rules_text() -> String {
    format!(
        "{BEGIN}\n## Code search with Lynx (MCP server `lynx`)\n\n\
- Before reading files to answer a question about this codebase, call `search` (plain words, identifiers or error messages work). Results cite `path:start-end symbol` and the view they come from.\n\
- If the top results are weak or off-topic, call `deep_search` with 2–4 rephrasings instead of guessing.\n\
- Before changing a function, class or method: `describe_symbol` (definition, callers, callees, tests) and `impact` (transitive callers and the tests to re-run).\n\
- Before committing: `impact` with `changes: \"uncommitted\"` (or `staged`) and run the tests it lists.\n\
- To find every use of a name: `find_usages`; to find its definition: `find_definition`.\n\
- Reviewing a branch: `search_diff` searches only the changed code.\n\
- Structure questions (who calls what, hierarchies, hubs): `graph_query`.\n\
- New to the repository: `repo_overview` gives languages, entry points and build/test commands.\n\
- When an answer was wrong or unhelpful, report it with `feedback`.\n{END}\n"
    )
}

/// Rules targets: the file, and whether Lynx owns the whole file (else it keeps a marked
/// section inside the user's file).
fn rules_file(target: &str) -> Result<(&'static str, bool)> {
    Ok(match target {
        "claude" => ("CLAUDE.md", false),
        "agents" | "codex" => ("AGENTS.md", false),
        "lynx" => ("lynx.md", false),
        "cursor" => (".cursor/rules/lynx.mdc", true),
        other => {
            return Err(IntegrationError::UnknownTarget { given: other.to_string() }.into());
        }
    })
}

/// `root/rel` when no part of `rel` that exists is a symbolic link: a committed link
/// (`.cursor → /elsewhere`, `CLAUDE.md → ~/.ssh/…`) would make Lynx write, or copy, a file
/// outside the repository.
fn in_repository(root: &Path, rel: &str) -> Result<std::path::PathBuf> {
    let mut at = root.to_path_buf();
    for part in Path::new(rel).components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(IntegrationError::Link { path: at.display().to_string() }.into());
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(root.join(rel))
}

fn whole_file_rules() -> String {
    format!("---\ndescription: When to use the Lynx code search tools\nalwaysApply: true\n---\n{}", rules_text())
}

pub fn rules(dir: Option<&Path>, target: &str, print: bool) -> Result<Answer> {
    let (file, whole) = rules_file(target)?;
    let section = if whole { whole_file_rules() } else { rules_text() };
    if print {
        return Ok(Answer::new("rules", None, json!({"file": file, "written": false}), section));
    }
    let path = in_repository(&root(dir)?, file)?;
    write_rules(&path, whole)?;
    Ok(Answer::new(
        "rules",
        None,
        json!({"file": path.display().to_string(), "written": true}),
        format!("wrote the Lynx rules section to {}\n", path.display()),
    ))
}

fn write_rules(path: &Path, whole: bool) -> Result<()> {
    let updated = if whole {
        whole_file_rules()
    } else {
        let section = rules_text();
        let current = std::fs::read_to_string(path).unwrap_or_default();
        // Replace an earlier Lynx section in place; otherwise append.
        match (current.find(BEGIN), current.find(END)) {
            (Some(b), Some(e)) if e > b => {
                format!("{}{}{}", &current[..b], section.trim_end(), &current[e + END.len()..])
            }
            _ if current.is_empty() => section,
            _ => format!("{}\n\n{}", current.trim_end(), section),
        }
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::fsutil::write_atomic(path, updated.as_bytes())
}

/// Takes the Lynx section (or Lynx's own file) out again; a file that held nothing else goes.
fn remove_rules(path: &Path, whole: bool) -> Result<bool> {
    let Ok(current) = std::fs::read_to_string(path) else { return Ok(false) };
    if whole {
        std::fs::remove_file(path)?;
        return Ok(true);
    }
    let (Some(b), Some(e)) = (current.find(BEGIN), current.find(END)) else { return Ok(false) };
    if e < b {
        return Ok(false);
    }
    let before = current[..b].trim_end_matches('\n');
    let after = current[e + END.len()..].trim_start_matches('\n');
    let rest = match (before.is_empty(), after.is_empty()) {
        (true, true) => String::new(),
        (false, true) => format!("{before}\n"),
        (true, false) => after.to_string(),
        (false, false) => format!("{before}\n\n{after}"),
    };
    if rest.trim().is_empty() {
        std::fs::remove_file(path)?;
    } else {
        crate::fsutil::write_atomic(path, rest.as_bytes())?;
    }
    Ok(true)
}

/// Adds (or replaces) the `lynx` server in a client's JSON file, keeping everything else.
fn add_server(path: &Path, command: &str, args: &[String]) -> Result<()> {
    add_named_server(path, "lynx", json!({"command": command, "args": args}))
}

fn add_named_server(path: &Path, name: &str, server: Value) -> Result<()> {
    let mut v: Value = match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str(&t)
            .with_context(|| format!("{} is not valid JSON; fix it or move it away, then run again", path.display()))?,
        Err(_) => json!({}),
    };
    let obj = v.as_object_mut().with_context(|| format!("{} is not a JSON object", path.display()))?;
    let servers = obj.entry("mcpServers").or_insert_with(|| json!({}));
    let servers =
        servers.as_object_mut().with_context(|| format!("`mcpServers` in {} is not an object", path.display()))?;
    servers.insert(name.into(), server);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::fsutil::write_atomic(path, (serde_json::to_string_pretty(&v)? + "\n").as_bytes())
}

/// Takes the `lynx` server out of a client's JSON file; a file left with nothing goes, and so
/// does a folder below `root` made only for it.
fn remove_server(root: &Path, path: &Path) -> Result<bool> {
    remove_named_server(root, path, "lynx")
}

fn remove_named_server(root: &Path, path: &Path, name: &str) -> Result<bool> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(false) };
    let Ok(mut v) = serde_json::from_str::<Value>(&text) else { return Ok(false) };
    let Some(servers) = v.get_mut("mcpServers").and_then(|s| s.as_object_mut()) else { return Ok(false) };
    if servers.remove(name).is_none() {
        return Ok(false);
    }
    let empty_servers = servers.is_empty();
    if empty_servers {
        v.as_object_mut().map(|o| o.remove("mcpServers"));
    }
    if v.as_object().is_some_and(|o| o.is_empty()) {
        std::fs::remove_file(path)?;
        if let Some(parent) = path.parent().filter(|p| *p != root) {
            // Only when empty.
            let _ = std::fs::remove_dir(parent);
        }
    } else {
        crate::fsutil::write_atomic(path, (serde_json::to_string_pretty(&v)? + "\n").as_bytes())?;
    }
    Ok(true)
}

/// The rules target that goes with a client.
fn rules_for(client: &str) -> &'static str {
    match client {
        "cursor" => "cursor",
        "codex" => "agents",
        "claude" => "claude",
        _ => "lynx",
    }
}

/// `git lynx init`: the client's project configuration and rules, written; the index built by
/// the caller afterwards. Returns what was written.
pub fn init(dir: Option<&Path>, client: &str) -> Result<(Vec<String>, Vec<String>)> {
    let root = root(dir)?;
    if client == "generic" {
        return Err(IntegrationError::Generic {}.into());
    }
    let (cmd, args) = entry(client, &root)?;
    let mut written = Vec::new();
    let mut hints = Vec::new();
    match project_file(client) {
        Some(f) => {
            add_server(&in_repository(&root, f)?, &cmd, &args)?;
            written.push(f.to_string());
        }
        None if client == "antigravity" => {
            let file = antigravity_file().context("HOME is not set: cannot find Antigravity's mcp_config.json")?;
            add_named_server(&file, &user_entry_name(&root), json!({"command": cmd, "args": args, "type": "stdio"}))?;
            written.push(file.display().to_string());
        }
        None if client == "codex" => {
            let file = codex_file().context("neither CODEX_HOME nor HOME is set: cannot find Codex's config.toml")?;
            add_codex_server(&file, &cmd, &args)?;
            written.push(file.display().to_string());
        }
        None => {
            hints.push(format!("configure your client to run `{cmd} {}` in this repository (stdio)", args.join(" ")))
        }
    }
    let (file, whole) = rules_file(rules_for(client))?;
    write_rules(&in_repository(&root, file)?, whole)?;
    written.push(file.to_string());
    Ok((written, hints))
}

/// `git lynx remove`: every client entry and rules section Lynx wrote, and the store when asked.
pub fn remove(dir: Option<&Path>, store: Option<&Path>) -> Result<Answer> {
    let root = root(dir)?;
    let mut removed = Vec::new();
    for client in CLIENTS {
        if let Some(f) = project_file(client)
            && remove_server(&root, &in_repository(&root, f)?)?
        {
            removed.push(f.to_string());
        }
    }
    if let Some(file) = antigravity_file()
        && remove_named_server(Path::new("/"), &file, &user_entry_name(&root))?
    {
        removed.push(file.display().to_string());
    }
    if let Some(file) = codex_file()
        && remove_codex_server(&file)?
    {
        removed.push(file.display().to_string());
    }
    for target in ["claude", "agents", "cursor", "lynx"] {
        let (file, whole) = rules_file(target)?;
        if remove_rules(&in_repository(&root, file)?, whole)? {
            removed.push(file.to_string());
        }
    }
    // Folders made for those files, when nothing else is in them.
    let _ = std::fs::remove_dir(root.join(".cursor/rules"));
    let _ = std::fs::remove_dir(root.join(".cursor"));
    if let Some(s) = store {
        let inside = s.canonicalize().ok().zip(root.canonicalize().ok()).is_some_and(|(s, r)| s.starts_with(r));
        if s.is_dir() && !inside {
            return Err(IntegrationError::OutsideStore { path: s.display().to_string() }.into());
        }
        if s.is_dir() {
            std::fs::remove_dir_all(s).with_context(|| format!("removing {}", s.display()))?;
            removed.push(s.display().to_string());
        }
    }
    let mut text = String::new();
    if removed.is_empty() {
        text.push_str("nothing of Lynx's to remove\n");
    }
    for r in &removed {
        text.push_str(&format!("removed Lynx from {r}\n"));
    }
    Ok(Answer::new("remove", None, json!({"removed": removed}), text))
}

/// The client to set up when none is named: Cursor when the project already has `.cursor/`,
/// else Claude Code.
pub fn detect_client(dir: Option<&Path>) -> Result<&'static str> {
    let root = root(dir)?;
    Ok(if root.join(".cursor").is_dir() { "cursor" } else { "claude" })
}

/// Writes the client's entries (detected when not named), then indexes unless `engine` gives none.
pub fn init_answer(
    dir: Option<&Path>,
    client: Option<&str>,
    engine: impl FnOnce() -> anyhow::Result<Option<crate::engine::Engine>>,
) -> anyhow::Result<crate::ops::Answer> {
    let client = match client {
        Some(c) => c.to_string(),
        None => detect_client(dir)?.to_string(),
    };
    let (written, hints) = init(dir, &client)?;
    let mut text = String::new();
    for w in &written {
        text.push_str(&format!("wrote {w}\n"));
    }
    for h in &hints {
        text.push_str(&format!("{h}\n"));
    }
    let index = match engine()? {
        Some(e) => {
            let a = crate::ops::index::run(&e, &[])?;
            text.push_str(&a.text);
            Some(a.json())
        }
        None => None,
    };
    text.push_str(&format!("ready: start {client} in this repository; `git lynx remove` undoes this\n"));
    Ok(crate::ops::Answer::new(
        "init",
        None,
        serde_json::json!({"client": client, "written": written, "hints": hints, "index": index}),
        text,
    ))
}
