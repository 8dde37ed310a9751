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

/// Whether a path is build output or secondary code (examples, benchmarks, doc snippets).
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
];
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
    vendored: f32,
    /// Multiplier of a chunk of a file whose stem is a word of the query.
    stem: f32,
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
}

impl Default for Factors {
    fn default() -> Self {
        Factors {
            test: TEST_FACTOR,
            prose: PROSE_FACTOR,
            secondary: SECONDARY_FACTOR,
            vendored: crate::config::DEFAULT_VENDOR_FACTOR,
            stem: crate::config::DEFAULT_STEM_FACTOR,
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
            vendored: if about(&vendor_words) { 1.0 } else { f.vendored },
            stem: f.stem,
            words,
            idents: query_identifiers(query),
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
        self.explain(data, ord).iter().map(|p| p.1).product()
    }

    /// The priors that apply to chunk `ord`, each with its factor (their product is
    /// [`Priors::factor`]).
    pub fn explain(&self, data: &ViewData, ord: u32) -> Vec<(&'static str, f32)> {
        let c = data.table.chunk(ord);
        let mut out = Vec::new();
        let kind = if !c.lang.is_code() {
            Some(("prose or data file", self.prose))
        } else if crate::graph::model::is_test_path(c.path) {
            Some(("test file", self.test))
        } else if is_secondary_path(c.path) {
            Some(("secondary code (examples, benchmarks, build output)", self.secondary))
        } else if is_vendored_path(c.path) {
            Some(("vendored or third-party code", self.vendored))
        } else {
            None
        };
        out.extend(kind.filter(|k| k.1 != 1.0));
        if self.stem != 1.0 && !self.words.is_empty() {
            let file = c.path.rsplit('/').next().unwrap_or(c.path);
            let stem = file.split('.').next().unwrap_or(file).to_lowercase();
            if self.words.contains(&stem) {
                out.push(("its file is named by a word of the query", self.stem));
            }
        }
        if !self.idents.is_empty() {
            let name = c.symbol.rsplit(['.', ':', '#']).next().unwrap_or(c.symbol);
            let file = c.path.rsplit('/').next().unwrap_or(c.path);
            let stem = file.split('.').next().unwrap_or(file);
            let qualified = c.symbol.replace("::", ".").replace('#', ".").to_ascii_lowercase();
            let member = |i: &String| {
                let i = i.to_ascii_lowercase();
                i.contains('.') && (qualified == i || qualified.ends_with(&format!(".{i}")))
            };
            let plain = |i: &String| !i.contains('.') && (i.eq_ignore_ascii_case(name) || i.eq_ignore_ascii_case(stem));
            if self.idents.iter().any(member) {
                // The member named in full, above its type (which its parts name).
                out.push(("the member the query names in full", IDENT_FACTOR));
            } else if self.idents.iter().any(plain) {
                out.push(("named by an identifier in the query", IDENT_FACTOR));
            }
        }
        if let Some((h, weight, half_life)) = &self.recency {
            let r = h.recency(data.table.chunk_file(ord), *half_life);
            if r > 0.0 {
                out.push(("changed recently", 1.0 + weight * r));
            }
        }
        out
    }

    /// Rescores `ranked` in place (ordering is the caller's).
    pub fn apply(&self, data: &ViewData, ranked: &mut [Ranked]) {
        for r in ranked.iter_mut() {
            r.score *= self.factor(data, r.ord);
        }
    }
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
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
    use super::query_identifiers;

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
}
