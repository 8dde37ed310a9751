//! Definitions found in a syntax tree: what counts as a function, method, class, … in each
//! language, what it is called, and which definitions contain others. Chunking and the graph
//! extractor both read this one table, so they agree on symbols and line ranges.

use crate::lang::Lang;
use serde::{Deserialize, Serialize};
use tree_sitter::Node;

/// What a definition is. Kept small and language-neutral.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Function,
    Method,
    Constructor,
    Class,
    Struct,
    Interface,
    Trait,
    Enum,
    Impl,
    Module,
    Namespace,
    Type,
    Property,
    Macro,
    Object,
    Extension,
    Protocol,
    Record,
    Union,
    Statement,
}

impl Kind {
    pub const ALL: [Kind; 20] = [
        Kind::Function,
        Kind::Method,
        Kind::Constructor,
        Kind::Class,
        Kind::Struct,
        Kind::Interface,
        Kind::Trait,
        Kind::Enum,
        Kind::Impl,
        Kind::Module,
        Kind::Namespace,
        Kind::Type,
        Kind::Property,
        Kind::Macro,
        Kind::Object,
        Kind::Extension,
        Kind::Protocol,
        Kind::Record,
        Kind::Union,
        Kind::Statement,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Method => "method",
            Kind::Constructor => "constructor",
            Kind::Class => "class",
            Kind::Struct => "struct",
            Kind::Interface => "interface",
            Kind::Trait => "trait",
            Kind::Enum => "enum",
            Kind::Impl => "impl",
            Kind::Module => "module",
            Kind::Namespace => "namespace",
            Kind::Type => "type",
            Kind::Property => "property",
            Kind::Macro => "macro",
            Kind::Object => "object",
            Kind::Extension => "extension",
            Kind::Protocol => "protocol",
            Kind::Record => "record",
            Kind::Union => "union",
            Kind::Statement => "statement",
        }
    }

    /// Type-like definitions: targets of inheritance and receivers of member calls.
    pub fn is_type(self) -> bool {
        matches!(
            self,
            Kind::Class
                | Kind::Struct
                | Kind::Interface
                | Kind::Trait
                | Kind::Enum
                | Kind::Object
                | Kind::Protocol
                | Kind::Record
                | Kind::Union
                | Kind::Type
        )
    }
}

/// A definition node recognised in the tree.
pub struct DefNode<'t> {
    pub kind: Kind,
    /// Name as written, with `::`/`:` separators turned into `.` and generics removed; may be
    /// qualified (`Foo.bar` for an out-of-line C++ method or a Go method's receiver).
    pub name: String,
    /// Members become their own definitions (classes, namespaces, impls…); functions are leaves.
    pub container: bool,
    /// The node whose line range the definition covers (wrappers such as decorators, `export`
    /// or templates included).
    pub outer: Node<'t>,
    /// The node whose children hold the members (for containers).
    pub body: Option<Node<'t>>,
    /// `namespace X;` (PHP, C# file-scoped): the definition owns the siblings that follow it.
    pub owns_following: bool,
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

/// Normalises a written name: `a::b` / `a:b` / `a->b` → `a.b`, generics and whitespace dropped.
pub fn clean_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut depth = 0i32;
    for c in raw.chars() {
        match c {
            '<' | '[' if !out.is_empty() => depth += 1,
            '>' | ']' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            c if c.is_whitespace() => {}
            _ => out.push(c),
        }
    }
    // `a::b` (C++, Ruby, Rust), `a:b` (Lua methods), `a->b`, `A\\B` (PHP) all become `a.b`.
    let out = out.replace("::", ".").replace("->", ".").replace([':', '\\'], ".");
    out.trim_matches('.').to_string()
}

fn field<'t>(node: Node<'t>, name: &'static str) -> Option<Node<'t>> {
    super::grammar::child_by_field(node, name)
}

fn field_text(node: Node, name: &'static str, src: &[u8]) -> Option<String> {
    field(node, name).map(|n| clean_name(text(n, src))).filter(|s| !s.is_empty())
}

fn first_named_child_of_kind<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).find(|c| kinds.contains(&c.kind()))
}

/// The innermost name in a C-family declarator chain (`*f(int)`, `Foo::bar`, `operator+`…).
fn declarator_name(node: Node, src: &[u8]) -> Option<String> {
    let mut cur = node;
    for _ in 0..16 {
        match cur.kind() {
            "identifier"
            | "field_identifier"
            | "qualified_identifier"
            | "destructor_name"
            | "operator_name"
            | "type_identifier"
            | "scoped_identifier"
            | "template_function"
            | "template_method" => {
                return Some(clean_name(text(cur, src)));
            }
            _ => {}
        }
        cur = match field(cur, "declarator") {
            Some(d) => d,
            None => first_named_child_of_kind(
                cur,
                &[
                    "identifier",
                    "field_identifier",
                    "qualified_identifier",
                    "destructor_name",
                    "operator_name",
                    "function_declarator",
                ],
            )?,
        };
    }
    None
}

/// Recognises `node` as a definition in `lang`. `in_type` says whether the nearest enclosing
/// definition is type-like (so functions there are methods).
pub fn classify<'t>(lang: Lang, node: Node<'t>, src: &[u8], in_type: bool) -> Option<DefNode<'t>> {
    let k = node.kind();
    let func = if in_type { Kind::Method } else { Kind::Function };
    let leaf = |kind: Kind, name: Option<String>| {
        name.map(|name| DefNode { kind, name, container: false, outer: node, body: None, owns_following: false })
    };
    let container = |kind: Kind, name: Option<String>, body: Option<Node<'t>>| {
        name.map(|name| DefNode { kind, name, container: body.is_some(), outer: node, body, owns_following: false })
    };
    let named = |f: &'static str| field_text(node, f, src);
    match lang {
        Lang::Python => match k {
            "function_definition" => leaf(func, named("name")),
            "class_definition" => container(Kind::Class, named("name"), field(node, "body")),
            "decorated_definition" => {
                let inner = field(node, "definition")?;
                let mut def = classify(lang, inner, src, in_type)?;
                def.outer = node;
                Some(def)
            }
            _ => None,
        },
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => match k {
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                leaf(func, named("name"))
            }
            "method_definition" => {
                let name = named("name");
                let kind = if name.as_deref() == Some("constructor") { Kind::Constructor } else { Kind::Method };
                leaf(kind, name)
            }
            "class_declaration" | "abstract_class_declaration" | "class" => {
                container(Kind::Class, named("name"), field(node, "body"))
            }
            "interface_declaration" => leaf(Kind::Interface, named("name")),
            "type_alias_declaration" => leaf(Kind::Type, named("name")),
            "enum_declaration" => leaf(Kind::Enum, named("name")),
            "internal_module" | "module" => container(Kind::Namespace, named("name"), field(node, "body")),
            "abstract_method_signature" => leaf(Kind::Method, named("name")),
            "export_statement" => {
                let inner = field(node, "declaration")?;
                let mut def = classify(lang, inner, src, in_type)?;
                def.outer = node;
                Some(def)
            }
            "lexical_declaration" | "variable_declaration" => {
                // `const f = () => …` / `const f = function …` / `const C = class …`: one declarator.
                let mut cursor = node.walk();
                let decls: Vec<Node> =
                    node.named_children(&mut cursor).filter(|c| c.kind() == "variable_declarator").collect();
                if decls.len() != 1 {
                    return None;
                }
                let value = field(decls[0], "value")?;
                let name = field_text(decls[0], "name", src);
                match value.kind() {
                    "arrow_function" | "function_expression" | "function" | "generator_function" => leaf(func, name),
                    "class" => container(Kind::Class, name, field(value, "body")),
                    _ => None,
                }
            }
            "public_field_definition" | "field_definition" => {
                let value = field(node, "value")?;
                matches!(value.kind(), "arrow_function" | "function_expression").then_some(())?;
                leaf(Kind::Method, field_text(node, "name", src).or_else(|| field_text(node, "property", src)))
            }
            _ => None,
        },
        Lang::Go => match k {
            "function_declaration" => leaf(Kind::Function, named("name")),
            "method_declaration" => {
                let name = named("name")?;
                let recv = field(node, "receiver").and_then(|r| go_receiver_type(r, src));
                leaf(
                    Kind::Method,
                    Some(match recv {
                        Some(r) => format!("{r}.{name}"),
                        None => name,
                    }),
                )
            }
            "type_declaration" => {
                let mut cursor = node.walk();
                let specs: Vec<Node> = node
                    .named_children(&mut cursor)
                    .filter(|c| matches!(c.kind(), "type_spec" | "type_alias"))
                    .collect();
                if specs.len() != 1 {
                    return None;
                }
                let spec = specs[0];
                let kind = match field(spec, "type").map(|t| t.kind()) {
                    Some("struct_type") => Kind::Struct,
                    Some("interface_type") => Kind::Interface,
                    _ => Kind::Type,
                };
                leaf(kind, field_text(spec, "name", src))
            }
            _ => None,
        },
        Lang::Rust => match k {
            "function_item" | "function_signature_item" => leaf(func, named("name")),
            "struct_item" => leaf(Kind::Struct, named("name")),
            "enum_item" => leaf(Kind::Enum, named("name")),
            "union_item" => leaf(Kind::Union, named("name")),
            "type_item" => leaf(Kind::Type, named("name")),
            "macro_definition" => leaf(Kind::Macro, named("name")),
            "trait_item" => container(Kind::Trait, named("name"), field(node, "body")),
            "impl_item" => container(Kind::Impl, named("type"), field(node, "body")),
            "mod_item" => container(Kind::Module, named("name"), field(node, "body")),
            _ => None,
        },
        Lang::Java => match k {
            "class_declaration" => container(Kind::Class, named("name"), field(node, "body")),
            "interface_declaration" | "annotation_type_declaration" => {
                container(Kind::Interface, named("name"), field(node, "body"))
            }
            "enum_declaration" => container(Kind::Enum, named("name"), field(node, "body")),
            "record_declaration" => container(Kind::Record, named("name"), field(node, "body")),
            "method_declaration" => leaf(Kind::Method, named("name")),
            "constructor_declaration" | "compact_constructor_declaration" => leaf(Kind::Constructor, named("name")),
            _ => None,
        },
        Lang::CSharp => match k {
            "namespace_declaration" => container(Kind::Namespace, named("name"), field(node, "body")),
            "file_scoped_namespace_declaration" => statement_namespace(node, named("name")),
            "class_declaration" => container(Kind::Class, named("name"), field(node, "body")),
            "struct_declaration" => container(Kind::Struct, named("name"), field(node, "body")),
            "interface_declaration" => container(Kind::Interface, named("name"), field(node, "body")),
            "record_declaration" | "record_struct_declaration" => {
                container(Kind::Record, named("name"), field(node, "body"))
            }
            "enum_declaration" => leaf(Kind::Enum, named("name")),
            "method_declaration" | "local_function_statement" => leaf(func, named("name")),
            "constructor_declaration" => leaf(Kind::Constructor, named("name")),
            "destructor_declaration" => leaf(Kind::Method, named("name").map(|n| format!("~{n}"))),
            "property_declaration" => leaf(Kind::Property, named("name")),
            "operator_declaration" => leaf(Kind::Method, Some("operator".into())),
            "delegate_declaration" => leaf(Kind::Type, named("name")),
            _ => None,
        },
        Lang::C | Lang::Cpp | Lang::ObjC => c_family(lang, node, src, in_type),
        Lang::Ruby => match k {
            "method" => leaf(func, named("name")),
            "singleton_method" => leaf(Kind::Method, named("name")),
            "class" => container(Kind::Class, named("name"), Some(node)),
            "module" => container(Kind::Module, named("name"), Some(node)),
            "singleton_class" => container(Kind::Class, Some("self".into()), Some(node)),
            _ => None,
        },
        Lang::Php => match k {
            "namespace_definition" => match field(node, "body") {
                Some(body) => container(Kind::Namespace, named("name"), Some(body)),
                None => statement_namespace(node, named("name")),
            },
            "class_declaration" => container(Kind::Class, named("name"), field(node, "body")),
            "interface_declaration" => container(Kind::Interface, named("name"), field(node, "body")),
            "trait_declaration" => container(Kind::Trait, named("name"), field(node, "body")),
            "enum_declaration" => container(Kind::Enum, named("name"), field(node, "body")),
            "function_definition" => leaf(Kind::Function, named("name")),
            "method_declaration" => {
                let name = named("name");
                let kind = if name.as_deref() == Some("__construct") { Kind::Constructor } else { Kind::Method };
                leaf(kind, name)
            }
            _ => None,
        },
        Lang::Kotlin => match k {
            "class_declaration" => {
                let is_interface = {
                    let mut c = node.walk();
                    node.children(&mut c).any(|ch| ch.kind() == "interface")
                };
                let kind = if is_interface { Kind::Interface } else { Kind::Class };
                let body = first_named_child_of_kind(node, &["class_body", "enum_class_body"]);
                container(kind, named("name").or_else(|| kotlin_name(node, src)), body)
            }
            "object_declaration" => container(
                Kind::Object,
                named("name").or_else(|| kotlin_name(node, src)),
                first_named_child_of_kind(node, &["class_body"]),
            ),
            "companion_object" => container(
                Kind::Object,
                named("name").or_else(|| kotlin_name(node, src)).or(Some("Companion".into())),
                first_named_child_of_kind(node, &["class_body"]),
            ),
            "function_declaration" => leaf(func, named("name").or_else(|| kotlin_name(node, src))),
            "secondary_constructor" => leaf(Kind::Constructor, Some("constructor".into())),
            _ => None,
        },
        Lang::Swift => match k {
            "class_declaration" => {
                let kind = match field(node, "declaration_kind").map(|n| text(n, src)) {
                    Some("struct") => Kind::Struct,
                    Some("enum") => Kind::Enum,
                    Some("extension") => Kind::Extension,
                    Some("actor") => Kind::Class,
                    _ => Kind::Class,
                };
                container(kind, named("name"), field(node, "body"))
            }
            "protocol_declaration" => container(Kind::Protocol, named("name"), field(node, "body")),
            "function_declaration" | "protocol_function_declaration" => leaf(func, named("name")),
            "init_declaration" => leaf(Kind::Constructor, Some("init".into())),
            "deinit_declaration" => leaf(Kind::Method, Some("deinit".into())),
            "subscript_declaration" => leaf(Kind::Method, Some("subscript".into())),
            _ => None,
        },
        Lang::Scala => match k {
            "class_definition" => container(Kind::Class, named("name"), field(node, "body")),
            "trait_definition" => container(Kind::Trait, named("name"), field(node, "body")),
            "object_definition" => container(Kind::Object, named("name"), field(node, "body")),
            "enum_definition" => container(Kind::Enum, named("name"), field(node, "body")),
            "function_definition" | "function_declaration" => leaf(func, named("name")),
            _ => None,
        },
        Lang::Lua => match k {
            "function_declaration" => leaf(Kind::Function, named("name")),
            "variable_declaration" | "assignment_statement" => {
                // `M.f = function() … end` / `local f = function() … end`
                let (names, values) = lua_assignment(node)?;
                if names.named_child_count() != 1 || values.named_child_count() != 1 {
                    return None;
                }
                let value = values.named_child(0)?;
                (value.kind() == "function_definition").then_some(())?;
                leaf(Kind::Function, Some(clean_name(text(names.named_child(0)?, src))))
            }
            _ => None,
        },
        Lang::Bash => match k {
            "function_definition" => leaf(Kind::Function, named("name")),
            _ => None,
        },
        Lang::Sql => sql_statement(node, src),
        _ => None,
    }
}

fn statement_namespace(node: Node<'_>, name: Option<String>) -> Option<DefNode<'_>> {
    name.map(|name| DefNode {
        kind: Kind::Namespace,
        name,
        container: true,
        outer: node,
        body: None,
        owns_following: true,
    })
}

fn go_receiver_type(receiver: Node, src: &[u8]) -> Option<String> {
    let param = first_named_child_of_kind(receiver, &["parameter_declaration"])?;
    let mut ty = field(param, "type")?;
    loop {
        match ty.kind() {
            "pointer_type" => ty = ty.named_child(0)?,
            "generic_type" => ty = field(ty, "type")?,
            _ => break,
        }
    }
    Some(clean_name(text(ty, src)))
}

fn kotlin_name(node: Node, src: &[u8]) -> Option<String> {
    first_named_child_of_kind(node, &["type_identifier", "simple_identifier", "identifier"])
        .map(|n| clean_name(text(n, src)))
}

fn lua_assignment(node: Node) -> Option<(Node, Node)> {
    let target = if node.kind() == "variable_declaration" {
        first_named_child_of_kind(node, &["assignment_statement"])?
    } else {
        node
    };
    let names = first_named_child_of_kind(target, &["variable_list"])?;
    let values = first_named_child_of_kind(target, &["expression_list"])?;
    Some((names, values))
}

fn c_family<'t>(lang: Lang, node: Node<'t>, src: &[u8], in_type: bool) -> Option<DefNode<'t>> {
    let k = node.kind();
    let leaf = |kind: Kind, name: Option<String>| {
        name.map(|name| DefNode { kind, name, container: false, outer: node, body: None, owns_following: false })
    };
    let container = |kind: Kind, name: Option<String>, body: Option<Node<'t>>| {
        name.map(|name| DefNode { kind, name, container: body.is_some(), outer: node, body, owns_following: false })
    };
    match k {
        "function_definition" => {
            let name = declarator_name(field(node, "declarator")?, src)?;
            let kind = if in_type || name.contains('.') { Kind::Method } else { Kind::Function };
            leaf(kind, Some(name))
        }
        "struct_specifier" | "class_specifier" | "union_specifier" | "enum_specifier" => {
            let body = field(node, "body")?; // forward declarations and uses are not definitions
            let name = field_text(node, "name", src)?;
            let kind = match k {
                "class_specifier" => Kind::Class,
                "union_specifier" => Kind::Union,
                "enum_specifier" => Kind::Enum,
                _ => Kind::Struct,
            };
            if lang == Lang::C || kind == Kind::Enum {
                leaf(kind, Some(name))
            } else {
                container(kind, Some(name), Some(body))
            }
        }
        "type_definition" => {
            // `typedef struct { … } Name;`: named by the typedef when the struct has no tag.
            let ty = field(node, "type")?;
            field(ty, "body")?;
            if field(ty, "name").is_some() {
                return None;
            }
            let name = declarator_name(field(node, "declarator")?, src)?;
            leaf(Kind::Struct, Some(name))
        }
        "namespace_definition" => container(
            Kind::Namespace,
            field_text(node, "name", src).or(Some("(anonymous)".into())),
            field(node, "body"),
        ),
        "template_declaration" => {
            let mut cursor = node.walk();
            let inner = node
                .named_children(&mut cursor)
                .find(|c| matches!(c.kind(), "function_definition" | "class_specifier" | "struct_specifier"))?;
            let mut def = c_family(lang, inner, src, in_type)?;
            def.outer = node;
            Some(def)
        }
        // Objective-C
        "class_interface" | "class_implementation" | "category_interface" | "category_implementation" => {
            let name =
                first_named_child_of_kind(node, &["identifier", "type_identifier"]).map(|n| clean_name(text(n, src)));
            let kind = if k.ends_with("interface") { Kind::Interface } else { Kind::Class };
            container(kind, name, Some(node))
        }
        "protocol_declaration" => {
            let name =
                first_named_child_of_kind(node, &["identifier", "type_identifier"]).map(|n| clean_name(text(n, src)));
            container(Kind::Protocol, name, Some(node))
        }
        "method_definition" | "method_declaration" => leaf(Kind::Method, objc_selector(node, src)),
        _ => None,
    }
}

/// `- (void)scaleBy:(double)f andShift:(double)s` → `scaleBy:andShift:`; `- (double)area` → `area`.
fn objc_selector(node: Node, src: &[u8]) -> Option<String> {
    let mut cursor = node.walk();
    let mut parts = Vec::new();
    let mut keyword = false;
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "identifier" => parts.push(text(child, src).to_string()),
            "method_parameter" => keyword = true,
            _ => {}
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(if keyword { parts.iter().map(|p| format!("{p}:")).collect() } else { parts.concat() })
}

fn sql_statement<'t>(node: Node<'t>, src: &[u8]) -> Option<DefNode<'t>> {
    if node.kind() != "statement" {
        return None;
    }
    let inner = node.named_child(0)?;
    let name = if inner.kind().starts_with("create_") || inner.kind().starts_with("alter_") {
        first_named_child_of_kind(inner, &["object_reference", "identifier"]).map(|n| clean_name(text(n, src)))
    } else {
        None
    };
    Some(DefNode {
        kind: Kind::Statement,
        name: name.unwrap_or_default(),
        container: false,
        outer: node,
        body: None,
        owns_following: false,
    })
}

/// A definition as a blob's stored facts keep it (`chunk::facts`), the form the graph and the
/// data-access extractor read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DefFact {
    pub name: String,
    pub qualified: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Index of the containing definition, -1 at file level.
    pub parent: i32,
    /// Marked as a test by an attribute or annotation (`#[test]`, `@Test`, `[Fact]`…).
    pub test: bool,
}

/// True for definition kinds a call can target.
pub fn callable_kind(kind: &str) -> bool {
    matches!(kind, "function" | "method" | "constructor" | "macro")
}

/// True for definition kinds a base clause or a constructor call can target.
pub fn type_kind(kind: &str) -> bool {
    matches!(
        kind,
        "class" | "struct" | "interface" | "trait" | "enum" | "object" | "protocol" | "record" | "union" | "type"
    )
}
