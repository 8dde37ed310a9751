//! The tree-sitter grammar of each language, and their versions for the layer fingerprints.

use crate::lang::Lang;
use tree_sitter::Language;

/// The grammar for a language (`None` for the line-window kinds).
pub fn language(lang: Lang) -> Option<Language> {
    Some(match lang {
        Lang::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Lang::C => tree_sitter_c::LANGUAGE.into(),
        Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Lang::ObjC => tree_sitter_objc::LANGUAGE.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
        Lang::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        Lang::Php => tree_sitter_php::LANGUAGE_PHP.into(),
        Lang::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
        Lang::Swift => tree_sitter_swift::LANGUAGE.into(),
        Lang::Scala => tree_sitter_scala::LANGUAGE.into(),
        Lang::Lua => tree_sitter_lua::LANGUAGE.into(),
        Lang::Bash => tree_sitter_bash::LANGUAGE.into(),
        Lang::Sql => tree_sitter_sequel::LANGUAGE.into(),
        Lang::Markdown | Lang::Json | Lang::Yaml | Lang::Toml | Lang::Text => return None,
    })
}

/// Grammar crate versions (as pinned in Cargo.toml) and the tree-sitter core: part of the
/// chunk and graph fingerprints, so a grammar upgrade re-parses.
pub const GRAMMAR_VERSIONS: &str = "ts0.27.1;rust0.24.2;python0.25.0;javascript0.25.0;typescript0.23.2;go0.25.0;java0.23.5;\
c0.24.2;cpp0.23.4;csharp0.23.5;ruby0.23.1;php0.25.1;kotlin-ng1.1.0;swift0.7.4;scala0.26.9;lua0.5.0;bash0.25.1;objc3.0.2;sequel0.3.11";

thread_local! {
    static PARSERS: std::cell::RefCell<std::collections::HashMap<Lang, tree_sitter::Parser>> = Default::default();
    /// Field ids by (grammar, name): tree-sitter finds a field's id by comparing the name with
    /// every field name of the grammar, on each lookup.
    static FIELD_IDS: std::cell::RefCell<rustc_hash::FxHashMap<(u64, usize), Option<std::num::NonZeroU16>>> =
        Default::default();
}

/// `node`'s child in field `name`, as `Node::child_by_field_name` finds it, with the field's id
/// looked up once per grammar and thread. `name` is static: its address keys the lookup.
pub fn child_by_field<'t>(node: tree_sitter::Node<'t>, name: &'static str) -> Option<tree_sitter::Node<'t>> {
    use std::hash::{Hash, Hasher};
    /// Keeps the address a grammar hashes as.
    #[derive(Default)]
    struct Address(u64);
    impl Hasher for Address {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for b in bytes {
                self.0 = self.0.rotate_left(8) ^ u64::from(*b);
            }
        }
        fn write_usize(&mut self, n: usize) {
            self.0 = n as u64;
        }
    }
    let language = node.language();
    let mut grammar = Address::default();
    (*language).hash(&mut grammar);
    let key = (grammar.finish(), name.as_ptr() as usize);
    let id =
        FIELD_IDS.with(|cell| *cell.borrow_mut().entry(key).or_insert_with(|| language.field_id_for_name(name)))?;
    node.child_by_field_id(id.get())
}

/// The source as the parser should see it: in C and C++, conditional groups whose branches do
/// not balance their braces are read with their first branch taken, and an export or annotation
/// macro between `class`/`struct` and the name (`class LEVELDB_EXPORT Iterator {`) is blanked
/// out, since the grammar would read the macro as the class and the class as a function. Byte
/// offsets and lines are unchanged, so chunks are still cut from the original text.
pub fn masked(lang: Lang, src: &str) -> std::borrow::Cow<'_, str> {
    if !matches!(lang, Lang::C | Lang::Cpp | Lang::ObjC) {
        return std::borrow::Cow::Borrowed(src);
    }
    match flatten_conditionals(src) {
        Some(flat) => std::borrow::Cow::Owned(mask_export_macros(&flat).into_owned()),
        None => mask_export_macros(src),
    }
}

/// Conditional compilation whose branches do not balance their braces (`#ifdef X` around
/// `} else {`, or two versions of a function's head) breaks the grammar's reading of the
/// functions around it. Such a group is read as the preprocessor would with its first branch
/// taken: its directive lines and its other branches are blanked (lines and offsets kept).
/// Groups whose branches balance are left to the grammar. None when nothing was blanked.
fn flatten_conditionals(src: &str) -> Option<String> {
    if !src.contains("#if") {
        return None;
    }
    struct Group {
        directives: Vec<(usize, usize)>,
        branches: Vec<(usize, usize)>,
        start: usize,
        balances: Vec<i64>,
    }
    let mut open: Vec<Group> = Vec::new();
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut pos = 0;
    for line in src.split_inclusive('\n') {
        let (a, b) = (pos, pos + line.len());
        pos = b;
        let t = line.trim_start();
        if let Some(d) = t.strip_prefix('#').map(str::trim_start) {
            if d.starts_with("if") {
                open.push(Group { directives: vec![(a, b)], branches: Vec::new(), start: b, balances: vec![0] });
            } else if d.starts_with("elif") || d.starts_with("else") {
                if let Some(g) = open.last_mut() {
                    g.branches.push((g.start, a));
                    g.directives.push((a, b));
                    g.start = b;
                    g.balances.push(0);
                }
            } else if d.starts_with("endif")
                && let Some(mut g) = open.pop()
            {
                g.branches.push((g.start, a));
                g.directives.push((a, b));
                if g.balances.iter().any(|&x| x != 0) {
                    blank.extend(g.directives.iter().copied());
                    blank.extend(g.branches.iter().skip(1).copied());
                }
            }
            continue;
        }
        let delta = brace_delta(line);
        if delta != 0 {
            for g in open.iter_mut() {
                *g.balances.last_mut().expect("a group has a branch") += delta;
            }
        }
    }
    if blank.is_empty() {
        return None;
    }
    let mut bytes = src.as_bytes().to_vec();
    for (a, b) in blank {
        for x in &mut bytes[a..b] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    }
    // Whole lines were blanked: no character is cut in two.
    String::from_utf8(bytes).ok()
}

/// `{` minus `}` on a line of C, outside strings, character literals and comments.
fn brace_delta(line: &str) -> i64 {
    let b = line.as_bytes();
    let (mut i, mut d) = (0, 0i64);
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => break,
            b'"' | b'\'' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' => d += 1,
            b'}' => d -= 1,
            _ => {}
        }
        i += 1;
    }
    d
}

fn mask_export_macros(src: &str) -> std::borrow::Cow<'_, str> {
    use std::sync::OnceLock;
    if !(src.contains("class ") || src.contains("struct ")) {
        return std::borrow::Cow::Borrowed(src);
    }
    static MACRO: OnceLock<regex::Regex> = OnceLock::new();
    let re = MACRO.get_or_init(|| {
        regex::Regex::new(r"\b(?:class|struct)[ \t]+([A-Z][A-Z0-9_]{2,})[ \t]+[A-Za-z_]\w*[ \t]*(?:final[ \t]*)?[:{]")
            .expect("valid pattern")
    });
    let mut out: Option<Vec<u8>> = None;
    for c in re.captures_iter(src) {
        let m = c.get(1).expect("group 1 always takes part");
        out.get_or_insert_with(|| src.as_bytes().to_vec())[m.start()..m.end()].fill(b' ');
    }
    match out {
        // Only ASCII was replaced by ASCII spaces.
        Some(bytes) => std::borrow::Cow::Owned(String::from_utf8(bytes).expect("ASCII replaced by ASCII")),
        None => std::borrow::Cow::Borrowed(src),
    }
}

/// The deepest syntax tree the structure walks take. They recurse per level of nesting, on
/// threads with ordinary stacks; a file nested deeper (generated or hostile: `((((…))))` forty
/// thousand levels down) is indexed as plain text windows, without definitions or graph facts.
pub const MAX_DEPTH: usize = 1_500;

/// Parses `src` with a per-thread cached parser. `None` when the language has no grammar, the
/// parser gave up, or the tree is nested deeper than [`MAX_DEPTH`].
pub fn parse(lang: Lang, src: &[u8]) -> Option<tree_sitter::Tree> {
    parse_unbounded(lang, src).filter(|t| depth_beyond(t, MAX_DEPTH).is_none())
}

/// How deep `tree` nests when that is more than `limit` levels (counted without recursion).
pub fn depth_beyond(tree: &tree_sitter::Tree, limit: usize) -> Option<usize> {
    let mut cursor = tree.walk();
    let (mut depth, mut deepest) = (0usize, 0usize);
    loop {
        // A subtree of n nodes nests at most n - 1 levels below its root: one that cannot pass
        // the limit is not walked (most of a tree; the count is stored in each node), and what
        // is skipped cannot change a depth beyond the limit.
        let below = cursor.node().descendant_count() - 1;
        if depth + below > limit && cursor.goto_first_child() {
            depth += 1;
            deepest = deepest.max(depth);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return (deepest > limit).then_some(deepest);
            }
            depth -= 1;
        }
    }
}

/// How deep a file's syntax tree nests, when that is too deep for the structure walks.
pub fn too_deep(lang: Lang, src: &str) -> Option<usize> {
    let parsed = masked(lang, src);
    depth_beyond(&parse_unbounded(lang, parsed.as_bytes())?, MAX_DEPTH)
}

fn parse_unbounded(lang: Lang, src: &[u8]) -> Option<tree_sitter::Tree> {
    let language = language(lang)?;
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let parser = parsers.entry(lang).or_insert_with(|| {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&language).expect("grammar ABI is supported by the pinned tree-sitter core");
            p
        });
        parser.parse(src, None)
    })
}

/// S-expression of the tree with field names (for `git lynx debug parse`).
pub fn sexp(lang: Lang, src: &[u8]) -> Option<String> {
    let tree = parse(lang, src)?;
    let mut out = String::new();
    let mut cursor = tree.walk();
    dump(&mut cursor, src, 0, &mut out);
    Some(out)
}

fn dump(cursor: &mut tree_sitter::TreeCursor, src: &[u8], depth: usize, out: &mut String) {
    let node = cursor.node();
    if node.is_named() {
        let field = cursor.field_name().map(|f| format!("{f}: ")).unwrap_or_default();
        let text = if node.child_count() == 0 {
            format!(" {:?}", String::from_utf8_lossy(&src[node.byte_range()]))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{}{}{} [{}-{}]{}\n",
            "  ".repeat(depth),
            field,
            node.kind(),
            node.start_position().row + 1,
            node.end_position().row + 1,
            text
        ));
    }
    if cursor.goto_first_child() {
        loop {
            dump(cursor, src, depth + usize::from(node.is_named()), out);
            if !cursor.goto_next_sibling() {
                break;
            }
        }
        cursor.goto_parent();
    }
}

#[cfg(test)]
mod masking_tests {
    use super::{brace_delta, flatten_conditionals, masked};
    use crate::lang::Lang;

    #[test]
    fn unbalanced_conditional_branches_are_read_with_the_first_taken() {
        let src = "int f(int x) {\n  switch (x) {\n  case 1:\n#ifdef DEC\n    if (y) {\n      a();\n    } else {\n#endif\n      b();\n#ifdef DEC\n    }\n#endif\n    break;\n  }\n}\n\nint g(void) { return 1; }\n";
        let flat = flatten_conditionals(src).expect("unbalanced groups are flattened");
        assert_eq!(flat.len(), src.len());
        assert!(!flat.contains("#ifdef") && flat.contains("} else {") && flat.contains("b();"));
        // Balanced groups (include guards, alternatives that each balance) stay.
        assert!(flatten_conditionals("#ifndef H\n#define H\nint a;\n#endif\n").is_none());
        let alt = "#ifdef W\nint f(long a) {\n#else\nint f(int a) {\n#endif\n  return 0;\n}\n";
        let flat = flatten_conditionals(alt).unwrap();
        assert!(flat.contains("long a") && !flat.contains("int a)"), "{flat}");
        assert_eq!(brace_delta("x = '{'; s = \"}}\"; // {"), 0);
    }

    #[test]
    fn export_macros_between_class_and_name_are_blanked() {
        let src = "class LEVELDB_EXPORT Iterator {\nstruct LOCKABLE Mutex final : Base {\nclass Plain {\nclass FOO;\n";
        let m = masked(Lang::Cpp, src);
        assert_eq!(
            m,
            "class                Iterator {\nstruct          Mutex final : Base {\nclass Plain {\nclass FOO;\n"
        );
        assert_eq!(m.len(), src.len(), "offsets unchanged");
        assert_eq!(masked(Lang::Python, src), src, "other languages untouched");
    }

    #[test]
    fn the_depth_check_skips_shallow_subtrees_without_changing_a_depth_beyond_the_limit() {
        // Every node's depth, by recursion over all children: what the check must agree with.
        fn deepest(node: tree_sitter::Node) -> usize {
            let mut cursor = node.walk();
            node.children(&mut cursor).map(|c| 1 + deepest(c)).max().unwrap_or(0)
        }
        // Shallow functions beside one deep expression: the deep one is found past them.
        let shallow = "def f(a):\n    return [a, (a, a), {a: a}]\n\n".repeat(40);
        let src = format!("{shallow}x = {}1{}\n{shallow}", "(".repeat(120), ")".repeat(120));
        let tree = super::parse_unbounded(Lang::Python, src.as_bytes()).expect("parsed");
        let exact = deepest(tree.root_node());
        assert!(exact > 120, "{exact}");
        for limit in [1, 10, 60, exact - 1] {
            assert_eq!(super::depth_beyond(&tree, limit), Some(exact), "limit {limit}");
        }
        assert_eq!(super::depth_beyond(&tree, exact), None);
        assert_eq!(super::depth_beyond(&tree, 10 * exact), None);
    }
}
