//! `data-access [TABLE|TABLE.COLUMN|PROCEDURE]`: who reads, writes, maps or calls a table or
//! stored procedure (with no name: every table the view touches), and `impact --table` /
//! `--column`: the blast radius of changing one. Answered from the view's code graph, whose
//! data facts are resolved across files (`graph::data`).

use super::nav::{Ctx, impact_report, open};
use super::page::{Pager, more_line};
use super::{Answer, view_line};
use crate::engine::Engine;
use crate::graph::data::Access;
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Accessor {
    pub table: String,
    pub access: String,
    pub path: String,
    pub line: u32,
    /// The definition that makes the access, qualified ("" at file level).
    pub symbol: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TableSummary {
    pub table: String,
    /// Accesses per kind (read, write, ddl, map, repository, call).
    pub accesses: BTreeMap<String, usize>,
    pub symbols: usize,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DataAccess {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    pub matched: bool,
    /// With a name: its accessors; a procedure also lists what it touches.
    pub results: Vec<Accessor>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub touches: Vec<Accessor>,
    /// Without a name: every table and procedure of the view.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<TableSummary>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
    pub next_cursor: Option<String>,
}

/// `orders`, `dbo.Orders`, `"orders"` → `orders`; `orders.total` → (`orders`, `total`).
fn parse_name(name: &str) -> (String, Option<String>) {
    let clean: String =
        name.trim().chars().filter(|c| !matches!(c, '`' | '"' | '[' | ']')).collect::<String>().to_ascii_lowercase();
    let parts: Vec<&str> = clean.split('.').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [t] => (t.to_string(), None),
        [.., t, c] => (t.to_string(), Some(c.to_string())),
        [] => (String::new(), None),
    }
}

fn accessor(ctx: &Ctx, a: &Access) -> Accessor {
    let g = &ctx.graph;
    let (symbol, kind) = match a.def {
        Some(d) => (g.defs[d as usize].qualified.clone(), g.defs[d as usize].kind.clone()),
        None => (String::new(), String::new()),
    };
    Accessor {
        table: a.table.clone(),
        access: a.access.clone(),
        path: g.files[a.file as usize].path.clone(),
        line: a.line,
        symbol,
        kind,
        columns: a.columns.clone(),
    }
}

/// The accesses of `table` (and `column`, when given), in path and line order.
fn accesses<'a>(ctx: &'a Ctx, table: &str, column: Option<&str>) -> Vec<&'a Access> {
    let mut v: Vec<&Access> = ctx
        .graph
        .data
        .iter()
        .filter(|a| a.table == table && column.is_none_or(|c| a.columns.iter().any(|x| x == c)))
        .collect();
    v.sort_by(|a, b| {
        (&ctx.graph.files[a.file as usize].path, a.line, &a.access).cmp(&(
            &ctx.graph.files[b.file as usize].path,
            b.line,
            &b.access,
        ))
    });
    v
}

fn nearest_tables(ctx: &Ctx, table: &str) -> Vec<String> {
    let mut names: Vec<&str> = ctx.graph.data.iter().map(|a| a.table.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut scored: Vec<(f64, &str)> =
        names.into_iter().map(|n| (strsim::jaro_winkler(n, table), n)).filter(|(s, _)| *s > 0.75).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().take(5).map(|x| x.1.to_string()).collect()
}

/// `data_access`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct DataAccessArgs {
    /// Table, `TABLE.COLUMN` or procedure (case-insensitive; schema and quotes ignored).
    #[schemars(description = "")]
    pub name: Option<String>,
    /// Entries listed at most [default: 100; at most 10000 a page].
    #[arg(short = 'k', long = "limit")]
    #[serde(rename = "n_results")]
    #[schemars(description = "default 100")]
    pub k: Option<super::args::Count>,
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::args::Page,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: super::args::Rev,
}

pub fn run(engine: &Engine, a: &DataAccessArgs) -> Result<Answer> {
    let (name, limit, cursor) = (a.name.as_deref(), super::args::Count::or(a.k, 100, 10_000), a.page.cursor.as_deref());
    let ctx = open(engine, a.at.rev.as_deref())?;
    let pager = Pager::new("data_access", &ctx.data.key, &(name, limit), cursor)?;
    let mut text = format!("{}\n", view_line(&ctx.data.id));
    let Some(name) = name.filter(|n| !n.trim().is_empty()) else {
        // Every table: how it is used and by how many definitions.
        let mut by: BTreeMap<String, (BTreeMap<String, usize>, std::collections::HashSet<(u32, Option<u32>)>)> =
            BTreeMap::new();
        for a in &ctx.graph.data {
            let e = by.entry(a.table.clone()).or_default();
            *e.0.entry(a.access.clone()).or_default() += 1;
            e.1.insert((a.file, a.def));
        }
        let mut tables: Vec<TableSummary> = by
            .into_iter()
            .map(|(t, (acc, who))| TableSummary { table: t, accesses: acc, symbols: who.len() })
            .collect();
        let next_cursor = pager.page(&mut tables, limit);
        text.push_str(&format!("tables and procedures the code touches ({}):\n", tables.len()));
        if tables.is_empty() {
            text.push_str("  (none found: no SQL in string literals or .sql files, no ORM mappings)\n");
        }
        for t in &tables {
            let acc: Vec<String> = t.accesses.iter().map(|(k, v)| format!("{k} {v}")).collect();
            text.push_str(&format!("  {} — {} ({} symbols)\n", t.table, acc.join(", "), t.symbols));
        }
        text.push_str(&more_line(next_cursor.as_deref()));
        let r = DataAccess {
            name: String::new(),
            column: None,
            matched: !tables.is_empty(),
            results: vec![],
            touches: vec![],
            tables,
            suggestions: vec![],
            next_cursor,
        };
        return Ok(Answer::new("data_access", Some(ctx.data.id.clone()), &r, text));
    };
    let (table, column) = parse_name(name);
    let found = accesses(&ctx, &table, column.as_deref());
    let mut results: Vec<Accessor> = found.iter().map(|a| accessor(&ctx, a)).collect();
    // A procedure defined in the view: what its body touches.
    let g = &ctx.graph;
    let proc_defs: Vec<u32> = g
        .by_name
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(&table))
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|&d| g.def_path(d).to_ascii_lowercase().ends_with(".sql"))
        .collect();
    let mut touches: Vec<Accessor> =
        g.data.iter().filter(|a| a.def.is_some_and(|d| proc_defs.contains(&d))).map(|a| accessor(&ctx, a)).collect();
    touches.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    let matched = !results.is_empty() || !touches.is_empty();
    let suggestions = if matched { vec![] } else { nearest_tables(&ctx, &table) };
    let next_cursor = pager.page(&mut results, limit);
    let what = match &column {
        Some(c) => format!("column {c} of {table}"),
        None => table.clone(),
    };
    if !matched {
        text.push_str(&format!("no code touches {what} in this view{}\n", crate::present::did_you_mean(&suggestions)));
    } else {
        text.push_str(&format!("{what}: {} access{}\n", results.len(), if results.len() == 1 { "" } else { "es" }));
    }
    for r in &results {
        let sym = if r.symbol.is_empty() { "<file>".to_string() } else { r.symbol.clone() };
        text.push_str(&format!("  {} {} [{}]\n", crate::present::loc(&r.path, r.line), sym, r.access));
    }
    text.push_str(&more_line(next_cursor.as_deref()));
    if !touches.is_empty() {
        text.push_str(&format!("{table} touches:\n"));
        for r in &touches {
            text.push_str(&format!("  {} {} [{}]\n", crate::present::loc(&r.path, r.line), r.table, r.access));
        }
    }
    let r = DataAccess {
        name: name.to_string(),
        column,
        matched,
        results,
        touches,
        tables: vec![],
        suggestions,
        next_cursor,
    };
    Ok(Answer::new("data_access", Some(ctx.data.id.clone()), &r, text))
}

/// `impact --table T` / `--column T.C`: the blast radius of every definition that touches it.
pub fn impact(engine: &Engine, name: &str, rev: Option<&str>, max_depth: usize) -> Result<Answer> {
    let ctx = open(engine, rev)?;
    let (table, column) = parse_name(name);
    let mut defs: Vec<u32> = accesses(&ctx, &table, column.as_deref()).iter().filter_map(|a| a.def).collect();
    defs.sort_unstable();
    defs.dedup();
    let what = match &column {
        Some(c) => format!("column {c} of table {table}"),
        None => format!("table {table}"),
    };
    if defs.is_empty() {
        let suggestions = nearest_tables(&ctx, &table);
        let text = format!(
            "{}\nno definition touches {what}{}\n",
            view_line(&ctx.data.id),
            crate::present::did_you_mean(&suggestions)
        );
        return Ok(Answer::new("impact", Some(ctx.data.id.clone()), super::Unmatched::new(name, suggestions), text));
    }
    let mut head = format!("{what}: touched by {} definition{}\n", defs.len(), if defs.len() == 1 { "" } else { "s" });
    let touched: Vec<Accessor> = accesses(&ctx, &table, column.as_deref())
        .iter()
        .filter(|a| a.def.is_some())
        .map(|a| accessor(&ctx, a))
        .collect();
    for t in touched.iter().take(40) {
        head.push_str(&format!("  {} {} [{}]\n", crate::present::loc(&t.path, t.line), t.symbol, t.access));
    }
    let (impact, text) = impact_report(&ctx, name, &defs, &head, max_depth)?;
    let r = TableImpact { impact, touched_by: touched };
    Ok(Answer::new("impact", Some(ctx.data.id.clone()), &r, text))
}

/// The impact of a table or column: the blast radius of the definitions that touch it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TableImpact {
    #[serde(flatten)]
    pub impact: super::nav::Impact,
    /// Where the definitions touch it.
    pub touched_by: Vec<Accessor>,
}

results!(DataAccess => "results", TableImpact => "results");
