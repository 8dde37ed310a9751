//! The code graph of a view: files, definitions and external symbols as petgraph nodes;
//! containment, calls, inheritance and imports as edges with a confidence.

use petgraph::graph::{DiGraph, NodeIndex};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// From a compiler-backed SCIP index imported for the file (`graph import-scip`).
    Precise,
    /// Both ends in the same file.
    Extracted,
    /// One candidate across the view.
    Resolved,
    /// Several candidates for a direct call: an edge to each.
    Ambiguous,
    /// A member call whose receiver's type is unknown, matched by the method's name alone.
    Inferred,
    /// No definition in the view goes by that name.
    External,
}

impl Confidence {
    /// Order of trust, most trusted first (sorting and picking among parallel edges).
    pub fn rank(self) -> u8 {
        match self {
            Confidence::Precise => 0,
            Confidence::Extracted => 1,
            Confidence::Resolved => 2,
            Confidence::Ambiguous => 3,
            Confidence::Inferred => 4,
            Confidence::External => 5,
        }
    }

    /// An edge an agent or a CI gate can rely on: precise, or one candidate found by name.
    pub fn is_confident(self) -> bool {
        matches!(self, Confidence::Precise | Confidence::Extracted | Confidence::Resolved)
    }

    pub fn name(self) -> &'static str {
        match self {
            Confidence::Precise => "precise",
            Confidence::Extracted => "extracted",
            Confidence::Resolved => "resolved",
            Confidence::Ambiguous => "ambiguous",
            Confidence::Inferred => "inferred",
            Confidence::External => "external",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rel {
    Contains,
    Calls,
    Extends,
    Implements,
    ExtendsOrImplements,
    Imports,
    /// A definition used as a value: passed, assigned, returned, stored, a decorator.
    References,
}

impl Rel {
    pub fn name(self) -> &'static str {
        match self {
            Rel::Contains => "contains",
            Rel::Calls => "calls",
            Rel::Extends => "extends",
            Rel::Implements => "implements",
            Rel::ExtendsOrImplements => "extends_or_implements",
            Rel::Imports => "imports",
            Rel::References => "references",
        }
    }

    pub fn is_inherits(self) -> bool {
        matches!(self, Rel::Extends | Rel::Implements | Rel::ExtendsOrImplements)
    }

    /// Parses a relation filter name (`inherits` covers all three inheritance kinds).
    pub fn parse_filter(s: &str) -> Option<Vec<Rel>> {
        Some(match s {
            "contains" => vec![Rel::Contains],
            "calls" => vec![Rel::Calls],
            "extends" => vec![Rel::Extends],
            "implements" => vec![Rel::Implements],
            "extends_or_implements" => vec![Rel::ExtendsOrImplements],
            "inherits" => vec![Rel::Extends, Rel::Implements, Rel::ExtendsOrImplements],
            "imports" => vec![Rel::Imports],
            "references" => vec![Rel::References],
            "all" | "" => vec![
                Rel::Contains,
                Rel::Calls,
                Rel::Extends,
                Rel::Implements,
                Rel::ExtendsOrImplements,
                Rel::Imports,
                Rel::References,
            ],
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Edge {
    pub rel: Rel,
    pub confidence: Confidence,
    /// Line of the call / import in the source file (0 when not applicable).
    pub line: u32,
}

#[derive(Debug, Clone)]
pub struct FileNode {
    pub path: String,
    pub lang: crate::lang::Lang,
    pub is_test: bool,
}

#[derive(Debug, Clone)]
pub struct DefNode {
    pub file: u32,
    pub name: String,
    pub qualified: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
    pub parent: Option<u32>,
    pub is_test: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Node {
    File(u32),
    Def(u32),
    External(u32),
}

#[derive(Default)]
pub struct CodeGraph {
    pub files: Vec<FileNode>,
    pub defs: Vec<DefNode>,
    pub externals: Vec<String>,
    pub g: DiGraph<Node, Edge>,
    pub file_nodes: Vec<NodeIndex>,
    pub def_nodes: Vec<NodeIndex>,
    pub external_nodes: Vec<NodeIndex>,
    /// Leaf name → definitions (case-sensitive).
    pub by_name: HashMap<String, Vec<u32>>,
    /// Qualified name → definitions.
    pub by_qualified: HashMap<String, Vec<u32>>,
    pub by_path: HashMap<String, u32>,
    pub external_by_name: HashMap<String, u32>,
    /// Tables and procedures read, written, mapped or called, per definition.
    pub data: Vec<super::data::Access>,
    /// Files with facts from an imported SCIP index.
    pub precise_files: usize,
}

impl CodeGraph {
    /// The node of an external (unresolved) name, made the first time it is asked for.
    pub fn external_node(&mut self, name: &str) -> petgraph::graph::NodeIndex {
        if let Some(&i) = self.external_by_name.get(name) {
            return self.external_nodes[i as usize];
        }
        let i = self.externals.len() as u32;
        self.externals.push(name.to_string());
        self.external_by_name.insert(name.to_string(), i);
        let n = self.g.add_node(Node::External(i));
        self.external_nodes.push(n);
        n
    }

    pub fn node_of(&self, n: Node) -> NodeIndex {
        match n {
            Node::File(i) => self.file_nodes[i as usize],
            Node::Def(i) => self.def_nodes[i as usize],
            Node::External(i) => self.external_nodes[i as usize],
        }
    }

    pub fn label(&self, n: Node) -> String {
        match n {
            Node::File(i) => self.files[i as usize].path.clone(),
            Node::Def(i) => self.defs[i as usize].qualified.clone(),
            Node::External(i) => self.externals[i as usize].clone(),
        }
    }

    pub fn is_test(&self, n: Node) -> bool {
        match n {
            Node::File(i) => self.files[i as usize].is_test,
            Node::Def(i) => self.defs[i as usize].is_test || self.files[self.defs[i as usize].file as usize].is_test,
            Node::External(_) => false,
        }
    }

    pub fn def_path(&self, d: u32) -> &str {
        &self.files[self.defs[d as usize].file as usize].path
    }
}

/// Test code by path convention, across languages.
pub fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let stem = name.split('.').next().unwrap_or(name);
    let dirs: Vec<&str> = lower.split('/').collect();
    dirs[..dirs.len().saturating_sub(1)]
        .iter()
        .any(|d| matches!(*d, "test" | "tests" | "__tests__" | "spec" | "specs" | "testing" | "testdata" | "test_data"))
        || name.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || name.contains(".test.")
        || name.contains(".spec.")
        || (stem.ends_with("test") && path.rsplit('/').next().is_some_and(|n| n.contains("Test")))
        || stem.ends_with("tests") && path.rsplit('/').next().is_some_and(|n| n.contains("Tests"))
        || name == "conftest.py"
}

#[cfg(test)]
mod tests {
    use super::is_test_path;

    #[test]
    fn test_paths_by_convention() {
        for p in [
            "tests/a.rs",
            "pkg/foo_test.go",
            "test_x.py",
            "src/FooTest.java",
            "web/a.spec.ts",
            "a/__tests__/b.js",
            "x/BarTests.cs",
            "conftest.py",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["src/lib.rs", "attestation.py", "latest.go", "contest/main.c", "src/Testing.java"] {
            assert!(!is_test_path(p), "{p}");
        }
    }
}
