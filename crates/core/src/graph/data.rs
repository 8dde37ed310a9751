//! Data access of a view: the per-blob data facts (`chunk::data`) resolved across files —
//! which definitions read, write, map or call which tables and procedures. What one file
//! cannot know is settled here: a JPQL entity or an ORM model class named in a query becomes
//! its table, Django's default table comes from the app's directory, an EF `DbSet` property
//! becomes its entity's table.

use super::files::FileFacts;
use crate::chunk::data::{DataKind, plural, snake};
use serde::Serialize;
use std::collections::HashMap;

/// One access: a definition (or a file, at file level) touching a table or procedure.
#[derive(Debug, Clone, Serialize)]
pub struct Access {
    /// Table or procedure, lower-case.
    pub table: String,
    /// read, write, ddl, call, map, repository.
    pub access: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    #[serde(skip)]
    pub file: u32,
    pub line: u32,
    #[serde(skip)]
    pub def: Option<u32>,
}

/// The application label Django gives a model file's app: the directory of `models.py`, or of
/// the `models/` package.
fn django_app(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    let n = parts.len();
    let dir = if n >= 3 && parts[n - 2] == "models" {
        parts[n - 3]
    } else if n >= 2 {
        parts[n - 2]
    } else {
        ""
    };
    dir.to_ascii_lowercase()
}

fn writes(method: &str) -> bool {
    let m = method.to_ascii_lowercase();
    ["save", "delete", "remove", "insert", "update", "persist", "merge", "create", "add"]
        .iter()
        .any(|p| m.starts_with(p))
}

/// Resolves the data facts of `files` (path order); `first_def[i]` is the graph id of file
/// `i`'s first definition.
pub fn resolve(files: &[FileFacts], first_def: &[u32]) -> Vec<Access> {
    // Class → table, from every mapping in the view (the first, in path order, wins).
    let mut class_table: HashMap<String, String> = HashMap::new();
    for f in files {
        for d in f.facts.data.iter().filter(|d| d.kind == DataKind::Map) {
            let table = if d.name.is_empty() && d.access == "map:django" {
                let app = django_app(f.path);
                if app.is_empty() {
                    d.target.to_ascii_lowercase()
                } else {
                    format!("{app}_{}", d.target.to_ascii_lowercase())
                }
            } else {
                d.name.to_ascii_lowercase()
            };
            // A class's join tables are not its table.
            if !d.target.is_empty() && d.access != "map:join" {
                class_table.entry(d.target.clone()).or_insert(table);
            }
        }
    }
    // EF: a DbSet property is its entity's mapped table, else the property's name.
    let mut dbsets: HashMap<String, String> = HashMap::new();
    for f in files {
        for d in f.facts.data.iter().filter(|d| d.kind == DataKind::DbSet) {
            let table = class_table.get(&d.name).cloned().unwrap_or_else(|| d.target.to_ascii_lowercase());
            dbsets.entry(d.target.clone()).or_insert(table.clone());
            class_table.entry(d.name.clone()).or_insert(table);
        }
    }
    let mut out = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        let def = |scope: i32| {
            usize::try_from(scope).ok().filter(|&s| s < f.facts.defs.len()).map(|s| first_def[fi] + s as u32)
        };
        for d in &f.facts.data {
            let mut push = |table: String, access: &str, columns: Vec<String>, line: u32, def: Option<u32>| {
                out.push(Access { table, access: access.to_string(), columns, file: fi as u32, line, def });
            };
            match d.kind {
                // A JPQL query names the entity class; SQL names the table.
                DataKind::Sql => {
                    let table = class_table.get(&d.name).cloned().unwrap_or_else(|| d.name.to_ascii_lowercase());
                    push(table, &d.access, d.columns.clone(), d.line, def(d.scope));
                }
                DataKind::Call => push(d.name.to_ascii_lowercase(), "call", vec![], d.line, def(d.scope)),
                DataKind::Map => {
                    let table = class_table
                        .get(&d.target)
                        .filter(|_| d.name.is_empty())
                        .cloned()
                        .unwrap_or_else(|| d.name.to_ascii_lowercase());
                    push(table, "map", vec![], d.line, def(d.scope));
                }
                DataKind::Repo => {
                    let table = class_table.get(&d.name).cloned().unwrap_or_else(|| plural(&snake(&d.name)));
                    push(table.clone(), "repository", vec![], d.line, def(d.scope));
                    // Each method the repository declares queries its entity's table.
                    if d.scope >= 0 {
                        for (i, m) in f.facts.defs.iter().enumerate() {
                            if m.parent == d.scope {
                                push(
                                    table.clone(),
                                    if writes(&m.name) { "write" } else { "read" },
                                    vec![],
                                    m.start_line,
                                    def(i as i32),
                                );
                            }
                        }
                    }
                }
                DataKind::DbSet => {
                    if let Some(t) = dbsets.get(&d.target) {
                        push(t.clone(), "map", vec![], d.line, def(d.scope));
                    }
                }
                DataKind::Use => {
                    if let Some(t) = class_table.get(&d.name).or_else(|| dbsets.get(&d.name)) {
                        push(t.clone(), &d.access, vec![], d.line, def(d.scope));
                    }
                }
            }
        }
    }
    out
}
