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
        schema: args::schema::<args::Search>,
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "describe_symbol",
        output: || output::answers_per_source(&[output::shape::<ops::nav::Describe>, output::shape::<ops::Unmatched>]),
        description: "A symbol's definition, callers, callees, bases and tests in one answer.",
        schema: args::schema::<args::Symbol>,
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "find_usages",
        output: || {
            output::answers_per_source(&[output::shape::<ops::nav::FindUsages>, output::shape::<ops::Unmatched>])
        },
        description: "Where a symbol is used: call-graph callers and subclasses plus lexical mentions, each tagged.",
        schema: args::schema::<args::Usages>,
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
        schema: args::schema::<args::Impact>,
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "feedback",
        output: || output::answers(&[output::shape::<ops::feedback::Recorded>]),
        description: "Report what you tried and what failed, to improve answers. Stored locally.",
        schema: args::schema::<args::Feedback>,
        read_only: false,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "find_definition",
        output: || {
            output::answers_per_source(&[output::shape::<ops::nav::FindDefinition>, output::shape::<ops::Unmatched>])
        },
        description: "Where a symbol is defined (graph; lexical fallback when unknown).",
        schema: args::schema::<args::Symbol>,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "deep_search",
        output: || output::answers_per_source(&[output::shape::<ops::deep_search::DeepResult>]),
        description: "Several phrasings of one question, tried in order until one gives strong results; warns when none does. Use when search was weak.",
        schema: args::schema::<args::DeepSearch>,
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
        schema: args::schema::<args::GraphQuery>,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "repo_overview",
        output: || output::answers(&[output::shape::<ops::overview::Overview>]),
        description: "Languages, frameworks, manifests, entry points and build/test/run commands. Use first in an unfamiliar repository.",
        schema: args::schema::<args::Plain>,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "search_diff",
        output: || output::answers(&[output::shape::<ops::changes::SearchDiffResult>]),
        description: "Search only inside changed code (vs base branch, staged and unstaged included). For reviews.",
        schema: args::schema::<args::SearchDiff>,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "find_tests_for",
        output: || output::answers_per_source(&[output::shape::<ops::nav::FindTests>, output::shape::<ops::Unmatched>]),
        description: "Tests that exercise a symbol or file.",
        schema: args::schema::<args::TestsFor>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "data_access",
        output: || output::answers(&[output::shape::<ops::data_access::DataAccess>]),
        description: "Who reads, writes, maps or calls a database table, TABLE.COLUMN or stored procedure (SQL in strings and .sql files, JPA, EF, SQLAlchemy, Django, ActiveRecord). No name: every table.",
        schema: args::schema::<args::DataAccess>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "context",
        output: || output::answers(&[output::shape::<ops::context::ContextSlice>]),
        description: "A symbol's code with the lines around it and its direct neighbours (type, bases, callees, callers), packed into a token budget.",
        schema: args::schema::<args::Context>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "find_similar",
        output: || output::answers(&[output::shape::<ops::search::SearchResult>]),
        description: "Code similar to a snippet, or to a file (optionally the chunk at a line).",
        schema: args::schema::<args::Similar>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "module_summary",
        output: || {
            output::answers(&[output::shape::<ops::nav::ModuleSummary>, output::shape::<ops::nav::UnmatchedFile>])
        },
        description: "A file's definitions, imports and dependents.",
        schema: args::schema::<args::ModuleSummary>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "export_graph",
        output: || output::answers(&[output::shape::<ops::export::Exported>]),
        description: "Write an offline HTML graph of a symbol's blast radius or a module's hub; returns its path.",
        schema: args::schema::<args::Export>,
        read_only: false,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "list_sources",
        output: || output::answers(&[output::shape::<ops::status::SourceList>]),
        description: "Configured sources and their index state.",
        schema: args::schema::<args::Nothing>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "get_rag_status",
        output: || output::answers(&[output::shape::<ops::status::RagStatus>]),
        description: "Index health: fresh/stale, coverage, model, fingerprints.",
        schema: args::schema::<args::Source>,
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "update_source_index",
        output: || output::answers(&[output::shape::<ops::status::SourceUpdates>]),
        description: "Re-index a source now (force: rebuild its shards).",
        schema: args::schema::<args::Update>,
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

/// Lines of code per hit in tool answers (the CLI's default too, so texts match).
pub use crate::ops::search::SNIPPET_LINES;

/// Runs a tool. Usage problems come back as errors naming the argument.
pub fn call(name: &str, args: &Map<String, Value>, sources: &Sources, feedback: &std::path::Path) -> Result<Answer> {
    let args = normalize(name, args)?;
    // Single-source tools: the named source, else the repository.
    let one = |at: &args::At| -> Result<&crate::sources::Source> {
        match &at.source {
            Some(s) => sources.get(s),
            None => Ok(sources.main()),
        }
    };
    // Navigation fans out over the sources when none is named.
    let some = |at: &args::At| sources.select(at.source.as_deref());
    let config = &sources.list[0].engine.ws.config;
    match name {
        "search" => {
            let a: args::Search = args::parse(&args)?;
            let run = ops::search::SearchArgs {
                paths_only: false,
                query: a.query()?,
                k: Some(a.k(config.search.k)),
                rev: a.at.rev.clone(),
                mode: a.mode,
                snippet_lines: SNIPPET_LINES,
                rerank: ops::search::reranker(config, None, a.rerank),
                files: a.files.unwrap_or(false),
                cursor: a.cursor.clone(),
                explain: a.explain.unwrap_or(false),
                filters: a.filters.filters(),
            };
            ops::search::run_sources(sources, a.at.source.as_deref(), &run)
        }
        "deep_search" => {
            let a: args::DeepSearch = args::parse(&args)?;
            let run = ops::deep_search::DeepArgs {
                variants: a.variants(),
                k: a.k(),
                rev: a.at.rev.clone(),
                mode: a.mode,
                min_results: a.min_results(config.search.deep_min_results),
                return_all_variants: a.return_all_variants.unwrap_or(false),
                snippet_lines: SNIPPET_LINES,
                min_score: a.min_score,
                filters: a.filters.filters(),
            };
            ops::over_sources(&some(&a.at)?, |e| ops::deep_search::run(e, &run))
        }
        "find_definition" => {
            let a: args::Symbol = args::parse(&args)?;
            let symbol = a.symbol()?;
            ops::over_sources(&some(&a.at)?, |e| ops::nav::find_definition(e, &symbol, a.at.rev.as_deref()))
        }
        "find_usages" => {
            let a: args::Usages = args::parse(&args)?;
            let symbol = a.symbol()?;
            ops::over_sources(&some(&a.at)?, |e| {
                ops::nav::find_usages(e, &symbol, a.at.rev.as_deref(), a.n(), a.cursor.as_deref())
            })
        }
        "find_tests_for" => {
            let a: args::TestsFor = args::parse(&args)?;
            let symbol = a.symbol()?;
            ops::over_sources(&some(&a.at)?, |e| {
                ops::nav::find_tests_for(
                    e,
                    &symbol,
                    a.at.rev.as_deref(),
                    a.test_path_pattern.as_deref(),
                    a.cursor.as_deref(),
                )
            })
        }
        "data_access" => {
            let a: args::DataAccess = args::parse(&args)?;
            ops::data_access::run(
                &sources.main().engine,
                a.name.as_deref(),
                a.at.rev.as_deref(),
                a.n(),
                a.cursor.as_deref(),
            )
        }
        "context" => {
            let a: args::Context = args::parse(&args)?;
            let run = ops::context::ContextArgs {
                symbol: a.symbol()?,
                rev: a.at.rev.clone(),
                budget: a.budget(),
                around: a.around(),
            };
            ops::context::run(&sources.main().engine, &run)
        }
        "describe_symbol" => {
            let a: args::Symbol = args::parse(&args)?;
            let symbol = a.symbol()?;
            ops::over_sources(&some(&a.at)?, |e| ops::nav::describe_symbol(e, &symbol, a.at.rev.as_deref()))
        }
        "impact" => {
            let a: args::Impact = args::parse(&args)?;
            let engine = &one(&a.at)?.engine;
            let rev = a.at.rev.as_deref();
            if let Some(name) = a.table.as_ref().or(a.column.as_ref()).filter(|n| !n.trim().is_empty()) {
                return ops::data_access::impact(engine, name, rev, a.max_depth());
            }
            match (&a.symbol, &a.changes) {
                (Some(s), _) if !s.trim().is_empty() => ops::nav::impact(engine, s, rev, a.max_depth()),
                (_, Some(c)) => ops::changes::impact_range(
                    engine,
                    &ops::changes::ImpactRangeArgs::parse(c)?,
                    a.max_depth(),
                    a.format.unwrap_or(ops::changes::ImpactFormat::Text),
                    &a.fail_on(),
                ),
                _ => Err(crate::error::usage("impact needs `symbol` or `changes`")),
            }
        }
        "module_summary" => {
            let a: args::ModuleSummary = args::parse(&args)?;
            ops::nav::module_summary(&one(&a.at)?.engine, &a.path()?, a.at.rev.as_deref(), a.n())
        }
        "repo_overview" => {
            let a: args::Plain = args::parse(&args)?;
            ops::overview::run(&one(&a.at)?.engine, a.at.rev.as_deref())
        }
        "find_similar" => {
            let a: args::Similar = args::parse(&args)?;
            let k = a.k();
            let run = ops::similar::SimilarArgs {
                snippet: a.code,
                file: a.file,
                line: a.line,
                k,
                rev: a.at.rev.clone(),
                filters: a.filters.filters(),
                snippet_lines: SNIPPET_LINES,
            };
            ops::similar::run(&one(&a.at)?.engine, &run)
        }
        "graph_query" => {
            let a: args::GraphQuery = args::parse(&args)?;
            let run = ops::graph::GraphArgs {
                op: a.operation,
                symbol: a.symbol.clone(),
                target: a.target.clone(),
                relation: a.relation.clone(),
                depth: a.depth(),
                rev: a.at.rev.clone(),
                limit: a.limit(),
                min_community: a.min_community(),
                max_hops: a.max_hops(),
                cursor: a.cursor.clone(),
            };
            ops::graph::run(&one(&a.at)?.engine, &run)
        }
        "export_graph" => {
            let a: args::Export = args::parse(&args)?;
            let engine = &one(&a.at)?.engine;
            let out = match &a.out {
                Some(o) => Some(inside_repository(engine, o)?),
                None => None,
            };
            let run = ops::export::ExportArgs {
                symbol: a.symbol.clone(),
                module: a.module.clone(),
                out,
                depth: a.depth(),
                rev: a.at.rev.clone(),
            };
            ops::export::run(engine, &run)
        }
        "search_diff" => {
            let a: args::SearchDiff = args::parse(&args)?;
            let query = a.query()?;
            let k = a.k();
            let run = ops::changes::SearchDiffArgs {
                query,
                base: a.base.clone(),
                rev: a.at.rev.clone(),
                k,
                snippet_lines: SNIPPET_LINES,
                filters: a.filters.filters(),
                cursor: a.cursor.clone(),
            };
            ops::changes::search_diff(&one(&a.at)?.engine, &run)
        }
        "list_sources" => {
            args::parse::<args::Nothing>(&args)?;
            ops::status::list_sources(sources)
        }
        "get_rag_status" => {
            let a: args::Source = args::parse(&args)?;
            ops::status::rag_status(sources, a.source.as_deref())
        }
        "update_source_index" => {
            let a: args::Update = args::parse(&args)?;
            ops::status::update_source(sources, a.source.as_deref(), a.force.unwrap_or(false))
        }
        "feedback" => {
            let a: args::Feedback = args::parse(&args)?;
            ops::feedback::record(
                feedback,
                a.tool.as_deref().unwrap_or(""),
                a.query.as_deref().unwrap_or(""),
                &a.outcome()?,
                a.comment.as_deref().unwrap_or(""),
            )
        }
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
