//! Per-blob graph facts, extracted from the same syntax tree walk as chunks: definitions (with
//! containment), raw calls, raw bases, imports and receiver-type hints. Nothing here looks at
//! other files; resolution happens per view (`resolve.rs`).

use crate::chunk::defs::{DefFact, DefNode, clean_name, type_kind};
use crate::chunk::outline::{Def, Visitor};
use crate::lang::Lang;
use serde::{Deserialize, Serialize};
use tree_sitter::Node;

/// The type-hint variable naming a function's declared return type (`-> T`); a hint whose
/// type is `=f` says the variable holds what `f` returns.
pub const RETURNS: &str = "->";

/// Bump when extracted facts change for a given input.
pub const EXTRACTOR_VERSION: u32 = 18;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    Extends,
    Implements,
    ExtendsOrImplements,
}

impl Relation {
    pub fn name(self) -> &'static str {
        match self {
            Relation::Extends => "extends",
            Relation::Implements => "implements",
            Relation::ExtendsOrImplements => "extends_or_implements",
        }
    }

    pub fn from_name(s: &str) -> Relation {
        match s {
            "extends" => Relation::Extends,
            "implements" => Relation::Implements,
            _ => Relation::ExtendsOrImplements,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallFact {
    /// Callee leaf name as written (`foo` in `a.b.foo()`).
    pub name: String,
    /// Receiver text for member calls (`a.b`, `self`, `Point`), empty for direct calls.
    pub receiver: String,
    pub member: bool,
    pub line: u32,
    /// Enclosing definition, -1 at file level.
    pub scope: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseFact {
    pub def: i32,
    pub name: String,
    pub relation: Relation,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportFact {
    /// Module or path text (`os.path`, `./util`, `github.com/x/y`, `stdio.h`).
    pub module: String,
    /// Names imported from it (may be empty).
    pub names: Vec<String>,
    pub line: u32,
}

/// A definition used as a value (passed, assigned, returned, stored, used as a decorator),
/// not called: `retry(handler)`, `{"delay": backoff}`, `return Cls`. A name in a type
/// annotation is not one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefFact {
    /// The name as written (`backoff` in `mod.backoff`).
    pub name: String,
    /// What it is reached through (`mod`, `self`), empty for a bare name.
    pub receiver: String,
    pub line: u32,
    /// Enclosing definition, -1 at file level.
    pub scope: i32,
}

/// `var` has type `ty` inside definition `scope` (file level: -1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeHint {
    pub scope: i32,
    pub var: String,
    pub ty: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    pub defs: Vec<DefFact>,
    pub calls: Vec<CallFact>,
    pub bases: Vec<BaseFact>,
    pub imports: Vec<ImportFact>,
    pub types: Vec<TypeHint>,
    /// Tables, mappings and procedures the blob's code touches (`chunk::data`).
    #[serde(default)]
    pub data: Vec<crate::chunk::data::DataFact>,
    #[serde(default)]
    pub refs: Vec<RefFact>,
}

impl Facts {
    /// Puts each field's type hint (`self.x`) on the innermost class around where it was
    /// assigned, so every method of the class sees it. Needs `defs`.
    pub fn fields_on_classes(&mut self) {
        for t in &mut self.types {
            if !t.var.starts_with("self.") {
                continue;
            }
            let mut s = usize::try_from(t.scope).ok();
            while let Some(i) = s {
                let Some(d) = self.defs.get(i) else { break };
                if type_kind(&d.kind) {
                    t.scope = i as i32;
                    break;
                }
                s = usize::try_from(d.parent).ok();
            }
        }
    }

    pub fn from_defs(defs: &[Def], src: &[u8]) -> Vec<DefFact> {
        defs.iter()
            .map(|d| DefFact {
                name: d.name.clone(),
                qualified: d.qualified.clone(),
                kind: d.kind.name().to_string(),
                start_line: d.start_row as u32 + 1,
                end_line: d.end_row as u32 + 1,
                parent: d.parent.map_or(-1, |p| p as i32),
                test: has_test_marker(&src[d.start_byte..d.end_byte.min(d.start_byte + 400)]),
            })
            .collect()
    }
}

/// Collects calls, bases, imports and type hints during the outline walk.
pub struct Extractor<'a> {
    pub lang: Lang,
    pub src: &'a [u8],
    pub facts: Facts,
    /// Byte ranges of the outermost string literals, for data-access facts.
    pub strings: Vec<(usize, usize)>,
    /// Ruby: names bound as local variables or parameters, per scope (a bare name that is not
    /// one of them is a method call on `self`).
    ruby_locals: std::collections::HashSet<(i32, String)>,
    /// Per node kind id: 0 not seen yet, 1 never yields a fact, 2 may, 3 a string literal (the
    /// match below depends only on (language, kind), so one look per kind decides).
    seen: Vec<u8>,
    /// The same per kind for value positions and bindings (`refs_at`): 0 not seen, 1 none, 2 one.
    ref_seen: Vec<u8>,
    /// Names bound inside functions (parameters, local variables) → the scopes binding them: a
    /// bare name bound there is that value, not a definition of the same name elsewhere.
    locals: std::collections::HashMap<String, Vec<i32>>,
    /// Module-level values (`app = Flask()`, `export const x = new T()`, Go `var`/`const`, Rust
    /// `static`/`const`, static fields): definitions the outline does not chunk, appended after
    /// its definitions by `finish`.
    globals: Vec<DefFact>,
    /// Byte range of the module-level value being walked, its index in `globals` and the
    /// definition holding it (a static field's class): what its initialiser calls and
    /// references belongs to it.
    global_at: Option<(usize, usize, usize, Option<usize>)>,
    /// Qualified name of each outline definition, in the order the walk finds them, and
    /// whether it is a function (whose assignments bind locals; a class body's do not).
    outline: Vec<(String, bool)>,
}

impl<'a> Extractor<'a> {
    pub fn new(lang: Lang, src: &'a [u8]) -> Self {
        Extractor {
            lang,
            src,
            facts: Facts::default(),
            strings: Vec::new(),
            ruby_locals: Default::default(),
            seen: Vec::new(),
            ref_seen: Vec::new(),
            locals: Default::default(),
            globals: Vec::new(),
            global_at: None,
            outline: Vec::new(),
        }
    }

    /// The facts of the walk with the outline's definitions (`defs`): module-level values
    /// appended after them, and calls and references of a name that a parameter or local
    /// variable of an enclosing function binds dropped (they are that value's).
    pub fn finish(self, defs: Vec<DefFact>) -> Facts {
        let mut facts = self.facts;
        let n = defs.len() as i32;
        facts.defs = defs;
        let fix = |s: i32| if s <= -2 { n + (-s - 2) } else { s };
        for c in &mut facts.calls {
            c.scope = fix(c.scope);
        }
        for r in &mut facts.refs {
            r.scope = fix(r.scope);
        }
        facts.defs.extend(self.globals);
        if self.locals.is_empty() {
            return facts;
        }
        let own: std::collections::HashSet<(i32, &str)> =
            facts.defs.iter().map(|d| (d.parent, d.name.as_str())).collect();
        let shadowed = |name: &str, scope: i32| {
            let Some(binders) = self.locals.get(name) else { return false };
            let mut s = scope;
            while s >= 0 {
                let Some(d) = facts.defs.get(s as usize) else { return false };
                if binders.contains(&s) && !own.contains(&(s, name)) {
                    return true;
                }
                s = d.parent;
            }
            false
        };
        // Java, Kotlin and C# keep methods and variables apart: a local `key` leaves `key()` alone.
        let one_namespace = !matches!(self.lang, Lang::Java | Lang::Kotlin | Lang::CSharp);
        let calls: Vec<bool> =
            facts.calls.iter().map(|c| one_namespace && !c.member && shadowed(&c.name, c.scope)).collect();
        let refs: Vec<bool> = facts.refs.iter().map(|r| r.receiver.is_empty() && shadowed(&r.name, r.scope)).collect();
        let mut i = 0;
        facts.calls.retain(|_| {
            i += 1;
            !calls[i - 1]
        });
        let mut i = 0;
        facts.refs.retain(|_| {
            i += 1;
            !refs[i - 1]
        });
        facts
    }
}

fn text<'a>(n: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[n.byte_range()]).unwrap_or("")
}

fn line(n: Node) -> u32 {
    n.start_position().row as u32 + 1
}

fn scope_i(s: Option<usize>) -> i32 {
    s.map_or(-1, |v| v as i32)
}

const IDENT_KINDS: &[&str] = &[
    "identifier",
    "simple_identifier",
    "field_identifier",
    "property_identifier",
    "type_identifier",
    "name",
    "constant",
    "word",
    "command_name",
    "shorthand_property_identifier",
    "private_property_identifier",
    "variable_name",
    "scoped_type_identifier",
    "user_type",
    "selector",
];

fn field<'t>(n: Node<'t>, names: &[&'static str]) -> Option<Node<'t>> {
    names.iter().find_map(|f| super::grammar::child_by_field(n, f))
}

fn last_named<'t>(n: Node<'t>) -> Option<Node<'t>> {
    let c = n.named_child_count();
    if c == 0 { None } else { n.named_child(c as u32 - 1) }
}

/// Leaf name of an expression naming a callee or type: `a.b.c` → `c`, `Foo<T>` → `Foo`.
fn leaf_name(n: Node, src: &[u8]) -> Option<String> {
    let mut cur = n;
    for _ in 0..12 {
        let k = cur.kind();
        if IDENT_KINDS.contains(&k) && cur.named_child_count() == 0 {
            let t = clean_name(text(cur, src));
            let t = t.trim_start_matches('$').trim_start_matches('@').to_string();
            return (!t.is_empty()).then_some(t);
        }
        // A generic type is named by its head: `Iterator<JsonElement>` is an Iterator.
        if matches!(k, "generic_type" | "generic_name" | "parameterized_type" | "subscript" | "user_type") {
            cur = field(cur, &["value", "type", "name"]).or_else(|| cur.named_child(0))?;
            continue;
        }
        cur = match field(
            cur,
            &["name", "property", "field", "attribute", "suffix", "method", "type", "function", "constructor"],
        ) {
            Some(f) => f,
            None => last_named(cur)?,
        };
    }
    None
}

/// (callee name, receiver text) of a callee expression.
fn callee_parts(callee: Node, src: &[u8]) -> Option<(String, Option<String>)> {
    let k = callee.kind();
    if IDENT_KINDS.contains(&k) && callee.named_child_count() == 0 {
        return leaf_name(callee, src).map(|n| (n, None));
    }
    match k {
        "member_expression"
        | "attribute"
        | "selector_expression"
        | "field_expression"
        | "navigation_expression"
        | "member_access_expression"
        | "dot_index_expression"
        | "method_index_expression"
        | "scoped_identifier"
        | "qualified_identifier"
        | "scope_resolution"
        | "qualified_name"
        | "member_access"
        | "optional_chain" => {
            let name = leaf_name(callee, src)?;
            let recv = field(
                callee,
                &[
                    "object",
                    "operand",
                    "value",
                    "argument",
                    "expression",
                    "target",
                    "scope",
                    "path",
                    "table",
                    "receiver",
                ],
            )
            .or_else(|| callee.named_child(0))
            .filter(|r| r.id() != callee.id())
            .map(|r| text(r, src).trim().to_string())
            .filter(|r| !r.is_empty() && r != &name);
            Some((name, recv))
        }
        "generic_name" | "template_function" | "generic_function" | "parenthesized_expression" | "type_arguments" => {
            let inner = field(callee, &["name", "function"]).or_else(|| callee.named_child(0))?;
            callee_parts(inner, src)
        }
        // Swift parses `a * helper(r)` as a call of the whole product: the callee is the
        // rightmost operand.
        "multiplicative_expression" | "additive_expression" | "binary_expression" => {
            callee_parts(last_named(callee)?, src)
        }
        _ => None,
    }
}

impl Extractor<'_> {
    fn call(&mut self, name: String, receiver: Option<String>, n: Node, scope: Option<usize>) {
        let receiver = receiver.unwrap_or_default();
        let member = !receiver.is_empty();
        let scope = self.scope_of(n, scope);
        // The receiver of `app.run()` / `Config.load()` is used too: the value or type it names
        // is a dependency of the caller.
        if member && !matches!(self.lang, Lang::Ruby | Lang::Bash | Lang::Php) {
            let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
            let r = receiver.as_str();
            if word(r) && !matches!(r, "self" | "this" | "cls" | "super") {
                self.facts.refs.push(RefFact { name: r.to_string(), receiver: String::new(), line: line(n), scope });
            } else if let Some((owner, value)) = r.split_once('.')
                && word(owner)
                && word(value)
            {
                // `JsonNull.INSTANCE.toString()`, `config.DEFAULTS.get()`: the value named.
                self.facts.refs.push(RefFact {
                    name: value.to_string(),
                    receiver: owner.to_string(),
                    line: line(n),
                    scope,
                });
            }
        }
        self.facts.calls.push(CallFact { name, receiver, member, line: line(n), scope });
    }

    /// The scope a fact at `n` is credited to: its definition, or at file level the
    /// module-level value whose initialiser holds it (`-2 - index` until `finish`).
    fn scope_of(&self, n: Node, scope: Option<usize>) -> i32 {
        match self.global_at {
            Some((a, b, k, holder)) if holder == scope && n.start_byte() >= a && n.end_byte() <= b => -2 - k as i32,
            _ => scope_i(scope),
        }
    }

    /// A value position holding `v`: a bare name or `module.name` / `self.name` is a reference.
    fn reference(&mut self, v: Node, scope: Option<usize>) {
        self.reference_in(v, scope, 0);
    }

    /// [`Self::reference`] `depth` wrappers deep (parentheses, branches): a few at most, so that
    /// deeply nested input cannot grow the stack.
    fn reference_in(&mut self, v: Node, scope: Option<usize>, depth: u8) {
        if depth > 8 {
            return;
        }
        let src = self.src;
        let (name, receiver) = match v.kind() {
            "identifier" | "simple_identifier" | "shorthand_property_identifier" | "constant"
                if v.named_child_count() == 0 =>
            {
                (text(v, src).trim().to_string(), String::new())
            }
            "attribute"
            | "member_expression"
            | "selector_expression"
            | "field_expression"
            | "navigation_expression"
            | "member_access_expression"
            | "scoped_identifier"
            | "field_access" => {
                let Some(obj) = field(v, &["object", "operand", "value", "expression", "path", "receiver", "scope"])
                    .or_else(|| v.named_child(0))
                else {
                    return;
                };
                let path_like =
                    self.lang == Lang::Rust && matches!(obj.kind(), "scoped_identifier" | "crate" | "super");
                if !path_like
                    && !matches!(
                        obj.kind(),
                        "identifier" | "simple_identifier" | "self" | "this" | "package_identifier" | "generic_name"
                    )
                {
                    return;
                }
                let Some(name) = leaf_name(v, src) else { return };
                (name, text(obj, src).trim().to_string())
            }
            // `(handler)`, Go's `literal_element`, `...spread`, `&STATIC`, `f::<T>`: the value inside.
            "parenthesized_expression"
            | "literal_element"
            | "spread_element"
            | "reference_expression"
            | "generic_function" => {
                if let Some(inner) = field(v, &["value", "function"]).or_else(|| v.named_child(0)) {
                    self.reference_in(inner, scope, depth + 1);
                }
                return;
            }
            // `TABLE[key]`, `CODES[code]`: the collection read is used.
            "subscript_expression" | "subscript" | "element_access_expression" | "index_expression" => {
                if let Some(inner) =
                    field(v, &["object", "value", "expression", "operand"]).or_else(|| v.named_child(0))
                {
                    self.reference_in(inner, scope, depth + 1);
                }
                return;
            }
            // Either branch of `c ? a : b` / `a if c else b` is the value.
            "conditional_expression" | "ternary_expression" => {
                let (a, b) = match (field(v, &["consequence"]), field(v, &["alternative"])) {
                    (Some(a), Some(b)) => (Some(a), Some(b)),
                    _ if self.lang == Lang::Python => (v.named_child(0), last_named(v)),
                    _ => (v.named_child(1), last_named(v)),
                };
                for x in [a, b].into_iter().flatten() {
                    self.reference_in(x, scope, depth + 1);
                }
                return;
            }
            // `a || b`, `a ?? b`, `a or b`: either operand is the value.
            "binary_expression" | "boolean_operator" => {
                let op = field(v, &["operator"]).map(|o| text(o, src).trim().to_string()).unwrap_or_default();
                if matches!(op.as_str(), "||" | "??" | "or") {
                    for x in [field(v, &["left"]), field(v, &["right"])].into_iter().flatten() {
                        self.reference_in(x, scope, depth + 1);
                    }
                }
                return;
            }
            "expression_list" => {
                let mut c = v.walk();
                let kids: Vec<Node> = v.named_children(&mut c).collect();
                for k in kids {
                    self.reference_in(k, scope, depth + 1);
                }
                return;
            }
            _ => return,
        };
        if name.is_empty()
            || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            || matches!(name.as_str(), "self" | "this" | "None" | "true" | "false" | "null" | "undefined" | "nil")
        {
            return;
        }
        let scope = self.scope_of(v, scope);
        self.facts.refs.push(RefFact { name, receiver, line: line(v), scope });
    }

    /// Binds the names a parameter, pattern or assignment target declares in function `scope`
    /// (never its type or default value).
    fn bind(&mut self, n: Node, scope: i32, depth: u8) {
        if depth > 5 {
            return;
        }
        let k = n.kind();
        if matches!(k, "identifier" | "simple_identifier" | "shorthand_property_identifier_pattern") {
            let name = text(n, self.src).trim().to_string();
            let scopes = self.locals.entry(name).or_default();
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
            return;
        }
        let pattern_like = k.contains("pattern")
            || k.contains("parameter")
            || k.contains("declarator")
            || matches!(k, "tuple" | "list" | "expression_list" | "identifier_list" | "variable_declaration");
        if !pattern_like {
            return;
        }
        let mut c = n.walk();
        let names: Vec<Node> = n.children_by_field_name("name", &mut c).collect();
        if !names.is_empty() {
            for x in names {
                self.bind(x, scope, depth + 1);
            }
            return;
        }
        if let Some(x) = field(n, &["pattern", "left"]) {
            return self.bind(x, scope, depth + 1);
        }
        let mut c = n.walk();
        let kids: Vec<Node> = n
            .named_children(&mut c)
            .filter(|x| {
                let xk = x.kind();
                !(xk.contains("type") || xk.contains("annotation") || xk.contains("default") || xk == "value")
            })
            .collect();
        for x in kids {
            // `{ a: b }` binds `b`; `[x = 1]` binds `x`.
            let x = if x.kind() == "pair_pattern" { field(x, &["value"]).unwrap_or(x) } else { x };
            self.bind(x, scope, depth + 1);
        }
    }

    /// Whether the argument list `n` follows `class Name` (Python's bases), read off the
    /// source just before it.
    fn class_bases(&self, n: Node) -> bool {
        let before = &self.src[n.start_byte().saturating_sub(300)..n.start_byte()];
        let before = std::str::from_utf8(before).unwrap_or("").trim_end();
        let head = before.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_');
        head.len() < before.len() && head.trim_end().ends_with("class") && {
            let h = head.trim_end();
            h.len() == 5 || !h[..h.len() - 5].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        }
    }

    /// A module-level value named by `name_node`, spanning `n`.
    fn global(&mut self, name_node: Node, n: Node, kind: &str, parent: Option<usize>) {
        let name = text(name_node, self.src).trim().to_string();
        if name.is_empty()
            || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            || (name.starts_with("__") && name.ends_with("__"))
        {
            return;
        }
        let qualified = match parent.and_then(|p| self.outline.get(p)) {
            Some((q, _)) if !q.is_empty() => format!("{q}.{name}"),
            _ => name.clone(),
        };
        let kind = if kind == "variable"
            && name.len() > 1
            && name.chars().all(|c| c.is_uppercase() || c == '_' || c.is_ascii_digit())
        {
            "constant"
        } else {
            kind
        };
        let end = n.end_position();
        let end_row = if end.column == 0 && end.row > n.start_position().row { end.row - 1 } else { end.row };
        self.global_at = Some((n.start_byte(), n.end_byte(), self.globals.len(), parent));
        self.globals.push(DefFact {
            name,
            qualified,
            kind: kind.to_string(),
            start_line: line(n),
            end_line: end_row as u32 + 1,
            parent: scope_i(parent),
            test: false,
        });
    }

    /// Value positions, bindings and module-level values at `n`; false when its kind never has any.
    fn refs_at(&mut self, n: Node, scope: Option<usize>) -> bool {
        if matches!(self.lang, Lang::Ruby | Lang::Bash | Lang::Php | Lang::Sql) {
            return false;
        }
        let k = n.kind();
        match k {
            // A type annotation's list (`Callable[[A, B], C]`) names types, not values; the list
            // a subscript reads from (`[f, g][0]`) is a value.
            "list" | "tuple"
                if self.lang == Lang::Python
                    && n.parent().is_some_and(|p| {
                        matches!(p.kind(), "subscript" | "generic_type" | "type" | "type_parameter")
                            && field(p, &["value"]).is_none_or(|v| v.id() != n.id())
                    }) => {}
            // A Python class's bases are written as an argument list: inheritance, not values.
            "argument_list" if self.lang == Lang::Python && self.class_bases(n) => {}
            // Every element is a value.
            "argument_list"
            | "arguments"
            | "list"
            | "tuple"
            | "set"
            | "array"
            | "array_expression"
            | "tuple_expression"
            | "array_initializer"
            | "collection_expression"
            | "object"
            | "literal_value"
            | "return_statement"
            | "jump_expression"
            | "decorator"
            | "shorthand_field_initializer"
            | "return_expression" => {
                let mut c = n.walk();
                let kids: Vec<Node> = n.named_children(&mut c).collect();
                for v in kids {
                    self.reference(v, scope);
                }
            }
            // The value of a key, a keyword or a named argument.
            "keyword_argument"
            | "pair"
            | "field_initializer"
            | "value_argument"
            | "argument"
            | "keyed_element"
            | "equals_value_clause" => {
                if let Some(v) = field(n, &["value"]).or_else(|| last_named(n)) {
                    self.reference(v, scope);
                }
            }
            // Parameters bind names inside the function.
            "parameters"
            | "formal_parameters"
            | "parameter_list"
            | "lambda_parameters"
            | "function_value_parameters"
            | "closure_parameters" => {
                if let Some(s) = scope {
                    let mut c = n.walk();
                    let kids: Vec<Node> = n.named_children(&mut c).collect();
                    for p in kids {
                        self.bind(p, s as i32, 0);
                    }
                }
            }
            "for_statement" | "for_in_statement" | "for_in_clause" | "range_clause" | "for_expression" => {
                if let (Some(s), Some(t)) = (scope, field(n, &["left", "pattern"])) {
                    self.bind(t, s as i32, 0);
                }
            }
            "assignment"
            | "assignment_expression"
            | "variable_declarator"
            | "short_var_declaration"
            | "let_declaration"
            | "var_spec"
            | "const_spec"
            | "augmented_assignment"
            | "init_declarator"
            | "property_declaration"
            | "assignment_statement" => {
                let target = field(n, &["left", "name", "pattern", "declarator"])
                    .or_else(|| (k == "property_declaration").then(|| n.named_child(0)).flatten());
                let in_function = scope.and_then(|s| self.outline.get(s)).is_some_and(|(_, f)| *f);
                // Go's `x = y` assigns a variable declared elsewhere (a package's, often): no binding.
                let declares = k != "assignment_statement";
                match (scope, target) {
                    (Some(s), Some(t)) if in_function && declares => self.bind(t, s as i32, 0),
                    (None, Some(t)) if k != "augmented_assignment" && declares => self.module_value(n, t),
                    _ => {}
                }
                // After `module_value`, so that the initialiser is credited to the value it makes.
                let value = field(n, &["right", "value"]).or_else(|| {
                    (self.lang == Lang::CSharp && k == "variable_declarator" && n.named_child_count() > 1)
                        .then(|| last_named(n))
                        .flatten()
                });
                if let Some(v) = value {
                    self.reference(v, scope);
                }
            }
            // Rust `static`/`const` items and Java/C# static fields with an initialiser.
            "const_item" | "static_item" => {
                if let Some(name) = field(n, &["name"])
                    && scope.is_none_or(|s| !self.outline.get(s).is_some_and(|(_, f)| *f))
                {
                    self.global(name, n, "constant", scope);
                    if let Some(v) = field(n, &["value"]) {
                        self.reference(v, scope);
                    }
                }
            }
            "field_declaration" if matches!(self.lang, Lang::Java | Lang::CSharp) => {
                let head = text(n, self.src);
                let head = head.split(['=', ';']).next().unwrap_or("");
                if scope.is_some() && head.split_whitespace().any(|w| w == "static") {
                    let mut found = Vec::new();
                    let mut stack = vec![n];
                    while let Some(x) = stack.pop() {
                        if x.kind() == "variable_declarator" {
                            found.push(x);
                            continue;
                        }
                        let mut c = x.walk();
                        stack.extend(x.named_children(&mut c));
                    }
                    for d in found {
                        let has_value = field(d, &["value"]).is_some() || d.named_child_count() > 1;
                        if let (true, Some(name)) = (has_value, field(d, &["name"]).or_else(|| d.named_child(0))) {
                            self.global(name, n, "variable", scope);
                        }
                    }
                }
            }
            _ => return false,
        }
        true
    }

    /// `x = …` at file level: a module-level value, unless it is an import (`require`), a
    /// function (an outline definition already) or a re-assignment of a name seen before.
    fn module_value(&mut self, n: Node, target: Node) {
        // Only a statement of the file itself: a `const` inside a callback or a block at file
        // level (`it(…, () => { const x = … })`) is a local of that function.
        if !at_top_level(n) {
            return;
        }
        let mut t = target;
        if t.kind() == "expression_list" {
            if t.named_child_count() != 1 {
                return;
            }
            t = match t.named_child(0) {
                Some(x) => x,
                None => return,
            };
        }
        if !matches!(t.kind(), "identifier" | "simple_identifier") {
            return;
        }
        let value = field(n, &["right", "value"]);
        if let Some(v) = value {
            let vk = v.kind();
            if matches!(
                vk,
                "arrow_function" | "function_expression" | "function" | "class" | "generator_function" | "lambda"
            ) {
                return;
            }
            if matches!(vk, "call_expression" | "call")
                && field(v, &["function"]).is_some_and(|f| text(f, self.src).trim() == "require")
            {
                return;
            }
        }
        let name = text(t, self.src).trim();
        if self.globals.iter().any(|g| g.parent < 0 && g.name == name) {
            return;
        }
        // Go's `const` block members are constants.
        let kind = if n.kind() == "const_spec" { "constant" } else { "variable" };
        self.global(t, n, kind, None);
    }

    fn import(&mut self, module: String, names: Vec<String>, n: Node) {
        let module =
            module.trim().trim_matches(|c| c == '"' || c == '\'' || c == '<' || c == '>' || c == '`').to_string();
        if !module.is_empty() {
            self.facts.imports.push(ImportFact { module, names, line: line(n) });
        }
    }

    fn base(&mut self, def: usize, n: Node, relation: Relation) {
        // Kotlin's `Outer.Inner` base is a user_type of several parts: named whole, so that it
        // is the nested type and not the outer one.
        if self.lang == Lang::Kotlin
            && let Some(name) = kotlin_dotted_type(n, self.src)
        {
            self.facts.bases.push(BaseFact { def: def as i32, name, relation });
            return;
        }
        if let Some(name) = leaf_name(n, self.src) {
            self.facts.bases.push(BaseFact { def: def as i32, name, relation });
        }
    }

    fn type_hint(&mut self, var: Node, ty: String, scope: Option<usize>) {
        if let Some(f) = field_name(text(var, self.src)) {
            // Recorded on the class, so every method of it sees the field's type.
            // Moved onto the class once the definitions are known (`Facts::fields_on_classes`).
            let v = format!("self.{f}");
            self.facts.types.push(TypeHint { scope: scope_i(scope), var: v, ty });
            return;
        }
        let v = text(var, self.src).trim().trim_start_matches('$').to_string();
        if !v.is_empty() && !ty.is_empty() && v.chars().all(|c| c.is_alphanumeric() || c == '_') {
            self.facts.types.push(TypeHint { scope: scope_i(scope), var: v, ty });
        }
    }

    /// `Name(...)` / `new Name(...)` / `Name.new` / `Name::new(...)` / `&Name{}`: the type it builds.
    fn constructed_type(&self, value: Node) -> Option<String> {
        let src = self.src;
        match value.kind() {
            "new_expression" | "object_creation_expression" | "instance_expression" => {
                field(value, &["constructor", "type", "name"])
                    .or_else(|| value.named_child(0))
                    .and_then(|t| leaf_name(t, src))
            }
            "composite_literal" => field(value, &["type"]).and_then(|t| leaf_name(t, src)),
            "unary_expression" | "reference_expression" | "pointer_expression" => value
                .named_child((value.named_child_count() as u32).checked_sub(1)?)
                .and_then(|v| self.constructed_type(v)),
            "call" | "call_expression" | "function_call" => {
                let callee = field(value, &["function", "method", "name"]).or_else(|| value.named_child(0))?;
                // Ruby's `call` has method/receiver fields; Python's has `function`.
                let (name, recv) = if value.kind() == "call" && field(value, &["method"]).is_some() {
                    let m = field(value, &["method"]).map(|m| text(m, src).to_string())?;
                    (m, field(value, &["receiver"]).map(|r| text(r, src).to_string()))
                } else {
                    callee_parts(callee, src)?
                };
                match recv {
                    Some(r) if name == "new" => Some(clean_name(&r).rsplit('.').next()?.to_string()),
                    // Go builds values with literals (`&Point{}`); `NewPoint(2)` is a call
                    // whose declared result types the variable.
                    None if self.lang != Lang::Go && name.chars().next().is_some_and(char::is_uppercase) => Some(name),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

impl Visitor for Extractor<'_> {
    fn def(&mut self, index: usize, def: &Def, d: &DefNode) {
        if self.outline.len() <= index {
            self.outline.resize(index + 1, (String::new(), false));
        }
        self.outline[index] = (
            def.qualified.clone(),
            matches!(
                def.kind,
                crate::chunk::defs::Kind::Function
                    | crate::chunk::defs::Kind::Method
                    | crate::chunk::defs::Kind::Constructor
            ),
        );
        let n = d.outer;
        // Find the definition node itself inside wrappers (export, decorators, templates).
        let core = match n.kind() {
            "export_statement" => field(n, &["declaration"]).unwrap_or(n),
            "decorated_definition" => field(n, &["definition"]).unwrap_or(n),
            "template_declaration" => {
                let mut c = n.walk();
                let found = n
                    .named_children(&mut c)
                    .find(|x| x.kind().ends_with("_specifier") || x.kind() == "function_definition");
                found.unwrap_or(n)
            }
            _ => n,
        };
        self.return_type(index, core);
        let mut cursor = core.walk();
        let children: Vec<Node> = core.named_children(&mut cursor).collect();
        match self.lang {
            Lang::Python => {
                if let Some(args) = field(core, &["superclasses"]) {
                    let mut c = args.walk();
                    for a in args.named_children(&mut c) {
                        if a.kind() != "keyword_argument" {
                            self.base(index, a, Relation::Extends);
                        }
                    }
                }
            }
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                for ch in &children {
                    if ch.kind() == "class_heritage" {
                        let mut c = ch.walk();
                        let parts: Vec<Node> = ch.named_children(&mut c).collect();
                        for p in parts {
                            match p.kind() {
                                "extends_clause" => {
                                    if let Some(v) = field(p, &["value"]).or_else(|| p.named_child(0)) {
                                        self.base(index, v, Relation::Extends)
                                    }
                                }
                                "implements_clause" => {
                                    let mut c2 = p.walk();
                                    for t in p.named_children(&mut c2) {
                                        self.base(index, t, Relation::Implements);
                                    }
                                }
                                _ => self.base(index, p, Relation::Extends), // JS: `extends Expr`
                            }
                        }
                    }
                    if ch.kind() == "extends_type_clause" {
                        let mut c2 = ch.walk();
                        for t in ch.named_children(&mut c2) {
                            self.base(index, t, Relation::Extends);
                        }
                    }
                }
            }
            Lang::Java => {
                if let Some(s) = field(core, &["superclass"])
                    && let Some(t) = s.named_child(0)
                {
                    self.base(index, t, Relation::Extends);
                }
                for (f, rel) in [("interfaces", Relation::Implements)] {
                    if let Some(i) = field(core, &[f]) {
                        for t in type_list(i) {
                            self.base(index, t, rel);
                        }
                    }
                }
                for ch in &children {
                    if ch.kind() == "extends_interfaces" {
                        for t in type_list(*ch) {
                            self.base(index, t, Relation::Extends);
                        }
                    }
                }
            }
            Lang::CSharp => {
                for ch in &children {
                    if ch.kind() == "base_list" {
                        let mut c = ch.walk();
                        for t in ch.named_children(&mut c) {
                            let t = if t.kind() == "primary_constructor_base_type" {
                                t.named_child(0).unwrap_or(t)
                            } else {
                                t
                            };
                            self.base(index, t, Relation::ExtendsOrImplements);
                        }
                    }
                }
            }
            Lang::Cpp => {
                for ch in &children {
                    if ch.kind() == "base_class_clause" {
                        let mut c = ch.walk();
                        for t in ch.named_children(&mut c) {
                            if !matches!(t.kind(), "access_specifier" | "virtual") {
                                self.base(index, t, Relation::Extends);
                            }
                        }
                    }
                }
            }
            Lang::ObjC => {
                if let Some(s) = field(core, &["superclass"]) {
                    self.base(index, s, Relation::Extends);
                }
                for ch in &children {
                    if matches!(
                        ch.kind(),
                        "parameterized_arguments" | "protocol_qualifiers" | "protocol_reference_list"
                    ) {
                        let mut c = ch.walk();
                        for t in ch.named_children(&mut c) {
                            self.base(index, t, Relation::Implements);
                        }
                    }
                }
            }
            Lang::Rust => {
                if core.kind() == "impl_item"
                    && let Some(t) = field(core, &["trait"])
                {
                    self.base(index, t, Relation::Implements);
                }
                if core.kind() == "trait_item"
                    && let Some(b) = field(core, &["bounds"])
                {
                    let mut c = b.walk();
                    for t in b.named_children(&mut c) {
                        self.base(index, t, Relation::Extends);
                    }
                }
            }
            Lang::Ruby => {
                if let Some(s) = field(core, &["superclass"])
                    && let Some(t) = s.named_child(0)
                {
                    self.base(index, t, Relation::Extends);
                }
            }
            Lang::Php => {
                for ch in &children {
                    match ch.kind() {
                        "base_clause" => {
                            let mut c = ch.walk();
                            for t in ch.named_children(&mut c) {
                                self.base(index, t, Relation::Extends);
                            }
                        }
                        "class_interface_clause" => {
                            let mut c = ch.walk();
                            for t in ch.named_children(&mut c) {
                                self.base(index, t, Relation::Implements);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Lang::Kotlin => {
                for ch in &children {
                    if ch.kind() == "delegation_specifiers" {
                        let mut c = ch.walk();
                        for spec in ch.named_children(&mut c) {
                            let inner = spec.named_child(0).unwrap_or(spec);
                            // `Base()` calls a superclass constructor; a bare type is an interface.
                            let rel = if inner.kind() == "constructor_invocation" {
                                Relation::Extends
                            } else {
                                Relation::Implements
                            };
                            let ty =
                                if inner.kind() == "user_type" { inner } else { inner.named_child(0).unwrap_or(inner) };
                            self.base(index, ty, rel);
                        }
                    }
                }
            }
            Lang::Swift => {
                for ch in &children {
                    if ch.kind() == "inheritance_specifier"
                        && let Some(t) = field(*ch, &["inherits_from"]).or_else(|| ch.named_child(0))
                    {
                        self.base(index, t, Relation::ExtendsOrImplements);
                    }
                }
            }
            Lang::Scala => {
                if let Some(e) = field(core, &["extend"]) {
                    let mut c = e.walk();
                    let types: Vec<Node> = e.named_children(&mut c).filter(|t| t.kind() != "arguments").collect();
                    for (i, t) in types.into_iter().enumerate() {
                        self.base(index, t, if i == 0 { Relation::Extends } else { Relation::Implements });
                    }
                }
            }
            _ => {}
        }
    }

    fn node(&mut self, n: Node, scope: Option<usize>) {
        let id = n.kind_id() as usize;
        if id >= self.seen.len() {
            self.seen.resize(id + 1, 0);
            self.ref_seen.resize(id + 1, 0);
        }
        if self.ref_seen[id] != 1 {
            let hit = self.refs_at(n, scope);
            if self.ref_seen[id] == 0 {
                self.ref_seen[id] = if hit { 2 } else { 1 };
            }
        }
        if self.seen[id] == 1 {
            return;
        }
        if self.seen[id] == 3 || self.seen[id] == 0 && crate::chunk::data::is_string_kind(n.kind()) {
            self.seen[id] = 3;
            let r = (n.start_byte(), n.end_byte());
            if self.strings.last().is_none_or(|l| r.0 >= l.1) && r.1 > r.0 {
                self.strings.push(r);
            }
            return;
        }
        let hit = self.dispatch(n, scope);
        self.seen[id] = if hit { 2 } else { 1 };
    }
}

impl Extractor<'_> {
    /// Extracts what node `n` says; false when its kind never says anything in this language.
    fn dispatch(&mut self, n: Node, scope: Option<usize>) -> bool {
        let src = self.src;
        let k = n.kind();
        match (self.lang, k) {
            // ---- calls
            (Lang::Python, "call")
            | (
                Lang::JavaScript
                | Lang::TypeScript
                | Lang::Tsx
                | Lang::Go
                | Lang::C
                | Lang::Cpp
                | Lang::ObjC
                | Lang::Scala,
                "call_expression",
            )
            | (Lang::Rust, "call_expression")
            | (Lang::CSharp, "invocation_expression")
            | (Lang::Php, "function_call_expression") => {
                let Some(callee) = field(n, &["function"]).or_else(|| n.named_child(0)) else { return true };
                if let Some((name, recv)) = callee_parts(callee, src) {
                    let js = matches!(self.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
                    if js
                        && name == "require"
                        && let Some(arg) = field(n, &["arguments"]).and_then(|a| a.named_child(0))
                    {
                        self.import(text(arg, src).to_string(), Vec::new(), n);
                    }
                    // `fn.call(this, …)` / `fn.apply(this, args)` call `fn` itself.
                    if let Some(f) = recv.as_deref().filter(|r| {
                        js && matches!(name.as_str(), "call" | "apply")
                            && r.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
                    }) {
                        let f = f.to_string();
                        self.call(f, None, n, scope);
                        return true;
                    }
                    self.call(name, recv, n, scope);
                }
            }
            (Lang::Kotlin | Lang::Swift, "call_expression") => {
                let Some(callee) = n.named_child(0) else { return true };
                if let Some((name, recv)) = callee_parts(callee, src) {
                    self.call(name, recv, n, scope);
                }
            }
            (Lang::Rust, "macro_invocation") => {
                if let Some(m) = field(n, &["macro"]).and_then(|m| leaf_name(m, src)) {
                    self.call(m, None, n, scope);
                }
            }
            // Macro arguments are unparsed token trees: `f(x)`, `a.f(x)` and `T::f(x)` inside
            // `assert_eq!(…)`, `println!(…)` are calls too.
            (Lang::Rust, "token_tree") => self.token_tree_calls(n, scope),
            (Lang::Java, "method_invocation") => {
                if let Some(name) = field(n, &["name"]).map(|x| text(x, src).to_string()) {
                    let recv = field(n, &["object"]).map(|o| text(o, src).to_string());
                    self.call(name, recv, n, scope);
                }
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "new_expression")
            | (Lang::Java | Lang::CSharp | Lang::Php, "object_creation_expression")
            | (Lang::Cpp, "new_expression")
            | (Lang::Scala, "instance_expression") => {
                if let Some(t) = self.constructed_type(n) {
                    self.call(t, None, n, scope);
                }
            }
            (Lang::Php, "member_call_expression" | "nullsafe_member_call_expression" | "scoped_call_expression") => {
                if let Some(name) = field(n, &["name"]).map(|x| text(x, src).to_string()) {
                    let recv = field(n, &["object", "scope"]).map(|o| text(o, src).to_string());
                    self.call(name, recv, n, scope);
                }
            }
            (Lang::Ruby, "identifier") => self.ruby_bare_name(n, scope),
            // `with make_bar() as bar:` — what the call returns (a context manager's usual self).
            (Lang::Python, "as_pattern") => {
                let (Some(value), Some(target)) = (n.named_child(0), field(n, &["alias"]).or_else(|| last_named(n)))
                else {
                    return true;
                };
                let target =
                    if target.kind() == "as_pattern_target" { target.named_child(0).unwrap_or(target) } else { target };
                if target.kind() == "identifier" {
                    if let Some(f) = self.called_function(value) {
                        self.type_hint(target, format!("={f}"), scope);
                    } else if let Some(t) = self.constructed_type(value) {
                        self.type_hint(target, t, scope);
                    }
                }
            }
            (Lang::Ruby, "call") => {
                let Some(method) = field(n, &["method"]).map(|m| text(m, src).to_string()) else { return true };
                let recv = field(n, &["receiver"]).map(|r| text(r, src).to_string());
                if recv.is_none() && matches!(method.as_str(), "require" | "require_relative" | "load") {
                    if let Some(arg) = field(n, &["arguments"]).and_then(|a| a.named_child(0)) {
                        self.import(text(arg, src).to_string(), Vec::new(), n);
                    }
                    return true;
                }
                if recv.is_none() && matches!(method.as_str(), "include" | "extend" | "prepend") {
                    // Mixins: the enclosing class implements the module.
                    if let (Some(s), Some(arg)) = (scope, field(n, &["arguments"]).and_then(|a| a.named_child(0))) {
                        self.base(s, arg, Relation::Implements);
                    }
                    return true;
                }
                self.call(method, recv, n, scope);
            }
            (Lang::ObjC, "message_expression") => {
                let recv = field(n, &["receiver"]).map(|r| text(r, src).to_string());
                let mut c = n.walk();
                let parts: Vec<String> =
                    n.children_by_field_name("method", &mut c).map(|m| text(m, src).to_string()).collect();
                if !parts.is_empty() {
                    let selector = if n.child_by_field_name("arguments").is_some()
                        || parts.len() > 1
                        || text(n, src).contains(':')
                    {
                        parts.iter().map(|p| format!("{p}:")).collect::<String>()
                    } else {
                        parts.concat()
                    };
                    self.call(selector, recv, n, scope);
                }
            }
            (Lang::Lua, "function_call") => {
                let Some(callee) = field(n, &["name"]) else { return true };
                if let Some((name, recv)) = callee_parts(callee, src) {
                    if name == "require"
                        && recv.is_none()
                        && let Some(arg) = field(n, &["arguments"]).and_then(|a| a.named_child(0))
                    {
                        self.import(text(arg, src).to_string(), Vec::new(), n);
                    }
                    self.call(name, recv, n, scope);
                }
            }
            (Lang::Bash, "command") => {
                let Some(name) = field(n, &["name"]).map(|x| text(x, src).to_string()) else { return true };
                if matches!(name.as_str(), "source" | ".") {
                    if let Some(arg) = field(n, &["argument"]) {
                        self.import(text(arg, src).to_string(), Vec::new(), n);
                    }
                    return true;
                }
                self.call(name, None, n, scope);
            }
            // ---- imports
            (Lang::Python, "import_statement") => {
                let mut c = n.walk();
                for m in n.children_by_field_name("name", &mut c) {
                    let module = field(m, &["name"]).unwrap_or(m);
                    self.import(text(module, src).to_string(), Vec::new(), n);
                }
            }
            (Lang::Python, "import_from_statement") => {
                let module = field(n, &["module_name"]).map(|m| text(m, src).to_string()).unwrap_or_default();
                let mut c = n.walk();
                let mut names: Vec<String> = Vec::new();
                for x in n.children_by_field_name("name", &mut c) {
                    let name = text(field(x, &["name"]).unwrap_or(x), src).trim().to_string();
                    // `from m import a as b`: `b` stands for `a` (written `b=a`).
                    if let Some(alias) = field(x, &["alias"]).map(|a| text(a, src).trim().to_string())
                        && alias != name
                    {
                        names.push(format!("{alias}={name}"));
                    }
                    names.push(name);
                }
                self.import(module, names, n);
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "import_statement" | "export_statement") => {
                let Some(source) = field(n, &["source"]) else { return true };
                let mut names = Vec::new();
                collect_idents(n, src, &mut names, source.id());
                // Renames (`{ a as b }`) also as `b=a`, so that `b` is followed to `a`.
                let mut stack = vec![n];
                while let Some(x) = stack.pop() {
                    if matches!(x.kind(), "import_specifier" | "export_specifier")
                        && let (Some(name), Some(alias)) = (field(x, &["name"]), field(x, &["alias"]))
                    {
                        names.push(format!("{}={}", text(alias, src).trim(), text(name, src).trim()));
                        continue;
                    }
                    let mut c = x.walk();
                    stack.extend(x.named_children(&mut c).filter(|ch| ch.id() != source.id()));
                }
                if k == "export_statement" {
                    // Re-exported names are marked `+`: what importers of this file get.
                    for name in &mut names {
                        name.insert(0, '+');
                    }
                    // `export * from './x'`: everything `x` exports.
                    if names.is_empty() && text(n, src).contains('*') {
                        names.push("*".to_string());
                    }
                }
                self.import(text(source, src).to_string(), names, n);
            }
            (Lang::Go, "import_spec") => {
                if let Some(p) = field(n, &["path"]) {
                    self.import(text(p, src).to_string(), Vec::new(), n);
                }
            }
            (Lang::Rust, "use_declaration") => {
                if let Some(arg) = field(n, &["argument"]) {
                    let (module, names) = rust_use(arg, src);
                    self.import(module, names, n);
                }
            }
            (Lang::Java, "import_declaration") | (Lang::Kotlin, "import") | (Lang::Swift, "import_declaration") => {
                let t = text(n, src);
                let body =
                    t.trim_start_matches("import").trim_start_matches(" static").trim().trim_end_matches(';').trim();
                let (module, name) = body.rsplit_once('.').unwrap_or(("", body));
                if module.is_empty() {
                    self.import(body.to_string(), Vec::new(), n);
                } else {
                    self.import(module.to_string(), vec![name.to_string()], n);
                }
            }
            (Lang::Scala, "import_declaration") => {
                let t = text(n, src).trim_start_matches("import").trim().to_string();
                match t.split_once('{') {
                    Some((m, rest)) => {
                        let names = rest
                            .trim_end_matches('}')
                            .split(',')
                            .map(|s| s.trim().to_string())
                            .filter(|s| !s.is_empty())
                            .collect();
                        self.import(m.trim_end_matches('.').to_string(), names, n);
                    }
                    None => {
                        let (m, name) = t.rsplit_once('.').unwrap_or(("", &t));
                        self.import(m.to_string(), vec![name.to_string()], n);
                    }
                }
            }
            (Lang::CSharp, "using_directive") => {
                if let Some(m) = n.named_child((n.named_child_count() as u32).saturating_sub(1)) {
                    self.import(text(m, src).to_string(), Vec::new(), n);
                }
            }
            (Lang::C | Lang::Cpp | Lang::ObjC, "preproc_include") => {
                if let Some(p) = field(n, &["path"]) {
                    self.import(text(p, src).to_string(), Vec::new(), n);
                }
            }
            (Lang::Php, "namespace_use_clause") => {
                let t = text(n, src).to_string();
                let (module, name) = t.rsplit_once('\\').unwrap_or(("", &t));
                self.import(
                    module.replace('\\', "."),
                    vec![name.split_whitespace().next().unwrap_or(name).to_string()],
                    n,
                );
            }
            (
                Lang::Php,
                "require_expression" | "require_once_expression" | "include_expression" | "include_once_expression",
            ) => {
                if let Some(arg) = n.named_child(0) {
                    self.import(text(arg, src).to_string(), Vec::new(), n);
                }
            }
            // ---- receiver type hints
            (
                _,
                "assignment"
                | "assignment_expression"
                | "variable_declarator"
                | "short_var_declaration"
                | "let_declaration"
                | "property_declaration"
                | "val_definition"
                | "var_definition"
                | "local_variable_declaration"
                | "variable_declaration"
                | "var_spec"
                | "declaration"
                | "init_declarator"
                | "field_declaration",
            ) => self.hint(n, scope),
            // A class field (`private manager = new Manager()`, `manager: Manager`): what
            // `this.manager` is in every method.
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "public_field_definition" | "field_definition") => {
                let Some(name) = field(n, &["name", "property"]) else { return true };
                let declared = field(n, &["type"])
                    .and_then(|t| if t.kind() == "type_annotation" { t.named_child(0) } else { Some(t) })
                    .and_then(|t| leaf_name(t, src))
                    .filter(|t| t.chars().next().is_some_and(char::is_uppercase));
                let ty = declared.or_else(|| field(n, &["value"]).and_then(|v| self.constructed_type(v)));
                let name = text(name, src).trim().trim_start_matches('#');
                if let Some(ty) = ty
                    && !name.is_empty()
                {
                    self.facts.types.push(TypeHint { scope: scope_i(scope), var: format!("self.{name}"), ty });
                }
            }
            // Typed parameters: the function's own receivers of a known type.
            (
                _,
                "typed_parameter"
                | "typed_default_parameter"
                | "required_parameter"
                | "optional_parameter"
                | "formal_parameter"
                | "parameter_declaration"
                | "simple_parameter"
                | "property_promotion_parameter",
            )
            | (Lang::CSharp | Lang::Rust | Lang::Kotlin | Lang::Swift | Lang::Scala, "parameter") => {
                self.param_hint(n, scope)
            }
            _ => return false,
        }
        true
    }
}

/// Type names that wrap or erase the type a value has (`Optional[Cart]` is not a `Optional`
/// receiver): a hint naming one would hide the real type.
const WRAPPER_TYPES: &[&str] = &[
    "Optional",
    "Union",
    "List",
    "Dict",
    "Set",
    "Tuple",
    "Sequence",
    "Iterable",
    "Iterator",
    "Mapping",
    "Type",
    "Callable",
    "Any",
    "Awaitable",
    "Generator",
    "Object",
    "Box",
    "Rc",
    "Arc",
    "Option",
    "Vec",
    "Result",
    "Ref",
    "RefMut",
    "Mutex",
    "RwLock",
    "Cell",
    "RefCell",
    "Pin",
];

impl Extractor<'_> {
    /// A function's declared return type, when it names a class-like type.
    fn return_type(&mut self, index: usize, core: Node) {
        let src = self.src;
        let t = field(core, &["return_type", "result", "returns"]).or_else(|| {
            (matches!(self.lang, Lang::Java | Lang::CSharp) && core.kind() == "method_declaration")
                .then(|| field(core, &["type"]))
                .flatten()
        });
        let Some(mut t) = t else { return };
        // Go's `(*T, error)`: the first result is the value.
        if self.lang == Lang::Go && t.kind() == "parameter_list" {
            match t.named_child(0).and_then(|p| field(p, &["type"])) {
                Some(first) => t = first,
                None => return,
            }
        }
        for _ in 0..3 {
            if matches!(
                t.kind(),
                "type_annotation" | "type" | "pointer_type" | "reference_type" | "nullable_type" | "return_type"
            ) {
                match t.named_child(0) {
                    Some(c) => t = c,
                    None => return,
                }
            }
        }
        let Some(ty) = leaf_name(t, src) else { return };
        if ty.chars().next().is_some_and(char::is_uppercase) && !WRAPPER_TYPES.contains(&ty.as_str()) && ty != "Self" {
            self.facts.types.push(TypeHint { scope: index as i32, var: RETURNS.into(), ty });
        }
    }

    /// `f` of a call `f(…)` / `mod.f(…)` whose result a variable holds (lower-case: a
    /// constructor call is typed by its class already).
    fn called_function(&self, value: Node) -> Option<String> {
        if !matches!(
            value.kind(),
            "call" | "call_expression" | "invocation_expression" | "method_invocation" | "await" | "await_expression"
        ) {
            return None;
        }
        if matches!(value.kind(), "await" | "await_expression") {
            return self.called_function(value.named_child(0)?);
        }
        let callee = field(value, &["function", "name"]).or_else(|| value.named_child(0))?;
        let (name, _) = callee_parts(callee, self.src)?;
        // Go has no constructors: `NewPoint(2)` is a function whose result type counts.
        (self.lang == Lang::Go || name.chars().next().is_some_and(|c| c.is_lowercase() || c == '_')).then_some(name)
    }

    /// A bare lower-case name in Ruby is a local variable once assigned or bound as a
    /// parameter, and otherwise a method call on `self` (`read_data`, `payload["x"]`).
    fn ruby_bare_name(&mut self, n: Node, scope: Option<usize>) {
        let Some(p) = n.parent() else { return };
        let name = text(n, self.src);
        if !name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
            return;
        }
        let key = (scope_i(scope), name.to_string());
        let pk = p.kind();
        let is_field = |f: &'static str| field(p, &[f]).is_some_and(|x| x.id() == n.id());
        let binds = pk.contains("parameter")
            || matches!(
                pk,
                "left_assignment_list" | "destructured_left_assignment" | "rest_assignment" | "exception_variable"
            )
            || (matches!(pk, "assignment" | "operator_assignment") && is_field("left"))
            || (pk == "for" && is_field("pattern"));
        if binds {
            self.ruby_locals.insert(key);
            return;
        }
        // A definition's own name, a call's method name, aliases: not calls of their own.
        if matches!(pk, "method" | "singleton_method" | "alias" | "undef" | "scope_resolution")
            || (pk == "call" && is_field("method"))
        {
            return;
        }
        if !self.ruby_locals.contains(&key) {
            self.call(key.1, None, n, scope);
        }
    }

    /// `def f(cart: Cart)`, `void f(Cart cart)`, `f(cart: Cart)`, `func f(cart *Cart)`: the
    /// parameter's type, for calls on it inside the function.
    fn param_hint(&mut self, n: Node, scope: Option<usize>) {
        let src = self.src;
        let Some(mut t) = field(n, &["type"]) else { return };
        if t.kind() == "type_annotation" || t.kind() == "type" {
            match t.named_child(0) {
                Some(c) => t = c,
                None => return,
            }
        }
        // Go declares every parameter's type, exported or not, qualified by its package
        // (`s *shards`, `ctx context.Context`): kept as written, so that a foreign package's
        // type is known to be foreign.
        if self.lang == Lang::Go {
            let ty = text(t, src).trim().trim_start_matches('*').to_string();
            if ty.is_empty() || !ty.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                return;
            }
            let mut c = n.walk();
            let names: Vec<Node> = n.children_by_field_name("name", &mut c).collect();
            for var in names {
                self.type_hint(var, ty.clone(), scope);
            }
            return;
        }
        let Some(ty) = leaf_name(t, src) else { return };
        if !ty.chars().next().is_some_and(char::is_uppercase) || WRAPPER_TYPES.contains(&ty.as_str()) {
            return;
        }
        let name = field(n, &["name", "pattern"]).or_else(|| {
            let mut c = n.walk();

            n.named_children(&mut c).find(|x| matches!(x.kind(), "identifier" | "simple_identifier" | "variable_name"))
        });
        if let Some(var) = name.filter(|v| matches!(v.kind(), "identifier" | "simple_identifier" | "variable_name")) {
            self.type_hint(var, ty, scope);
        }
    }

    /// Calls written inside a Rust macro's token tree (identifier followed by a parenthesised
    /// tree; `.` or `::` before it makes it a member or path call).
    fn token_tree_calls(&mut self, n: Node, scope: Option<usize>) {
        let src = self.src;
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        for i in 0..kids.len() {
            let k = kids[i];
            if k.kind() != "identifier" {
                continue;
            }
            let Some(next) = kids.get(i + 1) else { continue };
            if next.kind() != "token_tree" || !text(*next, src).starts_with('(') {
                continue;
            }
            let name = text(k, src).to_string();
            let sep = i.checked_sub(1).map(|j| text(kids[j], src));
            let recv = match sep {
                Some(".") | Some("::") => i.checked_sub(2).map(|j| text(kids[j], src).to_string()),
                _ => None,
            };
            // `self.f(…)` / `x.f(…)` / `Type::f(…)` / `f(…)`
            self.call(name, recv.filter(|r| !r.is_empty()), k, scope);
        }
    }

    fn hint(&mut self, n: Node, scope: Option<usize>) {
        let src = self.src;
        // A Go struct field keeps its package-qualified type (`atomic.Int64`, `*config.Config`):
        // a method called on it belongs to that package when the package is not here.
        if self.lang == Lang::Go && n.kind() == "field_declaration" {
            let Some(t) = field(n, &["type"]) else { return };
            let ty = text(t, src).trim().trim_start_matches('*').to_string();
            if ty.is_empty() || !ty.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                return;
            }
            let mut c = n.walk();
            let names: Vec<String> =
                n.children_by_field_name("name", &mut c).map(|f| text(f, src).trim().to_string()).collect();
            for name in names {
                self.facts.types.push(TypeHint { scope: scope_i(scope), var: format!("self.{name}"), ty: ty.clone() });
            }
            return;
        }
        // Explicit type: `T x`, `x: T`, `var x T`.
        let ty = field(n, &["type"]).and_then(|t| {
            let t = if t.kind() == "type_annotation" { t.named_child(0)? } else { t };
            leaf_name(t, src)
        });
        let var = field(n, &["left", "name", "pattern", "declarator"]).or_else(|| n.named_child(0));
        let value = field(n, &["right", "value"]);
        let Some(mut var) = var else { return };
        let value = value.map(|v| if v.kind() == "expression_list" { v.named_child(0).unwrap_or(v) } else { v });
        // A field of the enclosing class (`self.x = Foo()`, `this.x = new Foo()`, `@x = Foo.new`).
        if field_name(text(var, src)).is_some() {
            let inferred = ty
                .clone()
                .filter(|t| t.chars().next().is_some_and(char::is_uppercase))
                .or_else(|| value.and_then(|v| self.constructed_type(v)));
            if let Some(t) = inferred {
                self.type_hint(var, t, scope);
            }
            return;
        }
        // `let p = …` / declarators wrap the identifier.
        for _ in 0..3 {
            if matches!(var.kind(), "identifier" | "simple_identifier" | "variable_name") {
                break;
            }
            match field(var, &["name", "declarator", "pattern", "left"]).or_else(|| var.named_child(0)) {
                Some(v) => var = v,
                None => break,
            }
        }
        if var.kind() == "expression_list" {
            var = match var.named_child(0) {
                Some(v) => v,
                None => return,
            };
        }
        let inferred = ty
            .clone()
            .filter(|t| t.chars().next().is_some_and(char::is_uppercase))
            .or_else(|| value.and_then(|v| self.constructed_type(v)));
        match inferred {
            Some(t) => self.type_hint(var, t, scope),
            None if ty.is_none() => {
                if let Some(f) = value.and_then(|v| self.called_function(v)) {
                    self.type_hint(var, format!("={f}"), scope);
                }
            }
            None => {}
        }
        // Java/C# local declarations: `T x = …;` has the declarator as a child.
        if matches!(
            n.kind(),
            "local_variable_declaration" | "variable_declaration" | "declaration" | "field_declaration"
        ) && let Some(t) = ty
        {
            let mut c = n.walk();
            let decls: Vec<Node> = n.named_children(&mut c).filter(|d| d.kind().ends_with("declarator")).collect();
            for d in decls {
                if let Some(name) = field(d, &["name", "declarator"]).or_else(|| d.named_child(0))
                    && matches!(name.kind(), "identifier")
                {
                    self.type_hint(name, t.clone(), scope);
                    // A field is also `this.name` from any method of the class.
                    if n.kind() == "field_declaration" {
                        let v = format!("self.{}", text(name, self.src).trim());
                        self.facts.types.push(TypeHint { scope: scope_i(scope), var: v, ty: t.clone() });
                    }
                }
            }
        }
    }
}

/// Whether `n` is a declaration of the file itself: only declaration wrappers lie between it
/// and the root.
fn at_top_level(n: Node) -> bool {
    let mut cur = n;
    for _ in 0..5 {
        let Some(p) = cur.parent() else { return true };
        match p.kind() {
            "program" | "module" | "source_file" | "compilation_unit" | "translation_unit" | "chunk" => return true,
            "lexical_declaration"
            | "variable_declaration"
            | "export_statement"
            | "expression_statement"
            | "var_declaration"
            | "var_spec_list"
            | "const_declaration"
            | "ambient_declaration" => cur = p,
            _ => return false,
        }
    }
    false
}

/// `A.B` of a Kotlin user_type `A.B<T>` (under `n`, a few levels deep) with more than one part.
fn kotlin_dotted_type(n: Node, src: &[u8]) -> Option<String> {
    let mut cur = n;
    for _ in 0..4 {
        if cur.kind() == "user_type" {
            let mut c = cur.walk();
            // Grammar versions name the parts `identifier`s or `simple_user_type`s.
            let parts: Vec<String> = cur
                .named_children(&mut c)
                .filter_map(|p| match p.kind() {
                    "identifier" | "type_identifier" | "simple_identifier" => Some(text(p, src).trim().to_string()),
                    "simple_user_type" => p.named_child(0).map(|id| text(id, src).trim().to_string()),
                    _ => None,
                })
                .collect();
            return (parts.len() > 1).then(|| parts.join("."));
        }
        cur = cur.named_child(0)?;
    }
    None
}

/// `x` of a field written `self.x`, `this.x`, `$this->x` or `@x`.
fn field_name(s: &str) -> Option<&str> {
    let s = s.trim();
    let f = s
        .strip_prefix("self.")
        .or_else(|| s.strip_prefix("this."))
        .or_else(|| s.strip_prefix("$this->"))
        .or_else(|| s.strip_prefix('@'))?;
    (!f.is_empty() && f.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(f)
}

/// Test attributes and annotations in the head of a definition (its decorators included).
fn has_test_marker(head: &[u8]) -> bool {
    let head = String::from_utf8_lossy(head);
    let head = match head.find('{') {
        Some(i) => &head[..i],
        None => &head[..],
    };
    [
        "#[test]",
        "#[tokio::test",
        "#[rstest",
        "#[cfg(test)]",
        "@Test",
        "@ParameterizedTest",
        "[Test]",
        "[TestMethod]",
        "[Fact]",
        "[Theory]",
        "@pytest",
    ]
    .iter()
    .any(|m| head.contains(m))
}

fn type_list(n: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        if ch.kind() == "type_list" {
            out.extend(type_list(ch));
        } else {
            out.push(ch);
        }
    }
    out
}

fn collect_idents(n: Node, src: &[u8], out: &mut Vec<String>, skip: usize) {
    if n.id() == skip {
        return;
    }
    if matches!(n.kind(), "identifier" | "type_identifier" | "property_identifier") {
        out.push(text(n, src).to_string());
        return;
    }
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        collect_idents(ch, src, out, skip);
    }
}

/// `use a::b::{C, d::E}` → ("a.b", [C, E]); `use a::b::C` → ("a.b", [C]).
fn rust_use(arg: Node, src: &[u8]) -> (String, Vec<String>) {
    match arg.kind() {
        "scoped_use_list" => {
            let module = field(arg, &["path"]).map(|p| clean_name(text(p, src))).unwrap_or_default();
            let mut names = Vec::new();
            if let Some(list) = field(arg, &["list"]) {
                let mut c = list.walk();
                for item in list.named_children(&mut c) {
                    names.push(clean_name(text(item, src)).rsplit('.').next().unwrap_or("").to_string());
                }
            }
            (module, names)
        }
        "use_as_clause" => rust_use(field(arg, &["path"]).unwrap_or(arg), src),
        _ => {
            let full = clean_name(text(arg, src));
            match full.rsplit_once('.') {
                Some((m, n)) => (m.to_string(), vec![n.to_string()]),
                None => (full, Vec::new()),
            }
        }
    }
}
