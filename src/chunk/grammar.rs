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
}

/// The source as the parser should see it: in C and C++, an export or annotation macro between
/// `class`/`struct` and the name (`class LEVELDB_EXPORT Iterator {`) is blanked out, since the
/// grammar would read the macro as the class and the class as a function. Byte offsets and lines
/// are unchanged, so chunks are still cut from the original text.
pub fn masked(lang: Lang, src: &str) -> std::borrow::Cow<'_, str> {
    use std::sync::OnceLock;
    if !matches!(lang, Lang::C | Lang::Cpp | Lang::ObjC) || !(src.contains("class ") || src.contains("struct ")) {
        return std::borrow::Cow::Borrowed(src);
    }
    static MACRO: OnceLock<regex::Regex> = OnceLock::new();
    let re = MACRO.get_or_init(|| regex::Regex::new(r"\b(?:class|struct)[ \t]+([A-Z][A-Z0-9_]{2,})[ \t]+[A-Za-z_]\w*[ \t]*(?:final[ \t]*)?[:{]").expect("valid pattern"));
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
        if cursor.goto_first_child() {
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
    use super::masked;
    use crate::lang::Lang;

    #[test]
    fn export_macros_between_class_and_name_are_blanked() {
        let src = "class LEVELDB_EXPORT Iterator {\nstruct LOCKABLE Mutex final : Base {\nclass Plain {\nclass FOO;\n";
        let m = masked(Lang::Cpp, src);
        assert_eq!(m, "class                Iterator {\nstruct          Mutex final : Base {\nclass Plain {\nclass FOO;\n");
        assert_eq!(m.len(), src.len(), "offsets unchanged");
        assert_eq!(masked(Lang::Python, src), src, "other languages untouched");
    }
}
