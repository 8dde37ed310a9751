//! The MCP tool set: names, descriptions (kept short: every client pays for `tools/list` in
//! its context), the argument type and result types of each tool (its input and output
//! schemas are generated from them), profile membership, and the mapping from JSON arguments
//! to the same operations the CLI runs.

use super::{args, output};
use crate::config::ToolProfile;
use crate::ops::{self, Answer};
use crate::sources::Sources;
use anyhow::{Result, anyhow};
use serde_json::{Map, Value};

pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: fn() -> Value,
    /// The `outputSchema`: generated from the result types the tool answers with.
    pub output: fn() -> Value,
    pub read_only: bool,
    /// Smallest profile that includes the tool.
    pub profile: ToolProfile,
}

pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "search",
        output: || output::answers(&[output::shape::<ops::search::SearchResult>]),
        description: "Find code by meaning or identifiers (BM25 + embeddings). Start here. Results cite path:lines, symbol, score and view.",
        schema: args::schema::<ops::search::SearchArgs>,
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "describe_symbol",
        output: || output::answers_per_source(&[output::shape::<ops::nav::Describe>, output::shape::<ops::Unmatched>]),
        description: "A symbol's definition, callers, callees, bases and tests in one answer.",
        schema: args::schema::<ops::nav::SymbolArgs>,
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "find_usages",
        output: || {
            output::answers_per_source(&[output::shape::<ops::nav::FindUsages>, output::shape::<ops::Unmatched>])
        },
        description: "Where a symbol is used: call-graph callers and subclasses plus lexical mentions, each tagged.",
        schema: args::schema::<ops::nav::UsagesArgs>,
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "impact",
        output: || {
            output::answers(&[
                output::shape::<ops::nav::Impact>,
                output::shape::<ops::Unmatched>,
                output::shape::<ops::changes::RangeImpact>,
                output::shape::<ops::data_access::TableImpact>,
            ])
        },
        description: "Blast radius before editing: transitive callers with hop distance and tests to re-run. Pass `symbol`, or `changes` (\"uncommitted\", \"staged\", \"A..B\") for a diff.",
        schema: args::schema::<ops::impact::ImpactArgs>,
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "feedback",
        output: || output::answers(&[output::shape::<ops::feedback::Recorded>]),
        description: "Report what you tried and what failed, to improve answers. Stored locally.",
        schema: args::schema::<ops::feedback::FeedbackArgs>,
        read_only: false,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "find_definition",
        output: || {
            output::answers_per_source(&[output::shape::<ops::nav::FindDefinition>, output::shape::<ops::Unmatched>])
        },
        description: "Where a symbol is defined (graph; lexical fallback when unknown).",
        schema: args::schema::<ops::nav::SymbolArgs>,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "deep_search",
        output: || output::answers_per_source(&[output::shape::<ops::deep_search::DeepResult>]),
        description: "Several phrasings of one question, tried in order until one gives strong results; warns when none does. Use when search was weak.",
        schema: args::schema::<ops::deep_search::DeepArgs>,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "graph_query",
        output: || {
            output::answers(&[
                output::shape::<ops::graph::Traversal>,
                output::shape::<ops::graph::GraphPath>,
                output::shape::<ops::graph::GraphStatus>,
                output::shape::<ops::graph::GraphOverview>,
                output::shape::<ops::graph::Surprises>,
            ])
        },
        description: "Code graph: callers, callees, subclasses, superclasses, imports, neighbors, shortest_path, overview, surprising_connections, status.",
        schema: args::schema::<ops::graph::GraphArgs>,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "repo_overview",
        output: || output::answers(&[output::shape::<ops::overview::Overview>]),
        description: "Languages, frameworks, manifests, entry points and build/test/run commands. Use first in an unfamiliar repository.",
        schema: args::schema::<ops::overview::OverviewArgs>,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "search_diff",
        output: || output::answers(&[output::shape::<ops::changes::SearchDiffResult>]),
        description: "Search only inside changed code (vs base branch, staged and unstaged included). For reviews.",
        schema: args::schema::<ops::changes::SearchDiffArgs>,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "find_tests_for",
        output: || output::answers_per_source(&[output::shape::<ops::nav::FindTests>, output::shape::<ops::Unmatched>]),
        description: "Tests that exercise a symbol or file.",
        schema: args::schema::<ops::nav::TestsArgs>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "data_access",
        output: || output::answers(&[output::shape::<ops::data_access::DataAccess>]),
        description: "Who reads, writes, maps or calls a database table, TABLE.COLUMN or stored procedure (SQL in strings and .sql files, JPA, EF, SQLAlchemy, Django, ActiveRecord). No name: every table.",
        schema: args::schema::<ops::data_access::DataAccessArgs>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "context",
        output: || output::answers(&[output::shape::<ops::context::ContextSlice>]),
        description: "A symbol's code with the lines around it and its direct neighbours (type, bases, callees, callers), packed into a token budget.",
        schema: args::schema::<ops::context::ContextArgs>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "find_similar",
        output: || output::answers(&[output::shape::<ops::search::SearchResult>]),
        description: "Code similar to a snippet, or to a file (optionally the chunk at a line).",
        schema: args::schema::<ops::similar::SimilarArgs>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "module_summary",
        output: || {
            output::answers(&[output::shape::<ops::nav::ModuleSummary>, output::shape::<ops::nav::UnmatchedFile>])
        },
        description: "A file's definitions, imports and dependents.",
        schema: args::schema::<ops::nav::ModuleArgs>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "export_graph",
        output: || output::answers(&[output::shape::<ops::export::Exported>]),
        description: "Write an offline HTML graph of a symbol's blast radius or a module's hub; returns its path.",
        schema: args::schema::<ops::export::ExportArgs>,
        read_only: false,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "list_sources",
        output: || output::answers(&[output::shape::<ops::status::SourceList>]),
        description: "Configured sources and their index state.",
        schema: args::schema::<ops::status::ListArgs>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "get_rag_status",
        output: || output::answers(&[output::shape::<ops::status::RagStatus>]),
        description: "Index health: fresh/stale, coverage, model, fingerprints.",
        schema: args::schema::<ops::status::StatusArgs>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "update_source_index",
        output: || output::answers(&[output::shape::<ops::status::SourceUpdates>]),
        description: "Re-index a source now (force: rebuild its shards).",
        schema: args::schema::<ops::status::UpdateArgs>,
        read_only: false,
        profile: ToolProfile::Full,
    },
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
            return Err(crate::error::usage(format!("unknown tool `{n}` in tools.include/exclude")));
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
                return Err(crate::error::usage(format!(
                    "argument `mode` must be \"symbol\" or \"module\", got \"{other}\""
                )));
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
            return Err(crate::error::usage(format!(
                "unknown argument `{k}` for {tool}; it takes: {}",
                accepted.join(", ")
            )));
        };
        if let Some(prev) = out.get(&name)
            && *prev != v
        {
            return Err(crate::error::usage(format!(
                "argument `{k}` conflicts with `{name}` (the same setting, given twice with different values)"
            )));
        }
        out.insert(name, v);
    }
    Ok(out)
}

/// Runs a tool. Usage problems come back as errors naming the argument.
pub fn call(name: &str, args: &Map<String, Value>, sources: &Sources, feedback: &std::path::Path) -> Result<Answer> {
    let args = normalize(name, args)?;
    // Single-source tools: the named source, else the repository.
    let one = |source: Option<&str>| -> Result<&crate::sources::Source> {
        match source {
            Some(s) => sources.get(s),
            None => Ok(sources.main()),
        }
    };
    // Navigation fans out over the sources when none is named.
    let some = |source: Option<&str>| sources.select(source);
    match name {
        "search" => {
            let a: ops::search::SearchArgs = args::parse(&args)?;
            args::required(&a.query, "query")?;
            ops::search::run_sources(sources, &a)
        }
        "deep_search" => {
            let a: ops::deep_search::DeepArgs = args::parse(&args)?;
            ops::over_sources(&some(a.source.name())?, |e| ops::deep_search::run(e, &a))
        }
        "find_definition" => {
            let a: ops::nav::SymbolArgs = args::parse(&args)?;
            ops::over_sources(&some(a.source.name())?, |e| ops::nav::find_definition(e, &a))
        }
        "find_usages" => {
            let a: ops::nav::UsagesArgs = args::parse(&args)?;
            ops::over_sources(&some(a.source.name())?, |e| ops::nav::find_usages(e, &a))
        }
        "find_tests_for" => {
            let a: ops::nav::TestsArgs = args::parse(&args)?;
            ops::over_sources(&some(a.source.name())?, |e| ops::nav::find_tests_for(e, &a))
        }
        "data_access" => ops::data_access::run(&sources.main().engine, &args::parse(&args)?),
        "context" => ops::context::run(&sources.main().engine, &args::parse(&args)?),
        "describe_symbol" => {
            let a: ops::nav::SymbolArgs = args::parse(&args)?;
            ops::over_sources(&some(a.source.name())?, |e| ops::nav::describe_symbol(e, &a))
        }
        "impact" => {
            let a: ops::impact::ImpactArgs = args::parse(&args)?;
            ops::impact::run(&one(a.source.as_deref())?.engine, &a)
        }
        "module_summary" => {
            let a: ops::nav::ModuleArgs = args::parse(&args)?;
            ops::nav::module_summary(&one(a.source.name())?.engine, &a)
        }
        "repo_overview" => {
            let a: ops::overview::OverviewArgs = args::parse(&args)?;
            ops::overview::run(&one(a.source.name())?.engine, &a)
        }
        "find_similar" => {
            let a: ops::similar::SimilarArgs = args::parse(&args)?;
            ops::similar::run(&one(a.source.name())?.engine, &a)
        }
        "graph_query" => {
            let a: ops::graph::GraphArgs = args::parse(&args)?;
            ops::graph::run(&one(a.source.name())?.engine, &a)
        }
        "export_graph" => {
            let mut a: ops::export::ExportArgs = args::parse(&args)?;
            let engine = &one(a.source.name())?.engine;
            if let Some(out) = &a.out {
                a.out = Some(inside_repository(engine, &out.to_string_lossy())?);
            }
            ops::export::run(engine, &a)
        }
        "search_diff" => {
            let a: ops::changes::SearchDiffArgs = args::parse(&args)?;
            args::required(&a.query, "query")?;
            ops::changes::search_diff(&one(a.source.name())?.engine, &a)
        }
        "list_sources" => {
            args::parse::<ops::status::ListArgs>(&args)?;
            ops::status::list_sources(sources)
        }
        "get_rag_status" => {
            let a: ops::status::StatusArgs = args::parse(&args)?;
            ops::status::rag_status(sources, a.source.as_deref())
        }
        "update_source_index" => ops::status::update(sources, &args::parse(&args)?),
        "feedback" => ops::feedback::record_args(feedback, &args::parse(&args)?),
        other => Err(anyhow!("unknown tool `{other}`")),
    }
}

/// A file an agent asked a tool to write: relative to the repository and inside it (an agent
/// must not be able to write anywhere else through the server).
fn inside_repository(engine: &crate::engine::Engine, out: &str) -> Result<std::path::PathBuf> {
    use std::path::Component;
    let refuse = |why: &str| Err(crate::error::usage(format!("argument `out` {why} (got \"{}\")", out.escape_debug())));
    let p = std::path::Path::new(out);
    let escapes = p.is_absolute()
        || p.components().any(|c| matches!(c, Component::ParentDir | Component::Prefix(_) | Component::RootDir));
    if escapes || out.trim().is_empty() {
        return refuse("must be a path inside the repository, relative to its root");
    }
    let lower = out.to_ascii_lowercase();
    if !(lower.ends_with(".html") || lower.ends_with(".htm")) {
        return refuse("must name an .html file (the tool writes a web page, nothing else)");
    }
    let first = p
        .components()
        .find(|c| !matches!(c, Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy().to_ascii_lowercase());
    if first.as_deref().is_some_and(|f| f == ".git" || f == ".lynx") {
        return refuse("may not lead into .git or .lynx");
    }
    let root = engine.ws.repo.workdir()?;
    let root_real = root.canonicalize()?;
    let full = root.join(p);
    // Every component that exists is resolved, symbolic links included: the deepest existing
    // ancestor (or the file itself) must stay inside the work tree, outside git's directory.
    let mut existing = full.as_path();
    while !existing.exists() && existing.symlink_metadata().is_err() {
        match existing.parent() {
            Some(parent) => existing = parent,
            None => break,
        }
    }
    let real = existing.canonicalize()?;
    if !real.starts_with(&root_real) {
        return refuse("leads outside the repository through a symbolic link");
    }
    let store = engine.ws.store.root.canonicalize().unwrap_or_else(|_| engine.ws.store.root.clone());
    if real.starts_with(&engine.ws.repo.common_dir)
        || real.starts_with(root_real.join(".lynx"))
        || real.starts_with(&store)
    {
        return refuse("may not lead into .git or .lynx");
    }
    if full.symlink_metadata().is_ok_and(|m| !m.is_file()) {
        return refuse("names something that is not a plain file");
    }
    Ok(full)
}
