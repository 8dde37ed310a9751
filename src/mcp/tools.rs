//! The MCP tool set: names, descriptions and argument schemas (kept short: every client
//! pays for `tools/list` in its context), profile membership, and the mapping from JSON
//! arguments to the same operations the CLI runs.

use crate::config::ToolProfile;
use crate::ops::{self, Answer};
use crate::search::Mode;
use crate::search::filter::Filters;
use crate::sources::Sources;
use anyhow::{Result, anyhow};
use serde_json::{Map, Value, json};

pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: fn() -> Value,
    pub read_only: bool,
    /// Smallest profile that includes the tool.
    pub profile: ToolProfile,
}

fn props(p: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": p, "required": required })
}

/// Arguments most tools share.
fn common(mut p: Map<String, Value>) -> Map<String, Value> {
    p.insert("source".into(), json!({"type": "string", "description": "Source name; omit for all"}));
    p.insert("rev".into(), json!({"type": "string", "description": "Git revision; omit for the working tree"}));
    p
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn filters() -> Map<String, Value> {
    obj(json!({
        "glob": {"type": "string", "description": "Path glob, e.g. src/**/*.rs"},
        "extensions": {"type": "array", "items": {"type": "string"}, "description": "e.g. [\".py\"]"},
        "path_contains": {"type": "string"},
        "language": {"type": "string", "description": "e.g. python, csharp, ts"}
    }))
}

fn symbol_schema() -> Value {
    let mut p = common(obj(json!({"symbol": {"type": "string", "description": "Name or Class.method (path:name to pick a file)"}})));
    p.remove("source");
    p.insert("source".into(), json!({"type": "string"}));
    props(Value::Object(p), &["symbol"])
}

pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "search",
        description: "Find code by meaning or identifiers (BM25 + embeddings). Start here. Results cite path:lines, symbol, score and view.",
        schema: || {
            let mut p = common(obj(json!({
                "query": {"type": "string"},
                "n_results": {"type": "integer", "description": "default 10"},
                "mode": {"type": "string", "enum": ["hybrid", "dense", "sparse"]},
                "rerank": {"type": "boolean", "description": "cross-encoder rerank (slower)"},
                "files": {"type": "boolean", "description": "list files (a reading list) instead of chunks"},
                "cursor": {"type": "string", "description": "next_cursor of a previous answer: the next page"},
                "explain": {"type": "boolean", "description": "say why each hit ranked"}
            })));
            p.extend(filters());
            props(Value::Object(p), &["query"])
        },
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "describe_symbol",
        description: "A symbol's definition, callers, callees, bases and tests in one answer.",
        schema: symbol_schema,
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "find_usages",
        description: "Where a symbol is used: call-graph callers and subclasses plus lexical mentions, each tagged.",
        schema: || {
            let mut v = symbol_schema();
            v["properties"]["n_results"] = json!({"type": "integer", "description": "default 50"});
            v["properties"]["cursor"] = json!({"type": "string", "description": "next_cursor of a previous answer"});
            v
        },
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "impact",
        description: "Blast radius before editing: transitive callers with hop distance and tests to re-run. Pass `symbol`, or `changes` (\"uncommitted\", \"staged\", \"A..B\") for a diff.",
        schema: || {
            let p = common(obj(json!({
                "symbol": {"type": "string"},
                "changes": {"type": "string"},
                "format": {"type": "string", "enum": ["text", "markdown", "json", "summary"], "description": "with changes"},
                "fail_on": {"type": "array", "items": {"type": "string"}, "description": "with changes: callers>N, tests>N, deleted, public-api"},
                "table": {"type": "string", "description": "a database table instead"},
                "column": {"type": "string", "description": "TABLE.COLUMN instead"},
                "max_depth": {"type": "integer", "description": "default 3"}
            })));
            props(Value::Object(p), &[])
        },
        read_only: true,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "feedback",
        description: "Report what you tried and what failed, to improve answers. Stored locally.",
        schema: || {
            props(
                json!({
                    "tool": {"type": "string"},
                    "query": {"type": "string"},
                    "outcome": {"type": "string", "enum": ["helpful", "partial", "unhelpful", "error"]},
                    "comment": {"type": "string"}
                }),
                &["outcome"],
            )
        },
        read_only: false,
        profile: ToolProfile::Core,
    },
    ToolSpec {
        name: "find_definition",
        description: "Where a symbol is defined (graph; lexical fallback when unknown).",
        schema: symbol_schema,
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "deep_search",
        description: "Several phrasings of one question, tried in order until one gives strong results; warns when none does. Use when search was weak.",
        schema: || {
            let mut p = common(obj(json!({
                "queries": {"type": "array", "items": {"type": "string"}, "description": "Variants, best first"},
                "n_results": {"type": "integer"},
                "mode": {"type": "string", "enum": ["hybrid", "dense", "sparse"]},
                "min_results": {"type": "integer", "description": "default 2"},
                "min_score": {"type": "number", "description": "strong = score at least this"},
                "return_all_variants": {"type": "boolean"}
            })));
            p.extend(filters());
            props(Value::Object(p), &["queries"])
        },
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "graph_query",
        description: "Code graph: callers, callees, subclasses, superclasses, imports, neighbors, shortest_path, overview, surprising_connections, status.",
        schema: || {
            let p = common(obj(json!({
                "operation": {"type": "string", "enum": ops::graph::GraphOp::names()},
                "symbol": {"type": "string"},
                "target": {"type": "string", "description": "shortest_path end"},
                "relation": {"type": "string", "description": "neighbors filter: calls|contains|inherits|imports|all"},
                "depth": {"type": "integer", "description": "default 1"},
                "max_hops": {"type": "integer", "description": "shortest_path, default 6"},
                "n_results": {"type": "integer"},
                "min_community_size": {"type": "integer", "description": "overview, default 3"},
                "cursor": {"type": "string", "description": "next_cursor of a previous answer"}
            })));
            props(Value::Object(p), &["operation"])
        },
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "repo_overview",
        description: "Languages, frameworks, manifests, entry points and build/test/run commands. Use first in an unfamiliar repository.",
        schema: || props(Value::Object(common(Map::new())), &[]),
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "search_diff",
        description: "Search only inside changed code (vs base branch, staged and unstaged included). For reviews.",
        schema: || {
            let p = common(obj(json!({
                "query": {"type": "string"},
                "base": {"type": "string", "description": "default: upstream, else main/master"},
                "n_results": {"type": "integer"}
            })));
            props(Value::Object(p), &["query"])
        },
        read_only: true,
        profile: ToolProfile::Standard,
    },
    ToolSpec {
        name: "find_tests_for",
        description: "Tests that exercise a symbol or file.",
        schema: || {
            let mut v = symbol_schema();
            v["properties"]["test_path_pattern"] = json!({"type": "string", "description": "regex the test paths must match"});
            v["properties"]["cursor"] = json!({"type": "string", "description": "next_cursor of a previous answer"});
            v
        },
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "data_access",
        description: "Who reads, writes, maps or calls a database table, TABLE.COLUMN or stored procedure (SQL in strings and .sql files, JPA, EF, SQLAlchemy, Django, ActiveRecord). No name: every table.",
        schema: || {
            let mut p = common(obj(json!({
                "name": {"type": "string"},
                "n_results": {"type": "integer", "description": "default 100"},
                "cursor": {"type": "string", "description": "next_cursor of a previous answer"}
            })));
            p.remove("source");
            props(Value::Object(p), &[])
        },
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "context",
        description: "A symbol's code with the lines around it and its direct neighbours (type, bases, callees, callers), packed into a token budget.",
        schema: || {
            let mut p = common(obj(json!({
                "symbol": {"type": "string"},
                "budget": {"type": "integer", "description": "tokens, default 2000 (ceil(chars/4))"},
                "around": {"type": "integer", "description": "lines around the definition, default 3"}
            })));
            p.remove("source");
            props(Value::Object(p), &["symbol"])
        },
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "find_similar",
        description: "Code similar to a snippet, or to a file (optionally the chunk at a line).",
        schema: || {
            let mut p = common(obj(json!({
                "code": {"type": "string"},
                "file": {"type": "string"},
                "line": {"type": "integer"},
                "n_results": {"type": "integer"}
            })));
            p.extend(filters());
            props(Value::Object(p), &[])
        },
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "module_summary",
        description: "A file's definitions, imports and dependents.",
        schema: || props(Value::Object(common(obj(json!({"path": {"type": "string"}, "n_results": {"type": "integer", "description": "per list, default 200"}})))), &["path"]),
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "export_graph",
        description: "Write an offline HTML graph of a symbol's blast radius or a module's hub; returns its path.",
        schema: || {
            props(
                Value::Object(common(obj(json!({
                    "symbol": {"type": "string"},
                    "module": {"type": "string"},
                    "depth": {"type": "integer"},
                    "out": {"type": "string", "description": "file inside the repository"}
                })))),
                &[],
            )
        },
        read_only: false,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "list_sources",
        description: "Configured sources and their index state.",
        schema: || props(json!({}), &[]),
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "get_rag_status",
        description: "Index health: fresh/stale, coverage, model, fingerprints.",
        schema: || props(json!({"source": {"type": "string"}}), &[]),
        read_only: true,
        profile: ToolProfile::Full,
    },
    ToolSpec {
        name: "update_source_index",
        description: "Re-index a source now (force: rebuild its shards).",
        schema: || props(json!({"source": {"type": "string"}, "force": {"type": "boolean"}}), &[]),
        read_only: false,
        profile: ToolProfile::Full,
    },
];

/// Tools of a profile, with include/exclude adjustments.
pub fn tools_for(profile: ToolProfile, include: &[String], exclude: &[String], search_diff_available: bool) -> Result<Vec<&'static ToolSpec>> {
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

/// The arguments of a call in our names: LynxMCP's names translated, LynxMCP's argument shapes
/// (`export_graph {target, mode}`, `shortest_path {source, target}`) mapped, and anything the
/// tool does not take refused with the list of what it does take.
pub fn normalize(tool: &str, args: &Map<String, Value>) -> Result<Map<String, Value>> {
    let Some(spec) = TOOLS.iter().find(|t| t.name == tool) else {
        return Ok(args.clone());
    };
    let schema = (spec.schema)();
    let ours: Vec<String> = schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
    // Only names for settings this tool has: `top_k` on a tool without a count is unknown.
    let theirs: Vec<&(&str, &str, &str)> =
        LYNXMCP_NAMES.iter().filter(|(t, _, to)| (*t == "*" || *t == tool) && ours.iter().any(|o| o == to)).collect();
    let mut args = args.clone();
    // Shapes first: they give `source` and `target` LynxMCP's meaning before names are checked.
    if tool == "graph_query" && args.get("operation").and_then(Value::as_str) == Some("shortest_path") && !args.contains_key("symbol") {
        // LynxMCP's shortest_path goes from `source` to `target`; ours names the start `symbol`.
        if let Some(start) = args.remove("source") {
            args.insert("symbol".into(), start);
        }
    }
    if tool == "export_graph" {
        if let Some(target) = args.remove("target") {
            let mode = args.remove("mode");
            let key = match mode.as_ref().and_then(Value::as_str) {
                None | Some("symbol") => "symbol",
                Some("module") => "module",
                Some(other) => return Err(crate::error::usage(format!("argument `mode` must be \"symbol\" or \"module\", got \"{other}\""))),
            };
            args.insert(key.into(), target);
        }
    }
    let mut out = Map::new();
    for (k, v) in args {
        let name = if ours.iter().any(|o| *o == k) {
            k.clone()
        } else if let Some((_, _, to)) = theirs.iter().find(|(_, from, _)| *from == k) {
            to.to_string()
        } else {
            let mut accepted: Vec<String> = ours.clone();
            accepted.extend(theirs.iter().map(|(_, from, _)| from.to_string()));
            accepted.sort();
            accepted.dedup();
            return Err(crate::error::usage(format!("unknown argument `{k}` for {tool}; it takes: {}", accepted.join(", "))));
        };
        if let Some(prev) = out.get(&name) {
            if *prev != v {
                return Err(crate::error::usage(format!("argument `{k}` conflicts with `{name}` (the same setting, given twice with different values)")));
            }
        }
        out.insert(name, v);
    }
    Ok(out)
}

pub struct Args<'a>(pub &'a Map<String, Value>);

impl Args<'_> {
    pub fn str(&self, k: &str) -> Result<Option<String>> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(crate::error::usage(format!("argument `{k}` must be a string, got {other}"))),
        }
    }

    pub fn req(&self, k: &str) -> Result<String> {
        self.str(k)?.filter(|s| !s.trim().is_empty()).ok_or_else(|| crate::error::usage(format!("missing required argument `{k}`")))
    }

    pub fn int(&self, k: &str, default: usize, max: usize) -> Result<usize> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if v >= 1 => Ok((v as usize).min(max)),
                _ => Err(crate::error::usage(format!("argument `{k}` must be a positive integer"))),
            },
            Some(Value::String(s)) => s.parse::<usize>().map(|v| v.clamp(1, max)).map_err(|_| crate::error::usage(format!("argument `{k}` must be a positive integer"))),
            Some(other) => Err(crate::error::usage(format!("argument `{k}` must be an integer, got {other}"))),
        }
    }

    pub fn number(&self, k: &str) -> Result<Option<f32>> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64().map(|v| v as f32)),
            Some(other) => Err(crate::error::usage(format!("argument `{k}` must be a number, got {other}"))),
        }
    }

    pub fn bool_or(&self, k: &str, default: bool) -> Result<bool> {
        if self.0.get(k).is_none_or(|v| v.is_null()) { Ok(default) } else { self.bool(k) }
    }

    pub fn bool(&self, k: &str) -> Result<bool> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(crate::error::usage(format!("argument `{k}` must be true or false, got {other}"))),
        }
    }

    pub fn strings(&self, k: &str) -> Result<Vec<String>> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(String::from).ok_or_else(|| crate::error::usage(format!("argument `{k}` must be a list of strings"))))
                .collect(),
            Some(other) => Err(crate::error::usage(format!("argument `{k}` must be a list of strings, got {other}"))),
        }
    }

    pub fn mode(&self) -> Result<Option<Mode>> {
        self.str("mode")?.map(|m| Mode::parse(&m)).transpose()
    }

    pub fn filters(&self) -> Result<Filters> {
        Ok(Filters { globs: self.str("glob")?.into_iter().collect(), extensions: self.strings("extensions")?, path_contains: self.str("path_contains")?, pathspecs: Vec::new(), languages: self.strings("language")? })
    }
}

/// Lines of code per hit in tool answers (the CLI's default too, so texts match).
pub use crate::ops::search::SNIPPET_LINES;

/// Runs a tool. Usage problems come back as errors naming the argument.
pub fn call(name: &str, args: &Map<String, Value>, sources: &Sources, feedback: &std::path::Path) -> Result<Answer> {
    let args = normalize(name, args)?;
    let a = Args(&args);
    let rev = a.str("rev")?;
    let source = a.str("source")?;
    // Single-source tools: the named source, else the repository.
    let one = || -> Result<&crate::sources::Source> {
        match &source {
            Some(s) => sources.get(s),
            None => Ok(sources.main()),
        }
    };
    match name {
        "search" => {
            let args = ops::search::SearchArgs {
                paths_only: false,
                query: a.req("query")?,
                k: Some(a.int("n_results", sources.list[0].engine.ws.config.search.k, 100)?),
                rev,
                mode: a.mode()?,
                filters: a.filters()?,
                snippet_lines: SNIPPET_LINES,
                rerank: ops::search::reranker(&sources.list[0].engine.ws.config, None, a.0.get("rerank").filter(|v| !v.is_null()).map(|_| a.bool("rerank")).transpose()?),
                files: a.bool("files")?,
                cursor: a.str("cursor")?,
                explain: a.bool("explain")?,
            };
            ops::search::run_sources(sources, source.as_deref(), &args)
        }
        "deep_search" => {
            let args = ops::deep_search::DeepArgs {
                variants: a.strings("queries")?,
                k: a.int("n_results", 10, 100)?,
                rev,
                mode: a.mode()?,
                filters: a.filters()?,
                min_results: a.int("min_results", sources.list[0].engine.ws.config.search.deep_min_results, 50)?,
                return_all_variants: a.bool("return_all_variants")?,
                snippet_lines: SNIPPET_LINES,
                min_score: a.number("min_score")?,
            };
            ops::over_sources(&sources.select(source.as_deref())?, |e| ops::deep_search::run(e, &args))
        }
        // Navigation fans out over the sources when none is named.
        "find_definition" => {
            let symbol = a.req("symbol")?;
            ops::over_sources(&sources.select(source.as_deref())?, |e| ops::nav::find_definition(e, &symbol, rev.as_deref()))
        }
        "find_usages" => {
            let (symbol, n, cursor) = (a.req("symbol")?, a.int("n_results", 50, 500)?, a.str("cursor")?);
            ops::over_sources(&sources.select(source.as_deref())?, |e| ops::nav::find_usages(e, &symbol, rev.as_deref(), n, cursor.as_deref()))
        }
        "find_tests_for" => {
            let (symbol, pattern, cursor) = (a.req("symbol")?, a.str("test_path_pattern")?, a.str("cursor")?);
            ops::over_sources(&sources.select(source.as_deref())?, |e| ops::nav::find_tests_for(e, &symbol, rev.as_deref(), pattern.as_deref(), cursor.as_deref()))
        }
        "data_access" => {
            let (name, n, cursor) = (a.str("name")?, a.int("n_results", 100, 10_000)?, a.str("cursor")?);
            ops::data_access::run(&one()?.engine, name.as_deref(), rev.as_deref(), n, cursor.as_deref())
        }
        "context" => {
            let args = ops::context::ContextArgs {
                symbol: a.req("symbol")?,
                rev,
                budget: a.int("budget", 2000, 1_000_000)?,
                around: a.int("around", 3, 1000)? as u32,
            };
            ops::context::run(&one()?.engine, &args)
        }
        "describe_symbol" => {
            let symbol = a.req("symbol")?;
            ops::over_sources(&sources.select(source.as_deref())?, |e| ops::nav::describe_symbol(e, &symbol, rev.as_deref()))
        }
        "impact" if a.str("table")?.is_some() || a.str("column")?.is_some() => {
            let name = a.str("table")?.or(a.str("column")?).unwrap_or_default();
            ops::data_access::impact(&one()?.engine, &name, rev.as_deref(), a.int("max_depth", 3, 10)?)
        }
        "impact" => match (a.str("symbol")?, a.str("changes")?) {
            (Some(s), _) if !s.trim().is_empty() => ops::nav::impact(&one()?.engine, &s, rev.as_deref(), a.int("max_depth", 3, 10)?),
            (_, Some(c)) => ops::changes::impact_range(
                &one()?.engine,
                &ops::changes::ImpactRangeArgs::parse(&c)?,
                a.int("max_depth", 3, 10)?,
                a.str("format")?.as_deref().map(ops::changes::ImpactFormat::parse).transpose()?.unwrap_or(ops::changes::ImpactFormat::Text),
                &a.strings("fail_on")?,
            ),
            _ => Err(crate::error::usage("impact needs `symbol` or `changes`")),
        },
        "module_summary" => ops::nav::module_summary(&one()?.engine, &a.req("path")?, rev.as_deref(), a.int("n_results", 200, 10_000)?),
        "repo_overview" => ops::overview::run(&one()?.engine, rev.as_deref()),
        "find_similar" => {
            let args = ops::similar::SimilarArgs {
                snippet: a.str("code")?,
                file: a.str("file")?,
                line: a.0.get("line").and_then(|v| v.as_u64()).map(|v| v as u32),
                k: a.int("n_results", 10, 100)?,
                rev,
                filters: a.filters()?,
                snippet_lines: SNIPPET_LINES,
            };
            ops::similar::run(&one()?.engine, &args)
        }
        "graph_query" => {
            let args = ops::graph::GraphArgs {
                op: ops::graph::GraphOp::parse(&a.req("operation")?)?,
                symbol: a.str("symbol")?,
                target: a.str("target")?,
                relation: a.str("relation")?,
                depth: a.int("depth", 1, 10)?,
                rev,
                limit: a.int("n_results", 200, 1000)?,
                min_community: a.int("min_community_size", ops::graph::MIN_COMMUNITY, 100_000)?,
                max_hops: a.0.get("max_hops").map(|_| a.int("max_hops", 6, 50)).transpose()?,
                cursor: a.str("cursor")?,
            };
            ops::graph::run(&one()?.engine, &args)
        }
        "export_graph" => {
            let engine = &one()?.engine;
            let out = match a.str("out")? {
                Some(o) => Some(inside_repository(engine, &o)?),
                None => None,
            };
            let args = ops::export::ExportArgs { symbol: a.str("symbol")?, module: a.str("module")?, out, depth: a.int("depth", 2, 6)?, rev };
            ops::export::run(engine, &args)
        }
        "search_diff" => {
            let args = ops::changes::SearchDiffArgs { query: a.req("query")?, base: a.str("base")?, k: a.int("n_results", 10, 100)?, snippet_lines: SNIPPET_LINES, filters: Default::default() };
            ops::changes::search_diff(&one()?.engine, &args)
        }
        "list_sources" => ops::status::list_sources(sources),
        "get_rag_status" => ops::status::rag_status(sources, source.as_deref()),
        "update_source_index" => ops::status::update_source(sources, source.as_deref(), a.bool("force")?),
        "feedback" => ops::feedback::record(feedback, &a.str("tool")?.unwrap_or_default(), &a.str("query")?.unwrap_or_default(), &a.req("outcome")?, &a.str("comment")?.unwrap_or_default()),
        other => Err(anyhow!("unknown tool `{other}`")),
    }
}

/// A file an agent asked a tool to write: relative to the repository and inside it (an agent
/// must not be able to write anywhere else through the server).
fn inside_repository(engine: &crate::engine::Engine, out: &str) -> Result<std::path::PathBuf> {
    use std::path::Component;
    let p = std::path::Path::new(out);
    let escapes = p.is_absolute() || p.components().any(|c| matches!(c, Component::ParentDir | Component::Prefix(_) | Component::RootDir));
    if escapes || out.trim().is_empty() {
        return Err(crate::error::usage(format!("argument `out` must be a path inside the repository, relative to its root (got \"{out}\")")));
    }
    let root = engine.ws.repo.workdir()?;
    let full = root.join(p);
    // A symlinked directory on the way could still lead outside.
    if let Some(parent) = full.parent().filter(|d| d.exists()) {
        let (real, root_real) = (parent.canonicalize()?, root.canonicalize()?);
        if !real.starts_with(&root_real) {
            return Err(crate::error::usage(format!("argument `out` leads outside the repository through a symbolic link (\"{out}\")")));
        }
    }
    Ok(full)
}
