//! The MCP tool set: names, descriptions (kept short: every client pays for `tools/list` in
//! its context), the argument type and result types of each tool (its input and output
//! schemas are generated from them), profile membership, and the mapping from JSON arguments
//! to the same operations the CLI runs.

use super::{args, output};
use crate::config::ToolProfile;
use crate::ops::Answer;
use crate::ops::registry::{self, Operation, Scope};
use crate::sources::Sources;
use anyhow::{Result, anyhow};
use serde_json::{Map, Value};

crate::error::errors! {
    /// A tool call, or a tool list, that names what the server does not have.
    pub enum CallError: Usage {
        UnknownTool { name: String } => "unknown tool `{name}` in tools.include/exclude",
        ExportMode { got: String } => "argument `mode` must be \"symbol\" or \"module\", got \"{got}\"",
        UnknownArgument { name: String, tool: String, accepted: String } =>
            "unknown argument `{name}` for {tool}; it takes: {accepted}",
        /// Two names of one setting, given different values.
        Conflict { name: String, with: String } =>
            "argument `{name}` conflicts with `{with}` (the same setting, given twice with different values)",
        /// An argument larger than any question needs (its text, or a list's texts together).
        TooLarge { name: String, bytes: usize, items: usize } =>
            "argument `{name}` is {bytes} bytes in {items} items; at most 64 KiB (65536 bytes) of text and 1000 items are accepted: send a shorter one",
    }
}

/// An operation as an MCP tool: the operation's name, profile, argument type and run
/// (`ops::registry`), with what MCP adds — the description a model reads and the
/// `outputSchema` of the result types it answers with.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: fn() -> Value,
    /// The `outputSchema`: generated from the result types the tool answers with.
    pub output: fn() -> Value,
    pub read_only: bool,
    /// Smallest profile that includes the tool.
    pub profile: ToolProfile,
    /// Reads the call's arguments as the operation's and runs it.
    pub call: fn(&dyn Scope, &Map<String, Value>) -> Result<Answer>,
}

const fn tool<O: Operation>(description: &'static str) -> ToolSpec {
    ToolSpec {
        name: O::NAME,
        description,
        schema: args::schema::<O::Args>,
        output: output::of::<O>,
        read_only: !O::WRITES,
        profile: O::PROFILE,
        call: registry::call::<O>,
    }
}

pub const TOOLS: &[ToolSpec] = &[
    tool::<registry::Search>(
        "Find code by meaning or identifiers (BM25 + embeddings). Start here. Results cite path:lines, symbol, score and view.",
    ),
    tool::<registry::DescribeSymbol>(
        "A symbol's definition, callers, references (uses as a value), callees, bases and tests in one answer.",
    ),
    tool::<registry::FindUsages>(
        "Where a symbol is used: call-graph callers and subclasses plus lexical mentions, each tagged.",
    ),
    tool::<registry::Impact>(
        "Blast radius before editing: transitive callers and referrers through confident edges (same file, an import, a declared type; name-only guesses listed apart) with hop distance, and tests to re-run. Pass `symbol`, or `changes` (\"uncommitted\", \"staged\", \"A..B\") for a diff.",
    ),
    tool::<registry::Feedback>("Report what you tried and what failed, to improve answers. Stored locally."),
    tool::<registry::FindDefinition>(
        "Where a symbol is defined (graph). A missing name answers in one line with the nearest names; `fallback` adds lexical matches.",
    ),
    tool::<registry::DeepSearch>(
        "Several phrasings of one question, tried in order until one gives strong results; warns when none does. Use when search was weak.",
    ),
    tool::<registry::GraphQuery>(
        "Code graph: callers, callees, references, referenced_by, subclasses, superclasses, imports, neighbors, shortest_path, overview, surprising_connections, status.",
    ),
    tool::<registry::RepoOverview>(
        "Languages, frameworks, manifests, entry points and build/test/run commands. Use first in an unfamiliar repository.",
    ),
    tool::<registry::SearchDiff>(
        "Search only inside changed code (vs base branch, staged and unstaged included). For reviews.",
    ),
    tool::<registry::FindTestsFor>("Tests that exercise a symbol or file."),
    tool::<registry::DataAccess>(
        "Who reads, writes, maps or calls a database table, TABLE.COLUMN or stored procedure (SQL in strings and .sql files, JPA, EF, SQLAlchemy, Django, ActiveRecord). No name: every table.",
    ),
    tool::<registry::Context>(
        "A symbol's code with the lines around it and its direct neighbours (type, bases, callees, callers), packed into a token budget.",
    ),
    tool::<registry::FindSimilar>("Code similar to a snippet, or to a file (optionally the chunk at a line)."),
    tool::<registry::ModuleSummary>("A file's definitions, imports and dependents."),
    tool::<registry::ExportGraph>(
        "Write an offline HTML graph of a symbol's blast radius or a module's hub; returns its path.",
    ),
    tool::<registry::ListSources>("Configured sources and their index state."),
    tool::<registry::GetRagStatus>("Index health: fresh/stale, coverage, model, fingerprints."),
    tool::<registry::UpdateSourceIndex>("Re-index a source now (force: rebuild its shards)."),
];

/// Tools of a profile, with include/exclude adjustments.
pub fn tools_for(
    profile: ToolProfile,
    include: &[String],
    exclude: &[String],
    search_diff_available: bool,
) -> Result<Vec<&'static ToolSpec>> {
    for n in include.iter().chain(exclude) {
        if !TOOLS.iter().any(|t| t.name == n) {
            return Err(CallError::UnknownTool { name: n.clone() }.into());
        }
    }
    Ok(TOOLS
        .iter()
        .filter(|t| t.profile <= profile || include.iter().any(|i| i == t.name))
        .filter(|t| !exclude.iter().any(|e| e == t.name))
        .filter(|t| t.name != "search_diff" || search_diff_available)
        .collect())
}

/// The tools a server lists: the profile and include/exclude of the merged configuration,
/// except that a tool which writes files comes only from the user's own choice (a flag, the
/// environment, the user's or the local file), never from the committed `lynx.toml` alone.
pub fn trusted_tool_list(
    config: &crate::config::Config,
    profile: ToolProfile,
    trusted_profile: ToolProfile,
) -> Result<Vec<&'static ToolSpec>> {
    let mut list = tools_for(profile, &config.tools.include, &config.tools.exclude, true)?;
    let trusted = tools_for(trusted_profile, &config.origin.trusted_tools.include, &[], true)?;
    list.retain(|t| {
        let keep = t.read_only || trusted.iter().any(|x| x.name == t.name);
        if !keep {
            crate::config::warn_once(&format!(
                "{}: the tool `{}` writes files, and a committed file cannot give it to an agent; list it in .lynx/config.toml (tools.include) or start the server with --profile full",
                crate::config::TEAM_FILE,
                t.name
            ));
        }
        keep
    });
    Ok(list)
}

// ------------------------------------------------------------------ arguments

/// LynxMCP's argument names, accepted with LynxMCP's meaning: (tool or `*`, its name, ours).
const LYNXMCP_NAMES: &[(&str, &str, &str)] = &[
    ("*", "top_k", "n_results"),
    ("*", "file_glob", "glob"),
    // The CLI's names for the same settings, which agents reach for too.
    ("*", "k", "n_results"),
    ("*", "limit", "n_results"),
    ("deep_search", "query", "queries"),
    ("graph_query", "relation_filter", "relation"),
    ("graph_query", "file_or_symbol", "symbol"),
    ("graph_query", "top_n_gods", "n_results"),
    ("graph_query", "top_n", "n_results"),
    ("find_similar", "snippet", "code"),
    ("module_summary", "file", "path"),
];

/// The argument names a tool takes: its input schema's, generated once per process.
fn accepted(spec: &ToolSpec) -> &'static [String] {
    static NAMES: std::sync::OnceLock<std::collections::HashMap<&'static str, Vec<String>>> =
        std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        TOOLS
            .iter()
            .map(|t| {
                let schema = (t.schema)();
                let names = schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
                (t.name, names)
            })
            .collect()
    });
    names.get(spec.name).map(Vec::as_slice).unwrap_or_default()
}

/// The arguments of a call in our names: LynxMCP's names translated, LynxMCP's argument shapes
/// (`export_graph {target, mode}`, `shortest_path {source, target}`) mapped, and anything the
/// tool does not take refused with the list of what it does take.
pub fn normalize(tool: &str, args: &Map<String, Value>) -> Result<Map<String, Value>> {
    let Some(spec) = TOOLS.iter().find(|t| t.name == tool) else {
        return Ok(args.clone());
    };
    let ours = accepted(spec);
    // Only names for settings this tool has: `top_k` on a tool without a count is unknown.
    let theirs: Vec<&(&str, &str, &str)> =
        LYNXMCP_NAMES.iter().filter(|(t, _, to)| (*t == "*" || *t == tool) && ours.iter().any(|o| o == to)).collect();
    let mut args = args.clone();
    // Shapes first: they give `source` and `target` LynxMCP's meaning before names are checked.
    if tool == "graph_query"
        && args.get("operation").and_then(Value::as_str) == Some("shortest_path")
        && !args.contains_key("symbol")
    {
        // LynxMCP's shortest_path goes from `source` to `target`; ours names the start `symbol`.
        if let Some(start) = args.remove("source") {
            args.insert("symbol".into(), start);
        }
    }
    if tool == "export_graph"
        && let Some(target) = args.remove("target")
    {
        let mode = args.remove("mode");
        let key = match mode.as_ref().and_then(Value::as_str) {
            None | Some("symbol") => "symbol",
            Some("module") => "module",
            Some(other) => {
                return Err(CallError::ExportMode { got: other.to_string() }.into());
            }
        };
        args.insert(key.into(), target);
    }
    let mut out = Map::new();
    for (k, v) in args {
        let name = if ours.contains(&k) {
            k.clone()
        } else if let Some((_, _, to)) = theirs.iter().find(|(_, from, _)| *from == k) {
            to.to_string()
        } else {
            let mut accepted: Vec<String> = ours.to_vec();
            accepted.extend(theirs.iter().map(|(_, from, _)| from.to_string()));
            accepted.sort();
            accepted.dedup();
            return Err(
                CallError::UnknownArgument { name: k, tool: tool.to_string(), accepted: accepted.join(", ") }.into()
            );
        };
        if let Some(prev) = out.get(&name)
            && *prev != v
        {
            return Err(CallError::Conflict { name: k, with: name }.into());
        }
        let (bytes, items) = text_size(&v);
        if bytes > MAX_ARGUMENT_BYTES || items > MAX_ARGUMENT_ITEMS {
            return Err(CallError::TooLarge { name: k, bytes, items }.into());
        }
        out.insert(name, v);
    }
    Ok(out)
}

/// Most text one argument may carry (a query, a snippet, a list of globs together), and most
/// items in a list: a question never needs more, and every byte is analysed and matched.
pub const MAX_ARGUMENT_BYTES: usize = 64 * 1024;
pub const MAX_ARGUMENT_ITEMS: usize = 1000;

/// The bytes of text in `v` (strings, keys and numbers as written) and its items, at any depth.
fn text_size(v: &Value) -> (usize, usize) {
    match v {
        Value::String(s) => (s.len(), 1),
        Value::Array(a) => a.iter().map(text_size).fold((0, 0), |(b, n), (b2, n2)| (b + b2, n + n2)),
        Value::Object(m) => m
            .keys()
            .map(|k| (k.len(), 0))
            .chain(m.values().map(text_size))
            .fold((0, 0), |(b, n), (b2, n2)| (b + b2, n + n2)),
        other => (other.to_string().len(), 1),
    }
}

/// Runs a tool. Usage problems come back as errors naming the argument.
pub fn call(name: &str, args: &Map<String, Value>, sources: &Sources) -> Result<Answer> {
    let Some(spec) = TOOLS.iter().find(|t| t.name == name) else {
        return Err(anyhow!("unknown tool `{name}`"));
    };
    (spec.call)(&Agent(sources), &normalize(name, args)?)
}

/// An agent's call: a question that names no source asks every source, and what a tool
/// writes stays inside the repository.
struct Agent<'a>(&'a Sources);

impl Scope for Agent<'_> {
    fn repository(&self) -> Result<&crate::engine::Engine> {
        Ok(&self.0.main().engine)
    }
    fn sources(&self) -> Result<&Sources> {
        Ok(self.0)
    }
    fn all_by_default(&self) -> bool {
        true
    }
    fn confined(&self) -> bool {
        true
    }
}
