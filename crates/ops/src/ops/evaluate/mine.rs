//! Mining evaluation questions from a repository's own history: a commit's subject (and, as a
//! second variant, subject + body) asked at the commit's parent, answered by the non-test
//! source files the commit modified. The rules that keep a commit are recorded in the output.

use super::dataset::{Expected, Question};
use crate::graph::model::is_test_path;
use crate::lang;
use crate::repo::Repo;
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;

pub struct MineOptions {
    /// `A..B`, or a single revision (its whole history).
    pub range: String,
    pub max: usize,
    /// Commits modifying more source files than this are skipped (too diffuse to be a question).
    pub max_files: usize,
}

#[derive(Debug, Serialize)]
pub struct Mined {
    pub range: String,
    pub rules: Vec<String>,
    pub commits_seen: usize,
    pub commits_kept: usize,
    pub skipped: BTreeMap<&'static str, usize>,
    pub questions: Vec<Question>,
}

pub fn rules(max_files: usize) -> Vec<String> {
    vec![
        "query = commit subject (PR numbers like `(#123)` removed); a second variant adds the body when there is one".into(),
        "asked at the commit's first parent; answers = non-test source files the commit modified or deleted (files it added did not exist yet)".into(),
        "skipped: merges and root commits".into(),
        "skipped: reverts (subject starts with `Revert`)".into(),
        "skipped: version bumps and releases (`bump version`, `release`, `v1.2.3`, `chore(release)`, `[maven-release-plugin]`)".into(),
        "skipped: dependency updates (dependabot/renovate, `bump X from Y to Z`, `deps`, or only manifests/lockfiles changed)".into(),
        "skipped: formatting and lint commits (`fmt`, `format`, `lint`, `style`, `whitespace`, `typo`, `prettier`, `gofmt`, `rustfmt`, `clippy`)".into(),
        "skipped: docs-only commits (no source file changed)".into(),
        format!("skipped: commits modifying no source file or more than {max_files}"),
        "skipped: a subject already asked (same words, any case)".into(),
    ]
}

fn clean_subject(s: &str) -> String {
    let mut t = s.trim().to_string();
    // "(#1234)" at the end, as squash merges write it (sometimes twice).
    while let Some(i) = t.rfind("(#") {
        let tail = t[i + 2..].trim_end();
        match tail.strip_suffix(')') {
            Some(num) if !num.is_empty() && num.chars().all(|c| c.is_ascii_digit()) => {
                t = t[..i].trim_end().to_string()
            }
            _ => break,
        }
    }
    t
}

fn skip_reason(subject: &str) -> Option<&'static str> {
    let s = subject.to_lowercase();
    let words: Vec<&str> = s.split(|c: char| !c.is_alphanumeric() && c != '.').filter(|w| !w.is_empty()).collect();
    if s.starts_with("revert") {
        return Some("revert");
    }
    let version_like = |w: &str| {
        let w = w.trim_start_matches('v');
        w.contains('.') && w.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    };
    if s.starts_with("release")
        || s.starts_with("bump version")
        || s.starts_with("[maven-release-plugin]")
        || s.contains("prepare for next development iteration")
        || s.starts_with("chore(release)")
        || s.starts_with("prepare release")
        || words.first().is_some_and(|w| version_like(w))
        || s.starts_with("version ")
    {
        return Some("version bump");
    }
    if s.contains("dependabot")
        || s.contains("renovate")
        || (s.starts_with("bump ") && s.contains(" from "))
        || words.iter().any(|w| matches!(*w, "deps" | "dependency" | "dependencies"))
        || s.starts_with("build(deps")
        || s.starts_with("chore(deps")
    {
        return Some("dependency update");
    }
    // Formatting / lint: the subject is about it (its first word, or a telltale phrase), not a
    // code change that happens to mention whitespace.
    let first = words.iter().find(|w| !matches!(**w, "chore" | "style" | "ci" | "build")).copied().unwrap_or("");
    let formatting_words = [
        "fmt",
        "format",
        "formatting",
        "reformat",
        "gofmt",
        "rustfmt",
        "prettier",
        "lint",
        "linting",
        "clippy",
        "whitespace",
        "typo",
        "typos",
    ];
    let phrases = [
        "fix typo",
        "fix formatting",
        "code style",
        "run the formatter",
        "run formatter",
        "cargo fmt",
        "go fmt",
        "apply formatting",
        "clang-format",
        "fix lint",
        "lint fix",
        "clippy",
        "prettier",
        "gofmt",
        "rustfmt",
    ];
    if formatting_words.contains(&first) || s.starts_with("style") || phrases.iter().any(|p| s.contains(p)) {
        return Some("formatting");
    }
    None
}

fn is_source(path: &str) -> bool {
    lang::by_path(path).is_some_and(|l| lang::is_code_file(l, path)) && !is_test_path(path)
}

fn is_manifest(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "go.mod"
            | "go.sum"
            | "Cargo.toml"
            | "Cargo.lock"
            | "package.json"
            | "package-lock.json"
            | "yarn.lock"
            | "pnpm-lock.yaml"
            | "requirements.txt"
            | "poetry.lock"
            | "Pipfile.lock"
            | "pom.xml"
            | "build.gradle"
            | "Gemfile"
            | "Gemfile.lock"
            | "composer.json"
            | "composer.lock"
    )
}

pub fn mine(repo: &Repo, o: &MineOptions) -> Result<Mined> {
    let (from, to) = match o.range.split_once("..") {
        Some((a, b)) => (
            Some(a.trim_end_matches('.').to_string()).filter(|s| !s.is_empty()),
            if b.is_empty() { "HEAD".to_string() } else { b.to_string() },
        ),
        None => (None, o.range.clone()),
    };
    let commits = repo.commits_in_range(from.as_deref(), &to, o.max.saturating_mul(20).max(200))?;
    let mut out = Mined {
        range: o.range.clone(),
        rules: rules(o.max_files),
        commits_seen: 0,
        commits_kept: 0,
        skipped: BTreeMap::new(),
        questions: Vec::new(),
    };
    let mut subjects = std::collections::HashSet::new();
    for c in commits {
        if out.commits_kept >= o.max {
            break;
        }
        out.commits_seen += 1;
        let mut skip = |r: &'static str| *out.skipped.entry(r).or_default() += 1;
        if c.parents.len() != 1 {
            skip(if c.parents.is_empty() { "root commit" } else { "merge" });
            continue;
        }
        if let Some(r) = skip_reason(&c.subject) {
            skip(r);
            continue;
        }
        let parent = c.parents[0];
        let changed = repo.changed_paths(parent, c.id)?;
        if changed.is_empty() {
            skip("no file changed");
            continue;
        }
        if changed.iter().all(|(p, _)| is_manifest(p)) {
            skip("dependency update");
            continue;
        }
        let sources: Vec<&(String, char)> = changed.iter().filter(|(p, _)| is_source(p)).collect();
        if sources.is_empty() {
            skip(
                if changed
                    .iter()
                    .all(|(p, _)| lang::by_path(p).is_some_and(|l| !lang::is_code_file(l, p)) || p.starts_with("docs/"))
                {
                    "docs only"
                } else {
                    "no source file"
                },
            );
            continue;
        }
        // Deleted files existed at the parent, where the question is asked: "remove X" is about X.
        let expected: Vec<String> =
            sources.iter().filter(|(_, s)| matches!(*s, 'M' | 'D')).map(|(p, _)| p.clone()).collect();
        if sources.len() > o.max_files {
            skip("too many files");
            continue;
        }
        if expected.is_empty() {
            skip("only new source files");
            continue;
        }
        let subject = clean_subject(&c.subject);
        if subject.split_whitespace().count() < 2 {
            skip("subject too short");
            continue;
        }
        if !subjects.insert(subject.to_lowercase()) {
            skip("duplicate subject");
            continue;
        }
        out.commits_kept += 1;
        let short = c.id.to_hex().to_string()[..12].to_string();
        let rev = parent.to_hex().to_string();
        let source = question_source(&c.id.to_hex().to_string(), "subject");
        out.questions.push(Question {
            id: short.clone(),
            query: subject.clone(),
            rev: Some(rev.clone()),
            filters: None,
            expected: Expected { files: expected.clone(), symbols: vec![] },
            kind: None,
            split: None,
            source: Some(source),
        });
        if !c.body.is_empty() {
            let body: String = c.body.chars().take(1000).collect();
            let source = question_source(&c.id.to_hex().to_string(), "subject_body");
            out.questions.push(Question {
                id: format!("{short}-body"),
                query: format!("{subject}\n{body}"),
                rev: Some(rev),
                filters: None,
                expected: Expected { files: expected, symbols: vec![] },
                kind: None,
                split: None,
                source: Some(source),
            });
        }
    }
    Ok(out)
}

results!(Mined);

/// Where a mined question came from: its commit, and whether the query is the subject alone.
fn question_source(commit: &str, variant: &str) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    m.insert("commit".into(), commit.into());
    m.insert("variant".into(), variant.into());
    serde_json::Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects() {
        assert_eq!(clean_subject("Fix the parser (#1234)"), "Fix the parser");
        assert_eq!(clean_subject("Fix hashCode contract (#992) (#3059)"), "Fix hashCode contract");
        assert_eq!(clean_subject("Use (#x) literally"), "Use (#x) literally");
        assert_eq!(skip_reason("Revert \"add x\""), Some("revert"));
        assert_eq!(skip_reason("v1.2.3"), Some("version bump"));
        assert_eq!(skip_reason("Bump serde from 1.0.1 to 1.0.2"), Some("dependency update"));
        assert_eq!(skip_reason("build(deps): bump x"), Some("dependency update"));
        assert_eq!(skip_reason("cargo fmt"), Some("formatting"));
        assert_eq!(skip_reason("[maven-release-plugin] prepare release gson-parent-2.11.0"), Some("version bump"));
        assert_eq!(skip_reason("tsdb: fix race in head compaction"), None);
        assert!(is_source("src/a.rs") && !is_source("tests/a.rs") && !is_source("README.md"));
    }
}
