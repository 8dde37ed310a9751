//! The vocabulary operations' argument types are made of. Each operation declares its arguments
//! once, as one type beside it in `ops/`: clap parses it from the command line (doc comments
//! are the `--help` text), serde from an MCP call's JSON (field names are the tool's argument
//! names; `#[schemars(description)]` is what the model reads), and schemars describes it as the
//! tool's `inputSchema`. Defaults and bounds are the type's own methods, so every surface
//! answers the same question the same way. Arguments only one surface has are marked so
//! (`#[arg(skip)]` or `#[serde(skip_deserializing)]`) in the same type.

use crate::search::filter::{Filters, Pathspec};
use anyhow::Result;
use clap::Args;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::borrow::Cow;

crate::error::errors! {
    /// An argument that is missing, of the wrong type, or out of its range, on any surface.
    pub enum ArgError: Usage {
        Missing { name: String } => "missing required argument `{name}`",
        Type { name: String, want: String, got: String } => "argument `{name}` must be {want}, got {got}",
        Bad { name: String, why: String } => "argument `{name}`: {why}",
        /// What the arguments as a whole got wrong.
        Invalid { why: String } => "{why}",
        /// A query of only blanks.
        EmptyQuery {} => "the search query is empty",
    }
}

/// Reads an argument type from JSON (an MCP call, the web page's parameters), with an error
/// that names the argument.
pub fn parse<T: DeserializeOwned>(args: &Map<String, Value>) -> Result<T> {
    serde_path_to_error::deserialize(Value::Object(args.clone())).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        let err = if let Some(field) = inner.strip_prefix("missing field `").and_then(|r| r.split('`').next()) {
            ArgError::Missing { name: field.to_string() }
        } else if let Some((got, want)) = inner.strip_prefix("invalid type: ").and_then(|r| r.split_once(", expected "))
        {
            let want = match want {
                "f32" | "f64" => "a number",
                "u32" | "usize" | "u64" => "a positive integer",
                "a boolean" => "true or false",
                w => w,
            };
            ArgError::Type { name: path, want: want.to_string(), got: got.to_string() }
        } else if path == "." || path.is_empty() {
            ArgError::Invalid { why: inner }
        } else {
            ArgError::Bad { name: path, why: inner }
        };
        err.into()
    })
}

/// A positive count: a number, or a number in a string (agents send both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub usize);

impl Count {
    /// `count` within `1..=max`, else `default`.
    pub fn or(count: Option<Count>, default: usize, max: usize) -> usize {
        count.map_or(default, |c| c.0.clamp(1, max))
    }
}

impl std::str::FromStr for Count {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Count, String> {
        match s.trim().parse::<u64>() {
            Ok(n) if n >= 1 => Ok(Count(n as usize)),
            _ => Err(format!("`{s}` is not a positive integer")),
        }
    }
}

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

/// One string or a list of strings, for a repeatable option (`--glob A --glob B` on the command
/// line, `"glob": "A"` or `["A", "B"]` in JSON); null is none.
pub fn strings<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(Vec::new()),
        Value::String(s) => Ok(vec![s]),
        Value::Array(a) => a
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Ok(s),
                _ => Err(serde::de::Error::custom("must be a list of strings")),
            })
            .collect(),
        _ => Err(serde::de::Error::custom("must be a list of strings")),
    }
}

/// A yes/no argument: true or false, or the same as a string (`"1"`/`"0"` too, as a web form
/// sends a checkbox); null is none.
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<bool>, D::Error> {
    let v = Value::deserialize(d)?;
    match &v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        Value::String(s) => match s.trim() {
            "true" | "1" => Ok(Some(true)),
            "false" | "0" => Ok(Some(false)),
            _ => Err(serde::de::Error::invalid_type(serde::de::Unexpected::Str(s), &"a boolean")),
        },
        _ => Err(serde::de::Error::invalid_type(serde::de::Unexpected::Other(&v.to_string()), &"a boolean")),
    }
}

/// A number that may be zero, given as a number or a number in a string; null is none.
pub fn number<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<u32>, D::Error> {
    let n = match Value::deserialize(d)? {
        Value::Null => return Ok(None),
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    match n.and_then(|n| u32::try_from(n).ok()) {
        Some(n) => Ok(Some(n)),
        None => Err(serde::de::Error::custom("must be a non-negative integer")),
    }
}

/// The schema of what `strings` takes.
pub struct Strings;

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
pub fn one_of(names: &[&str]) -> Schema {
    json_schema!({"type": "string", "enum": names})
}

/// The retrieval modes, as a schema.
pub fn modes(_: &mut SchemaGenerator) -> Schema {
    one_of(&["hybrid", "dense", "sparse"])
}

/// A required text argument that is not blank.
pub fn required(s: &str, name: &str) -> Result<String> {
    if s.trim().is_empty() { Err(ArgError::Missing { name: name.to_string() }.into()) } else { Ok(s.to_string()) }
}

/// Lines of code shown per hit where no one chose (MCP answers, evaluation transcripts, the
/// command line's `--lines` default).
pub const SNIPPET_LINES: usize = 4;

/// Lines of code shown per hit in text output (the command line's `--lines`; MCP answers show
/// `SNIPPET_LINES`).
#[derive(Args, Debug, Clone, Copy)]
pub struct Lines {
    /// Lines of code shown for each of the first three results (the rest show their best line).
    #[arg(long = "lines", id = "lines", value_name = "LINES", default_value_t = SNIPPET_LINES)]
    pub per_hit: usize,
}

impl Default for Lines {
    fn default() -> Lines {
        Lines { per_hit: SNIPPET_LINES }
    }
}

/// Where a list continues.
#[derive(Args, Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Page {
    /// Continue a list from a previous answer's `next_cursor` (same question, same view).
    #[arg(long, value_name = "TOKEN")]
    #[schemars(description = "next_cursor of a previous answer: the next page")]
    pub cursor: Option<String>,
}

/// The source(s) a question is asked of: one, or `ALL` (the answers fanned out).
#[derive(Args, Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Sources {
    /// Ask this source (`git lynx list-sources`), or `ALL` for every source.
    #[arg(long = "source", id = "source", value_name = "SOURCE")]
    #[serde(rename = "source")]
    #[schemars(description = "Source name; omit for all")]
    pub name: Option<String>,
    /// Ask this repository of the workspace (`--workspace`): the same as `--source`.
    #[arg(long = "repo", id = "repo", value_name = "REPO", conflicts_with = "source")]
    #[serde(default)]
    #[schemars(description = "Repository of the workspace (the same as source); omit for all")]
    pub repo: Option<String>,
}

impl Sources {
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref().or(self.repo.as_deref())
    }
}

/// The one source a question is asked of.
#[derive(Args, Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct OneSource {
    /// Ask this source (`git lynx list-sources`).
    #[arg(long = "source", id = "source", value_name = "SOURCE")]
    #[serde(rename = "source")]
    #[schemars(description = "Source name; omit for the repository")]
    pub name: Option<String>,
    /// Ask this repository of the workspace (`--workspace`): the same as `--source`.
    #[arg(long = "repo", id = "repo", value_name = "REPO", conflicts_with = "source")]
    #[serde(default)]
    #[schemars(description = "Repository of the workspace (the same as source)")]
    pub repo: Option<String>,
}

impl OneSource {
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref().or(self.repo.as_deref())
    }
}

/// The revision a question is asked at.
#[derive(Args, Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Rev {
    /// Revision to answer from (default: the working tree).
    #[arg(long, value_name = "REV")]
    #[schemars(description = "Git revision; omit for the working tree")]
    pub rev: Option<String>,
}

/// Which files a question looks at.
#[derive(Args, Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct FilterArgs {
    /// Only paths matching this glob (repeatable).
    #[arg(long = "glob", value_name = "GLOB")]
    #[serde(rename = "glob", default, deserialize_with = "strings")]
    #[schemars(with = "Strings", description = "Path glob, e.g. src/**/*.rs")]
    pub globs: Vec<String>,
    /// Only files with this extension, e.g. `.rs` (repeatable).
    #[arg(long = "ext", value_name = "EXT")]
    #[serde(default, deserialize_with = "strings")]
    #[schemars(with = "Strings", description = "e.g. [\".py\"]")]
    pub extensions: Vec<String>,
    /// Only paths containing this substring.
    #[arg(long, value_name = "TEXT")]
    #[schemars(description = "")]
    pub path_contains: Option<String>,
    /// Only files in this language: a name or alias (`python`/`py`, `csharp`/`c#`,
    /// `typescript`/`ts`…; repeatable).
    #[arg(long = "language", visible_alias = "lang", value_name = "LANG")]
    #[serde(rename = "language", default, deserialize_with = "strings")]
    #[schemars(with = "Strings", description = "e.g. python, csharp, ts")]
    pub languages: Vec<String>,
    /// git pathspecs after `--`, relative to the current directory: `src/`, `*.py`,
    /// `:(exclude)tests` or `:!tests`, `:/README.md` (from the top).
    #[arg(last = true, value_name = "PATHSPEC")]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub pathspecs: Vec<String>,
}

impl FilterArgs {
    /// The filters, pathspecs resolved from the current directory (only the command line has
    /// them).
    pub fn filters(&self) -> Result<Filters> {
        let prefix = if self.pathspecs.is_empty() { String::new() } else { cwd_prefix()? };
        let pathspecs = self.pathspecs.iter().map(|p| Pathspec::resolve(p, &prefix)).collect::<Result<Vec<_>>>()?;
        Ok(Filters {
            globs: self.globs.clone(),
            extensions: self.extensions.clone(),
            path_contains: self.path_contains.clone(),
            pathspecs,
            languages: self.languages.clone(),
        })
    }
}

/// The current directory relative to the worktree root (`src/app/`, or "" at the top or
/// outside a worktree), where git resolves pathspecs from.
fn cwd_prefix() -> Result<String> {
    let repo = crate::repo::Repo::discover_from_env(std::path::Path::new("."))?;
    Ok(repo.workdir.as_deref().and_then(crate::present::prefix_of).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_positive_from_either_surface() {
        assert_eq!("12".parse::<Count>(), Ok(Count(12)));
        assert!("0".parse::<Count>().is_err() && "-3".parse::<Count>().is_err() && "x".parse::<Count>().is_err());
        assert_eq!(serde_json::from_value::<Count>(serde_json::json!("7")).unwrap(), Count(7));
        assert!(serde_json::from_value::<Count>(serde_json::json!(0)).is_err());
        assert_eq!(Count::or(Some(Count(900)), 50, 500), 500, "bounded");
        assert_eq!(Count::or(None, 50, 500), 50, "the default");
    }

    #[test]
    fn flags_read_a_form_and_json_alike() {
        let read = |v: serde_json::Value| -> Result<crate::ops::search::SearchArgs> { parse(v.as_object().unwrap()) };
        let form = read(serde_json::json!({"query": "q", "files": "1", "rerank": "0", "n_results": "5"})).unwrap();
        let json = read(serde_json::json!({"query": "q", "files": true, "rerank": false, "n_results": 5})).unwrap();
        assert_eq!((form.files, form.rerank, form.k), (Some(true), Some(false), Some(Count(5))));
        assert_eq!((json.files, json.rerank, json.k), (form.files, form.rerank, form.k));
        let e = read(serde_json::json!({"query": "q", "files": "yes"})).unwrap_err().to_string();
        assert!(e.contains("`files` must be true or false"), "{e}");
        assert_eq!(read(serde_json::json!({"query": "q", "explain": null})).unwrap().explain, None);
    }
}
