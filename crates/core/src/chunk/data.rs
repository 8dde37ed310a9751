//! Data-access facts per blob: which tables (and columns) the code reads or writes, which
//! classes map to tables, which procedures it calls. Found in SQL inside string literals (any
//! language), in `.sql` files (statements, procedures, functions, views), and in the mapping
//! and query idioms of common ORMs: JPA / Spring Data, Entity Framework, SQLAlchemy, Django,
//! ActiveRecord, knex, Laravel's query builder, gorm. Pure functions of the blob's text: names
//! that depend on a file's path or on other files (Django's default table, a JPQL entity, an
//! EF `DbSet` property) are resolved per view (`graph::data`).

use crate::chunk::defs::{DefFact, type_kind};
use crate::lang::Lang;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataKind {
    /// A table (or entity, in JPQL) named by SQL text: `name`, with `access` and `columns`.
    Sql = 0,
    /// A procedure or function called (`EXEC p`, `CALL p`, a stored-procedure command).
    Call = 1,
    /// Class `target` maps to table `name` (empty: the framework's default name, resolved per
    /// view; `access` names the framework).
    Map = 2,
    /// Repository interface (the scope) of entity `name`.
    Repo = 3,
    /// An EF `DbSet<name>` property called `target`.
    DbSet = 4,
    /// Model class or `DbSet` property `name` queried (`access`: read or write).
    Use = 5,
}

impl DataKind {
    pub fn from_u8(v: u8) -> Option<DataKind> {
        Some(match v {
            0 => DataKind::Sql,
            1 => DataKind::Call,
            2 => DataKind::Map,
            3 => DataKind::Repo,
            4 => DataKind::DbSet,
            5 => DataKind::Use,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataFact {
    pub kind: DataKind,
    pub name: String,
    pub target: String,
    /// read, write, ddl, call, map (`map:django` for Django's default name, `map:join` for a
    /// join table of a class), repository, dbset.
    pub access: String,
    pub columns: Vec<String>,
    pub line: u32,
    /// Enclosing definition (-1 at file level).
    pub scope: i32,
}

/// Cheap test before any parsing: most files name no table at all.
pub fn may_have_data(text: &str) -> bool {
    static ANY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)(?-u:\b)(select|insert|update|delete|create|alter|drop|merge|truncate|exec|execute|call)(?-u:\b)|@Table|@Entity|__tablename__|db_table|DbSet<|Repository<|ApplicationRecord|ActiveRecord|knex|DB::table|\.Table\(|objects\.|\.query(?-u:\b)").unwrap()
    });
    ANY.is_match(text)
}

/// Byte offset → 1-based line.
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Lines {
        let mut v = vec![0];
        v.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines(v)
    }
    fn at(&self, offset: usize) -> u32 {
        self.0.partition_point(|&s| s <= offset) as u32
    }
}

/// Innermost definition holding `line` (-1: none).
fn scope_at(defs: &[DefFact], line: u32) -> i32 {
    let mut best: i32 = -1;
    for (i, d) in defs.iter().enumerate() {
        if d.start_line <= line && line <= d.end_line && (best < 0 || d.start_line >= defs[best as usize].start_line) {
            best = i as i32;
        }
    }
    best
}

/// The type an annotation or attribute at byte `offset` belongs to: the next type declared
/// after it (within a few hundred bytes), found by name among the definitions holding its line.
fn type_after(text: &str, offset: usize, lines: &Lines, defs: &[DefFact]) -> i32 {
    static DECL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?-u:\b)(?:class|interface|record|enum|struct|object)\s+([A-Za-z_]\w*)").unwrap()
    });
    let end = (offset + 600).min(text.len());
    let end = (0..=end).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(offset);
    let Some(c) = DECL.captures(&text[offset..end]) else { return -1 };
    let m = c.get(1).unwrap();
    let line = lines.at(offset + m.start());
    let mut best: i32 = -1;
    for (i, d) in defs.iter().enumerate() {
        if d.name == m.as_str()
            && type_kind(&d.kind)
            && d.start_line <= line
            && line <= d.end_line
            && (best < 0 || d.start_line >= defs[best as usize].start_line)
        {
            best = i as i32;
        }
    }
    best
}

/// The innermost type holding `line`.
fn type_at(defs: &[DefFact], line: u32) -> i32 {
    let mut best: i32 = -1;
    for (i, d) in defs.iter().enumerate() {
        if type_kind(&d.kind)
            && d.start_line <= line
            && line <= d.end_line
            && (best < 0 || d.start_line >= defs[best as usize].start_line)
        {
            best = i as i32;
        }
    }
    best
}

/// Data-access facts of a blob. `strings` are the byte ranges of its string literals (from the
/// syntax tree; for SQL files, the whole text is SQL).
pub fn extract(lang: Lang, text: &str, strings: &[(usize, usize)], defs: &[DefFact]) -> Vec<DataFact> {
    let mut out = Vec::new();
    if !may_have_data(text) {
        return out;
    }
    let lines = Lines::new(text);
    if lang == Lang::Sql {
        for r in sql_refs(text) {
            let line = lines.at(r.offset);
            out.push(sql_fact(r, line, defs));
        }
        return out;
    }
    let procedures =
        text.contains("StoredProcedure") || text.contains("storedProcedure") || text.contains("prepareCall");
    for &(s, e) in strings {
        let lit = &text[s..e];
        // The shortest statement that names a table (`DELETE FROM t`) is longer than most
        // literals.
        if lit.len() >= 12 && looks_like_sql(lit) {
            for r in sql_refs(lit) {
                let line = lines.at(s + r.offset);
                out.push(sql_fact(r, line, defs));
            }
        } else if procedures && let Some(p) = stored_procedure_name(text, s, e) {
            let line = lines.at(s);
            out.push(DataFact {
                kind: DataKind::Call,
                name: p,
                target: String::new(),
                access: "call".into(),
                columns: vec![],
                line,
                scope: scope_at(defs, line),
            });
        }
    }
    orm_facts(lang, text, &lines, defs, &mut out);
    out
}

/// Whether a syntax node kind is a string literal (in any of the grammars).
pub fn is_string_kind(k: &str) -> bool {
    (k.contains("string")
        && !k.contains("content")
        && !k.contains("start")
        && !k.contains("end")
        && !k.contains("fragment"))
        || k == "text_block"
        || k == "heredoc_body"
        || k == "heredoc"
}

/// Routines and views a SQL file creates, as definitions (so their callers and the tables
/// they touch attach to them): from each `CREATE … PROCEDURE|FUNCTION|VIEW|TRIGGER name` to
/// the line before the next `CREATE`.
pub fn sql_definitions(text: &str) -> Vec<DefFact> {
    static ROUTINE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?im)^\s*create\s+(?:or\s+(?:replace|alter)\s+)?(?:definer\s*=\s*\S+\s+)?(procedure|proc|function|view|trigger)\s+(?:if\s+not\s+exists\s+)?([\w`\x22\[\].]+)").unwrap()
    });
    static CREATE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?im)^\s*create\s").unwrap());
    let lines = Lines::new(text);
    let total = lines.0.len() as u32;
    let creates: Vec<u32> = CREATE
        .find_iter(text)
        .map(|m| lines.at(m.start() + m.as_str().len() - m.as_str().trim_start().len()))
        .collect();
    let mut out = Vec::new();
    for c in ROUTINE.captures_iter(text) {
        let m = c.get(0).unwrap();
        let start = lines.at(m.start() + m.as_str().len() - m.as_str().trim_start().len());
        let end = creates.iter().copied().find(|&l| l > start).map_or(total, |l| l - 1).max(start);
        let name = unquote(&c[2]);
        out.push(DefFact {
            name: name.clone(),
            qualified: name,
            kind: "function".into(),
            start_line: start,
            end_line: end,
            parent: -1,
            test: false,
        });
    }
    out
}

// ---------------------------------------------------------------- SQL text

/// A table or procedure named in SQL text.
pub struct SqlRef {
    pub kind: DataKind,
    /// As written, unquoted, without schema (JPQL entity names keep their case).
    pub name: String,
    pub access: &'static str,
    pub offset: usize,
    pub columns: Vec<String>,
}

const KEYWORDS: &[&str] = &[
    "select",
    "from",
    "where",
    "and",
    "or",
    "not",
    "in",
    "is",
    "null",
    "as",
    "on",
    "join",
    "inner",
    "outer",
    "left",
    "right",
    "full",
    "cross",
    "natural",
    "using",
    "group",
    "by",
    "order",
    "having",
    "limit",
    "offset",
    "asc",
    "desc",
    "distinct",
    "all",
    "any",
    "union",
    "except",
    "intersect",
    "insert",
    "into",
    "values",
    "update",
    "set",
    "delete",
    "create",
    "table",
    "index",
    "unique",
    "primary",
    "key",
    "foreign",
    "references",
    "alter",
    "drop",
    "add",
    "column",
    "constraint",
    "default",
    "if",
    "exists",
    "case",
    "when",
    "then",
    "else",
    "end",
    "like",
    "between",
    "returning",
    "with",
    "recursive",
    "lateral",
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "coalesce",
    "cast",
    "true",
    "false",
    "integer",
    "int",
    "text",
    "varchar",
    "char",
    "boolean",
    "bool",
    "date",
    "datetime",
    "timestamp",
    "real",
    "float",
    "double",
    "decimal",
    "numeric",
    "serial",
    "bigint",
    "smallint",
    "blob",
    "autoincrement",
    "auto_increment",
    "identity",
    "collate",
    "nocase",
    "conflict",
    "replace",
    "ignore",
    "abort",
    "rollback",
    "fail",
    "do",
    "nothing",
    "excluded",
    "for",
    "of",
    "view",
    "procedure",
    "proc",
    "function",
    "trigger",
    "begin",
    "declare",
    "return",
    "returns",
    "language",
    "exec",
    "execute",
    "call",
    "merge",
    "matched",
    "truncate",
    "top",
    "fetch",
    "next",
    "rows",
    "only",
    "ilike",
    "escape",
    "over",
    "partition",
    "cascade",
    "restrict",
    "no",
    "action",
    "check",
    "temporary",
    "temp",
    "now",
    "current_timestamp",
    "strftime",
    "datetime",
    "ifnull",
    "nullif",
    "lower",
    "upper",
    "length",
    "substr",
    "row",
    "new",
    "old",
    "each",
    "instead",
    "after",
    "before",
    "dual",
    "go",
    "sql",
    "plpgsql",
    "unsigned",
    "zerofill",
    "engine",
    "charset",
    "utf8",
    "utf8mb4",
    "innodb",
];

fn is_keyword(w: &str) -> bool {
    let l = w.to_ascii_lowercase();
    KEYWORDS.contains(&l.as_str())
}

/// Whether a string literal holds SQL: it starts with a statement keyword, or names a table
/// after FROM / JOIN in capitals (`"... FROM users WHERE ..."` fragments).
pub fn looks_like_sql(lit: &str) -> bool {
    static START: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?is)^[^A-Za-z]*(select\s.+\sfrom\s|insert\s+(or\s+\w+\s+)?into\s|update\s+\S+\s+set\s|delete\s+from\s|with\s+\w+\s+as\s*\(|create\s+(unique\s+)?(table|index|view|procedure|function|trigger)\s|alter\s+table\s|drop\s+(table|view|index)\s|merge\s+into\s|truncate\s+(table\s+)?\w|replace\s+into\s|(call|exec|execute)\s+[\w.\[\]\x22]+\s*(\(|@|$))").unwrap()
    });
    static UPPER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?-u:\b)(SELECT|FROM|JOIN|INSERT INTO|DELETE FROM|UPDATE)\s+[\w`\[\x22]").unwrap()
    });
    static PROSE_MARK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)(?-u:\b)where(?-u:\b)|(?-u:\b)values(?-u:\b)|(?-u:\b)set(?-u:\b)|[*?]|\$\d|:\w|@\w|%s|(?-u:\b)order\s+by(?-u:\b)|(?-u:\b)group\s+by(?-u:\b)|(?-u:\b)limit(?-u:\b)|(?-u:\b)join(?-u:\b)|(?-u:\b)returning(?-u:\b)|\(|=").unwrap()
    });
    if START.is_match(lit) {
        // Lower-case "select a file from the list" is prose; SQL has more of its shape.
        let upper_start = lit
            .trim_start_matches(|c: char| !c.is_ascii_alphabetic())
            .split_whitespace()
            .next()
            .is_some_and(|w| w.chars().all(|c| c.is_ascii_uppercase()));
        return upper_start || PROSE_MARK.is_match(lit);
    }
    UPPER.is_match(lit)
        && (lit.contains("SELECT")
            || lit.contains("WHERE")
            || lit.contains("JOIN")
            || lit.contains("INSERT")
            || lit.contains("DELETE")
            || lit.contains("UPDATE"))
}

const IDENT: &str = r#"((?:[`"\[]?[A-Za-z_][\w$]*[`"\]]?\.){0,2}[`"\[]?[A-Za-z_][\w$]*[`"\]]?)"#;

fn unquote(name: &str) -> String {
    let last = name.rsplit('.').next().unwrap_or(name);
    last.trim_matches(|c| c == '`' || c == '"' || c == '[' || c == ']').to_string()
}

/// Tables and procedures of SQL text, with the access each statement makes and the columns it
/// names (every identifier of the statement that is not a keyword, table or alias).
/// The fact of an SQL reference found at `line`.
fn sql_fact(r: SqlRef, line: u32, defs: &[DefFact]) -> DataFact {
    DataFact {
        kind: r.kind,
        name: r.name,
        target: String::new(),
        access: r.access.into(),
        columns: r.columns,
        line,
        scope: scope_at(defs, line),
    }
}

pub fn sql_refs(sql: &str) -> Vec<SqlRef> {
    static PATTERNS: LazyLock<Vec<(Regex, &'static str, DataKind)>> = LazyLock::new(|| {
        let p = |re: &str| Regex::new(&re.replace("IDENT", IDENT)).unwrap();
        vec![
            (
                p(r"(?i)(?-u:\b)(?:insert|replace|merge)\s+(?:or\s+\w+\s+|ignore\s+)?into\s+IDENT"),
                "write",
                DataKind::Sql,
            ),
            (
                p(r"(?i)(?-u:\b)update\s+(?:or\s+\w+\s+)?IDENT(?:\s+(?:as\s+)?\w+)?\s+set(?-u:\b)"),
                "write",
                DataKind::Sql,
            ),
            (p(r"(?i)(?-u:\b)delete\s+from\s+IDENT"), "write", DataKind::Sql),
            (p(r"(?i)(?-u:\b)truncate\s+(?:table\s+)?IDENT"), "write", DataKind::Sql),
            (
                p(
                    r"(?i)(?-u:\b)(?:create|alter|drop)\s+(?:temp(?:orary)?\s+)?table\s+(?:if\s+(?:not\s+)?exists\s+)?IDENT",
                ),
                "ddl",
                DataKind::Sql,
            ),
            (
                p(r"(?is)(?-u:\b)create\s+(?:unique\s+)?index\s+(?:if\s+not\s+exists\s+)?[\w`\x22\[\].]+\s+on\s+IDENT"),
                "ddl",
                DataKind::Sql,
            ),
            (p(r"(?i)(?-u:\b)join\s+IDENT"), "read", DataKind::Sql),
            (p(r"(?i)(?-u:\b)(?:exec|execute|call)\s+IDENT"), "call", DataKind::Call),
        ]
    });
    static FROM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)(?-u:\b)from\s+").unwrap());
    static DELETE_FROM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)(?-u:\b)delete\s+$").unwrap());
    static CTE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)(?:(?-u:\b)with\s+(?:recursive\s+)?|,\s*)(\w+)\s+as\s*\(").unwrap());
    static TABLE_ITEM: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(&format!(r"(?i)^\s*{IDENT}(?:\s+(?:as\s+)?([A-Za-z_]\w*))?\s*(,)?")).unwrap());
    static WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)?").unwrap());

    let ctes: Vec<String> = CTE.captures_iter(sql).map(|c| c[1].to_ascii_lowercase()).collect();
    let mut refs: Vec<SqlRef> = Vec::new();
    let mut aliases: Vec<String> = Vec::new();
    let push = |refs: &mut Vec<SqlRef>, name: &str, offset: usize, access: &'static str, kind: DataKind| {
        let n = unquote(name);
        if n.is_empty() || is_keyword(&n) && kind != DataKind::Call || ctes.contains(&n.to_ascii_lowercase()) {
            return;
        }
        // `FROM generate_series(...)`, `EXEC sp(...)` is a call, a table is not followed by `(`.
        let after = sql[offset + name.len()..].trim_start();
        if kind == DataKind::Sql && after.starts_with('(') && access == "read" {
            return;
        }
        if refs.iter().any(|r| r.offset == offset) {
            return;
        }
        refs.push(SqlRef { kind, name: n, access, offset, columns: Vec::new() });
    };
    for (re, access, kind) in PATTERNS.iter() {
        for c in re.captures_iter(sql) {
            let m = c.get(1).unwrap();
            push(&mut refs, m.as_str(), m.start(), access, *kind);
        }
    }
    // FROM lists: `FROM a x, b AS y` (not DELETE FROM, counted as a write).
    for m in FROM.find_iter(sql) {
        if DELETE_FROM.is_match(&sql[..m.start()]) {
            continue;
        }
        let mut at = m.end();
        for _ in 0..8 {
            let Some(c) = TABLE_ITEM.captures(&sql[at..]) else { break };
            let t = c.get(1).unwrap();
            if sql[at + t.end()..].trim_start().starts_with('(') {
                break;
            }
            push(&mut refs, t.as_str(), at + t.start(), "read", DataKind::Sql);
            if let Some(a) = c.get(2)
                && !is_keyword(a.as_str())
            {
                aliases.push(a.as_str().to_ascii_lowercase());
            }
            if c.get(3).is_none() {
                break;
            }
            at += c.get(0).unwrap().end();
        }
    }
    static JOIN_ALIAS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(&format!(r"(?i)(?-u:\b)join\s+{IDENT}\s+(?:as\s+)?([A-Za-z_]\w*)")).unwrap());
    for c in JOIN_ALIAS.captures_iter(sql) {
        if !is_keyword(&c[2]) {
            aliases.push(c[2].to_ascii_lowercase());
        }
    }
    refs.sort_by_key(|r| r.offset);
    // Columns: per statement (split at `;`), the identifiers that are not keywords, tables,
    // aliases or parameters; `alias.column` counts as `column`.
    let tables: Vec<String> = refs.iter().map(|r| r.name.to_ascii_lowercase()).collect();
    let mut stmt_start = 0;
    for stmt in sql.split_inclusive(';') {
        let stmt_end = stmt_start + stmt.len();
        let mut cols: Vec<String> = Vec::new();
        for w in WORD.find_iter(stmt) {
            let before = stmt[..w.start()].chars().next_back();
            if matches!(before, Some(':' | '@' | '$' | '#' | '\'' | '.')) {
                continue;
            }
            let word = w.as_str();
            let col = word.rsplit('.').next().unwrap_or(word).to_ascii_lowercase();
            if is_keyword(&col)
                || tables.contains(&col)
                || aliases.contains(&col)
                || ctes.contains(&col)
                || col.len() > 64
            {
                continue;
            }
            if stmt[w.end()..].trim_start().starts_with('(') {
                continue;
            }
            if !cols.contains(&col) && cols.len() < 64 {
                cols.push(col);
            }
        }
        for r in refs.iter_mut().filter(|r| r.offset >= stmt_start && r.offset < stmt_end && r.kind == DataKind::Sql) {
            r.columns = cols.clone();
        }
        stmt_start = stmt_end;
    }
    refs
}

/// A bare procedure name passed as a stored-procedure command (`"usp_GetOrders"` with
/// `CommandType.StoredProcedure` on the same statement).
fn stored_procedure_name(text: &str, s: usize, e: usize) -> Option<String> {
    let lit = text[s..e].trim_matches(|c| c == '"' || c == '\'' || c == '@' || c == '`');
    if lit.is_empty()
        || lit.len() > 128
        || !lit.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '[' || c == ']')
    {
        return None;
    }
    // At most 400 bytes either side, cut on character boundaries.
    let stmt_end = text.floor_char_boundary(text[e..].find(';').map_or(text.len(), |i| e + i).min(e + 400));
    let stmt_start =
        text.ceil_char_boundary(text[..s].rfind([';', '{', '}']).map_or(0, |i| i + 1).max(s.saturating_sub(400)));
    let around = &text[stmt_start..stmt_end];
    (around.contains("StoredProcedure") || around.contains("storedProcedure") || around.contains("prepareCall"))
        .then(|| unquote(lit))
}

// ---------------------------------------------------------------- ORM idioms

/// `LineItem` → `line_item`: the table name naming conventions derive from a class name.
pub fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// English plural as ActiveRecord's inflector makes it for the usual cases.
pub fn plural(word: &str) -> String {
    if word.ends_with("ss")
        || word.ends_with("sh")
        || word.ends_with("ch")
        || word.ends_with('x')
        || word.ends_with('z')
    {
        format!("{word}es")
    } else if word.ends_with('y')
        && !word.ends_with("ay")
        && !word.ends_with("ey")
        && !word.ends_with("oy")
        && !word.ends_with("uy")
    {
        format!("{}ies", &word[..word.len() - 1])
    } else if word.ends_with("person") {
        format!("{}ople", &word[..word.len() - 4])
    } else if word.ends_with('s') {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

fn orm_facts(lang: Lang, text: &str, lines: &Lines, defs: &[DefFact], out: &mut Vec<DataFact>) {
    let mut fact = |kind: DataKind, name: String, target: String, access: &str, line: u32, scope: i32| {
        out.push(DataFact { kind, name, target, access: access.into(), columns: vec![], line, scope });
    };
    let def_name =
        |i: i32| usize::try_from(i).ok().and_then(|i| defs.get(i)).map(|d| d.name.clone()).unwrap_or_default();
    macro_rules! re {
        ($name:ident, $re:expr) => {
            static $name: LazyLock<Regex> = LazyLock::new(|| Regex::new($re).unwrap());
        };
    }
    match lang {
        Lang::Java | Lang::Kotlin | Lang::Scala => {
            re!(ENTITY, r"@(?:jakarta\.persistence\.|javax\.persistence\.)?Entity(?-u:\b)");
            re!(TABLE, r#"@(?:\w+\.)*Table\s*\(\s*(?:name\s*=\s*)?"([^"]+)""#);
            re!(JOIN_TABLE, r#"@(?:\w+\.)*JoinTable\s*\(\s*name\s*=\s*"([^"]+)""#);
            re!(
                REPO,
                r"interface\s+(\w+)\s*(?:<[^>{]*>)?\s*(?:extends|:)\s*[^{]*?(?-u:\b)(?:\w*Repository|JpaSpecificationExecutor)\s*<\s*(\w+)"
            );
            let mut mapped: Vec<i32> = Vec::new();
            for m in TABLE.captures_iter(text) {
                let at = m.get(0).unwrap().start();
                let line = lines.at(at);
                let t = type_after(text, at, lines, defs);
                if t >= 0 {
                    mapped.push(t);
                    fact(DataKind::Map, unquote(&m[1]), def_name(t), "map", line, t);
                }
            }
            for m in ENTITY.find_iter(text) {
                let line = lines.at(m.start());
                let t = type_after(text, m.start(), lines, defs);
                if t >= 0 && !mapped.contains(&t) {
                    let class = def_name(t);
                    fact(DataKind::Map, snake(&class), class, "map", line, t);
                }
            }
            for m in JOIN_TABLE.captures_iter(text) {
                let line = lines.at(m.get(0).unwrap().start());
                let t = type_at(defs, line);
                fact(DataKind::Map, unquote(&m[1]), def_name(t), "map:join", line, t);
            }
            for m in REPO.captures_iter(text) {
                let line = lines.at(m.get(1).unwrap().start());
                let t = defs
                    .iter()
                    .position(|d| d.name == m[1] && d.start_line <= line && line <= d.end_line)
                    .map_or(-1, |i| i as i32);
                fact(DataKind::Repo, m[2].to_string(), m[1].to_string(), "repository", line, t);
            }
        }
        Lang::CSharp => {
            re!(TABLE, r#"\[(?:\w+\.)*Table\s*\(\s*"([^"]+)""#);
            re!(DBSET, r"DbSet\s*<\s*(\w+)\s*>\s+(\w+)");
            re!(USE, r"(?-u:\b)(\w*(?:[Cc]ontext|[Cc]tx|[Dd]b))\s*\.\s*(\w+)\s*\.\s*(\w+)");
            re!(SET, r"\.Set\s*<\s*(\w+)\s*>\s*\(\s*\)\s*\.\s*(\w+)");
            for m in TABLE.captures_iter(text) {
                let at = m.get(0).unwrap().start();
                let line = lines.at(at);
                let t = type_after(text, at, lines, defs);
                fact(DataKind::Map, unquote(&m[1]), def_name(t), "map", line, t);
            }
            for m in DBSET.captures_iter(text) {
                let line = lines.at(m.get(0).unwrap().start());
                fact(DataKind::DbSet, m[1].to_string(), m[2].to_string(), "dbset", line, type_at(defs, line));
            }
            let write = |op: &str| {
                matches!(
                    op,
                    "Add"
                        | "AddAsync"
                        | "AddRange"
                        | "AddRangeAsync"
                        | "Remove"
                        | "RemoveRange"
                        | "Update"
                        | "UpdateRange"
                        | "Attach"
                        | "ExecuteDelete"
                        | "ExecuteDeleteAsync"
                        | "ExecuteUpdate"
                        | "ExecuteUpdateAsync"
                )
            };
            for m in USE.captures_iter(text) {
                if m[2].chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                    let line = lines.at(m.get(0).unwrap().start());
                    fact(
                        DataKind::Use,
                        m[2].to_string(),
                        String::new(),
                        if write(&m[3]) { "write" } else { "read" },
                        line,
                        scope_at(defs, line),
                    );
                }
            }
            for m in SET.captures_iter(text) {
                let line = lines.at(m.get(0).unwrap().start());
                fact(
                    DataKind::Use,
                    m[1].to_string(),
                    String::new(),
                    if write(&m[2]) { "write" } else { "read" },
                    line,
                    scope_at(defs, line),
                );
            }
        }
        Lang::Python => {
            re!(TABLENAME, r#"__tablename__\s*=\s*['"](\w+)['"]"#);
            re!(CORE_TABLE, r#"(\w+)\s*=\s*(?:\w+\.)?Table\(\s*['"](\w+)['"]"#);
            re!(DJANGO, r"class\s+(\w+)\s*\([^)]*(?-u:\b)models\.Model(?-u:\b)[^)]*\)");
            re!(DB_TABLE, r#"db_table\s*=\s*['"](\w+)['"]"#);
            re!(QUERY, r"(?-u:\b)(query|select|insert|update|delete|get|merge)\(\s*(?:\w+\.)*([A-Z]\w*)(?-u:\b)");
            re!(CLASS_QUERY, r"(?-u:\b)([A-Z]\w*)\.(query|objects)\s*\.\s*(\w+)");
            let mut explicit: Vec<i32> = Vec::new();
            for m in TABLENAME.captures_iter(text) {
                let line = lines.at(m.get(0).unwrap().start());
                let t = type_at(defs, line);
                explicit.push(t);
                fact(DataKind::Map, m[1].to_string(), def_name(t), "map", line, t);
            }
            for m in DB_TABLE.captures_iter(text) {
                let line = lines.at(m.get(0).unwrap().start());
                // `class Meta` inside the model: the model is the Meta's parent.
                let mut t = type_at(defs, line);
                if t >= 0 && defs[t as usize].name == "Meta" {
                    t = defs[t as usize].parent;
                }
                explicit.push(t);
                fact(DataKind::Map, m[1].to_string(), def_name(t), "map", line, t);
            }
            for m in DJANGO.captures_iter(text) {
                let line = lines.at(m.get(1).unwrap().start());
                let t = defs.iter().position(|d| d.name == m[1] && d.start_line == line).map_or(-1, |i| i as i32);
                if !explicit.contains(&t) {
                    fact(DataKind::Map, String::new(), m[1].to_string(), "map:django", line, t);
                }
            }
            for m in CORE_TABLE.captures_iter(text) {
                let line = lines.at(m.get(0).unwrap().start());
                fact(DataKind::Map, m[2].to_string(), m[1].to_string(), "map", line, -1);
            }
            for m in QUERY.captures_iter(text) {
                let line = lines.at(m.get(0).unwrap().start());
                let access = if matches!(&m[1], "insert" | "update" | "delete" | "merge") { "write" } else { "read" };
                fact(DataKind::Use, m[2].to_string(), String::new(), access, line, scope_at(defs, line));
            }
            for m in CLASS_QUERY.captures_iter(text) {
                let line = lines.at(m.get(0).unwrap().start());
                let access = if matches!(
                    &m[3],
                    "create"
                        | "update"
                        | "delete"
                        | "bulk_create"
                        | "bulk_update"
                        | "get_or_create"
                        | "update_or_create"
                ) {
                    "write"
                } else {
                    "read"
                };
                fact(DataKind::Use, m[1].to_string(), String::new(), access, line, scope_at(defs, line));
            }
        }
        Lang::Ruby => {
            re!(MODEL, r"class\s+(\w+)\s*<\s*(?:ApplicationRecord|ActiveRecord::Base)(?-u:\b)");
            re!(TABLE_NAME, r#"self\.table_name\s*=\s*['"](\w+)['"]"#);
            re!(
                USE,
                r"(?-u:\b)([A-Z]\w*)\.(where|find|find_by|find_by!|all|first|last|create|create!|update|update_all|delete|delete_all|destroy|destroy_all|joins|includes|order|pluck|count|exists\?|find_each|insert_all|upsert_all|new)(?-u:\b)"
            );
            let named: Vec<(u32, String)> = TABLE_NAME
                .captures_iter(text)
                .map(|m| (lines.at(m.get(0).unwrap().start()), m[1].to_string()))
                .collect();
            for m in MODEL.captures_iter(text) {
                let line = lines.at(m.get(1).unwrap().start());
                let t = defs.iter().position(|d| d.name == m[1] && d.start_line == line).map_or(-1, |i| i as i32);
                let end = usize::try_from(t).ok().map_or(line, |i| defs[i].end_line);
                let table = named
                    .iter()
                    .find(|(l, _)| *l > line && *l <= end)
                    .map(|x| x.1.clone())
                    .unwrap_or_else(|| plural(&snake(&m[1])));
                fact(DataKind::Map, table, m[1].to_string(), "map", line, t);
            }
            for m in USE.captures_iter(text) {
                let line = lines.at(m.get(0).unwrap().start());
                let access = if m[2].starts_with("create")
                    || m[2].starts_with("update")
                    || m[2].starts_with("delete")
                    || m[2].starts_with("destroy")
                    || m[2].contains("insert")
                    || m[2].contains("upsert")
                    || &m[2] == "new"
                {
                    "write"
                } else {
                    "read"
                };
                fact(DataKind::Use, m[1].to_string(), String::new(), access, line, scope_at(defs, line));
            }
        }
        _ => {}
    }
    // Query builders naming a table in a string: knex, Laravel, gorm.
    re!(BUILDER, r#"(?:(?-u:\b)knex|(?-u:\b)DB::table|\.(?:from|into|table|Table))\s*\(\s*['"]([A-Za-z_]\w*)['"]"#);
    re!(BUILDER_WRITE, r#"\.into\s*\(\s*['"]"#);
    for m in BUILDER.captures_iter(text) {
        let line = lines.at(m.get(0).unwrap().start());
        let access = if BUILDER_WRITE.is_match(m.get(0).unwrap().as_str()) { "write" } else { "read" };
        fact(DataKind::Sql, m[1].to_string(), String::new(), access, line, scope_at(defs, line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sql: &str) -> Vec<(String, &'static str)> {
        sql_refs(sql).into_iter().map(|r| (r.name, r.access)).collect()
    }

    #[test]
    fn tables_of_sql_statements() {
        assert_eq!(
            names("SELECT d.id, u.name FROM dials d JOIN users AS u ON u.id = d.user_id WHERE d.id = ?"),
            vec![("dials".into(), "read"), ("users".into(), "read")]
        );
        assert_eq!(names("INSERT INTO main.orders (id, total) VALUES (?, ?)"), vec![("orders".into(), "write")]);
        assert_eq!(names("UPDATE `orders` SET total = $1 WHERE id = $2"), vec![("orders".into(), "write")]);
        assert_eq!(names("DELETE FROM [dbo].[Orders] WHERE Id = @id"), vec![("Orders".into(), "write")]);
        assert_eq!(names("CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY)"), vec![("users".into(), "ddl")]);
        assert_eq!(names("CREATE INDEX ix_orders_user ON orders (user_id)"), vec![("orders".into(), "ddl")]);
        assert_eq!(
            names("WITH recent AS (SELECT * FROM orders) SELECT * FROM recent, customers c"),
            vec![("orders".into(), "read"), ("customers".into(), "read")]
        );
        assert_eq!(names("SELECT count(*) FROM generate_series(1, 3)"), vec![]);
        assert_eq!(names("EXEC dbo.usp_GetOrders @id"), vec![("usp_GetOrders".into(), "call")]);
        let r = sql_refs("UPDATE orders SET total = ?, status = 'paid' WHERE id = ?");
        assert_eq!(r[0].columns, vec!["total", "status", "id"]);
    }

    #[test]
    fn prose_is_not_sql() {
        assert!(!looks_like_sql("\"select a file from the list\""));
        assert!(!looks_like_sql("\"Please update your profile\""));
        assert!(looks_like_sql("\"select id from users where name = ?\""));
        assert!(looks_like_sql("`\n\t\tSELECT id, name\n\t\tFROM dials\n\t`"));
        assert!(looks_like_sql("\" AND id IN (SELECT dial_id FROM dial_memberships WHERE user_id = ?)\""));
    }

    #[test]
    fn plurals_and_snake_case() {
        assert_eq!(plural(&snake("LineItem")), "line_items");
        assert_eq!(plural("category"), "categories");
        assert_eq!(plural("address"), "addresses");
        assert_eq!(plural("person"), "people");
    }
}
