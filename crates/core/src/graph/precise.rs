//! Edges from imported SCIP facts (`layer::scip`). A file with precise facts gets its calls,
//! imports and bases from them instead of from name resolution: each symbol is joined to the
//! definition node whose name and lines hold its definition occurrence, across the view. Files
//! without precise facts keep their heuristic edges, so an index covering part of a repository
//! (one language, one package) improves exactly that part.

use super::files::FileFacts;
use super::model::{CodeGraph, Confidence, Edge, Node, Rel};
use crate::lang::Lang;
use crate::layer::scip::Occ;
use petgraph::graph::NodeIndex;
use scip::symbol::parse_symbol;
use scip::types::descriptor::Suffix;
use std::collections::{HashMap, HashSet};

/// The innermost definition of file `fi` (defs `range`) spanning `line`, preferring one named `name`.
fn enclosing(cg: &CodeGraph, range: std::ops::Range<u32>, line: u32, name: Option<&str>) -> Option<u32> {
    range
        .filter(|&d| {
            let x = &cg.defs[d as usize];
            x.start_line <= line && line <= x.end_line && name.is_none_or(|n| x.name == n)
        })
        .max_by_key(|&d| (cg.defs[d as usize].start_line, u32::MAX - cg.defs[d as usize].end_line))
}

/// A readable name for a symbol outside the view: its type and member names (`dict.get`), or
/// its namespaces when it has nothing else (`os.path`).
fn display(symbol: &str) -> Option<String> {
    let s = parse_symbol(symbol).ok()?;
    let named: Vec<&str> = s
        .descriptors
        .iter()
        .filter(|d| matches!(d.suffix.enum_value(), Ok(Suffix::Type | Suffix::Term | Suffix::Method | Suffix::Macro)))
        .map(|d| d.name.as_str())
        .collect();
    let parts: Vec<&str> = if named.is_empty() {
        s.descriptors
            .iter()
            .filter(|d| matches!(d.suffix.enum_value(), Ok(Suffix::Namespace | Suffix::Package)))
            .map(|d| d.name.as_str())
            .collect()
    } else {
        named
    };
    (!parts.is_empty()).then(|| parts.join("."))
}

/// A symbol split into its namespace path (`src`, `click`, `core`) and the rest
/// (`click Context#invoke().`): the same definition is named `src.click.core` where it is
/// defined and `click.core` where an installed or path-mapped copy of the package is imported
/// (another version too), so the package name and the rest must match exactly and one path
/// must end with the other.
fn split_symbol(symbol: &str) -> Option<(Vec<String>, String)> {
    let s = parse_symbol(symbol).ok()?;
    let mut path = Vec::new();
    let package = s.package.as_ref().map_or("", |p| p.name.as_str());
    let mut rest = format!("{} {} ", s.scheme, package);
    let head = rest.len();
    for d in &s.descriptors {
        match d.suffix.enum_value() {
            Ok(Suffix::Namespace) if rest.len() == head => {
                path.extend(d.name.split(['.', '/']).filter(|p| !p.is_empty()).map(str::to_string))
            }
            Ok(Suffix::Type) => rest.push_str(&format!("{}#", d.name)),
            Ok(Suffix::Method) => rest.push_str(&format!("{}().", d.name)),
            Ok(Suffix::Meta) => rest.push_str(&format!("{}:", d.name)),
            Ok(Suffix::Macro) => rest.push_str(&format!("{}!", d.name)),
            _ => rest.push_str(&format!("{}.", d.name)),
        }
    }
    Some((path, rest))
}

/// Symbol lookups: exact, else by namespace suffix when exactly one definition fits.
struct Symbols<'a, T: Copy + PartialEq> {
    exact: HashMap<&'a str, T>,
    by_rest: HashMap<String, Vec<(Vec<String>, T)>>,
}

impl<'a, T: Copy + PartialEq> Symbols<'a, T> {
    fn new() -> Self {
        Symbols { exact: HashMap::new(), by_rest: HashMap::new() }
    }

    fn insert(&mut self, symbol: &'a str, v: T) {
        if self.exact.contains_key(symbol) {
            return;
        }
        self.exact.insert(symbol, v);
        if let Some((path, rest)) = split_symbol(symbol) {
            self.by_rest.entry(rest).or_default().push((path, v));
        }
    }

    fn get(&self, symbol: &str) -> Option<T> {
        if let Some(&v) = self.exact.get(symbol) {
            return Some(v);
        }
        let (path, rest) = split_symbol(symbol)?;
        if path.is_empty() {
            return None;
        }
        let ends_with = |a: &[String], b: &[String]| a.len() >= b.len() && a[a.len() - b.len()..] == *b;
        let mut found: Option<T> = None;
        for (p, v) in self.by_rest.get(&rest)? {
            if !p.is_empty() && (ends_with(p, &path) || ends_with(&path, p)) {
                match found {
                    Some(f) if f != *v => return None,
                    _ => found = Some(*v),
                }
            }
        }
        found
    }
}

/// `scheme package-name` of a global symbol (the version left out: one project is indexed as
/// several versions when an installed copy is imported).
fn package_of(symbol: &str) -> String {
    let mut parts = symbol.splitn(4, ' ');
    let (scheme, _manager, name) = (parts.next().unwrap_or(""), parts.next(), parts.next().unwrap_or(""));
    format!("{scheme} {name}")
}

fn last_suffix(symbol: &str) -> Option<Suffix> {
    parse_symbol(symbol).ok()?.descriptors.last()?.suffix.enum_value().ok()
}

/// What the precise facts of a file already answer; the heuristic facts of the file are used
/// only where they do not (a call on an untyped receiver the indexer could not resolve, a
/// class whose bases it did not list).
#[derive(Default)]
pub(super) struct Covered {
    /// (line, callee name) of every call the index saw.
    pub calls: HashSet<(u32, String)>,
    /// Lines holding an import the index saw.
    pub import_lines: HashSet<u32>,
    /// Definitions (view-wide ids) whose bases the index gave.
    pub based: HashSet<u32>,
}

/// Adds the edges of every file with precise facts and returns, per file, what they covered.
pub(super) fn add_edges(
    cg: &mut CodeGraph,
    files: &[FileFacts],
    first_def: &[u32],
    seen: &mut HashSet<(NodeIndex, NodeIndex, Rel)>,
) -> Vec<Option<Covered>> {
    let mut covered: Vec<Option<Covered>> = files.iter().map(|f| f.precise.map(|_| Covered::default())).collect();
    if covered.iter().all(Option::is_none) {
        return covered;
    }
    let defs_of = |fi: usize| first_def[fi]..first_def.get(fi + 1).copied().unwrap_or(cg.defs.len() as u32);
    // Symbol → its definition node, and → the file that defines it (modules have no node).
    let mut def_of: Symbols<u32> = Symbols::new();
    let mut file_of: Symbols<u32> = Symbols::new();
    for (fi, f) in files.iter().enumerate() {
        let Some(p) = f.precise else { continue };
        for r in p.rows.iter().filter(|r| r.occ == Occ::Def) {
            file_of.insert(&r.symbol, fi as u32);
            let name = crate::index::scip::symbol_name(&r.symbol);
            if let Some(d) = name.as_deref().and_then(|n| enclosing(cg, defs_of(fi), r.line, Some(n))) {
                def_of.insert(&r.symbol, d);
            }
        }
    }
    // The packages the view defines symbols of: a symbol of any other is outside the project.
    let own: HashSet<String> = files
        .iter()
        .filter_map(|f| f.precise)
        .flat_map(|p| p.rows.iter().filter(|r| r.occ == Occ::Def).map(|r| package_of(&r.symbol)))
        .collect();
    let mut pending: Vec<(Node, Node, Edge)> = Vec::new();
    let mut externals: Vec<(Node, String, Edge)> = Vec::new();
    let mut parents: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    for (fi, f) in files.iter().enumerate() {
        let Some(p) = f.precise else { continue };
        let cover = covered[fi].as_mut().expect("a file with precise facts");
        for r in &p.rows {
            let edge = |rel| Edge { rel, confidence: Confidence::Precise, line: r.line };
            match r.occ {
                Occ::Call => {
                    let from = enclosing(cg, defs_of(fi), r.line, None).map_or(Node::File(fi as u32), Node::Def);
                    // A call answers for its site when it reaches a definition of the view or
                    // another package; one into this project that joins nothing (an untyped
                    // receiver the indexer gave its own symbol) leaves the site to the heuristics.
                    let answered = match def_of.get(&r.symbol) {
                        Some(d) => {
                            pending.push((from, Node::Def(d), edge(Rel::Calls)));
                            true
                        }
                        None if !own.contains(&package_of(&r.symbol)) => {
                            if let Some(name) = display(&r.symbol) {
                                externals.push((from, name, edge(Rel::Calls)));
                            }
                            true
                        }
                        None => false,
                    };
                    if let Some(name) = crate::index::scip::symbol_name(&r.symbol).filter(|_| answered) {
                        cover.calls.insert((r.line, name));
                    }
                }
                Occ::Import => match file_of.get(&r.symbol) {
                    Some(t) => {
                        cover.import_lines.insert(r.line);
                        if t as usize != fi {
                            pending.push((Node::File(fi as u32), Node::File(t), edge(Rel::Imports)));
                        }
                    }
                    None if !own.contains(&package_of(&r.symbol)) => {
                        cover.import_lines.insert(r.line);
                        if let Some(name) = display(&r.symbol) {
                            externals.push((Node::File(fi as u32), name, edge(Rel::Imports)));
                        }
                    }
                    None => {}
                },
                Occ::Implements => {
                    if last_suffix(&r.symbol) != Some(Suffix::Type) || last_suffix(&r.other) != Some(Suffix::Type) {
                        continue; // a method overriding another is not inheritance
                    }
                    let Some(child) = def_of.get(&r.symbol) else { continue };
                    cover.based.insert(child);
                    match def_of.get(&r.other) {
                        Some(parent) => parents.entry(child).or_default().push((parent, r.line)),
                        None => {
                            if let Some(name) = display(&r.other) {
                                externals.push((Node::Def(child), name, edge(Rel::Extends)));
                            }
                        }
                    }
                }
                Occ::Def | Occ::Empty => {}
            }
        }
    }
    // Some indexers list every ancestor as implemented: keep the direct ones only.
    let ancestors = |start: u32| -> HashSet<u32> {
        let mut out = HashSet::new();
        let mut stack = vec![start];
        while let Some(x) = stack.pop() {
            for &(p, _) in parents.get(&x).map(Vec::as_slice).unwrap_or(&[]) {
                if out.insert(p) {
                    stack.push(p);
                }
            }
        }
        out
    };
    for (&child, ps) in &parents {
        for &(parent, line) in ps {
            let indirect = ps.iter().any(|&(other, _)| other != parent && ancestors(other).contains(&parent));
            if indirect {
                continue;
            }
            let lang = cg.files[cg.defs[child as usize].file as usize].lang;
            let pk = cg.defs[parent as usize].kind.as_str();
            let rel = if lang != Lang::Python && matches!(pk, "interface" | "trait" | "protocol") {
                Rel::Implements
            } else {
                Rel::Extends
            };
            pending.push((Node::Def(child), Node::Def(parent), Edge { rel, confidence: Confidence::Precise, line }));
        }
    }
    pending.sort_by_key(|(a, b, e)| (format!("{a:?}{b:?}"), e.line));
    for (from, to, edge) in pending {
        let (a, b) = (cg.node_of(from), cg.node_of(to));
        if a != b && seen.insert((a, b, edge.rel)) {
            cg.g.add_edge(a, b, edge);
        }
    }
    for (from, name, mut edge) in externals {
        let a = cg.node_of(from);
        let b = cg.external_node(&name);
        if seen.insert((a, b, edge.rel)) {
            edge.confidence = Confidence::External;
            cg.g.add_edge(a, b, edge);
        }
    }
    covered
}
