//! `impact`: what a change would reach. One question with three subjects — a symbol (its
//! callers and the tests to re-run, `nav::impact`), a range of changes (`changes::
//! impact_range`, with `--fail-on` checks) or a database table or column
//! (`data_access::impact`) — read from the same arguments on every surface: the command line
//! names a range as the target (`impact A..B`, `--staged`, `--since REV`), MCP as `changes`.

use super::Answer;
use super::args::{Count, Rev, Strings, strings};
use super::changes::{ImpactFormat, ImpactRangeArgs, Range};
use crate::engine::Engine;
use anyhow::Result;

crate::error::errors! {
    /// An impact question whose subject is malformed or given more than once.
    pub enum ImpactError: Usage {
        Column {} => "--column (MCP: column) takes TABLE.COLUMN (e.g. orders.total)",
        ChecksOnSymbol {} => "--fail-on and --format apply to ranges (A..B, --staged, uncommitted), not to a symbol",
        Subjects {} =>
            "give one of: SYMBOL, A..B, A...B, --staged, --since REV (MCP: symbol or changes), or nothing for uncommitted work",
    }
}

/// `impact`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct ImpactArgs {
    /// A symbol, or a range `A..B` / `A...B`; omitted: uncommitted work.
    #[serde(rename = "symbol")]
    #[schemars(description = "")]
    pub target: Option<String>,
    /// The changes: "uncommitted", "staged", "A..B", "A...B" or a revision (the command line
    /// names them as the target).
    #[arg(skip)]
    #[schemars(description = "")]
    pub changes: Option<String>,
    /// The staged change (HEAD against the index).
    #[arg(long)]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub staged: bool,
    /// A revision against the working tree.
    #[arg(long, value_name = "REV")]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub since: Option<String>,
    /// Hops of callers to follow.
    #[arg(long, default_value = "3", value_name = "MAX_DEPTH")]
    #[serde(default = "three")]
    #[schemars(description = "default 3")]
    pub max_depth: Count,
    /// How a range's report is written.
    #[arg(long, value_enum, default_value = "text")]
    #[serde(default = "text")]
    #[schemars(schema_with = "formats", description = "with changes")]
    pub format: ImpactFormat,
    /// Exit 3 when a check trips: callers>N, tests>N, deleted, public-api (repeatable).
    #[arg(long = "fail-on", value_name = "CHECK")]
    #[serde(default, deserialize_with = "strings")]
    #[schemars(with = "Strings", description = "with changes: callers>N, tests>N, deleted, public-api")]
    pub fail_on: Vec<String>,
    /// The blast radius of changing a database table: every definition that touches it, their
    /// callers and tests.
    #[arg(long, value_name = "TABLE", conflicts_with_all = ["target", "staged", "since", "column"])]
    #[schemars(description = "a database table instead")]
    pub table: Option<String>,
    /// The same for one column (`TABLE.COLUMN`): the definitions whose SQL names it.
    #[arg(long, value_name = "TABLE.COLUMN", conflicts_with_all = ["target", "staged", "since"])]
    #[schemars(description = "TABLE.COLUMN instead")]
    pub column: Option<String>,
    /// The source to ask (MCP; the command line asks the repository).
    #[arg(skip)]
    #[schemars(description = "Source name; omit for all")]
    pub source: Option<String>,
    /// The repository of a workspace to ask (`--workspace`; default: each of them).
    #[arg(long, value_name = "REPO")]
    #[serde(default)]
    #[schemars(description = "Repository of the workspace; omit for all")]
    pub repo: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: Rev,
}

fn three() -> Count {
    Count(3)
}

fn text() -> ImpactFormat {
    ImpactFormat::Text
}

fn formats(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    super::args::one_of(&["text", "markdown", "json", "summary"])
}

/// What an impact question is about.
enum Subject<'a> {
    Table(&'a str),
    Symbol(&'a str),
    Changes(Range),
}

impl ImpactArgs {
    /// Hops of callers followed: as asked, at most 10.
    pub fn depth(&self) -> usize {
        self.max_depth.0.min(10)
    }

    fn subject(&self) -> Result<Subject<'_>> {
        if let Some(c) = self.column.as_deref().filter(|c| !c.trim().is_empty()) {
            if !c.contains('.') {
                return Err(ImpactError::Column {}.into());
            }
            return Ok(Subject::Table(c));
        }
        if let Some(t) = self.table.as_deref().filter(|t| !t.trim().is_empty()) {
            return Ok(Subject::Table(t));
        }
        let target = self.target.as_deref().filter(|t| !t.trim().is_empty());
        let range = match (target, self.staged, &self.since, &self.changes) {
            (Some(t), false, None, None) if !t.contains("..") => {
                if !self.fail_on.is_empty() || self.format != ImpactFormat::Text {
                    return Err(ImpactError::ChecksOnSymbol {}.into());
                }
                return Ok(Subject::Symbol(t));
            }
            (Some(t), false, None, None) => ImpactRangeArgs::parse(t)?.range,
            (None, true, None, None) => Range::Staged,
            (None, false, Some(r), None) => Range::Since(r.clone()),
            (None, false, None, Some(c)) => ImpactRangeArgs::parse(c)?.range,
            (None, false, None, None) => Range::Uncommitted,
            _ => {
                return Err(ImpactError::Subjects {}.into());
            }
        };
        Ok(Subject::Changes(range))
    }
}

/// Whether the impact asked about is a symbol's (not a range's or a table's).
pub fn of_symbol(a: &ImpactArgs) -> bool {
    matches!(a.subject(), Ok(Subject::Symbol(_)))
}

pub fn run(engine: &Engine, a: &ImpactArgs) -> Result<Answer> {
    let rev = a.at.rev.as_deref();
    match a.subject()? {
        Subject::Table(name) => super::data_access::impact(engine, name, rev, a.depth()),
        Subject::Symbol(symbol) => super::nav::impact(engine, symbol, rev, a.depth()),
        Subject::Changes(range) => {
            super::changes::impact_range(engine, &ImpactRangeArgs { range }, a.depth(), a.format, &a.fail_on)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: ImpactArgs,
    }

    fn cli(words: &[&str]) -> ImpactArgs {
        Cmd::try_parse_from(std::iter::once("impact").chain(words.iter().copied())).unwrap().args
    }

    fn mcp(v: serde_json::Value) -> ImpactArgs {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn both_surfaces_name_the_same_subjects() {
        let same = |a: &ImpactArgs, b: &ImpactArgs| {
            let key = |x: &ImpactArgs| match x.subject().unwrap() {
                Subject::Table(t) => format!("table {t}"),
                Subject::Symbol(s) => format!("symbol {s}"),
                Subject::Changes(r) => format!("changes {r:?}"),
            };
            assert_eq!(key(a), key(b));
            assert_eq!((a.depth(), a.format, &a.fail_on), (b.depth(), b.format, &b.fail_on));
        };
        same(&cli(&["Parser.parse"]), &mcp(serde_json::json!({"symbol": "Parser.parse"})));
        same(
            &cli(&["main..feature", "--fail-on", "deleted"]),
            &mcp(serde_json::json!({"changes": "main..feature", "fail_on": "deleted"})),
        );
        same(&cli(&["--staged"]), &mcp(serde_json::json!({"changes": "staged"})));
        same(&cli(&[]), &mcp(serde_json::json!({})));
        same(
            &cli(&["--column", "orders.total", "--max-depth", "12"]),
            &mcp(serde_json::json!({"column": "orders.total", "max_depth": 99})),
        );
        assert_eq!(cli(&["--max-depth", "12"]).depth(), 10, "bounded alike");
        assert!(cli(&["--column", "orders"]).subject().is_err(), "a column names its table");
        assert!(cli(&["Parser.parse", "--format", "json"]).subject().is_err(), "formats are for ranges");
    }
}
