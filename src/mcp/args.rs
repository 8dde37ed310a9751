//! Each MCP tool's arguments as one typed struct, deserialized once, after `tools::normalize`
//! has translated LynxMCP's names and refused unknown ones. Counts take a number or a numeric
//! string; lists take one string or an array; null is the same as absent. An error names the
//! argument and what it must be. Each struct is also its tool's `inputSchema` (schemars; a
//! field's doc comment is what the model reads about it, so keep them short).

use crate::config::SearchMode;
use crate::ops::changes::ImpactFormat;
use crate::ops::graph::GraphOp;
use crate::search::filter::Filters;
use anyhow::Result;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use std::borrow::Cow;

/// A tool's `inputSchema`: its argument struct's fields, each with its doc comment.
pub fn schema<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut s = T::json_schema(&mut settings.into_generator());
    // The struct's own doc comment is for this code's readers; the tool's description says it.
    if let Some(o) = s.as_object_mut() {
        o.remove("description");
    }
    // What to send, briefly: an optional argument is simply left out (null is accepted too).
    fn types_only(s: &mut Schema) {
        if let Some(o) = s.as_object_mut() {
            for k in ["title", "format", "minimum"] {
                o.remove(k);
            }
            if let Some(Value::Array(types)) = o.get("type")
                && let [one, null] = types.as_slice()
                && null == "null"
            {
                let one = one.clone();
                o.insert("type".into(), one);
            }
        }
        schemars::transform::transform_subschemas(&mut types_only, s);
    }
    types_only(&mut s);
    s.to_value()
}

/// Deserializes a tool's arguments, with an error that names the argument.
pub fn parse<T: DeserializeOwned>(args: &Map<String, Value>) -> Result<T> {
    serde_path_to_error::deserialize(Value::Object(args.clone())).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        let msg = if let Some(field) = inner.strip_prefix("missing field `").and_then(|r| r.split('`').next()) {
            format!("missing required argument `{field}`")
        } else if let Some((got, want)) = inner.strip_prefix("invalid type: ").and_then(|r| r.split_once(", expected "))
        {
            let want = match want {
                "f32" | "f64" => "a number",
                "u32" | "usize" | "u64" => "a positive integer",
                "a boolean" => "true or false",
                w => w,
            };
            format!("argument `{path}` must be {want}, got {got}")
        } else if path == "." || path.is_empty() {
            inner
        } else {
            format!("argument `{path}`: {inner}")
        };
        crate::error::usage(msg)
    })
}

/// A positive count, as given; each tool bounds it (`Count::or`).
#[derive(Debug, Clone, Copy)]
pub struct Count(usize);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Count, D::Error> {
        let n = match Value::deserialize(d)? {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        match n {
            Some(n) if n >= 1 => Ok(Count(n as usize)),
            _ => Err(serde::de::Error::custom("must be a positive integer")),
        }
    }
}

impl JsonSchema for Count {
    fn schema_name() -> Cow<'static, str> {
        "Count".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer"})
    }
}

/// `count` within 1..=max, else `default`.
fn count(c: Option<Count>, default: usize, max: usize) -> usize {
    c.map_or(default, |c| c.0.min(max))
}

/// One string or a list of strings.
#[derive(Debug, Clone, Default)]
pub struct Strings(pub Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Strings, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(Strings::default()),
            Value::String(s) => Ok(Strings(vec![s])),
            Value::Array(a) => a
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    _ => Err(serde::de::Error::custom("must be a list of strings")),
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .map(Strings),
            _ => Err(serde::de::Error::custom("must be a list of strings")),
        }
    }
}

impl JsonSchema for Strings {
    fn schema_name() -> Cow<'static, str> {
        "Strings".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "array", "items": {"type": "string"}})
    }
}

/// A string argument that takes one of `names`.
fn one_of(names: &[&str]) -> Schema {
    json_schema!({"type": "string", "enum": names})
}

fn modes(_: &mut SchemaGenerator) -> Schema {
    one_of(&["hybrid", "dense", "sparse"])
}

fn graph_ops(_: &mut SchemaGenerator) -> Schema {
    one_of(&GraphOp::names())
}

fn formats(_: &mut SchemaGenerator) -> Schema {
    one_of(&["text", "markdown", "json", "summary"])
}

fn outcomes(_: &mut SchemaGenerator) -> Schema {
    one_of(crate::ops::feedback::OUTCOMES)
}

fn strings(s: Option<Strings>) -> Vec<String> {
    s.map(|s| s.0).unwrap_or_default()
}

/// A required text argument that is not blank.
fn required(s: &str, name: &str) -> Result<String> {
    if s.trim().is_empty() {
        Err(crate::error::usage(format!("missing required argument `{name}`")))
    } else {
        Ok(s.to_string())
    }
}

fn graph_op<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<GraphOp, D::Error> {
    let s = String::deserialize(d)?;
    GraphOp::parse(&s).map_err(|e| serde::de::Error::custom(e.to_string()))
}

/// Where a question is asked: a source and a revision.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct At {
    /// Source name; omit for all
    pub source: Option<String>,
    /// Git revision; omit for the working tree
    pub rev: Option<String>,
}

/// A revision of the repository (tools that read one source: the one named, else the repository).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Rev {
    /// Git revision; omit for the working tree
    pub rev: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct FilterArgs {
    /// Path glob, e.g. src/**/*.rs
    glob: Option<String>,
    /// e.g. [".py"]
    extensions: Option<Strings>,
    path_contains: Option<String>,
    /// e.g. python, csharp, ts
    language: Option<Strings>,
}

impl FilterArgs {
    pub fn filters(self) -> Filters {
        Filters {
            globs: self.glob.into_iter().collect(),
            extensions: strings(self.extensions),
            path_contains: self.path_contains,
            pathspecs: Vec::new(),
            languages: strings(self.language),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Search {
    query: String,
    /// default 10; at most 1000 (more is answered with that many and a note)
    n_results: Option<Count>,
    #[serde(default)]
    #[schemars(schema_with = "modes")]
    pub mode: Option<SearchMode>,
    /// cross-encoder rerank (slower)
    pub rerank: Option<bool>,
    /// list files (a reading list) instead of chunks
    pub files: Option<bool>,
    /// next_cursor of a previous answer: the next page
    pub cursor: Option<String>,
    /// say why each hit ranked
    pub explain: Option<bool>,
    #[serde(flatten)]
    pub filters: FilterArgs,
    #[serde(flatten)]
    pub at: At,
}

impl Search {
    pub fn query(&self) -> Result<String> {
        required(&self.query, "query")
    }
    /// As asked: the search bounds it, with a note (`search::clamp_k`), as for every surface.
    pub fn k(&self, default: usize) -> usize {
        self.n_results.as_ref().map_or(default, |c| c.0)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeepSearch {
    /// Variants, best first
    queries: Strings,
    n_results: Option<Count>,
    #[serde(default)]
    #[schemars(schema_with = "modes")]
    pub mode: Option<SearchMode>,
    /// default 2
    min_results: Option<Count>,
    pub return_all_variants: Option<bool>,
    /// strong = score at least this
    pub min_score: Option<f32>,
    #[serde(flatten)]
    pub filters: FilterArgs,
    #[serde(flatten)]
    pub at: At,
}

impl DeepSearch {
    pub fn variants(&self) -> Vec<String> {
        self.queries.0.clone()
    }
    /// As asked: the search bounds it, with a note, as on every surface.
    pub fn k(&self) -> usize {
        self.n_results.map_or(10, |c| c.0)
    }
    pub fn min_results(&self, default: usize) -> usize {
        count(self.min_results, default, 50)
    }
}

/// `find_definition`, `describe_symbol`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Symbol {
    /// Name or Class.method (path:name to pick a file)
    symbol: String,
    #[serde(flatten)]
    pub at: At,
}

impl Symbol {
    pub fn symbol(&self) -> Result<String> {
        required(&self.symbol, "symbol")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Usages {
    /// Name or Class.method (path:name to pick a file)
    symbol: String,
    /// default 50
    n_results: Option<Count>,
    /// next_cursor of a previous answer
    pub cursor: Option<String>,
    #[serde(flatten)]
    pub at: At,
}

impl Usages {
    pub fn symbol(&self) -> Result<String> {
        required(&self.symbol, "symbol")
    }
    pub fn n(&self) -> usize {
        count(self.n_results, 50, 500)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TestsFor {
    /// Name or Class.method (path:name to pick a file)
    symbol: String,
    /// regex the test paths must match
    pub test_path_pattern: Option<String>,
    /// next_cursor of a previous answer
    pub cursor: Option<String>,
    #[serde(flatten)]
    pub at: At,
}

impl TestsFor {
    pub fn symbol(&self) -> Result<String> {
        required(&self.symbol, "symbol")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DataAccess {
    pub name: Option<String>,
    /// default 100
    n_results: Option<Count>,
    /// next_cursor of a previous answer
    pub cursor: Option<String>,
    #[serde(flatten)]
    pub at: Rev,
}

impl DataAccess {
    pub fn n(&self) -> usize {
        count(self.n_results, 100, 10_000)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Context {
    symbol: String,
    /// tokens, default 2000 (ceil(chars/4))
    budget: Option<Count>,
    /// lines around the definition, default 3
    around: Option<Count>,
    #[serde(flatten)]
    pub at: Rev,
}

impl Context {
    pub fn symbol(&self) -> Result<String> {
        required(&self.symbol, "symbol")
    }
    pub fn budget(&self) -> usize {
        count(self.budget, 2000, 1_000_000)
    }
    pub fn around(&self) -> u32 {
        count(self.around, 3, 1000) as u32
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Impact {
    pub symbol: Option<String>,
    pub changes: Option<String>,
    /// with changes
    #[serde(default)]
    #[schemars(schema_with = "formats")]
    pub format: Option<ImpactFormat>,
    /// with changes: callers>N, tests>N, deleted, public-api
    fail_on: Option<Strings>,
    /// a database table instead
    pub table: Option<String>,
    /// TABLE.COLUMN instead
    pub column: Option<String>,
    /// default 3
    max_depth: Option<Count>,
    #[serde(flatten)]
    pub at: At,
}

impl Impact {
    pub fn fail_on(&self) -> Vec<String> {
        self.fail_on.as_ref().map(|s| s.0.clone()).unwrap_or_default()
    }
    pub fn max_depth(&self) -> usize {
        count(self.max_depth, 3, 10)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ModuleSummary {
    path: String,
    /// per list, default 200
    n_results: Option<Count>,
    #[serde(flatten)]
    pub at: At,
}

impl ModuleSummary {
    pub fn path(&self) -> Result<String> {
        required(&self.path, "path")
    }
    pub fn n(&self) -> usize {
        count(self.n_results, 200, 10_000)
    }
}

/// `repo_overview`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Plain {
    #[serde(flatten)]
    pub at: At,
}

/// `list_sources`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Nothing {}

/// `get_rag_status`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Source {
    /// Source name; omit for all
    pub source: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Similar {
    pub code: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    n_results: Option<Count>,
    #[serde(flatten)]
    pub filters: FilterArgs,
    #[serde(flatten)]
    pub at: At,
}

impl Similar {
    /// As asked: the search bounds it, with a note, as on every surface.
    pub fn k(&self) -> usize {
        self.n_results.map_or(10, |c| c.0)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GraphQuery {
    #[serde(deserialize_with = "graph_op")]
    #[schemars(schema_with = "graph_ops")]
    pub operation: GraphOp,
    pub symbol: Option<String>,
    /// shortest_path end
    pub target: Option<String>,
    /// neighbors filter: calls|contains|inherits|imports|all
    pub relation: Option<String>,
    /// default 1
    depth: Option<Count>,
    n_results: Option<Count>,
    /// overview, default 3
    min_community_size: Option<Count>,
    /// shortest_path, default 6
    max_hops: Option<Count>,
    /// next_cursor of a previous answer
    pub cursor: Option<String>,
    #[serde(flatten)]
    pub at: At,
}

impl GraphQuery {
    pub fn depth(&self) -> usize {
        count(self.depth, 1, 10)
    }
    pub fn limit(&self) -> usize {
        count(self.n_results, 200, 1000)
    }
    pub fn min_community(&self) -> usize {
        count(self.min_community_size, crate::ops::graph::MIN_COMMUNITY, 100_000)
    }
    pub fn max_hops(&self) -> Option<usize> {
        self.max_hops.map(|h| h.0.min(50))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Export {
    pub symbol: Option<String>,
    pub module: Option<String>,
    /// file inside the repository
    pub out: Option<String>,
    depth: Option<Count>,
    #[serde(flatten)]
    pub at: At,
}

impl Export {
    pub fn depth(&self) -> usize {
        count(self.depth, 2, 6)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchDiff {
    query: String,
    /// default: upstream, else main/master
    pub base: Option<String>,
    n_results: Option<Count>,
    /// files_cursor of a previous answer: the next page of changed files
    pub cursor: Option<String>,
    #[serde(flatten)]
    pub filters: FilterArgs,
    #[serde(flatten)]
    pub at: At,
}

impl SearchDiff {
    pub fn query(&self) -> Result<String> {
        required(&self.query, "query")
    }
    /// As asked: the search bounds it, with a note, as on every surface.
    pub fn k(&self) -> usize {
        self.n_results.map_or(10, |c| c.0)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Update {
    pub force: Option<bool>,
    /// Source name; omit for all
    pub source: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Feedback {
    pub tool: Option<String>,
    pub query: Option<String>,
    #[schemars(schema_with = "outcomes")]
    outcome: String,
    pub comment: Option<String>,
}

impl Feedback {
    pub fn outcome(&self) -> Result<String> {
        required(&self.outcome, "outcome")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn errors_name_the_argument() {
        let e = parse::<Search>(&map(json!({"n_results": 2}))).unwrap_err().to_string();
        assert_eq!(e, "missing required argument `query`");
        let e = parse::<Search>(&map(json!({"query": 42}))).unwrap_err().to_string();
        assert_eq!(e, "argument `query` must be a string, got integer `42`");
        let e = parse::<Search>(&map(json!({"query": "x", "n_results": 0}))).unwrap_err().to_string();
        assert!(e.contains("n_results") && e.contains("positive integer"), "{e}");
        let e = parse::<Search>(&map(json!({"query": "x", "files": "yes"}))).unwrap_err().to_string();
        assert!(e.contains("`files` must be true or false"), "{e}");
        let e = parse::<Search>(&map(json!({"query": "x", "mode": "fuzzy"}))).unwrap_err().to_string();
        assert!(e.contains("mode") && e.contains("fuzzy"), "{e}");
        let e = parse::<GraphQuery>(&map(json!({"operation": "nope"}))).unwrap_err().to_string();
        assert!(e.contains("unknown graph operation `nope`"), "{e}");
        let e = parse::<Search>(&map(json!({"query": "  "}))).unwrap().query().unwrap_err().to_string();
        assert_eq!(e, "missing required argument `query`");
    }

    #[test]
    fn lenient_where_agents_are() {
        let s: Search = parse(&map(json!({"query": "x", "n_results": "500", "extensions": ".py", "language": ["python", "go"], "rev": null, "files": null}))).unwrap();
        // A number in a string is a number; the bound is the search's own (with its note).
        assert_eq!(s.k(10), 500);
        let plain: Search = parse(&map(json!({"query": "x"}))).unwrap();
        assert_eq!(plain.k(10), 10, "the default");
        assert_eq!(s.files, None);
        let f = s.filters.filters();
        assert_eq!(
            (f.extensions, f.languages),
            (vec![".py".to_string()], vec!["python".to_string(), "go".to_string()])
        );
        let d: DeepSearch = parse(&map(json!({"queries": "one query"}))).unwrap();
        assert_eq!(d.variants(), ["one query"]);
        let g: GraphQuery = parse(&map(json!({"operation": "Shortest_Path", "max_hops": 99}))).unwrap();
        assert_eq!((g.operation, g.max_hops(), g.depth()), (GraphOp::ShortestPath, Some(50), 1));
    }
}
