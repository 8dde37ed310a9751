//! One walk over a syntax tree that finds every definition (with qualified names, kinds and
//! line ranges including doc comments and decorators) and lets a visitor see every other node
//! together with its enclosing definition. Chunking and graph facts share this walk.

use super::defs::{self, Kind};
use crate::lang::Lang;
use tree_sitter::{Node, Tree};

/// A definition in a file.
#[derive(Debug, Clone)]
pub struct Def {
    pub name: String,
    pub qualified: String,
    pub kind: Kind,
    /// 0-based rows, inclusive; include leading doc comments and decorators.
    pub start_row: usize,
    pub end_row: usize,
    pub start_byte: usize,
    pub end_byte: usize,
    pub parent: Option<usize>,
    /// Has members chunked separately.
    pub container: bool,
}

/// Sees the walk: every definition as it is found, and every node with its enclosing definition.
pub trait Visitor {
    fn def(&mut self, _index: usize, _def: &Def, _node: &defs::DefNode) {}
    fn node(&mut self, _node: Node, _scope: Option<usize>) {}
    /// False when only definitions matter (skips visiting function bodies).
    fn wants_nodes(&self) -> bool {
        true
    }
}

pub struct NoVisitor;
impl Visitor for NoVisitor {
    fn wants_nodes(&self) -> bool {
        false
    }
}

/// All definitions of `tree`, in document order (parents before children).
pub fn outline(lang: Lang, tree: &Tree, src: &[u8], visitor: &mut dyn Visitor) -> Vec<Def> {
    let wants_nodes = visitor.wants_nodes();
    let mut walker = Walker { lang, src, defs: Vec::new(), visitor, wants_nodes };
    let root = tree.root_node();
    walker.walk_children(root, None, false);
    walker.defs
}

struct Walker<'a> {
    lang: Lang,
    src: &'a [u8],
    defs: Vec<Def>,
    visitor: &'a mut dyn Visitor,
    wants_nodes: bool,
}

impl Walker<'_> {
    /// Walks the children of `node` with one cursor for the whole subtree below it (cursors
    /// are allocated per definition level, not per node).
    fn walk_children(&mut self, node: Node, scope: Option<usize>, in_leaf: bool) {
        let mut cursor = node.walk();
        self.walk_cursor_children(&mut cursor, scope, in_leaf);
    }

    /// Children of the cursor's node; the cursor is back on that node afterwards.
    fn walk_cursor_children(&mut self, cursor: &mut tree_sitter::TreeCursor, scope: Option<usize>, in_leaf: bool) {
        let parent = cursor.node();
        if !cursor.goto_first_child() {
            return;
        }
        let mut scope = scope;
        loop {
            // Anonymous nodes (keywords, punctuation) are leaves and never definitions.
            if cursor.node().is_named()
                && let Some(owner) = self.walk_at(cursor, scope, in_leaf)
            {
                // A statement-form namespace spans the rest of its parent.
                let end = parent.end_position();
                let d = &mut self.defs[owner];
                d.end_row = if end.column == 0 && end.row > d.start_row { end.row - 1 } else { end.row };
                d.end_byte = parent.end_byte();
                scope = Some(owner);
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
        cursor.goto_parent();
    }

    /// `scope`: the enclosing definition; `in_leaf`: inside a function body, where nested
    /// definitions stay part of the enclosing chunk. Returns the definition that owns the
    /// following siblings (`namespace X;`), if the cursor's node is one.
    fn walk_at(&mut self, cursor: &mut tree_sitter::TreeCursor, scope: Option<usize>, in_leaf: bool) -> Option<usize> {
        let node = cursor.node();
        if !in_leaf {
            let in_type = scope.is_some_and(|s| {
                let k = self.defs[s].kind;
                k.is_type() || matches!(k, Kind::Impl | Kind::Extension)
            });
            if let Some(def_node) = defs::classify(self.lang, node, self.src, in_type) {
                let index = self.push_def(&def_node, scope);
                self.visitor.def(index, &self.defs[index], &def_node);
                let outer = def_node.outer;
                match def_node.body {
                    Some(body) if def_node.container => {
                        // Nodes of the definition outside its body (name, bases, signature).
                        if self.wants_nodes {
                            self.visit_except(outer, body, index);
                        }
                        self.walk_children(body, Some(index), false);
                    }
                    _ if self.wants_nodes => self.visit_all(outer, index),
                    _ => {}
                }
                return def_node.owns_following.then_some(index);
            }
        }
        if self.wants_nodes {
            self.visitor.node(node, scope);
        }
        self.walk_cursor_children(cursor, scope, in_leaf);
        None
    }

    /// Every node under `node` belongs to definition `index` (a leaf: nested definitions stay
    /// inside its chunk). Iterative, one cursor.
    fn visit_all(&mut self, node: Node, index: usize) {
        let mut cursor = node.walk();
        loop {
            self.visitor.node(cursor.node(), Some(index));
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node().id() == node.id() {
                    return;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
            }
        }
    }

    fn visit_except(&mut self, node: Node, skip: Node, index: usize) {
        if node.id() == skip.id() {
            return;
        }
        if node.byte_range().contains(&skip.start_byte()) && node.byte_range() != skip.byte_range() {
            self.visitor.node(node, Some(index));
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                self.visit_except(child, skip, index);
            }
        } else {
            self.visit_all(node, index);
        }
    }

    fn push_def(&mut self, d: &defs::DefNode, scope: Option<usize>) -> usize {
        let (start_byte, start_row) = leading_extent(d.outer, self.src);
        let parent_q = scope.map(|s| self.defs[s].qualified.as_str()).unwrap_or("");
        let qualified = if parent_q.is_empty() {
            d.name.clone()
        } else if d.name.is_empty() {
            parent_q.to_string()
        } else if d.name.starts_with(&format!("{parent_q}.")) {
            d.name.clone()
        } else {
            format!("{parent_q}.{}", d.name)
        };
        let name = d.name.rsplit('.').next().unwrap_or(&d.name).to_string();
        // A method named like its type is its constructor (C++, and any grammar that does not
        // mark constructors itself).
        let kind = match (d.kind, scope) {
            (Kind::Method | Kind::Function, Some(s)) if self.defs[s].kind.is_type() && self.defs[s].name == name => {
                Kind::Constructor
            }
            (k, _) => k,
        };
        let end = d.outer.end_position();
        // A node ending at column 0 ends on the previous line (trailing newline inside the node).
        let end_row = if end.column == 0 && end.row > start_row { end.row - 1 } else { end.row };
        self.defs.push(Def {
            name,
            qualified,
            kind,
            start_row,
            end_row,
            start_byte,
            end_byte: d.outer.end_byte(),
            parent: scope,
            container: d.container,
        });
        self.defs.len() - 1
    }
}

/// Start of a definition including the doc comments, attributes and decorators directly above
/// it (adjacent lines, each starting its own line).
fn leading_extent(node: Node, src: &[u8]) -> (usize, usize) {
    let mut start_byte = node.start_byte();
    let mut start_row = node.start_position().row;
    let mut prev = node.prev_named_sibling();
    while let Some(p) = prev {
        let kind = p.kind();
        let attached = kind.contains("comment")
            || matches!(kind, "attribute_item" | "decorator" | "annotation" | "marker_annotation" | "attribute_list");
        if !attached || p.end_position().row + 1 < start_row || !starts_line(p, src) {
            break;
        }
        start_byte = p.start_byte();
        start_row = p.start_position().row;
        prev = p.prev_named_sibling();
    }
    (start_byte, start_row)
}

fn starts_line(node: Node, src: &[u8]) -> bool {
    let line_start = src[..node.start_byte()].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    src[line_start..node.start_byte()].iter().all(|b| b.is_ascii_whitespace())
}
