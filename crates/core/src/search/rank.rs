//! Priors applied after retrieval: what kind of file a hit is in (test, prose, code),
//! whether it is the definition of an identifier the query names, and how much other evidence
//! its file has, folded into the score so the first files shown are the ones a question is about. Measured on the evaluation sets in
//! docs/EVALUATION.md; each factor is a multiplier on the retrieval score.

use super::Ranked;
use crate::view::ViewData;

/// Test files, unless the query is about tests: questions name behaviour, and a test of it
/// repeats the same words around fixtures.
pub const TEST_FACTOR: f32 = crate::config::DEFAULT_TEST_FACTOR;
/// Prose and data (Markdown, text, JSON, YAML, TOML), unless the query is about documentation:
/// changelogs and guides restate features in the words questions use.
pub const PROSE_FACTOR: f32 = crate::config::DEFAULT_PROSE_FACTOR;
/// The definition (or the file) named like an identifier written in the query.
pub const IDENT_FACTOR: f32 = 1.5;
/// Build output, bundles and minified files (`dist/`, `*.min.js`), examples, benchmarks and
/// documentation snippets, unless the query is about them: they repeat what the source says.
pub const SECONDARY_FACTOR: f32 = crate::config::DEFAULT_SECONDARY_FACTOR;

/// Whether a path is build output or secondary code (examples, benchmarks, doc snippets, code
/// a generator wrote).
pub fn is_secondary_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let dirs: Vec<&str> = lower.split('/').collect();
    dirs[..dirs.len().saturating_sub(1)].iter().any(|d| {
        matches!(
            *d,
            "dist"
                | "build"
                | "out"
                | "bundle"
                | "bundles"
                | "compiled"
                | "generated"
                | "example"
                | "examples"
                | "bench"
                | "benches"
                | "benchmark"
                | "benchmarks"
                | "snippets"
                | "samples"
                | "sample"
                | "demo"
                | "demos"
        )
    }) || name.contains(".min.")
        || name.contains(".bundle.")
        || is_generated_name(name)
}

/// File names that generators give their output by convention: protobuf and gRPC stubs
/// (`*.pb.go`, `*_pb2.py`, `*.pb.cc`), Kubernetes' `zz_generated.*`, `*.gen.ts`,
/// `*_generated.go`, Dart's `*.g.dart` / `*.freezed.dart`, C#'s `*.designer.cs` / `*.g.cs`.
/// They restate the schema the source declares, at length. `name` is lowercase.
fn is_generated_name(name: &str) -> bool {
    let stem_ends = |suffixes: &[&str]| {
        let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
        suffixes.iter().any(|x| stem.ends_with(x))
    };
    // The marker sits just before the extension: `phx.gen.channel.ex` is a generator's source.
    name.starts_with("zz_generated")
        || stem_ends(&[
            ".pb",
            ".gen",
            ".generated",
            "_pb2",
            "_pb2_grpc",
            "_pb",
            "_grpc_pb",
            "_generated",
            ".g",
            ".freezed",
            ".designer",
        ])
}

/// Type declarations written beside the code they describe (`index.d.ts`, `*.pyi` stubs): they
/// restate every public name with its documentation, so they match questions about behaviour
/// that the implementation answers.
pub fn is_declaration_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    [".d.ts", ".d.cts", ".d.mts", ".pyi"].iter().any(|s| name.ends_with(s))
}

/// Code that lives in the repository but is someone else's: vendored dependencies and
/// third-party trees. A question about the repository is rarely about them.
pub fn is_vendored_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let dirs: Vec<&str> = lower.split('/').collect();
    dirs[..dirs.len().saturating_sub(1)].iter().any(|d| {
        matches!(
            *d,
            "vendor"
                | "vendored"
                | "third_party"
                | "third-party"
                | "thirdparty"
                | "node_modules"
                | "bower_components"
                | "external"
                | "extern"
                | "deps"
        )
    })
}

/// Query words that make test files fair game.
const TEST_WORDS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "tested",
    "spec",
    "specs",
    "fixture",
    "fixtures",
    "mock",
    "mocks",
    "assert",
    "assertion",
    "coverage",
    "bench",
    "benchmark",
];
/// Query words that make examples, benchmarks and build output fair game.
const SECONDARY_WORDS: &[&str] = &[
    "example",
    "examples",
    "sample",
    "samples",
    "demo",
    "bench",
    "benchmark",
    "benchmarks",
    "dist",
    "build",
    "bundle",
    "snippet",
    "snippets",
    "generated",
    "codegen",
    "protobuf",
];
/// Query words that make type declarations fair game.
const DECLARATION_WORDS: &[&str] =
    &["type", "types", "typing", "typings", "typed", "typescript", "declaration", "declarations", "stub", "stubs"];
/// Query words that make documentation fair game.
const DOC_WORDS: &[&str] = &[
    "doc",
    "docs",
    "documentation",
    "document",
    "readme",
    "changelog",
    "guide",
    "tutorial",
    "example",
    "examples",
    "docstring",
    "config",
    "configuration",
];

pub struct Priors {
    test: f32,
    prose: f32,
    secondary: f32,
    declaration: f32,
    vendored: f32,
    /// Multiplier of a chunk of a file whose stem is a word of the query.
    stem: f32,
    /// Multiplier of a chunk of a file under a scope the query names, and those scopes.
    scope: f32,
    scopes: Vec<String>,
    words: Vec<String>,
    idents: Vec<String>,
    /// The view's history, the prior's weight and half-life (in commits).
    recency: Option<(std::sync::Arc<crate::view::history::HistoryField>, f32, f32)>,
}

/// The prior factors (configurable for measurement; the defaults are the constants above).
#[derive(Debug, Clone, Copy)]
pub struct Factors {
    pub test: f32,
    pub prose: f32,
    pub secondary: f32,
    pub vendored: f32,
    pub stem: f32,
    pub scope: f32,
}

impl Default for Factors {
    fn default() -> Self {
        Factors {
            test: TEST_FACTOR,
            prose: PROSE_FACTOR,
            secondary: SECONDARY_FACTOR,
            vendored: crate::config::DEFAULT_VENDOR_FACTOR,
            stem: crate::config::DEFAULT_STEM_FACTOR,
            scope: crate::config::DEFAULT_SCOPE_FACTOR,
        }
    }
}

impl Priors {
    pub fn for_query(query: &str) -> Priors {
        Self::with_factors(query, Factors::default())
    }

    pub fn with_factors(query: &str, f: Factors) -> Priors {
        let terms = crate::analyze::query_terms(query);
        let about = |words: &[&str]| terms.iter().any(|t| words.contains(&t.as_str()));
        let vendor_words = ["vendor", "vendored", "dependency", "dependencies", "third", "party", "module", "modules"];
        // The query's words as written (lowercase), for names: not stems, not split parts.
        let words: Vec<String> = query
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() > 2)
            .map(|w| w.to_lowercase())
            .filter(|w| !crate::analyze::is_stop_word(w))
            .collect();
        Priors {
            test: if about(TEST_WORDS) { 1.0 } else { f.test },
            prose: if about(DOC_WORDS) { 1.0 } else { f.prose },
            secondary: if about(SECONDARY_WORDS) { 1.0 } else { f.secondary },
            declaration: if about(DECLARATION_WORDS) { 1.0 } else { f.secondary },
            vendored: if about(&vendor_words) { 1.0 } else { f.vendored },
            stem: f.stem,
            scope: f.scope,
            scopes: commit_scopes(query),
            words,
            idents: {
                // A query that is one unqualified name (`Visitor`, `Router`) names it as surely
                // as one written like code (a qualified one is read as a member above).
                let mut idents = query_identifiers(query);
                if let Some(name) = symbol_query(query).filter(|n| n.len() == 1).and_then(|mut n| n.pop())
                    && !idents.contains(&name)
                {
                    idents.push(name);
                }
                idents
            },
            recency: None,
        }
    }

    /// Lifts files changed shortly before the view's revision: × (1 + `weight` × 2^(−commits
    /// since the file changed / `half_life`)). Work clusters: the files of the last commits
    /// are the likeliest subject of the next question.
    pub fn with_recency(
        mut self,
        history: std::sync::Arc<crate::view::history::HistoryField>,
        weight: f32,
        half_life: f32,
    ) -> Priors {
        self.recency = Some((history, weight, half_life));
        self
    }

    /// The multiplier for chunk `ord`.
    pub fn factor(&self, data: &ViewData, ord: u32) -> f32 {
        let mut f = 1.0;
        self.each(data, ord, |_, x| f *= x);
        f
    }

    /// The priors that apply to chunk `ord`, each with its factor (their product is
    /// [`Priors::factor`]).
    pub fn explain(&self, data: &ViewData, ord: u32) -> Vec<(&'static str, f32)> {
        let mut out = Vec::new();
        self.each(data, ord, |why, x| out.push((why, x)));
        out
    }

    /// Calls `out` with each prior that applies to chunk `ord` and its factor (every candidate
    /// of every search comes through here: nothing is allocated unless a qualified name asks).
    fn each(&self, data: &ViewData, ord: u32, mut out: impl FnMut(&'static str, f32)) {
        // The file's path and language come from the view's file table; the chunk's row (its
        // symbol) is read only when the query names an identifier.
        let file = data.table.chunk_file(ord);
        let (path, lang) = (data.table.file_path(file), data.table.file_lang(file));
        struct Head<'a> {
            path: &'a str,
            lang: crate::lang::Lang,
        }
        let c = Head { path, lang };
        let kind = if !crate::lang::is_code_file(c.lang, c.path) {
            Some(("prose or data file", self.prose))
        } else if crate::graph::model::is_test_path(c.path) {
            Some(("test file", self.test))
        } else if is_declaration_path(c.path) {
            Some(("type declarations (.d.ts, .pyi)", self.declaration))
        } else if is_secondary_path(c.path) {
            Some(("secondary code (examples, benchmarks, build output, generated)", self.secondary))
        } else if is_vendored_path(c.path) {
            Some(("vendored or third-party code", self.vendored))
        } else {
            None
        };
        if let Some((why, x)) = kind.filter(|k| k.1 != 1.0) {
            out(why, x);
        }
        if self.stem != 1.0 && !self.words.is_empty() {
            let file = c.path.rsplit('/').next().unwrap_or(c.path);
            let stem = file.split('.').next().unwrap_or(file);
            if self.words.iter().any(|w| lowercase_eq(w, stem)) {
                out("its file is named by a word of the query", self.stem);
            }
        }
        if self.scope != 1.0 && !self.scopes.is_empty() && in_scope(c.path, &self.scopes) {
            out("under the scope the query names (`scope: …`)", self.scope);
        }
        if !self.idents.is_empty() {
            let c = data.table.chunk(ord);
            let name = c.symbol.rsplit(['.', ':', '#']).next().unwrap_or(c.symbol);
            let file = c.path.rsplit('/').next().unwrap_or(c.path);
            let stem = file.split('.').next().unwrap_or(file);
            let member = || {
                let qualified = c.symbol.replace("::", ".").replace('#', ".").to_ascii_lowercase();
                self.idents.iter().filter(|i| i.contains('.')).any(|i| {
                    let i = i.to_ascii_lowercase();
                    qualified == i || qualified.ends_with(&format!(".{i}"))
                })
            };
            let plain = |i: &String| !i.contains('.') && (i.eq_ignore_ascii_case(name) || i.eq_ignore_ascii_case(stem));
            if self.idents.iter().any(|i| i.contains('.')) && member() {
                // The member named in full, above its type (which its parts name).
                out("the member the query names in full", IDENT_FACTOR);
            } else if self.idents.iter().any(plain) {
                out("named by an identifier in the query", IDENT_FACTOR);
            }
        }
        if let Some((h, weight, half_life)) = &self.recency {
            let r = h.recency(data.table.chunk_file(ord), *half_life);
            if r > 0.0 {
                out("changed recently", 1.0 + weight * r);
            }
        }
    }

    /// Rescores `ranked` in place (ordering is the caller's).
    pub fn apply(&self, data: &ViewData, ranked: &mut [Ranked]) {
        for r in ranked.iter_mut() {
            r.score *= self.factor(data, r.ord);
        }
    }
}

/// Whether `stem`, lowercased, is `word` (what `to_lowercase` then `==` says, without the copy).
fn lowercase_eq(word: &str, stem: &str) -> bool {
    if stem.is_ascii() {
        word.len() == stem.len() && word.bytes().zip(stem.bytes()).all(|(w, s)| w == s.to_ascii_lowercase())
    } else {
        *word == stem.to_lowercase()
    }
}

/// Words of a commit subject's conventional prefix, not scopes: `fix: …` names a kind of change.
const CHANGE_KINDS: &[&str] = &[
    "feat", "feature", "fix", "bugfix", "hotfix", "chore", "docs", "doc", "refactor", "perf", "test", "tests", "build",
    "ci", "style", "revert", "deps", "release", "bump", "wip", "breaking",
];

/// The scopes a query written as a commit subject names in its prefix, lowercase: `io: …` and
/// `net/http: …` (path components), `fix(router): …` and `feat(core, cli)!: …` (the scope
/// in parentheses). Projects name a change's area so, and the area is a directory or a module.
pub fn commit_scopes(query: &str) -> Vec<String> {
    let q = query.trim_start();
    let Some(colon) = q.find(": ") else { return Vec::new() };
    let head = &q[..colon];
    let (name, paren) = match head.find('(') {
        Some(i) if head.trim_end_matches('!').ends_with(')') => {
            (&head[..i], Some(head[i + 1..].trim_end_matches('!').trim_end_matches(')')))
        }
        _ => (head.trim_end_matches('!'), None),
    };
    let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
    let listed = |s: &str, seps: &[char]| s.split(seps).map(str::trim).all(|w| w.is_empty() || word(w));
    if name.trim().is_empty() || !listed(name, &[',', '/']) || paren.is_some_and(|p| !listed(p, &[',', ' ', '/', '|']))
    {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    let mut add = |w: &str| {
        let w = w.trim().to_lowercase();
        if w.len() >= 2 && !CHANGE_KINDS.contains(&w.as_str()) && !out.contains(&w) {
            out.push(w);
        }
    };
    if let Some(p) = paren {
        p.split([',', ' ', '/', '|']).for_each(&mut add);
    }
    name.split([',', '/']).for_each(&mut add);
    out
}

/// Whether one of `path`'s directories or its stem is one of `scopes` (`-` and `_` alike), or
/// begins with one of three characters or more (`sync` → `synchronization/`).
fn in_scope(path: &str, scopes: &[String]) -> bool {
    let lower = path.to_lowercase();
    let mut parts: Vec<&str> = lower.split('/').collect();
    if let Some(file) = parts.pop() {
        parts.push(file.split('.').next().unwrap_or(file));
    }
    parts.iter().any(|p| {
        scopes.iter().any(|s| {
            *p == s.as_str()
                || p.replace('_', "-") == s.replace('_', "-")
                || (s.len() >= 3 && p.starts_with(s.as_str()))
        })
    })
}

/// Adds to each hit `share` times the best other hit of its file, so a file that two retrieved
/// chunks point at rises over a file with one lucky chunk. The second-best hit, not the sum:
/// summing all of them lifted long files with many weak matches (measured worse).
pub fn file_evidence(data: &ViewData, ranked: &mut [Ranked], share: f32) {
    if share <= 0.0 {
        return;
    }
    // The best two scores per file.
    let mut best: std::collections::HashMap<&str, (f32, f32)> = std::collections::HashMap::new();
    for r in ranked.iter() {
        let e = best.entry(data.table.chunk(r.ord).path).or_insert((0.0, 0.0));
        if r.score > e.0 {
            *e = (r.score, e.0);
        } else if r.score > e.1 {
            e.1 = r.score;
        }
    }
    for r in ranked.iter_mut() {
        let (first, second) = best[data.table.chunk(r.ord).path];
        let other = if r.score >= first { second } else { first };
        r.score += share * other;
    }
}

/// Additive lifts, each a share of the best candidate's score (so they mean the same on BM25's
/// scale and on fused scores), applied before the priors. A multiplier cannot carry a chunk
/// from the middle of the list to the top; the question naming the thing is strong evidence.
#[derive(Debug, Clone, Copy, Default)]
pub struct Boosts {
    /// A chunk that defines a symbol the query names: this share of the best score, half of it
    /// for a name inside a sentence, ×1.5 when the file's stem is that name too.
    pub definition: f32,
    /// A chunk of a file whose name or directory holds the query's words: this share × the
    /// fraction of the words matched (sentences only: a bare symbol is the definition's).
    pub path: f32,
    /// A file's best chunk gains this share × the sum of the file's candidate scores relative
    /// to the largest file sum: several good chunks point at a file more surely than one.
    pub coherence: f32,
}

/// Applies [`Boosts`] to `ranked` in place, recording each lift in [`Ranked::boost`].
pub fn boost(data: &ViewData, ranked: &mut [Ranked], query: &str, b: Boosts) {
    let max = ranked.iter().map(|r| r.score).fold(0.0f32, f32::max);
    if max <= 0.0 {
        return;
    }
    let symbol = symbol_query(query);
    if b.definition > 0.0 {
        let (names, scale) = match &symbol {
            Some(names) => (names.clone(), 1.0),
            None => {
                (query_identifiers(query).iter().map(|i| i.rsplit('.').next().unwrap_or(i).to_string()).collect(), 0.5)
            }
        };
        if !names.is_empty() {
            let unit = b.definition * scale * max;
            let lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
            for r in ranked.iter_mut() {
                let c = data.table.chunk(r.ord);
                let name = c.symbol.rsplit(['.', ':', '#']).next().unwrap_or(c.symbol);
                if name.is_empty() || !names.iter().any(|n| n == name) {
                    continue;
                }
                let stem = file_stem(c.path).to_lowercase();
                let lift = if lower.iter().any(|n| stem_is(&stem, n)) { unit * 1.5 } else { unit };
                r.boost += lift;
                r.score += lift;
            }
        }
    }
    if b.path > 0.0 && symbol.is_none() {
        let keywords = path_keywords(query);
        if !keywords.is_empty() {
            let mut ratio: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
            for r in ranked.iter_mut() {
                let file = data.table.chunk_file(r.ord);
                let share = *ratio.entry(file).or_insert_with(|| {
                    let parts = path_parts(data.table.chunk(r.ord).path);
                    let matched = keywords.iter().filter(|k| parts.iter().any(|p| word_matches(k, p))).count();
                    matched as f32 / keywords.len() as f32
                });
                if share > 0.0 {
                    let lift = b.path * max * share;
                    r.boost += lift;
                    r.score += lift;
                }
            }
        }
    }
    if b.coherence > 0.0 {
        let max = ranked.iter().map(|r| r.score).fold(0.0f32, f32::max);
        // Per file: the sum of its candidates' scores and its best candidate.
        let mut files: std::collections::HashMap<u32, (f32, usize)> = std::collections::HashMap::new();
        for (i, r) in ranked.iter().enumerate() {
            let e = files.entry(data.table.chunk_file(r.ord)).or_insert((0.0, i));
            e.0 += r.score;
            if r.score > ranked[e.1].score {
                e.1 = i;
            }
        }
        let top = files.values().map(|f| f.0).fold(0.0f32, f32::max);
        if top > 0.0 {
            for &(sum, best) in files.values() {
                let lift = b.coherence * max * sum / top;
                ranked[best].boost += lift;
                ranked[best].score += lift;
            }
        }
    }
}

/// The names a query asks for when it is one symbol and nothing else (`HTTPAdapter`,
/// `field_validator`, `Sinatra::Base`, `_private`): the last segment and the whole. A lowercase
/// word alone (`session`) is a topic, not a name.
fn symbol_query(query: &str) -> Option<Vec<String>> {
    let q = query.trim().trim_matches('`');
    if q.is_empty() || q.contains(char::is_whitespace) {
        return None;
    }
    let normalized = q.replace("::", ".").replace("->", ".").replace(['\\', '#'], ".");
    let parts: Vec<&str> = normalized.split('.').collect();
    let ident = |p: &str| {
        !p.is_empty()
            && p.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !p.chars().next().is_some_and(|c| c.is_ascii_digit())
    };
    if !parts.iter().all(|p| ident(p)) {
        return None;
    }
    let first = q.chars().next()?;
    let named = parts.len() > 1
        || first == '_'
        || first.is_uppercase()
        || q.chars().skip(1).any(|c| c.is_uppercase() || c == '_');
    if !named {
        return None;
    }
    let last = parts.last()?.to_string();
    let mut out = vec![last.clone()];
    if normalized != last {
        out.push(normalized);
    }
    Some(out)
}

fn file_stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file)
}

/// A file stem names `name` (both lowercase): exactly, without its underscores, or in the plural.
fn stem_is(stem: &str, name: &str) -> bool {
    let plain = stem.replace('_', "");
    [stem, plain.as_str()].iter().any(|s| *s == name || s.strip_suffix('s') == Some(name))
}

/// The words of a query matched against paths: lowercase, longer than two characters, not
/// function words.
fn path_keywords(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in query.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let w = w.to_lowercase();
        if w.chars().count() > 2 && !crate::analyze::is_stop_word(&w) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// The words of a file's stem and of its directory's name, split as identifiers are.
fn path_parts(path: &str) -> Vec<String> {
    let mut parts = crate::analyze::tokens(file_stem(path));
    let mut dirs = path.rsplit('/').skip(1);
    if let Some(dir) = dirs.next() {
        parts.extend(crate::analyze::tokens(dir));
    }
    parts
}

/// A query word and a path word are the same word, allowing one to extend the other
/// (`config` / `configuration`, `route` / `router`), from three characters on.
fn word_matches(keyword: &str, part: &str) -> bool {
    let (short, long) = if keyword.len() <= part.len() { (keyword, part) } else { (part, keyword) };
    short == long || (short.len() >= 3 && long.starts_with(short))
}

/// Each further chunk of a file already listed weighs less: in list order, the n-th chunk of a
/// file (counting from 0) is multiplied by `decay`ⁿ, and the list is sorted again. A file's first
/// chunk keeps its score, so the files named and their order of first appearance stay; what
/// changes is how many files the first chunks of a result list name. `ranked` must be sorted
/// best first; ties keep their order.
pub fn saturate(data: &ViewData, ranked: &mut [Ranked], decay: f32) {
    if !(decay > 0.0 && decay < 1.0) {
        return;
    }
    let mut seen: std::collections::HashMap<u32, i32> = std::collections::HashMap::new();
    for r in ranked.iter_mut() {
        let n = seen.entry(data.table.chunk_file(r.ord)).or_insert(0);
        if *n > 0 {
            r.decay = decay.powi(*n);
            r.score *= r.decay;
        }
        *n += 1;
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// A file as a whole: what `search --files` lists and what the evaluation scores.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RankedFile {
    pub path: String,
    /// Its best chunk's score (which already holds the file-evidence share of its next best).
    pub score: f32,
    /// Chunks of this file among the candidates.
    pub chunks: usize,
    /// The best chunk: lines and symbol.
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: String,
}

/// Files in the order of their best chunk in `ranked` (already sorted best first), at most
/// `limit`.
pub fn rank_files(data: &ViewData, ranked: &[Ranked], limit: usize) -> Vec<RankedFile> {
    let mut out: Vec<RankedFile> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for r in ranked {
        let c = data.table.chunk(r.ord);
        match at.get(c.path) {
            Some(&i) => out[i].chunks += 1,
            None => {
                if out.len() == limit {
                    continue;
                }
                at.insert(c.path, out.len());
                out.push(RankedFile {
                    path: c.path.to_string(),
                    score: r.score,
                    chunks: 1,
                    start_line: c.start_line,
                    end_line: c.end_line,
                    symbol: c.symbol.to_string(),
                });
            }
        }
    }
    out
}

/// Identifiers a query names: words written like code (`camelCase`, `snake_case`, inner
/// capitals as in `JsonReader`, or anything in backticks), longer than two characters.
pub fn query_identifiers(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A qualified name (`QueueManager.Append`, `pkg::Type::method`, `Type#method`) names that
    // member: kept whole (written with dots), besides its parts.
    for token in query.split(|c: char| c.is_whitespace() || c == '`' || c == '(' || c == ')' || c == ',') {
        let normalized =
            token.trim_matches(|c: char| !c.is_alphanumeric() && c != '_').replace("::", ".").replace('#', ".");
        let parts: Vec<&str> = normalized.split('.').collect();
        let ident = |p: &str| {
            !p.is_empty()
                && p.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !p.chars().next().is_some_and(|c| c.is_ascii_digit())
        };
        if parts.len() >= 2
            && parts.iter().all(|p| ident(p))
            && parts.iter().any(|p| p.chars().any(char::is_uppercase) || p.contains('_'))
            && !out.contains(&normalized)
        {
            out.push(normalized.clone());
        }
    }
    for (i, part) in query.split('`').enumerate() {
        let quoted = i % 2 == 1;
        for w in part.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| w.len() > 2) {
            let inner_capital = w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase);
            let snake = w.trim_matches('_').contains('_');
            if (quoted || inner_capital || snake) && !out.iter().any(|o| o == w) {
                out.push(w.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{commit_scopes, in_scope, query_identifiers, symbol_query, word_matches};

    #[test]
    fn a_query_of_one_name_names_its_definition() {
        use super::Priors;
        assert_eq!(Priors::for_query("Visitor").idents, ["Visitor"]);
        assert_eq!(Priors::for_query(" `Router` ").idents, ["Router"]);
        // A qualified name is a member (its last part alone would name every `Helpers`).
        assert_eq!(Priors::for_query("Sinatra::Helpers").idents, ["Sinatra.Helpers"]);
        // Topics and sentences name nothing.
        assert!(Priors::for_query("session").idents.is_empty());
        assert!(Priors::for_query("How sessions are kept").idents.is_empty());
    }

    #[test]
    fn a_bare_symbol_is_a_name_and_a_lowercase_word_a_topic() {
        assert_eq!(symbol_query("HTTPAdapter").unwrap(), ["HTTPAdapter"]);
        assert_eq!(symbol_query("field_validator").unwrap(), ["field_validator"]);
        assert_eq!(symbol_query("Sinatra::Base").unwrap(), ["Base", "Sinatra.Base"]);
        assert_eq!(symbol_query(" `_private` ").unwrap(), ["_private"]);
        assert!(symbol_query("session").is_none());
        assert!(symbol_query("how are sessions kept").is_none());
        assert!(symbol_query("v1.2").is_none());
    }

    #[test]
    fn declaration_files_are_told_from_the_code() {
        for p in ["index.d.ts", "types/index.d.cts", "lib/Foo.D.TS", "requests/api.pyi"] {
            assert!(super::is_declaration_path(p), "{p}");
        }
        for p in ["src/index.ts", "lib/d.ts/main.js", "types.py", "index.d.tsx"] {
            assert!(!super::is_declaration_path(p), "{p}");
        }
    }

    #[test]
    fn generated_files_are_secondary_code() {
        for p in [
            "prompb/remote.pb.go",
            "api/v1/service_pb2.py",
            "api/v1/service_pb2_grpc.py",
            "src/proto/msg.pb.cc",
            "pkg/apis/v1/zz_generated.deepcopy.go",
            "client/core/bodySerializer.gen.ts",
            "internal/parser_generated.go",
            "lib/models/user.g.dart",
            "lib/models/user.freezed.dart",
            "Forms/Main.Designer.cs",
            "web/api_pb.js",
        ] {
            assert!(super::is_secondary_path(p), "{p}");
        }
        for p in [
            "src/generator.go",
            "lib/pb.go",
            "src/gen.ts",
            "src/general.py",
            "cmd/genesis.go",
            "lib/mix/tasks/phx.gen.channel.ex",
            "a/b.go",
        ] {
            assert!(!super::is_secondary_path(p), "{p}");
        }
    }

    #[test]
    fn path_words_match_when_one_extends_the_other() {
        assert!(word_matches("config", "configuration"));
        assert!(word_matches("router", "route"));
        assert!(word_matches("log", "log"));
        assert!(!word_matches("handled", "handler"));
        assert!(!word_matches("at", "attr"));
    }

    #[test]
    fn identifiers_written_like_code() {
        assert_eq!(
            query_identifiers("Make `LazilyParsedNumber` implement `Comparable`"),
            ["LazilyParsedNumber", "Comparable"]
        );
        assert_eq!(
            query_identifiers("fix parse_http_request for JsonReader input"),
            ["parse_http_request", "JsonReader"]
        );
        assert!(query_identifiers("where are retries handled").is_empty());
        assert!(query_identifiers("HTTP and URL parsing").is_empty());
        assert_eq!(query_identifiers("QueueManager.Append"), ["QueueManager.Append", "QueueManager"]);
        assert_eq!(query_identifiers("how does `tokio::runtime::Builder` start")[0], "tokio.runtime.Builder");
        assert!(query_identifiers("version 1.2 and e.g. this").is_empty());
    }

    #[test]
    fn a_commit_subject_names_its_scope() {
        assert_eq!(commit_scopes("io: complete zero-length memory stream operations"), ["io"]);
        assert_eq!(commit_scopes("net/http: reject bad headers"), ["net", "http"]);
        assert_eq!(commit_scopes("fix(router): keep the trailing slash"), ["router"]);
        assert_eq!(commit_scopes("feat(core, cli)!: drop the old flag"), ["core", "cli"]);
        assert_eq!(commit_scopes("tokio-test: fix a lint"), ["tokio-test"]);
        // A kind of change is not a scope, and a sentence is not a prefix.
        assert!(commit_scopes("fix: typo in the docs").is_empty());
        assert!(commit_scopes("how does the cache work: in short").is_empty());
        assert!(commit_scopes("where are retries handled").is_empty());
        assert!(in_scope("tokio/src/io/util/mem.rs", &["io".into()]));
        assert!(in_scope("tokio-test/src/macros.rs", &["tokio_test".into()]));
        assert!(in_scope("src/router.js", &["router".into()]));
        assert!(in_scope("lib/synchronization/mutex.rb", &["sync".into()]));
        assert!(!in_scope("src/iox/a.rs", &["io".into()]), "two letters match whole components only");
        assert!(!in_scope("tokio/src/net/tcp.rs", &["io".into()]));
    }
}
