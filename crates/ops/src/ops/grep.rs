//! `search --exact` / `--regex`: every line of a view's files that contains a string or matches
//! a regular expression — git grep's job, answered from the view's blobs at any revision (the
//! working tree's changed files from their content), with the same path filters and citations
//! as ranked search. Needs no index.

use super::{Answer, view_line};
use crate::engine::Engine;
use crate::present;
use crate::search::filter::Filters;
use anyhow::Result;
use rayon::prelude::*;
use serde::Serialize;

crate::error::errors! {
    /// A pattern search that cannot run as asked.
    pub enum GrepError: Usage {
        GrepOptions {} => "-i, -w, -c, -A, -B, --context and --exit-code apply to --exact, -F and --regex searches",
        EmptyPattern {} => "the search pattern is empty",
        Regex { pattern: String, why: String } => "invalid --regex `{pattern}`: {why}",
    }
}

/// The command line's grep options of `search` (`--exact`, `--regex` and what goes with them).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct GrepFlags {
    /// Every line containing exactly this string, at the revision (as `git grep -F`), instead
    /// of a ranked search.
    #[arg(long, conflicts_with_all = ["regex", "mode", "rerank", "reranker", "files"])]
    pub exact: bool,
    /// Every line matching this regular expression, at the revision (as `git grep -E`).
    #[arg(long, conflicts_with_all = ["mode", "rerank", "reranker", "files"])]
    pub regex: bool,
    /// With --exact/--regex: ignore case.
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// With --exact/--regex: match whole words only (as `grep -w`).
    #[arg(short = 'w', long = "word-regexp")]
    pub word: bool,
    /// With --exact/--regex: print each file's number of matching lines (as `grep -c`).
    #[arg(short = 'c', long = "count")]
    pub count: bool,
    /// With --exact/--regex: exit 1 when nothing matches, as grep does (default: 0, "found
    /// nothing" is an answer).
    #[arg(long)]
    pub exit_code: bool,
    /// The same as --exact: a fixed string, as ripgrep's and grep's -F.
    #[arg(short = 'F', long = "fixed-strings", conflicts_with_all = ["regex", "mode", "rerank", "reranker", "files"])]
    pub fixed: bool,
    /// With --exact/--regex: lines of context after each match.
    #[arg(short = 'A', long = "after-context", value_name = "N")]
    pub after: Option<usize>,
    /// With --exact/--regex: lines of context before each match.
    #[arg(short = 'B', long = "before-context", value_name = "N")]
    pub before: Option<usize>,
    /// With --exact/--regex: lines of context before and after each match (-C is git's
    /// "run in <path>").
    #[arg(long, value_name = "N")]
    pub context: Option<usize>,
}

impl GrepFlags {
    /// Whether the search is a grep (`--exact`, `-F` or `--regex`).
    pub fn on(&self) -> bool {
        self.exact || self.regex || self.fixed
    }

    /// A ranked search given an option that only a grep takes: refused, naming them.
    pub fn refuse_without_pattern(&self) -> Result<()> {
        if self.ignore_case
            || self.after.is_some()
            || self.before.is_some()
            || self.context.is_some()
            || self.word
            || self.count
            || self.exit_code
        {
            return Err(GrepError::GrepOptions {}.into());
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct GrepArgs {
    pub pattern: String,
    /// A regular expression (Rust `regex` syntax) instead of a literal string.
    pub regex: bool,
    pub ignore_case: bool,
    pub rev: Option<String>,
    pub filters: Filters,
    /// Context lines before and after each match.
    pub before: usize,
    pub after: usize,
    /// Matching lines reported at most (the answer says when it stopped).
    pub max: usize,
    /// Only the files with a match.
    pub files_only: bool,
    /// Whole words only (`grep -w`).
    pub word: bool,
    /// Per file, the number of matching lines instead of the lines (`grep -c`).
    pub count: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct GrepMatch {
    pub path: String,
    pub line: u32,
    /// 1-based byte column of the first match on the line.
    pub column: u32,
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// Byte ranges of the matches within `text`.
    #[serde(skip)]
    spans: Vec<(usize, usize)>,
}

#[derive(Debug, Serialize)]
pub struct GrepResult {
    pub pattern: String,
    /// "exact" or "regex".
    pub mode: &'static str,
    #[serde(skip_serializing_if = "Filters::is_empty")]
    pub filters: Filters,
    pub files_searched: usize,
    /// Files with at least one match, in path order.
    pub files: Vec<String>,
    /// Empty with `-l`.
    pub matches: Vec<GrepMatch>,
    pub truncated: bool,
    /// With `count`: each file with a match and its number of matching lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<(String, usize)>,
    /// Files git could not read (missing or damaged blobs), skipped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

/// Longest line kept in an answer (minified files have megabyte lines).
const MAX_LINE: usize = 400;

pub fn run(engine: &Engine, a: &GrepArgs) -> Result<Answer> {
    if a.pattern.is_empty() {
        return Err(GrepError::EmptyPattern {}.into());
    }
    let source = if a.regex { a.pattern.clone() } else { regex::escape(&a.pattern) };
    // A word match is bounded by non-word characters (or the line's ends) on both sides.
    let source = if a.word { format!(r"\b(?:{source})\b") } else { source };
    let re = regex::RegexBuilder::new(&source)
        .case_insensitive(a.ignore_case)
        .multi_line(true)
        .build()
        .map_err(|e| GrepError::Regex { pattern: a.pattern.clone(), why: e.to_string() })?;
    let view = engine.view(&engine.spec(a.rev.as_deref()))?;
    let paths = a.filters.matcher()?;
    let files: Vec<&crate::view::ViewFile> = view.files.iter().filter(|f| paths.matches(&f.path)).collect();
    let repo = &engine.ws.repo;
    // A blob git cannot read (missing from a partial clone, damaged) is skipped with a warning,
    // as `git grep` does: the other files still answer.
    let per_file: Vec<Result<Vec<GrepMatch>>> = files
        .par_iter()
        .map_init(
            || repo.local(),
            |local, f| {
                let content = match &f.content {
                    Some(c) => c.clone(),
                    None => std::sync::Arc::new(crate::repo::Repo::read_blob(local, f.blob)?),
                };
                if crate::repo::content_skip(&content).is_some() {
                    return Ok(Vec::new());
                }
                if paths.filters_languages() && !paths.matches_lang(crate::lang::detect(&f.path, &content)) {
                    return Ok(Vec::new());
                }
                Ok(matches_in(&f.path, &crate::encoding::text(&content), &re, a))
            },
        )
        .collect();
    let mut found: Vec<GrepMatch> = Vec::new();
    let mut with_match = Vec::new();
    let mut truncated = false;
    let mut unreadable = Vec::new();
    let mut counts = Vec::new();
    for (f, r) in files.iter().zip(per_file) {
        let ms = match r {
            Ok(ms) => ms,
            Err(e) => {
                tracing::debug!("{}: {e:#}", f.path);
                unreadable.push(f.path.clone());
                continue;
            }
        };
        if ms.is_empty() {
            continue;
        }
        with_match.push(f.path.clone());
        if a.count {
            counts.push((f.path.clone(), ms.len()));
            continue;
        }
        if a.files_only {
            continue;
        }
        for m in ms {
            if found.len() == a.max {
                truncated = true;
                break;
            }
            found.push(m);
        }
    }
    let result = GrepResult {
        pattern: a.pattern.clone(),
        mode: if a.regex { "regex" } else { "exact" },
        filters: a.filters.clone(),
        files_searched: files.len(),
        files: with_match,
        matches: found,
        truncated,
        counts,
        unreadable,
    };
    if !result.unreadable.is_empty() {
        let shown: Vec<String> =
            result.unreadable.iter().take(3).map(|p| present::quote_path(p).into_owned()).collect();
        tracing::warn!(
            "{} file(s) could not be read from git and were skipped ({}{}); `git fsck` tells why",
            result.unreadable.len(),
            shown.join(", "),
            if result.unreadable.len() > 3 { ", …" } else { "" }
        );
    }
    let text = if a.count {
        let mut t = summary_line(&view.id, &result);
        for (p, n) in &result.counts {
            t.push_str(&format!("{}:{n}\n", present::path(p)));
        }
        t
    } else {
        render(&view.id, &result, a.files_only, a.before > 0 || a.after > 0)
    };
    Ok(Answer::new("search", Some(view.id.clone()), &result, text))
}

/// `-c` answers with counts per file, `-l` with files, otherwise with the matching lines.
impl super::Results for GrepResult {
    fn list(&self) -> Option<&'static str> {
        Some(if !self.counts.is_empty() {
            "counts"
        } else if self.matches.is_empty() {
            "files"
        } else {
            "matches"
        })
    }
}

/// The matching lines of one file, with their context.
fn matches_in(path: &str, text: &str, re: &regex::Regex, a: &GrepArgs) -> Vec<GrepMatch> {
    if !re.is_match(text) {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let spans: Vec<(usize, usize)> =
            re.find_iter(line).map(|m| (m.start(), m.end())).filter(|(s, e)| e > s).collect();
        if spans.is_empty() {
            continue;
        }
        let clip = |l: &str| -> String {
            if l.len() <= MAX_LINE {
                return l.to_string();
            }
            let mut end = MAX_LINE;
            while !l.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}…", &l[..end])
        };
        out.push(GrepMatch {
            path: path.to_string(),
            line: i as u32 + 1,
            column: spans[0].0 as u32 + 1,
            text: clip(line),
            before: lines[i.saturating_sub(a.before)..i].iter().map(|l| clip(l)).collect(),
            after: lines[i + 1..(i + 1).saturating_add(a.after).min(lines.len())].iter().map(|l| clip(l)).collect(),
            spans: spans.into_iter().filter(|(_, e)| *e <= MAX_LINE).collect(),
        });
        if a.files_only {
            break;
        }
    }
    out
}

/// grep's layout: `path:line:text` for matches, `path-line-text` for context, `--` between
/// groups that are not adjacent.
pub fn render(view: &crate::view::ViewId, r: &GrepResult, files_only: bool, context: bool) -> String {
    if files_only {
        return r.files.iter().map(|p| format!("{}\n", present::path(p))).collect();
    }
    let mut out = String::new();
    let mut last: Option<(&str, u32)> = None;
    for m in &r.matches {
        let first = m.line - m.before.len() as u32;
        if context
            && let Some((p, l)) = last
            && (p != m.path || first > l + 1)
        {
            out.push_str("--\n");
        }
        for (i, b) in m.before.iter().enumerate() {
            let n = first + i as u32;
            if last.is_some_and(|(p, l)| p == m.path && n <= l) {
                continue;
            }
            out.push_str(&format!("{}-{n}-{b}\n", present::path(&m.path)));
        }
        out.push_str(&format!("{}{}\n", present::loc(&m.path, m.line), highlight(&m.text, &m.spans)));
        let mut end = m.line;
        for (i, a) in m.after.iter().enumerate() {
            let n = m.line + 1 + i as u32;
            // A following match prints itself.
            if r.matches.iter().any(|o| o.path == m.path && o.line == n) {
                break;
            }
            out.push_str(&format!("{}-{n}-{a}\n", present::path(&m.path)));
            end = n;
        }
        last = Some((&m.path, end));
    }
    // The summary leads, as in a ranked search's answer; `path:line:text` lines follow.
    format!("{}{out}", summary_line(view, r))
}

/// `view · exact "X" · N matches in F of M files`.
fn summary_line(view: &crate::view::ViewId, r: &GrepResult) -> String {
    format!(
        "{} · {} \"{}\" · {} match{} in {} of {} files{}\n",
        view_line(view),
        r.mode,
        r.pattern,
        r.matches.len().max(r.counts.iter().map(|c| c.1).sum()),
        if r.matches.len() == 1 { "" } else { "es" },
        r.files.len(),
        r.files_searched,
        if r.truncated { " (stopped at the limit; raise -k)" } else { "" }
    )
}

fn highlight(text: &str, spans: &[(usize, usize)]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for &(s, e) in spans {
        if s < at || e > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            continue;
        }
        out.push_str(&text[at..s]);
        out.push_str(&present::matched(&text[s..e]));
        at = e;
    }
    out.push_str(&text[at..]);
    out
}
