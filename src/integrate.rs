//! Client integration: `git lynx mcp-config` prints the server entry for an MCP client with
//! absolute paths; `git lynx rules` writes a CLAUDE.md / AGENTS.md section that teaches an
//! agent when to call which tool.

use crate::ops::Answer;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

fn paths(dir: Option<&Path>) -> Result<(PathBuf, PathBuf)> {
    let exe = std::env::current_exe().context("cannot find the git-lynx executable")?;
    let repo = crate::repo::Repo::discover(dir.unwrap_or(Path::new(".")))?;
    let root = repo.workdir.clone().unwrap_or(repo.common_dir.clone());
    Ok((exe, root))
}

pub fn mcp_config(dir: Option<&Path>, client: &str) -> Result<Answer> {
    let (exe, root) = paths(dir)?;
    let (exe_s, root_s) = (exe.display().to_string(), root.display().to_string());
    let args = serde_json::json!(["-C", root_s, "serve"]);
    let text = match client {
        "claude" => format!(
            "# Claude Code: run this once in the repository (or add the JSON to .mcp.json)\nclaude mcp add lynx -- {exe_s} -C {root_s} serve\n\n{}\n",
            serde_json::to_string_pretty(&serde_json::json!({"mcpServers": {"lynx": {"command": exe_s, "args": args}}}))?
        ),
        "cursor" => format!(
            "// .cursor/mcp.json\n{}\n",
            serde_json::to_string_pretty(&serde_json::json!({"mcpServers": {"lynx": {"command": exe_s, "args": args}}}))?
        ),
        "codex" => format!("# ~/.codex/config.toml\n[mcp_servers.lynx]\ncommand = {}\nargs = {}\n", toml_str(&exe_s), serde_json::to_string(&args)?),
        "generic" => serde_json::to_string_pretty(&serde_json::json!({"command": exe_s, "args": args, "transport": "stdio"}))? + "\n",
        other => return Err(crate::error::usage(format!("unknown client `{other}`: claude, cursor, codex or generic"))),
    };
    Ok(Answer::new("mcp_config", None, serde_json::json!({"client": client, "command": exe_s, "args": args}), text))
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

pub fn rules(dir: Option<&Path>, target: &str, print: bool) -> Result<Answer> {
    let file = match target {
        "claude" => "CLAUDE.md",
        "agents" => "AGENTS.md",
        other => return Err(crate::error::usage(format!("unknown rules target `{other}`: claude or agents"))),
    };
    let section = rules_text();
    if print {
        return Ok(Answer::new("rules", None, serde_json::json!({"file": file, "written": false}), section));
    }
    let (_, root) = paths(dir)?;
    let path = root.join(file);
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    // Replace an earlier Lynx section in place; otherwise append.
    let updated = match (current.find(BEGIN), current.find(END)) {
        (Some(b), Some(e)) if e > b => format!("{}{}{}", &current[..b], section.trim_end(), &current[e + END.len()..]),
        _ if current.is_empty() => section.clone(),
        _ => format!("{}\n\n{}", current.trim_end(), section),
    };
    crate::fsutil::write_atomic(&path, updated.as_bytes())?;
    Ok(Answer::new("rules", None, serde_json::json!({"file": path.display().to_string(), "written": true}), format!("wrote the Lynx rules section to {}\n", path.display())))
}
