//! Resolution over a view: a symbol table built from every file's facts turns raw calls and
//! bases into edges. A candidate in the same file wins (`extracted`); otherwise candidates are
//! narrowed by the receiver's type (`self`/`this`, a type name, or a variable whose type the
//! file declares), by what the caller's file imports, then by package/directory; one left is
//! `resolved`, several for a direct call are `ambiguous` (an edge to each), several for a
//! member call are dropped, none is an external node. Names are case-sensitive. In Python and
//! JavaScript/TypeScript a function defined twice in one scope is rebound: a call decided by
//! module, receiver type or name reaches the last definition (the implementation after
//! overload stubs).

use super::files::FileFacts;
use super::model::{CodeGraph, Confidence, DefNode, Edge, FileNode, Node, Rel, is_test_path};
use crate::chunk::defs::{callable_kind, type_kind};
use crate::chunk::facts::{Facts, Relation};
use crate::lang::Lang;
use std::collections::{HashMap, HashSet};

/// At most this many edges for one ambiguous direct call.
const MAX_AMBIGUOUS: usize = 8;

/// Methods every language's built-in strings, collections, maps, promises and streams have: a
/// call of one on a receiver of unknown type is far more often the built-in (`kwargs.get`,
/// `items.append`, `promise.then`) than a same-named method of the project, so it is an
/// external call, never an edge to the project's method.
const BUILTIN_METHODS: &[&str] = &[
    "get",
    "set",
    "add",
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "push",
    "update",
    "keys",
    "values",
    "items",
    "copy",
    "clear",
    "join",
    "split",
    "strip",
    "replace",
    "format",
    "startswith",
    "endswith",
    "lower",
    "upper",
    "encode",
    "decode",
    "read",
    "write",
    "close",
    "open",
    "map",
    "filter",
    "forEach",
    "reduce",
    "find",
    "includes",
    "indexOf",
    "slice",
    "splice",
    "concat",
    "then",
    "catch",
    "finally",
    "toString",
    "valueOf",
    "equals",
    "hashCode",
    "size",
    "length",
    "isEmpty",
    "contains",
    "put",
    "containsKey",
    "iterator",
    "next",
    "hasNext",
    "stream",
    "apply",
    "call",
    "bind",
    "emit",
    "on",
    "has",
    "delete",
    "sort",
    "reverse",
    "count",
    "index",
    "match",
    "test",
    "exec",
    "toJSON",
    "assign",
    "trim",
    "substring",
    "charAt",
    "getOrDefault",
    "putAll",
    "addAll",
    "unwrap",
    "clone",
    "len",
    "iter",
    "collect",
    "into",
    "to_string",
    "as_str",
    "is_empty",
    "each",
    "first",
    "last",
    "sum",
    "min",
    "max",
    "with",
    "flush",
    "seek",
    "send",
    "recv",
];

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn strip_ext(path: &str) -> &str {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    match path[name_start..].rfind('.') {
        Some(i) if i > 0 => &path[..name_start + i],
        _ => path,
    }
}

/// Joins a relative module path onto a directory (`./a/../b`).
fn join_rel(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = if dir.is_empty() { Vec::new() } else { dir.split('/').collect() };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

struct PathIndex {
    /// Path without extension → files ("a/b/c" → a/b/c.py); package entry files
    /// (`__init__`, `index`, `mod`, `init`) also under their directory.
    stems: HashMap<String, Vec<u32>>,
    /// Directory → files.
    dirs: HashMap<String, Vec<u32>>,
    /// Every `/`-suffix of every stem ("c", "b/c", "a/b/c") → files; likewise for directories.
    stem_suffixes: HashMap<String, Vec<u32>>,
    dir_suffixes: HashMap<String, Vec<u32>>,
    /// Each file's language family: an import never means a file of another kind.
    families: Vec<u8>,
    /// Go test files (`_test.go`): never part of an imported package.
    go_tests: HashSet<u32>,
    /// Each file's path.
    paths: Vec<String>,
    /// The view's Go modules (path, go.mod's directory), longest path first.
    go_modules: Vec<(String, String)>,
    ts_paths: Vec<(String, Vec<String>)>,
    base_urls: Vec<String>,
    packages: Vec<(String, String)>,
}

fn add_suffixes(map: &mut HashMap<String, Vec<u32>>, path: &str, files: &[u32]) {
    let mut rest = path;
    loop {
        map.entry(rest.to_string()).or_default().extend_from_slice(files);
        match rest.find('/') {
            Some(i) => rest = &rest[i + 1..],
            None => break,
        }
    }
}

impl PathIndex {
    fn new(files: &[FileNode]) -> PathIndex {
        let mut stems: HashMap<String, Vec<u32>> = HashMap::new();
        let mut dirs: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, f) in files.iter().enumerate() {
            let stem = strip_ext(&f.path).to_string();
            let name = stem.rsplit('/').next().unwrap_or("");
            if matches!(name, "__init__" | "index" | "mod" | "init") {
                stems.entry(dir_of(&f.path).to_string()).or_default().push(i as u32);
            }
            stems.entry(stem).or_default().push(i as u32);
            dirs.entry(dir_of(&f.path).to_string()).or_default().push(i as u32);
        }
        let mut stem_suffixes = HashMap::new();
        for (stem, fs) in &stems {
            add_suffixes(&mut stem_suffixes, stem, fs);
        }
        let mut dir_suffixes = HashMap::new();
        for (d, fs) in &dirs {
            if !d.is_empty() {
                add_suffixes(&mut dir_suffixes, d, fs);
            }
        }
        for v in stem_suffixes.values_mut().chain(dir_suffixes.values_mut()) {
            v.sort_unstable();
            v.dedup();
        }
        let go_tests = files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.lang == Lang::Go && f.path.ends_with("_test.go"))
            .map(|(i, _)| i as u32)
            .collect();
        PathIndex {
            stems,
            dirs,
            stem_suffixes,
            dir_suffixes,
            families: files.iter().map(|f| family(f.lang)).collect(),
            go_tests,
            paths: files.iter().map(|f| f.path.clone()).collect(),
            go_modules: Vec::new(),
            ts_paths: Vec::new(),
            base_urls: Vec::new(),
            packages: Vec::new(),
        }
    }

    /// Files an import of `module` from `from` can mean: files of its own language family
    /// only (a `config` import is never `config.yml`).
    fn resolve(&self, from: &FileNode, module: &str) -> Vec<u32> {
        let fam = family(from.lang);
        let mut found = self.resolve_any(from, module);
        found.retain(|&f| self.families[f as usize] == fam);
        // A JVM package path starts at a source root (`src/main/java/`, `kotlin/`): `okio.Buffer`
        // is not the `okhttp3.okio` package that happens to end the same way.
        if fam == family(Lang::Java) {
            let segs: Vec<&str> = module.trim().split('.').filter(|s| !s.is_empty() && *s != "*").collect();
            found.retain(|&f| jvm_rooted(&self.paths[f as usize], &segs));
        }
        // `#include "jv.h"` names a file, extension included: not jv.c beside it.
        if fam == family(Lang::C) {
            let name = module.trim().trim_matches(['"', '<', '>']).rsplit('/').next().unwrap_or("");
            if name.contains('.') {
                found.retain(|&f| self.paths[f as usize].rsplit('/').next() == Some(name));
            }
        }
        found
    }

    /// The Go files (tests left out) directly in the directory `dir`.
    fn go_package(&self, dir: &str) -> Vec<u32> {
        let Some(v) = self.dirs.get(dir) else { return Vec::new() };
        v.iter()
            .copied()
            .filter(|&f| self.families[f as usize] == family(Lang::Go) && !self.go_tests.contains(&f))
            .collect()
    }

    /// Go, the way the go tool resolves: an import path names a package directory, never a
    /// file; a path whose first element has no dot is the standard library; a path under one
    /// of the view's module paths is the directory after that path; anything else is another
    /// module's (external), whatever local directory shares its last elements.
    fn resolve_go(&self, module: &str) -> Vec<u32> {
        let path = module.trim_matches('"');
        if path.split('/').next().is_none_or(|s| !s.contains('.')) {
            return Vec::new();
        }
        for (m, dir) in &self.go_modules {
            let Some(rest) = path.strip_prefix(m.as_str()) else { continue };
            let tail = match rest.strip_prefix('/') {
                Some(t) => t,
                None if rest.is_empty() => "",
                None => continue,
            };
            let at = [dir.as_str(), tail].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join("/");
            return self.go_package(&at);
        }
        Vec::new()
    }

    /// The module paths of the view's Go code, found from its imports: a module's own
    /// packages are imported as `<module path>/<directory>`, so the prefix after which many
    /// distinct imported paths name directories here is a module path. (go.mod says it too,
    /// but the graph is built from facts, not from files.)
    fn infer_go_modules(&mut self, imports: &[&str]) {
        let mut tails: HashMap<&str, HashSet<&str>> = HashMap::new();
        for &path in imports {
            let path = path.trim_matches('"');
            if path.split('/').next().is_none_or(|s| !s.contains('.')) {
                continue;
            }
            for (i, _) in path.match_indices('/') {
                let (prefix, tail) = (&path[..i], &path[i + 1..]);
                if !self.go_package(tail).is_empty() {
                    tails.entry(prefix).or_default().insert(tail);
                }
            }
        }
        let top = tails.values().map(HashSet::len).max().unwrap_or(0);
        let mut modules: Vec<(usize, String)> =
            tails.into_iter().filter(|(_, t)| t.len() * 3 >= top).map(|(p, t)| (t.len(), p.to_string())).collect();
        // Longest prefix first: a nested module wins over the one that contains it.
        modules.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(b.0.cmp(&a.0)));
        self.go_modules = modules.into_iter().map(|(_, p)| (p, String::new())).collect();
    }

    fn resolve_any(&self, from: &FileNode, module: &str) -> Vec<u32> {
        if from.lang == Lang::Go {
            return self.resolve_go(module);
        }
        // A Swift import names a module (a build target), never a file.
        if from.lang == Lang::Swift {
            return Vec::new();
        }
        let dir = dir_of(&from.path);
        let m = module.trim();
        if m.is_empty() {
            return Vec::new();
        }
        // Relative imports first.
        if m.starts_with("./") || m.starts_with("../") || m.starts_with('.') && from.lang == Lang::Python {
            let rel = if from.lang == Lang::Python {
                let dots = m.chars().take_while(|&c| c == '.').count();
                let mut d = dir.to_string();
                for _ in 1..dots {
                    d = dir_of(&d).to_string();
                }
                join_rel(&d, &m[dots..].replace('.', "/"))
            } else {
                join_rel(dir, m)
            };
            return self.lookup_exact(&rel);
        }
        if family(from.lang) == family(Lang::JavaScript) && !m.starts_with('/') {
            return self.resolve_bare_js(m);
        }
        let slashed = match from.lang {
            Lang::C | Lang::Cpp | Lang::ObjC | Lang::Bash | Lang::Ruby => m.to_string(),
            _ => m.replace("::", "/").replace(['.', '\\'], "/"),
        };
        let slashed = slashed.trim_start_matches("crate/").trim_start_matches('/');
        // Same directory (C includes, Ruby require_relative, Bash source, Lua).
        let local = self.lookup_exact(&join_rel(dir, slashed));
        if !local.is_empty() {
            return local;
        }
        // Longest suffix of the module path that names a file or a package directory.
        let segs: Vec<&str> = slashed.split('/').filter(|s| !s.is_empty()).collect();
        // The platform's own packages (`java.util.logging`, `kotlin.io`) are never a local
        // package that happens to end the same way: only the whole path may match.
        let platform =
            family(from.lang) == family(Lang::Java) && segs.first().is_some_and(|s| JVM_PLATFORM.contains(s));
        // Rust's standard crates are never the view's files.
        if from.lang == Lang::Rust && segs.first().is_some_and(|s| matches!(*s, "std" | "core" | "alloc")) {
            return Vec::new();
        }
        for start in 0..(if platform { 1 } else { segs.len() }) {
            let tail = segs[start..].join("/");
            let found = self.lookup_suffix(&tail);
            if !found.is_empty() {
                return found;
            }
            if start + 2 > segs.len() {
                break;
            }
        }
        Vec::new()
    }

    /// A bare JavaScript/TypeScript specifier, the way the TypeScript resolver takes it:
    /// tsconfig `paths`, then a package of this repository by its package.json name, then
    /// `baseUrl`; anything else is an installed package (external), never a local file that
    /// happens to share its name (`@babel/parser` is not `src/parser.ts`).
    fn resolve_bare_js(&self, spec: &str) -> Vec<u32> {
        // The most specific pattern first: an exact one, then the longest prefix before `*`.
        let mut patterns: Vec<&(String, Vec<String>)> = self.ts_paths.iter().collect();
        patterns.sort_by_key(|(p, _)| {
            std::cmp::Reverse(if p.contains('*') { p.find('*').unwrap_or(0) } else { usize::MAX })
        });
        for (pattern, targets) in patterns {
            let star = match pattern.split_once('*') {
                None if pattern == spec => Some(""),
                None => None,
                Some((pre, post)) => spec.strip_prefix(pre).and_then(|r| r.strip_suffix(post)),
            };
            let Some(star) = star else { continue };
            for t in targets {
                let found = self.lookup_module_path(&t.replace('*', star));
                if !found.is_empty() {
                    return found;
                }
            }
        }
        for (name, dir) in &self.packages {
            let rest = if spec == name {
                Some("")
            } else {
                spec.strip_prefix(name.as_str()).and_then(|r| r.strip_prefix('/'))
            };
            let Some(rest) = rest else { continue };
            let at = [dir.as_str(), rest].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join("/");
            let candidates = if rest.is_empty() {
                vec![format!("{at}/src/index"), format!("{at}/index"), format!("{at}/src")]
            } else {
                vec![at.clone(), format!("{}/src/{rest}", dir)]
            };
            for c in candidates {
                let found = self.lookup_module_path(c.trim_start_matches('/'));
                if !found.is_empty() {
                    return found;
                }
            }
        }
        for base in &self.base_urls {
            let found = self.lookup_module_path(&join_dir(base, spec));
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }

    /// A module path without extension, a file with one, or a directory with an index file.
    fn lookup_module_path(&self, path: &str) -> Vec<u32> {
        let path = path.trim_start_matches("./").trim_end_matches('/');
        let mut found = self.lookup_exact(path);
        // `packages/x/src` (a directory) means its index file, not every file in it.
        if found.len() > 1
            && let Some(v) = self.stems.get(&format!("{path}/index"))
        {
            found = v.clone();
        }
        found
    }

    fn lookup_exact(&self, stem: &str) -> Vec<u32> {
        let s = strip_ext(stem);
        if let Some(v) = self.stems.get(s) {
            return v.clone();
        }
        if let Some(v) = self.stems.get(stem) {
            return v.clone();
        }
        self.dirs.get(stem).cloned().unwrap_or_default()
    }

    fn lookup_suffix(&self, tail: &str) -> Vec<u32> {
        if let Some(v) = self.stem_suffixes.get(strip_ext(tail)) {
            return v.clone();
        }
        self.dir_suffixes.get(tail).cloned().unwrap_or_default()
    }
}

/// The hint variable that holds a function's declared return type (scope: the function).
pub const RETURNS: &str = crate::chunk::facts::RETURNS;

/// Whether the part of `path` that `segs` (an import's package path, or its longest matching
/// tail) names starts at a source root or at the repository's root.
fn jvm_rooted(path: &str, segs: &[&str]) -> bool {
    let parts: Vec<&str> = strip_ext(path).split('/').collect();
    let root = |s: &str| {
        matches!(s, "java" | "kotlin" | "scala" | "groovy" | "src" | "main" | "test")
            || s.ends_with("Main")
            || s.ends_with("Test")
    };
    for start in 0..segs.len() {
        let tail = &segs[start..];
        if tail.len() > parts.len() {
            continue;
        }
        if let Some(k) = (0..=parts.len() - tail.len()).find(|&k| parts[k..k + tail.len()] == *tail) {
            return k == 0 || root(parts[k - 1]);
        }
    }
    true
}

/// First elements of the JVM platform's package names.
const JVM_PLATFORM: &[&str] =
    &["java", "javax", "jdk", "sun", "kotlin", "kotlinx", "scala", "android", "androidx", "dalvik"];

const SELF_NAMES: &[&str] = &["self", "this", "cls", "@", "$this", "super", "Self", "static", "parent"];

/// A Go module of the view: its path (go.mod's `module` line) and the directory of its go.mod.
#[derive(Debug, Clone)]
pub struct GoModule {
    pub path: String,
    pub dir: String,
}

/// What a view's manifests say about its imports.
#[derive(Debug, Clone, Default)]
pub struct Manifests {
    /// go.mod files (none: module paths are inferred from the imports).
    pub go_modules: Vec<GoModule>,
    /// tsconfig/jsconfig `paths`: pattern (`@app/*`) → targets (root-relative, `*` kept).
    pub ts_paths: Vec<(String, Vec<String>)>,
    /// tsconfig/jsconfig `baseUrl`s, root-relative.
    pub base_urls: Vec<String>,
    /// JavaScript packages in the repository: (package.json `name`, its directory).
    pub packages: Vec<(String, String)>,
    /// C# projects: (the .csproj's directory, the directories of the projects it references).
    pub cs_projects: Vec<(String, Vec<String>)>,
}

impl Manifests {
    /// The C# project of `path`: the deepest project directory containing it.
    fn cs_project_of(&self, path: &str) -> Option<usize> {
        self.cs_projects
            .iter()
            .enumerate()
            .filter(|(_, (d, _))| d.is_empty() || path.starts_with(&format!("{d}/")))
            .max_by_key(|(_, (d, _))| d.len())
            .map(|(i, _)| i)
    }

    /// Projects whose types code in project `p` can see: itself and what it references,
    /// transitively.
    fn cs_visible(&self, p: usize) -> HashSet<usize> {
        let mut seen = HashSet::from([p]);
        let mut stack = vec![p];
        while let Some(i) = stack.pop() {
            for r in &self.cs_projects[i].1 {
                if let Some(j) = self.cs_projects.iter().position(|(d, _)| d == r)
                    && seen.insert(j)
                {
                    stack.push(j);
                }
            }
        }
        seen
    }
}

/// `rel` (`./x`, `../y`, `z`) joined to the root-relative directory `dir`, normalised.
pub fn join_dir(dir: &str, rel: &str) -> String {
    join_rel(dir, rel.trim_end_matches('/'))
}

/// Builds the resolved graph of a view. Files must be in a stable (path) order.
pub fn build(files_in: &[FileFacts], manifests: &Manifests) -> CodeGraph {
    let go_modules = &manifests.go_modules;
    let mut cg = CodeGraph::default();
    let mut first_def: Vec<u32> = Vec::with_capacity(files_in.len());
    for (fi, f) in files_in.iter().enumerate() {
        cg.files.push(FileNode { path: f.path.to_string(), lang: f.lang, is_test: is_test_path(f.path) });
        cg.by_path.insert(f.path.to_string(), fi as u32);
        first_def.push(cg.defs.len() as u32);
        let base = cg.defs.len() as u32;
        for d in &f.facts.defs {
            let parent = (d.parent >= 0).then(|| base + d.parent as u32);
            let inherited_test = parent.is_some_and(|p| cg.defs[p as usize].is_test);
            cg.defs.push(DefNode {
                file: fi as u32,
                name: d.name.clone(),
                qualified: d.qualified.clone(),
                kind: d.kind.clone(),
                start_line: d.start_line,
                end_line: d.end_line,
                parent,
                is_test: d.test || inherited_test,
            });
        }
    }
    for f in &cg.files {
        let n = cg.g.add_node(Node::File(cg.file_nodes.len() as u32));
        cg.file_nodes.push(n);
        let _ = f;
    }
    for i in 0..cg.defs.len() {
        let n = cg.g.add_node(Node::Def(i as u32));
        cg.def_nodes.push(n);
    }
    // Python and JavaScript/TypeScript rebind a function defined twice in one scope: a call
    // the code decides (through a module, a typed receiver, a direct name) reaches the last
    // definition — the implementation after `@overload` stubs or TypeScript overload
    // signatures — instead of being left undecided between them.
    let shadowed = rebound_definitions(&cg);
    for (i, d) in cg.defs.iter().enumerate() {
        cg.by_name.entry(d.name.clone()).or_default().push(i as u32);
        cg.by_qualified.entry(d.qualified.clone()).or_default().push(i as u32);
    }
    // Containment.
    for i in 0..cg.defs.len() {
        let d = &cg.defs[i];
        let from = match d.parent {
            Some(p) => cg.def_nodes[p as usize],
            None => cg.file_nodes[d.file as usize],
        };
        cg.g.add_edge(
            from,
            cg.def_nodes[i],
            Edge { rel: Rel::Contains, confidence: Confidence::Extracted, line: d.start_line },
        );
    }

    // Members of each type: by containment and by qualified prefix (Go methods, C++
    // out-of-line definitions).
    let mut members: HashMap<u32, Vec<u32>> = HashMap::new();
    for (i, d) in cg.defs.iter().enumerate() {
        // Inside a namespace, an out-of-line `Type::method` still belongs to its type.
        let in_type = d.parent.is_some_and(|p| {
            let k = cg.defs[p as usize].kind.as_str();
            type_kind(k) || k == "impl" || k == "extension"
        });
        if let Some(p) = d.parent {
            members.entry(p).or_default().push(i as u32);
        }
        if in_type {
            continue;
        }
        if let Some((owner, _)) = d.qualified.rsplit_once('.')
            && let Some(types) = cg.by_qualified.get(owner)
        {
            let types: Vec<u32> = types.iter().copied().filter(|&t| type_kind(&cg.defs[t as usize].kind)).collect();
            // The one type of that qualified name owns it wherever it is declared (a
            // public header beside an implementation directory); with several, the one
            // in the same file or directory.
            let lone = types.len() == 1
                && family(cg.files[cg.defs[types[0] as usize].file as usize].lang)
                    == family(cg.files[d.file as usize].lang);
            for t in types {
                if lone
                    || cg.defs[t as usize].file == d.file
                    || dir_of(cg.def_path(t)) == dir_of(&cg.files[d.file as usize].path)
                {
                    members.entry(t).or_default().push(i as u32);
                }
            }
        }
    }

    // Ruby's `class << self` holds the class's own methods: they are members of the class.
    for (i, d) in cg.defs.iter().enumerate() {
        if d.name == "self"
            && cg.files[d.file as usize].lang == crate::lang::Lang::Ruby
            && let (Some(p), Some(ms)) = (d.parent, members.get(&(i as u32)).cloned())
        {
            members.entry(p).or_default().extend(ms);
        }
    }

    // Files with precise facts take their calls, bases and imports from them.
    let mut seen: HashSet<(petgraph::graph::NodeIndex, petgraph::graph::NodeIndex, Rel)> = HashSet::new();
    let precise = super::precise::add_edges(&mut cg, files_in, &first_def, &mut seen);
    cg.precise_files = precise.iter().filter(|c| c.is_some()).count();

    // Imports: file → files (or external modules), and the names each file imports.
    let mut paths = PathIndex::new(&cg.files);
    paths.ts_paths = manifests.ts_paths.clone();
    paths.base_urls = manifests.base_urls.clone();
    paths.packages = manifests.packages.clone();
    let go_imports: Vec<&str> = files_in
        .iter()
        .filter(|f| f.lang == Lang::Go)
        .flat_map(|f| f.facts.imports.iter().map(|i| i.module.as_str()))
        .collect();
    if !go_modules.is_empty() {
        let mut mods = go_modules.to_vec();
        mods.sort_by_key(|m| std::cmp::Reverse(m.path.len()));
        paths.go_modules = mods.into_iter().map(|m| (m.path, m.dir)).collect();
    } else if !go_imports.is_empty() {
        paths.infer_go_modules(&go_imports);
    }
    // C#: each file's project and the projects each one sees.
    let cs_project: Vec<Option<usize>> =
        cg.files.iter().map(|f| if f.lang == Lang::CSharp { manifests.cs_project_of(&f.path) } else { None }).collect();
    let cs_visible: Vec<HashSet<usize>> = (0..manifests.cs_projects.len()).map(|p| manifests.cs_visible(p)).collect();
    // C#: namespace → files declaring a top-level type in it.
    let mut cs_namespaces: HashMap<String, Vec<u32>> = HashMap::new();
    for d in &cg.defs {
        if cg.files[d.file as usize].lang != Lang::CSharp
            || !type_kind(&d.kind)
            || d.parent.is_some_and(|p| cg.defs[p as usize].kind != "namespace")
        {
            continue;
        }
        if let Some((ns, _)) = d.qualified.rsplit_once('.') {
            let files = cs_namespaces.entry(ns.to_string()).or_default();
            if !files.contains(&d.file) {
                files.push(d.file);
            }
        }
    }
    let mut imported_files: Vec<HashSet<u32>> = vec![HashSet::new(); cg.files.len()];
    let mut imported_names: Vec<HashMap<String, Vec<u32>>> = vec![HashMap::new(); cg.files.len()];
    let mut go_external: Vec<HashSet<String>> = vec![HashSet::new(); cg.files.len()];
    // Names a file imports from a module that is not in the view (an installed package): the
    // package's, never a local definition of the same name.
    let mut foreign_names: Vec<HashSet<String>> = vec![HashSet::new(); cg.files.len()];
    // JavaScript and Python: the files each name a file imports comes from (renames apart), what
    // each file re-exports, and `export *`.
    let mut bindings: Vec<HashMap<String, Vec<u32>>> = vec![HashMap::new(); cg.files.len()];
    let mut bind_renames: Vec<HashMap<String, (String, Vec<u32>)>> = vec![HashMap::new(); cg.files.len()];
    let mut reexports: Vec<HashMap<String, Vec<u32>>> = vec![HashMap::new(); cg.files.len()];
    let mut export_renames: Vec<HashMap<String, (String, Vec<u32>)>> = vec![HashMap::new(); cg.files.len()];
    let mut star: Vec<Vec<u32>> = vec![Vec::new(); cg.files.len()];
    for (fi, f) in files_in.iter().enumerate() {
        for imp in &f.facts.imports {
            // An import the index answered gets its edge from there; what the file imports
            // still narrows the heuristic calls of sites the index left open.
            let answered = precise[fi].as_ref().is_some_and(|c| c.import_lines.contains(&imp.line));
            let targets: Vec<u32> = if f.lang == Lang::CSharp {
                // A using directive names a namespace: the files that declare types in it,
                // in this project or one it references (when the view has its .csproj files).
                let visible = cs_project[fi].map(|p| &cs_visible[p]);
                cs_namespaces
                    .get(imp.module.trim())
                    .map(|v| {
                        v.iter()
                            .copied()
                            .filter(|&t| t as usize != fi)
                            .filter(|&t| {
                                visible.is_none_or(|vis| cs_project[t as usize].is_none_or(|p| vis.contains(&p)))
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                paths.resolve(&cg.files[fi], &imp.module).into_iter().filter(|&t| t as usize != fi).collect()
            };
            // Python: `import a.b` binds `a`, the package (`a.b.f` is reached through it).
            if f.lang == Lang::Python
                && imp.names.is_empty()
                && let Some((first, _)) = imp.module.split_once('.')
                && !first.is_empty()
            {
                let package: Vec<u32> =
                    paths.resolve(&cg.files[fi], first).into_iter().filter(|&t| t as usize != fi).collect();
                imported_files[fi].extend(package.iter().copied());
                imported_names[fi].entry(first.to_string()).or_default().extend(package);
            }
            // Go: the package's name (its path's last element, a `/vN` suffix skipped) is what
            // the code calls it by — `time.Duration(x)`, `atomic.Int64` — local or not.
            if f.lang == Lang::Go {
                let segs: Vec<&str> = imp.module.trim_matches('"').split('/').collect();
                let last = segs
                    .iter()
                    .rev()
                    .find(|s| !(s.len() > 1 && s.starts_with('v') && s[1..].bytes().all(|b| b.is_ascii_digit())))
                    .copied()
                    .unwrap_or("");
                let name = last.replace(['-', '.'], "_");
                if !name.is_empty() {
                    if targets.is_empty() {
                        go_external[fi].insert(name);
                    } else {
                        imported_names[fi].entry(name).or_default().extend(&targets);
                    }
                }
            }
            // Java/Kotlin/Scala/PHP name a type in a package: the file of that type, if any.
            let mut named: Vec<u32> = Vec::new();
            let mut every_name_found = !imp.names.is_empty();
            let binds = family(f.lang) == family(Lang::JavaScript) || f.lang == Lang::Python;
            for name in &imp.names {
                // `export * from` (`*`), renames (`b=a` for `{ a as b }` / `import a as b`), and
                // JavaScript's re-exports (`+`); whatever a Python module imports, importers of it
                // can import from it too.
                if name == "*" {
                    star[fi].extend(&targets);
                    continue;
                }
                let (name, exported) = match name.strip_prefix('+') {
                    Some(n) => (n, true),
                    None => (name.as_str(), f.lang == Lang::Python),
                };
                if let Some((alias, orig)) = name.split_once('=') {
                    let to = (orig.to_string(), targets.clone());
                    if exported {
                        export_renames[fi].insert(alias.to_string(), to.clone());
                    }
                    bind_renames[fi].insert(alias.to_string(), to);
                    continue;
                }
                if binds {
                    bindings[fi].entry(name.to_string()).or_default().extend(&targets);
                    if exported {
                        reexports[fi].entry(name.to_string()).or_default().extend(&targets);
                    }
                }
                let name = &name.to_string();
                let by_type: Vec<u32> = cg
                    .by_name
                    .get(name)
                    .map(|v| v.iter().map(|&d| cg.defs[d as usize].file).filter(|&t| t as usize != fi).collect())
                    .unwrap_or_default();
                // Where the module resolved nowhere, only a language that imports a type by
                // package and name (Java, Kotlin, Scala, PHP) may look the name up; a name
                // imported from an installed package (`parse` from '@babel/parser') is not
                // every local definition called that.
                let platform = family(f.lang) == family(Lang::Java)
                    && imp.module.split('.').next().is_some_and(|s| JVM_PLATFORM.contains(&s));
                let by_type_name = (family(f.lang) == family(Lang::Java) && !platform) || f.lang == Lang::Php;
                let within: Vec<u32> = if targets.is_empty() {
                    if by_type_name { by_type.clone() } else { Vec::new() }
                } else {
                    by_type.iter().copied().filter(|t| targets.contains(t)).collect()
                };
                let chosen = if within.is_empty() && (targets.is_empty() || f.lang == Lang::Python) {
                    // `import a.b.Name` resolves to a file named Name in a matching package;
                    // Python's `from pkg import mod` to the submodule.
                    paths.resolve(
                        &cg.files[fi],
                        &format!("{}{}{}", imp.module, if imp.module.ends_with('.') { "" } else { "." }, name),
                    )
                } else {
                    within
                };
                every_name_found &= !chosen.is_empty();
                imported_names[fi].entry(name.clone()).or_default().extend(&chosen);
                named.extend(chosen);
            }
            // Names that each found their file say exactly what is imported; the package (a
            // directory of files, or `__init__.py`) only when a name did not.
            let from_module: &[u32] = if every_name_found { &[] } else { &targets };
            let mut all: Vec<u32> = from_module.iter().chain(named.iter()).copied().collect();
            all.sort_unstable();
            all.dedup();
            if all.is_empty() {
                if matches!(f.lang, Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx) {
                    foreign_names[fi].extend(imp.names.iter().cloned());
                }
                if !answered {
                    let ext = cg.external_node(&imp.module);
                    cg.g.add_edge(
                        cg.file_nodes[fi],
                        ext,
                        Edge { rel: Rel::Imports, confidence: Confidence::External, line: imp.line },
                    );
                }
            } else {
                for t in &all {
                    imported_files[fi].insert(*t);
                    if answered {
                        continue;
                    }
                    // A Go package or a C# namespace is every one of its files, each surely.
                    let conf = if all.len() == 1 || matches!(f.lang, Lang::Go | Lang::CSharp) {
                        Confidence::Resolved
                    } else {
                        Confidence::Ambiguous
                    };
                    cg.g.add_edge(
                        cg.file_nodes[fi],
                        cg.file_nodes[*t as usize],
                        Edge { rel: Rel::Imports, confidence: conf, line: imp.line },
                    );
                }
            }
        }
    }

    // Declared return types (`-> T`), for variables assigned a call's result.
    let mut returns: HashMap<u32, String> = HashMap::new();
    for (fi, f) in files_in.iter().enumerate() {
        for t in f.facts.types.iter().filter(|t| t.var == RETURNS && t.scope >= 0) {
            returns.insert(first_def[fi] + t.scope as u32, t.ty.clone());
        }
    }

    // Go struct fields' declared types, by (struct name, field): methods and structs often
    // sit in different files of a package.
    let mut go_fields: HashMap<(String, String), String> = HashMap::new();
    for (fi, f) in files_in.iter().enumerate().filter(|(_, f)| f.lang == Lang::Go) {
        for t in f.facts.types.iter().filter(|t| t.scope >= 0) {
            if let Some(name) = t.var.strip_prefix("self.") {
                let owner = &cg.defs[(first_def[fi] + t.scope as u32) as usize];
                go_fields.entry((owner.name.clone(), name.to_string())).or_insert_with(|| t.ty.clone());
            }
        }
    }

    // Module-level values' types (`app = Flask()`, `export const x = new T()`), for member
    // calls through them from the files that import them.
    let file_hints: Vec<HashMap<String, String>> = files_in
        .iter()
        .map(|f| {
            let mut m = HashMap::new();
            for t in f.facts.types.iter().filter(|t| t.scope < 0 && !t.var.starts_with("self.") && t.var != RETURNS) {
                let e = m.entry(t.var.clone()).or_insert_with(|| t.ty.clone());
                if !t.ty.starts_with('=') {
                    *e = t.ty.clone();
                }
            }
            m
        })
        .collect();

    // One resolver over the tables above, made again after each pass adds edges to the graph.
    macro_rules! resolver {
        ($cg:expr) => {
            Resolver {
                cg: $cg,
                shadowed: &shadowed,
                members: &members,
                imported_files: &imported_files,
                imported_names: &imported_names,
                go_external: &go_external,
                go_fields: &go_fields,
                returns: &returns,
                foreign_names: &foreign_names,
                file_hints: &file_hints,
                exports: Exports {
                    bindings: &bindings,
                    bind_renames: &bind_renames,
                    reexports: &reexports,
                    export_renames: &export_renames,
                    star: &star,
                },
            }
        };
    }

    // Bases first, so that member calls can follow inheritance.
    let mut base_edges = Vec::new();
    {
        let resolver = resolver!(&cg);
        for (fi, f) in files_in.iter().enumerate() {
            let base = first_def[fi];
            for b in &f.facts.bases {
                let from = base + b.def as u32;
                if precise[fi].as_ref().is_some_and(|c| c.based.contains(&from)) {
                    continue;
                }
                let rel = match b.relation {
                    Relation::Extends => Rel::Extends,
                    Relation::Implements => Rel::Implements,
                    Relation::ExtendsOrImplements => Rel::ExtendsOrImplements,
                };
                let targets = resolver.resolve_type(fi as u32, &b.name, from);
                base_edges.push((
                    Node::Def(from),
                    targets,
                    Edge { rel, confidence: Confidence::Resolved, line: cg.defs[from as usize].start_line },
                ));
            }
        }
    }
    add_edges(&mut cg, base_edges, &mut seen);
    let mut call_edges = Vec::new();
    {
        let resolver = resolver!(&cg);
        for (fi, f) in files_in.iter().enumerate() {
            let base = first_def[fi];
            let hints = type_hints(f.facts);
            for c in &f.facts.calls {
                if precise[fi].as_ref().is_some_and(|p| p.calls.contains(&(c.line, c.name.clone()))) {
                    continue;
                }
                let scope = (c.scope >= 0).then(|| base + c.scope as u32);
                let from = match scope {
                    Some(s) => Node::Def(s),
                    None => Node::File(fi as u32),
                };
                match resolver.resolve_call(fi as u32, scope, c, &hints, base) {
                    // Too many candidates to guess among: the call stays visible, unresolved.
                    Ok(t) if t.is_empty() => call_edges.push((
                        from,
                        Err(external_name(c)),
                        Edge { rel: Rel::Calls, confidence: Confidence::External, line: c.line },
                    )),
                    other => call_edges.push((
                        from,
                        other,
                        Edge { rel: Rel::Calls, confidence: Confidence::Resolved, line: c.line },
                    )),
                }
            }
        }
    }
    add_edges(&mut cg, call_edges, &mut seen);
    let mut ref_edges = Vec::new();
    {
        let resolver = resolver!(&cg);
        for (fi, f) in files_in.iter().enumerate() {
            let base = first_def[fi];
            for r in &f.facts.refs {
                let scope = (r.scope >= 0).then(|| base + r.scope as u32);
                let targets = resolver.resolve_ref(fi as u32, scope, r);
                if targets.is_empty() {
                    continue;
                }
                let from = match scope {
                    Some(s) => Node::Def(s),
                    None => Node::File(fi as u32),
                };
                ref_edges.push((
                    from,
                    Ok(targets),
                    Edge { rel: Rel::References, confidence: Confidence::Resolved, line: r.line },
                ));
            }
        }
    }
    add_edges(&mut cg, ref_edges, &mut seen);
    cg.data = super::data::resolve(files_in, &first_def);
    cg
}

type Pending = (Node, Result<Vec<(u32, Confidence)>, String>, Edge);

fn add_edges(
    cg: &mut CodeGraph,
    edges: Vec<Pending>,
    seen: &mut HashSet<(petgraph::graph::NodeIndex, petgraph::graph::NodeIndex, Rel)>,
) {
    for (from, targets, mut edge) in edges {
        let from_ix = cg.node_of(from);
        match targets {
            Ok(ts) => {
                for (t, conf) in ts {
                    let to = cg.def_nodes[t as usize];
                    // A function that calls itself is its own caller (recursion); anything else
                    // pointing at itself says nothing.
                    if (to == from_ix && (edge.rel != Rel::Calls || !conf.is_confident()))
                        || !seen.insert((from_ix, to, edge.rel))
                    {
                        continue;
                    }
                    edge.confidence = conf;
                    cg.g.add_edge(from_ix, to, edge);
                }
            }
            Err(ext_name) => {
                let to = cg.external_node(&ext_name);
                if seen.insert((from_ix, to, edge.rel)) {
                    edge.confidence = Confidence::External;
                    cg.g.add_edge(from_ix, to, edge);
                }
            }
        }
    }
}

/// (scope def index within the file, variable) → type name.
fn type_hints(f: &Facts) -> HashMap<(i32, &str), &str> {
    let mut out: HashMap<(i32, &str), &str> = HashMap::new();
    for t in &f.types {
        // A declared or constructed type beats "what some call returns" for the same variable.
        let e = out.entry((t.scope, t.var.as_str())).or_insert(t.ty.as_str());
        if !t.ty.starts_with('=') {
            *e = t.ty.as_str();
        }
    }
    out
}

struct Resolver<'a> {
    cg: &'a CodeGraph,
    /// Definitions a later one of the same name and scope rebinds (`rebound_definitions`).
    shadowed: &'a [bool],
    members: &'a HashMap<u32, Vec<u32>>,
    imported_files: &'a [HashSet<u32>],
    imported_names: &'a [HashMap<String, Vec<u32>>],
    /// Go packages a file imports that are not in the view (the standard library, modules).
    go_external: &'a [HashSet<String>],
    /// Go struct fields' declared types: (struct, field) → type as written (`atomic.Int64`).
    go_fields: &'a HashMap<(String, String), String>,
    /// Declared return type of a function (its `->` hint).
    returns: &'a HashMap<u32, String>,
    /// Names each file imports from a package that is not in the view.
    foreign_names: &'a [HashSet<String>],
    /// Types of each file's module-level values.
    file_hints: &'a [HashMap<String, String>],
    exports: Exports<'a>,
}

/// What JavaScript and Python files import and re-export, by name.
struct Exports<'a> {
    bindings: &'a [HashMap<String, Vec<u32>>],
    bind_renames: &'a [HashMap<String, (String, Vec<u32>)>],
    reexports: &'a [HashMap<String, Vec<u32>>],
    export_renames: &'a [HashMap<String, (String, Vec<u32>)>],
    star: &'a [Vec<u32>],
}

impl Resolver<'_> {
    /// The top-level definitions named `name` that `files` export, following re-exports
    /// (`export { a as b } from`, `export { a } from`, `export * from`) a few files deep.
    fn exported(&self, name: &str, files: &[u32], depth: u8) -> Vec<u32> {
        let mut out = Vec::new();
        if depth > 4 {
            return out;
        }
        for &m in files {
            let top: Vec<u32> = self
                .cg
                .by_name
                .get(name)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&d| self.cg.defs[d as usize].file == m && self.cg.defs[d as usize].parent.is_none())
                .collect();
            if !top.is_empty() {
                out.extend(top);
            } else if let Some((orig, next)) = self.exports.export_renames[m as usize].get(name) {
                out.extend(self.exported(orig, next, depth + 1));
            } else if let Some(next) = self.exports.reexports[m as usize].get(name) {
                out.extend(self.exported(name, next, depth + 1));
            } else if !self.exports.star[m as usize].is_empty() {
                out.extend(self.exported(name, self.exports.star[m as usize].as_slice(), depth + 1));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The imported files a module alias (`click` of `click.INT`, `utils` of `utils.f`) names:
    /// imported under that name, or the file (a package's `__init__`/`index`/`mod`: its
    /// directory) called so.
    fn module_files(&self, file: u32, alias: &str) -> Vec<u32> {
        let f = file as usize;
        if alias.is_empty() {
            return Vec::new();
        }
        let named = self.imported_names[f].get(alias);
        let mut out: Vec<u32> = self.imported_files[f]
            .iter()
            .copied()
            .filter(|&g| {
                let stem = strip_ext(&self.cg.files[g as usize].path);
                let (dir, leaf) = stem.rsplit_once('/').unwrap_or(("", stem));
                named.is_some_and(|fs| fs.contains(&g))
                    || leaf == alias
                    || (matches!(leaf, "__init__" | "index" | "mod") && dir.rsplit('/').next() == Some(alias))
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// A name an import binds (renamed or not) to the one definition it names.
    fn imported_binding(&self, file: u32, name: &str) -> Option<u32> {
        let f = file as usize;
        let found = match self.exports.bind_renames[f].get(name) {
            Some((orig, files)) => self.exported(orig, files, 0),
            None => self.exports.bindings[f].get(name).map(|files| self.exported(name, files, 0)).unwrap_or_default(),
        };
        match found.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }
}

/// Per definition, whether a later function of the same qualified name in the same file and
/// scope rebinds it (Python, JavaScript, TypeScript; languages with real overloads keep all).
fn rebound_definitions(cg: &CodeGraph) -> Vec<bool> {
    let mut shadowed = vec![false; cg.defs.len()];
    let mut last: HashMap<(u32, Option<u32>, &str), usize> = HashMap::new();
    for (i, d) in cg.defs.iter().enumerate() {
        let rebinds =
            matches!(cg.files[d.file as usize].lang, Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
        if !rebinds || !callable_kind(&d.kind) {
            continue;
        }
        let key = (d.file, d.parent, d.qualified.as_str());
        match last.get(&key).copied() {
            Some(prev) if cg.defs[prev].start_line <= d.start_line => {
                shadowed[prev] = true;
                last.insert(key, i);
            }
            Some(_) => shadowed[i] = true,
            None => {
                last.insert(key, i);
            }
        }
    }
    shadowed
}

fn is_word(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Languages that can call or inherit each other's definitions (a JavaScript file imports
/// TypeScript; C++ includes C headers).
fn family(l: Lang) -> u8 {
    match l {
        Lang::C | Lang::Cpp | Lang::ObjC => 1,
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => 2,
        Lang::Java | Lang::Kotlin | Lang::Scala => 3,
        other => 10 + other as u8,
    }
}

impl Resolver<'_> {
    /// `cands` without the definitions a later one among them rebinds (all of them when that
    /// would leave none).
    fn last_bindings(&self, cands: Vec<u32>) -> Vec<u32> {
        let kept: Vec<u32> = cands.iter().copied().filter(|&d| !self.shadowed[d as usize]).collect();
        if kept.is_empty() { cands } else { kept }
    }

    /// Whether definition `d` can be reached from code of file `file` (same language family).
    fn reachable(&self, file: u32, d: u32) -> bool {
        family(self.cg.files[file as usize].lang) == family(self.cg.files[self.cg.defs[d as usize].file as usize].lang)
    }

    fn defs_named(&self, name: &str, want: impl Fn(&str) -> bool) -> Vec<u32> {
        self.cg
            .by_name
            .get(name)
            .map(|v| v.iter().copied().filter(|&d| want(&self.cg.defs[d as usize].kind)).collect())
            .unwrap_or_default()
    }

    /// Narrows cross-file candidates: imported names, imported files, then same directory.
    fn narrow(&self, file: u32, name: &str, cands: Vec<u32>) -> Vec<u32> {
        if cands.len() <= 1 {
            return cands;
        }
        let f = file as usize;
        if let Some(files) = self.imported_names[f].get(name) {
            let by_name: Vec<u32> =
                cands.iter().copied().filter(|&d| files.contains(&self.cg.defs[d as usize].file)).collect();
            if !by_name.is_empty() {
                return by_name;
            }
        }
        let by_import: Vec<u32> = cands
            .iter()
            .copied()
            .filter(|&d| self.imported_files[f].contains(&self.cg.defs[d as usize].file))
            .collect();
        if !by_import.is_empty() {
            return by_import;
        }
        let dir = dir_of(&self.cg.files[f].path);
        let same_dir: Vec<u32> = cands.iter().copied().filter(|&d| dir_of(self.cg.def_path(d)) == dir).collect();
        if !same_dir.is_empty() {
            return same_dir;
        }
        // Prefer code over tests when a non-test caller has both.
        if !self.cg.files[f].is_test {
            let non_test: Vec<u32> = cands.iter().copied().filter(|&d| !self.cg.is_test(Node::Def(d))).collect();
            if !non_test.is_empty() {
                return non_test;
            }
        }
        cands
    }

    fn resolve_type(&self, file: u32, name: &str, from: u32) -> Result<Vec<(u32, Confidence)>, String> {
        // An associated type (`type Service = …` inside an impl or trait) is not a base.
        let associated = |d: u32| {
            let def = &self.cg.defs[d as usize];
            def.kind == "type"
                && def
                    .parent
                    .is_some_and(|p| matches!(self.cg.defs[p as usize].kind.as_str(), "impl" | "trait" | "interface"))
        };
        // A dotted base (`ExchangeCodec.Carrier`) is the nested type of that qualified name.
        let (name, outer) = match name.rsplit_once('.') {
            Some((o, leaf)) => (leaf, Some(o)),
            None => (name, None),
        };
        let nested_in =
            |d: u32| outer.is_none_or(|o| self.cg.defs[d as usize].qualified.ends_with(&format!("{o}.{name}")));
        let cands: Vec<u32> = self
            .defs_named(name, type_kind)
            .into_iter()
            .filter(|&d| d != from && !associated(d) && nested_in(d) && self.reachable(file, d))
            .collect();
        let local: Vec<u32> = cands.iter().copied().filter(|&d| self.cg.defs[d as usize].file == file).collect();
        if local.len() == 1 {
            return Ok(vec![(local[0], Confidence::Extracted)]);
        }
        let cands = self.narrow(file, name, cands);
        match cands.len() {
            0 => Err(name.to_string()),
            1 => Ok(vec![(cands[0], Confidence::Resolved)]),
            _ => Ok(cands.into_iter().take(MAX_AMBIGUOUS).map(|d| (d, Confidence::Ambiguous)).collect()),
        }
    }

    /// The type a receiver refers to: `self` → enclosing type; a type name; a variable with a
    /// declared type in scope.
    /// The local types a receiver may be, and whether its type was declared (a declared type
    /// that is not local is someone else's: `atomic.Int64`, `sync.Mutex`).
    fn receiver_types(
        &self,
        file: u32,
        scope: Option<u32>,
        receiver: &str,
        hints: &HashMap<(i32, &str), &str>,
        base: u32,
    ) -> (Vec<u32>, bool) {
        let r = receiver.trim();
        // `super.m()`, `super().m()`, `parent::m()`: the method of a base, never the caller's own.
        if matches!(r, "super" | "parent") || r.starts_with("super(") {
            let mut own: HashSet<u32> = HashSet::new();
            let mut at = scope;
            while let Some(d) = at {
                let def = &self.cg.defs[d as usize];
                if type_kind(&def.kind) || def.kind == "impl" || def.kind == "extension" {
                    own.insert(d);
                }
                at = def.parent;
            }
            let mut bases: Vec<u32> = Vec::new();
            for &t in &own {
                for e in self.cg.g.edges(self.cg.def_nodes[t as usize]) {
                    if e.weight().rel.is_inherits()
                        && let Node::Def(b) = self.cg.g[petgraph::visit::EdgeRef::target(&e)]
                        && !own.contains(&b)
                    {
                        bases.push(b);
                    }
                }
            }
            bases.sort_unstable();
            bases.dedup();
            return (bases, true);
        }
        if SELF_NAMES.contains(&r) {
            let mut s = scope;
            while let Some(d) = s {
                let def = &self.cg.defs[d as usize];
                if type_kind(&def.kind) || def.kind == "impl" || def.kind == "extension" {
                    // An impl/extension stands for its type.
                    let named = self.defs_named(&def.name, type_kind);
                    let mut out = vec![d];
                    out.extend(named.into_iter().filter(|&t| {
                        self.cg.defs[t as usize].file == file
                            || dir_of(self.cg.def_path(t)) == dir_of(self.cg.def_path(d))
                    }));
                    return (out, true);
                }
                // Go methods are not nested: their owner is the qualified prefix.
                if let Some((owner, _)) = def.qualified.rsplit_once('.')
                    && def.parent.is_none()
                {
                    let owners: Vec<u32> = self
                        .cg
                        .by_qualified
                        .get(owner)
                        .map(|v| v.iter().copied().filter(|&t| type_kind(&self.cg.defs[t as usize].kind)).collect())
                        .unwrap_or_default();
                    if !owners.is_empty() {
                        return (owners, true);
                    }
                }
                s = def.parent;
            }
            return (Vec::new(), false);
        }
        // `new T(…).m()` / `T(…).m()`: the value a constructor call builds.
        let built = r.strip_prefix("new ").unwrap_or(r);
        if let Some((head, _)) = built.split_once('(')
            && built.ends_with(')')
            && is_word(head.trim())
            && head.trim().starts_with(|c: char| c.is_uppercase())
            && self.cg.files[file as usize].lang != Lang::Go
        {
            let head = head.trim();
            let types = self.defs_named(head, type_kind).into_iter().filter(|&d| self.reachable(file, d)).collect();
            return (self.narrow(file, head, types), true);
        }
        // A variable with a declared type: innermost scope first, then file level. A field
        // (`self.x`, `this.x`, `@x`) is recorded on its class as `self.x`.
        let field = r
            .strip_prefix("self.")
            .or_else(|| r.strip_prefix("this."))
            .or_else(|| r.strip_prefix("$this->"))
            .or_else(|| r.strip_prefix('@'));
        let field_key = field
            .filter(|f| !f.is_empty() && f.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .map(|f| format!("self.{f}"));
        let simple = match &field_key {
            Some(k) => k.as_str(),
            None => r.trim_start_matches('$').trim_start_matches('&').trim_start_matches('*'),
        };
        let mut s = scope;
        let mut ty: Option<&str> = None;
        // Go: `recv.field` on a value of a known struct type has the field's declared type.
        let field_ty;
        // A chain (`s.qm.metrics.highest`) is followed field by field.
        if self.cg.files[file as usize].lang == Lang::Go {
            let parts: Vec<&str> = r.split('.').collect();
            if parts.len() >= 2 && parts.iter().all(|p| is_word(p)) {
                let leaf = |t: &str| t.trim_start_matches('*').rsplit('.').next().unwrap_or(t).to_string();
                let mut cur: Option<String> = self.hint_in_scope(scope, parts[0], hints, base).map(str::to_string);
                for seg in &parts[1..] {
                    cur = cur.and_then(|t| self.go_fields.get(&(leaf(&t), seg.to_string())).cloned());
                }
                if let Some(t) = cur {
                    field_ty = t;
                    ty = Some(field_ty.as_str());
                }
            }
        }
        while ty.is_none() {
            let key = s.map_or(-1, |d| (d - base) as i32);
            if let Some(t) = hints.get(&(key, simple)) {
                ty = Some(t);
                break;
            }
            match s {
                Some(d) => s = self.cg.defs[d as usize].parent,
                None => break,
            }
        }
        // A field's type from any method of the file (assigned in a constructor, read elsewhere).
        if ty.is_none()
            && let Some(k) = &field_key
        {
            ty = hints.iter().find(|((_, v), _)| *v == k.as_str()).map(|(_, t)| *t);
        }
        // A module-level value imported from another file (`from app import app`, `import {
        // initTRPC } from './init'`): the type its initialiser gives it there.
        let imported;
        if ty.is_none()
            && field_key.is_none()
            && is_word(simple)
            && let Some(files) = self.imported_names[file as usize].get(simple)
        {
            let mut tys: Vec<&str> =
                files.iter().filter_map(|&g| self.file_hints[g as usize].get(simple).map(String::as_str)).collect();
            tys.sort_unstable();
            tys.dedup();
            if let [one] = tys.as_slice() {
                imported = one.to_string();
                ty = Some(imported.as_str());
            }
        }
        // `x = make_bar()`: the declared return type of the function called, when the
        // reachable functions of that name agree on one.
        let returned;
        if let Some(callee) = ty.and_then(|t| t.strip_prefix('=')) {
            let mut types: Vec<&str> = self
                .defs_named(callee, callable_kind)
                .into_iter()
                .filter(|&d| self.reachable(file, d))
                .filter_map(|d| self.returns.get(&d).map(String::as_str))
                .collect();
            types.sort_unstable();
            types.dedup();
            match types.as_slice() {
                [one] => {
                    returned = one.to_string();
                    ty = Some(returned.as_str());
                }
                _ => return (Vec::new(), false),
            }
        }
        let name = ty.unwrap_or_else(|| r.rsplit(['.', ':']).next().unwrap_or(r));
        // Go writes another package's type qualified (`config.Config`); its name is the leaf.
        let name =
            if self.cg.files[file as usize].lang == Lang::Go { name.rsplit('.').next().unwrap_or(name) } else { name };
        if !name.chars().next().is_some_and(|c| c.is_uppercase()) && ty.is_none() {
            return (Vec::new(), false);
        }
        let types = self.defs_named(name, |k| type_kind(k) || k == "module" || k == "namespace" || k == "impl");
        // A declared type qualified by a package that is not here is that package's.
        let foreign = ty.is_some_and(|t| {
            t.split_once('.')
                .is_some_and(|(pkg, _)| self.go_external[file as usize].contains(pkg.trim_start_matches('*')))
        });
        if foreign {
            return (Vec::new(), true);
        }
        (self.narrow(file, name, types), ty.is_some())
    }

    /// The type hint of variable `var` in `scope` or an enclosing one.
    fn hint_in_scope<'h>(
        &self,
        scope: Option<u32>,
        var: &str,
        hints: &HashMap<(i32, &'h str), &'h str>,
        base: u32,
    ) -> Option<&'h str> {
        let mut s = scope;
        loop {
            let key = s.map_or(-1, |d| (d - base) as i32);
            if let Some(t) = hints.get(&(key, var)) {
                return Some(t);
            }
            s = self.cg.defs[s? as usize].parent;
        }
    }

    /// Types enclosing a definition (and their resolved bases).
    fn enclosing_types(&self, scope: Option<u32>) -> HashSet<u32> {
        let mut out = HashSet::new();
        let mut s = scope;
        while let Some(d) = s {
            let def = &self.cg.defs[d as usize];
            if type_kind(&def.kind) || def.kind == "impl" || def.kind == "extension" {
                out.insert(d);
                for e in self.cg.g.edges(self.cg.def_nodes[d as usize]) {
                    if e.weight().rel.is_inherits()
                        && let Node::Def(b) = self.cg.g[petgraph::visit::EdgeRef::target(&e)]
                    {
                        out.insert(b);
                    }
                }
            }
            s = def.parent;
        }
        out
    }

    fn resolve_call(
        &self,
        file: u32,
        scope: Option<u32>,
        c: &crate::chunk::facts::CallFact,
        hints: &HashMap<(i32, &str), &str>,
        base: u32,
    ) -> Result<Vec<(u32, Confidence)>, String> {
        let name = c.name.as_str();
        // Go has no constructors: `T(x)` with a type `T` is a conversion, not a call.
        let ctor_like =
            name.chars().next().is_some_and(|ch| ch.is_uppercase()) && self.cg.files[file as usize].lang != Lang::Go;
        let want = |k: &str| callable_kind(k) || (ctor_like && type_kind(k));
        if !c.member
            && let Some(d) = self.imported_binding(file, name)
            && !self.defs_named(name, |_| true).iter().any(|&x| self.cg.defs[x as usize].file == file)
        {
            // A module-level value called (`extend = Object.assign`) holds someone else's function.
            return if want(&self.cg.defs[d as usize].kind) {
                Ok(vec![(d, Confidence::Resolved)])
            } else {
                Err(external_name(c))
            };
        }
        let mut cands: Vec<u32> =
            self.defs_named(name, want).into_iter().filter(|&d| self.reachable(file, d)).collect();
        // A constructor call reaches the type; drop the constructors of the same name there.
        if cands.is_empty() {
            return Err(external_name(c));
        }
        if c.member {
            // A call into a package that is not here (`time.Duration(x)`, `sync.NewCond`) is
            // that package's, whatever local method shares the name.
            if self.go_external[file as usize].contains(c.receiver.trim()) {
                return Err(external_name(c));
            }
            let (types, declared) = self.receiver_types(file, scope, &c.receiver, hints, base);
            if types.is_empty()
                && declared
                && self.cg.files[file as usize].lang == Lang::Go
                && !SELF_NAMES.contains(&c.receiver.as_str())
            {
                // Go declares every type, qualified by its package: a declared type that is
                // not one of the view's is someone else's, and so is the call.
                return Err(external_name(c));
            }
            if !types.is_empty() {
                // Method resolution order: the receiver's own type (and its impl blocks /
                // partial declarations) first, then its bases level by level; the first level
                // that defines the name wins.
                let mut owned: Vec<u32> = Vec::new();
                let mut level: Vec<u32> = types.clone();
                let mut visited: HashSet<u32> = HashSet::new();
                while !level.is_empty() && owned.is_empty() && visited.len() < 64 {
                    let mut same_type: Vec<u32> = Vec::new();
                    for &t in &level {
                        for other in self.defs_named(&self.cg.defs[t as usize].name, |k| {
                            type_kind(k) || k == "impl" || k == "extension"
                        }) {
                            if dir_of(self.cg.def_path(other)) == dir_of(self.cg.def_path(t)) {
                                same_type.push(other);
                            }
                        }
                    }
                    level.extend(same_type);
                    let mut next = Vec::new();
                    for &t in &level {
                        if !visited.insert(t) {
                            continue;
                        }
                        if let Some(ms) = self.members.get(&t) {
                            owned.extend(ms.iter().copied().filter(|m| cands.contains(m)));
                        }
                        for e in self.cg.g.edges(self.cg.def_nodes[t as usize]) {
                            if e.weight().rel.is_inherits()
                                && let Node::Def(b) = self.cg.g[petgraph::visit::EdgeRef::target(&e)]
                            {
                                next.push(b);
                            }
                        }
                    }
                    level = next;
                }
                owned.sort_unstable();
                owned.dedup();
                let owned = self.last_bindings(owned);
                if !owned.is_empty() {
                    let conf = |d: u32| {
                        if self.cg.defs[d as usize].file == file { Confidence::Extracted } else { Confidence::Resolved }
                    };
                    return Ok(if owned.len() == 1 {
                        vec![(owned[0], conf(owned[0]))]
                    } else {
                        owned.into_iter().take(MAX_AMBIGUOUS).map(|d| (d, Confidence::Ambiguous)).collect()
                    });
                }
                // The receiver is a known type without such a member: not our call.
                if !SELF_NAMES.contains(&c.receiver.as_str()) {
                    return Err(external_name(c));
                }
            }
            // Unknown receiver. A module alias (`utils.forEach`, `os.path.join`) reaches a
            // function of an imported file; anything else is external.
            let f = file as usize;
            // Methods, nested in their type or (Go) declared beside it.
            let is_method = |d: u32| {
                let def = &self.cg.defs[d as usize];
                matches!(def.kind.as_str(), "method" | "constructor")
                    || def.parent.is_some_and(|p| {
                        let k = self.cg.defs[p as usize].kind.as_str();
                        type_kind(k) || k == "impl" || k == "extension"
                    })
            };
            // The receiver must name the module: an imported name bound to that file, or the
            // file's own name (`utils` for lib/utils.js); `header.forEach` is not `utils.forEach`.
            let alias = c.receiver.trim().rsplit(['.', ':']).next().unwrap_or("");
            let names_module = |d: u32| {
                let file = self.cg.defs[d as usize].file;
                let stem = strip_ext(&self.cg.files[file as usize].path).rsplit('/').next().unwrap_or("");
                self.imported_names[f].get(alias).is_some_and(|fs| fs.contains(&file))
                    || (!alias.is_empty() && alias == stem)
            };
            let module_fns: Vec<u32> = cands
                .iter()
                .copied()
                .filter(|&d| {
                    !is_method(d) && self.imported_files[f].contains(&self.cg.defs[d as usize].file) && names_module(d)
                })
                .collect();
            let module_fns = self.last_bindings(module_fns);
            if module_fns.len() == 1 {
                return Ok(vec![(module_fns[0], Confidence::Resolved)]);
            }
            // A function a package module re-exports (`click.echo` through `click/__init__.py`).
            if module_fns.is_empty() {
                let through = self.last_bindings(self.exported(name, &self.module_files(file, alias), 0));
                if let [d] = through.as_slice()
                    && !is_method(*d)
                {
                    return Ok(vec![(*d, Confidence::Resolved)]);
                }
            }
            // A method called on a value of unknown type: a built-in's name is the built-in;
            // otherwise the name alone says which method it may be, and the edge says so.
            let on_self = SELF_NAMES.contains(&c.receiver.as_str());
            if BUILTIN_METHODS.contains(&name) && !on_self {
                return Err(external_name(c));
            }
            let methods: Vec<u32> = cands.iter().copied().filter(|&d| is_method(d)).collect();
            let methods = self.narrow(file, name, methods);
            return match methods.len() {
                0 => Err(external_name(c)),
                n if n <= 3 => Ok(methods.into_iter().map(|d| (d, Confidence::Inferred)).collect()),
                // Many classes define it: no guess.
                _ => Ok(Vec::new()),
            };
        }
        // A name imported from an installed package is that package's, unless this file
        // defines it too.
        if self.foreign_names[file as usize].contains(name)
            && !cands.iter().any(|&d| self.cg.defs[d as usize].file == file)
        {
            return Err(external_name(c));
        }
        // Direct call: a method is reachable only through an implicit `this` — from inside its
        // own type (or the same file); free functions and types from anywhere.
        let enclosing = self.enclosing_types(scope);
        // A bare Ruby name is a method of `self`: a top-level `def` of another file is reached
        // only when that file is required.
        let ruby = self.cg.files[file as usize].lang == crate::lang::Lang::Ruby;
        cands.retain(|&d| {
            let def = &self.cg.defs[d as usize];
            match def.kind.as_str() {
                "method" | "constructor" => def.file == file || def.parent.is_some_and(|p| enclosing.contains(&p)),
                _ if ruby && def.parent.is_none() => {
                    def.file == file || self.imported_files[file as usize].contains(&def.file)
                }
                _ => true,
            }
        });
        // `Foo(…)` in a language with constructors named like their class: the type wins.
        if ctor_like && cands.iter().any(|&d| type_kind(&self.cg.defs[d as usize].kind)) {
            cands.retain(|&d| type_kind(&self.cg.defs[d as usize].kind));
        }
        if cands.is_empty() {
            return Err(external_name(c));
        }
        // The same file wins, then narrowing.
        let local: Vec<u32> = cands.iter().copied().filter(|&d| self.cg.defs[d as usize].file == file).collect();
        if !local.is_empty() {
            let best = self.last_bindings(prefer_enclosing(self.cg, &local, scope));
            return Ok(best.into_iter().map(|d| (d, Confidence::Extracted)).collect());
        }
        let cands = self.last_bindings(self.narrow(file, name, cands));
        Ok(match cands.len() {
            0 => return Err(external_name(c)),
            1 => vec![(cands[0], Confidence::Resolved)],
            _ => cands.into_iter().take(MAX_AMBIGUOUS).map(|d| (d, Confidence::Ambiguous)).collect(),
        })
    }
}

impl Resolver<'_> {
    /// The definitions a name used as a value stands for. Only what the code says is followed —
    /// the same file, a name imported from a file, a module alias, `self`, the package of a
    /// language whose packages share names — so a reference is never a guess by name alone.
    fn resolve_ref(&self, file: u32, scope: Option<u32>, r: &crate::chunk::facts::RefFact) -> Vec<(u32, Confidence)> {
        let name = r.name.as_str();
        let f = file as usize;
        let lang = self.cg.files[f].lang;
        let value_kind = |k: &str| callable_kind(k) || type_kind(k) || k == "variable" || k == "constant";
        if r.receiver.is_empty()
            && let Some(d) = self.imported_binding(file, name)
            && !self.defs_named(name, |_| true).iter().any(|&x| self.cg.defs[x as usize].file == file)
        {
            return vec![(d, Confidence::Resolved)];
        }
        let mut cands: Vec<u32> =
            self.defs_named(name, value_kind).into_iter().filter(|&d| self.reachable(file, d)).collect();
        if cands.is_empty() {
            return Vec::new();
        }
        let member_of_type = |d: u32| {
            self.cg.defs[d as usize].parent.is_some_and(|p| {
                let k = self.cg.defs[p as usize].kind.as_str();
                type_kind(k) || k == "impl" || k == "extension"
            })
        };
        let one = |v: Vec<u32>, conf: Confidence| -> Vec<(u32, Confidence)> {
            match v.len() {
                0 => Vec::new(),
                1 => vec![(v[0], conf)],
                _ => v.into_iter().take(MAX_AMBIGUOUS).map(|d| (d, Confidence::Ambiguous)).collect(),
            }
        };
        let here =
            |d: u32| if self.cg.defs[d as usize].file == file { Confidence::Extracted } else { Confidence::Resolved };
        let recv_clean = crate::chunk::defs::clean_name(r.receiver.trim());
        let recv = recv_clean.as_str();
        if !recv.is_empty() {
            // Rust's `crate::io::blocking::NAME`: a definition of the file at that module path.
            if lang == Lang::Rust && r.receiver.contains("::") {
                let segs: Vec<&str> =
                    recv.split('.').filter(|s| !matches!(*s, "crate" | "self" | "super" | "")).collect();
                if segs.is_empty() {
                    return Vec::new();
                }
                let tail = segs.join("/");
                let at: Vec<u32> = cands
                    .iter()
                    .copied()
                    .filter(|&d| {
                        let p = strip_ext(self.cg.def_path(d));
                        !member_of_type(d)
                            && (p.ends_with(&format!("/{tail}")) || p.ends_with(&format!("/{tail}/mod")) || p == tail)
                    })
                    .collect();
                return one(at, Confidence::Resolved);
            }
            if SELF_NAMES.contains(&recv) {
                // `self.on_done`: a member of the enclosing type or one of its bases.
                let types = self.enclosing_types(scope);
                let mut owned: Vec<u32> = types
                    .iter()
                    .flat_map(|t| self.members.get(t).into_iter().flatten().copied())
                    .filter(|m| cands.contains(m))
                    .collect();
                owned.sort_unstable();
                owned.dedup();
                let conf = owned.first().map_or(Confidence::Resolved, |&d| here(d));
                return one(owned, conf);
            }
            // `module.name`: a module-level definition of an imported file the receiver names.
            let alias = recv.rsplit(['.', ':']).next().unwrap_or("");
            let in_module: Vec<u32> = cands
                .iter()
                .copied()
                .filter(|&d| {
                    let def_file = self.cg.defs[d as usize].file;
                    let stem = strip_ext(&self.cg.files[def_file as usize].path).rsplit('/').next().unwrap_or("");
                    !member_of_type(d)
                        && (self.imported_names[f].get(alias).is_some_and(|fs| fs.contains(&def_file))
                            || (alias == stem && self.imported_files[f].contains(&def_file)))
                })
                .collect();
            if !in_module.is_empty() {
                return one(in_module, Confidence::Resolved);
            }
            // Through the package's own imports (`click.INT` from `click/__init__.py`).
            let through = self.exported(name, &self.module_files(file, alias), 0);
            if through.len() == 1 {
                return vec![(through[0], Confidence::Resolved)];
            }
            // `Type.member`: a static member of the types of that name the file sees.
            if alias.starts_with(|c: char| c.is_uppercase()) {
                let types: Vec<u32> = self
                    .narrow(file, alias, self.defs_named(alias, type_kind))
                    .into_iter()
                    .filter(|&t| self.reachable(file, t))
                    .collect();
                // Partial declarations of one type count once.
                let mut distinct: Vec<&str> =
                    types.iter().map(|&t| self.cg.defs[t as usize].qualified.as_str()).collect();
                distinct.sort_unstable();
                distinct.dedup();
                if !types.is_empty() && distinct.len() <= 3 && types.len() <= 32 {
                    let mut owned: Vec<u32> = types
                        .iter()
                        .flat_map(|t| self.members.get(t).into_iter().flatten().copied())
                        .filter(|m| cands.contains(m))
                        .collect();
                    owned.sort_unstable();
                    owned.dedup();
                    let conf = owned.first().map_or(Confidence::Resolved, |&d| here(d));
                    return one(owned, conf);
                }
            }
            return Vec::new();
        }
        // A bare name: never another type's member, except inside that type (an implicit `this`).
        let enclosing = self.enclosing_types(scope);
        cands
            .retain(|&d| !member_of_type(d) || self.cg.defs[d as usize].parent.is_some_and(|p| enclosing.contains(&p)));
        let local: Vec<u32> = cands.iter().copied().filter(|&d| self.cg.defs[d as usize].file == file).collect();
        if !local.is_empty() {
            return one(prefer_enclosing(self.cg, &local, scope), Confidence::Extracted);
        }
        if self.foreign_names[f].contains(name) {
            return Vec::new();
        }
        if let Some(files) = self.imported_names[f].get(name) {
            let by_name: Vec<u32> =
                cands.iter().copied().filter(|&d| files.contains(&self.cg.defs[d as usize].file)).collect();
            if !by_name.is_empty() {
                return one(by_name, Confidence::Resolved);
            }
        }
        // Languages whose packages (a directory) or includes share names without an import.
        let dir = dir_of(&self.cg.files[f].path);
        let visible: Vec<u32> = match lang {
            Lang::Go | Lang::Java | Lang::Kotlin | Lang::Scala | Lang::Swift => {
                cands.iter().copied().filter(|&d| dir_of(self.cg.def_path(d)) == dir).collect()
            }
            Lang::CSharp | Lang::C | Lang::Cpp | Lang::ObjC => cands
                .iter()
                .copied()
                .filter(|&d| {
                    dir_of(self.cg.def_path(d)) == dir
                        || self.imported_files[f].contains(&self.cg.defs[d as usize].file)
                })
                .collect(),
            _ => Vec::new(),
        };
        one(visible, Confidence::Resolved)
    }
}

/// Among same-file candidates, those sharing the caller's container; else all (one if only one).
fn prefer_enclosing(cg: &CodeGraph, local: &[u32], scope: Option<u32>) -> Vec<u32> {
    if local.len() == 1 {
        return local.to_vec();
    }
    let caller_parent = scope.and_then(|s| cg.defs[s as usize].parent);
    let same: Vec<u32> = local.iter().copied().filter(|&d| cg.defs[d as usize].parent == caller_parent).collect();
    let top: Vec<u32> = local.iter().copied().filter(|&d| cg.defs[d as usize].parent.is_none()).collect();
    if !same.is_empty() {
        same
    } else if !top.is_empty() {
        top
    } else {
        local.to_vec()
    }
}

fn external_name(c: &crate::chunk::facts::CallFact) -> String {
    let r = c.receiver.trim();
    if !r.is_empty()
        && r.len() <= 40
        && r.chars().all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '.')
        && !SELF_NAMES.contains(&r)
    {
        format!("{r}.{}", c.name)
    } else {
        c.name.clone()
    }
}
