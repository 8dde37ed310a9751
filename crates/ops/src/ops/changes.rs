//! Questions about changes: diff views (`A..B`, `A...B`, `--staged`, uncommitted work, a
//! revision against the working tree), `search_diff` (search inside the changed chunks only)
//! and `impact` over a range (changed / added / deleted definitions, their callers in the
//! after — or, for deleted ones, the before — snapshot, and the tests to re-run).

use super::nav::TestRef;
use super::search::{Hit, hit};
use super::{Answer, view_line};
use crate::engine::Engine;
use crate::graph::model::{CodeGraph, Node};
use crate::graph::query::{self, Link};
use crate::search::Mode;
use crate::view::ViewData;
use crate::view::{View, ViewId, ViewSpec};
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

crate::error::errors! {
    /// A range or a check over changes that names nothing.
    pub enum ChangesError: Usage {
        NoCommonAncestor { a: String, b: String } => "{a} and {b} have no common ancestor",
        NoBase {} => "no base branch found (no upstream, no main/master/trunk/develop); pass --base REF",
        NotANumber { check: String, value: String } => "--fail-on `{check}`: `{value}` is not a number",
        UnknownCheck { check: String } => "unknown --fail-on check `{check}`: use callers>N, tests>N, deleted or public-api",
    }
}

/// Which two snapshots a change question compares.
#[derive(Debug, Clone)]
pub enum Range {
    /// `A..B`: the trees of A and B.
    Between(String, String),
    /// `A...B`: B against the merge base of A and B.
    Symmetric(String, String),
    /// HEAD against the index.
    Staged,
    /// HEAD against the working tree (staged + unstaged + untracked).
    Uncommitted,
    /// A revision against the working tree.
    Since(String),
}

pub struct ImpactRangeArgs {
    pub range: Range,
}

impl ImpactRangeArgs {
    /// `uncommitted` (or empty), `staged`, `A..B`, `A...B`, or a revision.
    pub fn parse(s: &str) -> Result<ImpactRangeArgs> {
        let s = s.trim();
        let range = match s {
            "" | "uncommitted" | "worktree" => Range::Uncommitted,
            "staged" | "--staged" | "cached" => Range::Staged,
            _ => match s.split_once("...") {
                Some((a, b)) => Range::Symmetric(or_head(a), or_head(b)),
                None => match s.split_once("..") {
                    Some((a, b)) => Range::Between(or_head(a), or_head(b)),
                    None => Range::Since(s.to_string()),
                },
            },
        };
        Ok(ImpactRangeArgs { range })
    }
}

fn or_head(s: &str) -> String {
    if s.is_empty() { "HEAD".into() } else { s.to_string() }
}

impl Range {
    pub fn label(&self) -> String {
        match self {
            Range::Between(a, b) => format!("{a}..{b}"),
            Range::Symmetric(a, b) => format!("{a}...{b}"),
            Range::Staged => "staged changes".into(),
            Range::Uncommitted => "uncommitted changes".into(),
            Range::Since(r) => format!("{r} vs working tree"),
        }
    }
}

/// The before and after snapshots, opened (and indexed), with their graphs.
pub struct Diff {
    pub before: Snapshot,
    pub after: Snapshot,
    pub files: Vec<FileChange>,
    /// Chunk ordinals of the after view whose content is new or changed.
    pub changed_chunks: Vec<u32>,
}

pub struct Snapshot {
    pub view: View,
    pub data: Arc<ViewData>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileChange {
    pub path: String,
    /// added | deleted | modified | renamed
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
}

fn empty_view() -> View {
    View {
        id: ViewId { kind: "commit", commit: None, label: "empty".into() },
        files: Vec::new(),
        skipped: Vec::new(),
        content_key: Default::default(),
    }
}

fn open_snapshot(engine: &Engine, spec: Option<ViewSpec>) -> Result<Snapshot> {
    let view = match spec {
        Some(s) => (*engine.view(&s)?).clone(),
        None => empty_view(),
    };
    let data = engine.open_listed(&view)?.data;
    Ok(Snapshot { view, data })
}

pub fn diff(engine: &Engine, range: &Range) -> Result<Diff> {
    let has_head = engine.ws.repo.head()?.is_some();
    let head_or_empty = || if has_head { Some(ViewSpec::Rev("HEAD".into())) } else { None };
    let (before, after) = match range {
        Range::Between(a, b) => (Some(ViewSpec::Rev(a.clone())), Some(ViewSpec::Rev(b.clone()))),
        Range::Symmetric(a, b) => {
            let ra = engine.ws.repo.resolve(a)?;
            let rb = engine.ws.repo.resolve(b)?;
            let mb = engine
                .ws
                .repo
                .merge_base(ra.commit, rb.commit)?
                .ok_or_else(|| ChangesError::NoCommonAncestor { a: a.clone(), b: b.clone() })?;
            (Some(ViewSpec::Rev(mb.to_hex().to_string())), Some(ViewSpec::Rev(b.clone())))
        }
        Range::Staged => (head_or_empty(), Some(ViewSpec::Staged)),
        Range::Uncommitted => (head_or_empty(), Some(ViewSpec::Worktree)),
        Range::Since(r) => (Some(ViewSpec::Rev(r.clone())), Some(ViewSpec::Worktree)),
    };
    let before = open_snapshot(engine, before)?;
    let after = open_snapshot(engine, after)?;
    let files = changed_files(&before.view, &after.view);
    let changed_chunks = changed_chunks(&before.data, &after.data, &files);
    Ok(Diff { before, after, files, changed_chunks })
}

/// Paths whose blob differs; a deleted and an added path with the same blob are a rename.
pub fn changed_files(before: &View, after: &View) -> Vec<FileChange> {
    let b: HashMap<&str, crate::store::Key> = before.files.iter().map(|f| (f.path.as_str(), f.key)).collect();
    let a: HashMap<&str, crate::store::Key> = after.files.iter().map(|f| (f.path.as_str(), f.key)).collect();
    let mut out = Vec::new();
    // A file one side lists as skipped (over the size cap, unreadable) is still there.
    let skipped_after: HashSet<&str> = after.skipped.iter().map(|s| s.path.as_str()).collect();
    let skipped_before: HashSet<&str> = before.skipped.iter().map(|s| s.path.as_str()).collect();
    let mut deleted: Vec<(&str, crate::store::Key)> =
        b.iter().filter(|(p, _)| !a.contains_key(*p) && !skipped_after.contains(*p)).map(|(p, k)| (*p, *k)).collect();
    deleted.sort();
    let mut added: Vec<(&str, crate::store::Key)> =
        a.iter().filter(|(p, _)| !b.contains_key(*p) && !skipped_before.contains(*p)).map(|(p, k)| (*p, *k)).collect();
    added.sort();
    let mut renamed_from: HashSet<&str> = HashSet::new();
    for (p, k) in &added {
        match deleted.iter().find(|(dp, dk)| dk.0[..32] == k.0[..32] && !renamed_from.contains(dp)) {
            Some((dp, _)) => {
                renamed_from.insert(dp);
                out.push(FileChange { path: p.to_string(), status: "renamed", old_path: Some(dp.to_string()) });
            }
            None => out.push(FileChange { path: p.to_string(), status: "added", old_path: None }),
        }
    }
    for (p, _) in &deleted {
        if !renamed_from.contains(p) {
            out.push(FileChange { path: p.to_string(), status: "deleted", old_path: None });
        }
    }
    for (p, k) in &a {
        if let Some(bk) = b.get(p)
            && bk != k
        {
            out.push(FileChange { path: p.to_string(), status: "modified", old_path: None });
        }
    }
    out.sort_by(|x, y| x.path.cmp(&y.path));
    out
}

/// After-view chunks of added or modified files whose text is not among the before file's
/// chunks (by content hash).
fn changed_chunks(before: &ViewData, after: &ViewData, files: &[FileChange]) -> Vec<u32> {
    let wanted: HashMap<&str, &FileChange> =
        files.iter().filter(|f| matches!(f.status, "added" | "modified")).map(|f| (f.path.as_str(), f)).collect();
    let mut before_hashes: HashMap<&str, HashSet<[u8; 16]>> = HashMap::new();
    for o in before.table.live() {
        let c = before.table.chunk(o);
        if wanted.get(c.path).is_some_and(|f| f.status == "modified") {
            before_hashes.entry(c.path).or_default().insert(c.hash);
        }
    }
    after
        .table
        .live()
        .filter(|&o| {
            let c = after.table.chunk(o);
            match wanted.get(c.path) {
                Some(f) if f.status == "added" => true,
                Some(_) => !before_hashes.get(c.path).is_some_and(|h| h.contains(&c.hash)),
                None => false,
            }
        })
        .collect()
}

// ------------------------------------------------------------------ search_diff

/// `search_diff`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchDiffArgs {
    /// What to look for inside the changed code.
    #[schemars(description = "")]
    pub query: String,
    /// Base to compare with (default: upstream, else main/master/trunk/develop).
    #[arg(long)]
    #[schemars(description = "default: upstream, else main/master")]
    pub base: Option<String>,
    /// Search the changes of this revision (a branch, tag, commit) since its merge base with
    /// the base, without checking it out (default: the working tree).
    #[arg(long)]
    #[schemars(description = "Git revision; omit for the working tree")]
    pub rev: Option<String>,
    /// Continue the list of changed files (`files_cursor` of an earlier answer).
    #[arg(long)]
    #[schemars(description = "files_cursor of a previous answer: the next page of changed files")]
    pub cursor: Option<String>,
    /// Number of results [default: 10].
    #[arg(short = 'k', long = "limit")]
    #[serde(rename = "n_results")]
    #[schemars(description = "")]
    pub k: Option<super::args::Count>,
    #[command(flatten)]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub lines: super::args::Lines,
    #[command(flatten)]
    #[serde(flatten)]
    pub filters: super::args::FilterArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::OneSource,
}

/// Changed files listed inline; the rest are counted and reached with `files_cursor`.
pub const DIFF_FILES_SHOWN: usize = 20;
/// Changed files per page of `files_cursor`.
const DIFF_FILES_PAGE: usize = 100;

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct DiffCounts {
    pub files: usize,
    pub added: usize,
    pub modified: usize,
    pub deleted: usize,
    pub renamed: usize,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SearchDiffResult {
    pub query: String,
    pub base: String,
    /// The revision whose changes were searched (None: the working tree).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_base: Option<String>,
    /// How many files changed, by kind.
    pub changed: DiffCounts,
    /// The changed files with the most changed chunks first (at most 20; a page of 100 when
    /// continuing with a cursor).
    pub files: Vec<FileChange>,
    /// The next page of changed files, when there are more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_cursor: Option<String>,
    pub changed_chunks: usize,
    pub mode: Mode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub results: Vec<Hit>,
}

/// Searches only the code that changed between the merge base of `base` and the revision
/// (`rev`, default the working tree with HEAD for the merge base): no checkout needed. The
/// answer carries the hits and a bounded summary of the diff; the whole file list is paged.
pub fn search_diff(engine: &Engine, a: &SearchDiffArgs) -> Result<Answer> {
    if a.query.trim().is_empty() {
        return Err(super::args::ArgError::EmptyQuery {}.into());
    }
    let base = match &a.base {
        Some(b) => b.clone(),
        None => engine.ws.repo.default_base()?.ok_or(ChangesError::NoBase {})?,
    };
    let base_commit = engine.ws.repo.resolve(&base)?.commit;
    let tip = match &a.rev {
        Some(r) => Some(engine.ws.repo.resolve(r)?.commit),
        None => engine.ws.repo.head()?.map(|h| h.commit),
    };
    let merge_base = match tip {
        Some(t) => engine.ws.repo.merge_base(base_commit, t)?.unwrap_or(base_commit),
        None => base_commit,
    };
    let mb = merge_base.to_hex().to_string();
    let range = match &a.rev {
        Some(r) => Range::Between(mb.clone(), r.clone()),
        None => Range::Since(mb.clone()),
    };
    let d = diff(engine, &range)?;
    let t = &d.after.data.table;
    let filters = a.filters.filters()?;
    let paths = filters.matcher()?;
    let mut per_file: HashMap<&str, usize> = HashMap::new();
    let mut allowed = crate::search::Allowed::new(t.len());
    for &o in &d.changed_chunks {
        let path = t.chunk(o).path;
        *per_file.entry(path).or_default() += 1;
        if paths.matches(path) && paths.matches_lang(t.file_lang(t.chunk_file(o))) {
            allowed.insert(o);
        }
    }
    let mut changed = DiffCounts { files: d.files.len(), ..Default::default() };
    for f in &d.files {
        match f.status {
            "added" => changed.added += 1,
            "deleted" => changed.deleted += 1,
            "renamed" => changed.renamed += 1,
            _ => changed.modified += 1,
        }
    }
    // Files with the most changed chunks first, then by path: a stable order to page through.
    let mut files: Vec<FileChange> = d.files.clone();
    files.sort_by(|x, y| {
        per_file
            .get(y.path.as_str())
            .unwrap_or(&0)
            .cmp(per_file.get(x.path.as_str()).unwrap_or(&0))
            .then_with(|| x.path.cmp(&y.path))
    });
    let question = (&base, &a.rev, &filters);
    let pager = super::page::Pager::new("search_diff_files", &d.after.data.key, &question, a.cursor.as_deref())?;
    let paging = a.cursor.is_some();
    let files_cursor = if paging {
        pager.page(&mut files, DIFF_FILES_PAGE)
    } else {
        let more = files.len() > DIFF_FILES_SHOWN;
        files.truncate(DIFF_FILES_SHOWN);
        more.then(|| {
            super::page::Pager::new("search_diff_files", &d.after.data.key, &question, None)
                .map(|p| p.cursor_at(DIFF_FILES_SHOWN))
        })
        .transpose()?
    };
    let allowed = Arc::new(allowed);
    let mode = engine.ws.config.search.mode;
    let (k, clamped) = crate::search::clamp_k(a.k.map_or(10, |c| c.0));
    let pool = k.max(engine.ws.config.search.pool);
    // A page of the file list answers with files only.
    let (results, mode, mut notes) = if d.changed_chunks.is_empty() || paging {
        (Vec::new(), mode, Vec::new())
    } else {
        let r = engine.searcher(&d.after.view, &d.after.data, mode)?.retrieve(
            &a.query,
            mode,
            pool,
            Some(allowed.as_ref()),
        )?;
        let hits: Vec<Hit> = r.ranked.iter().take(k).map(|x| hit(&d.after.data, x)).collect::<Result<_>>()?;
        (hits, r.mode, r.notes)
    };
    notes.extend(clamped);
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    let res = SearchDiffResult {
        query: a.query.clone(),
        base: base.clone(),
        rev: a.rev.clone(),
        merge_base: Some(mb.clone()),
        changed,
        files,
        files_cursor,
        changed_chunks: d.changed_chunks.len(),
        mode,
        note,
        results,
    };
    Ok(Answer::new(
        "search_diff",
        Some(d.after.data.id.clone()),
        &res,
        render_search_diff(&d.after.data.id, &res, a.lines.per_hit, paging),
    ))
}

fn render_search_diff(
    view: &crate::view::ViewId,
    res: &SearchDiffResult,
    snippet_lines: usize,
    paging: bool,
) -> String {
    let c = &res.changed;
    let mut text = format!(
        "{} · search inside changes vs {} (merge base {}) · {} changed files ({} added, {} modified, {} deleted, {} renamed), {} changed chunks\n",
        view_line(view),
        res.base,
        &res.merge_base.as_deref().unwrap_or("")[..12.min(res.merge_base.as_deref().unwrap_or("").len())],
        c.files,
        c.added,
        c.modified,
        c.deleted,
        c.renamed,
        res.changed_chunks
    );
    if let Some(n) = &res.note {
        text.push_str(&format!("note: {n}\n"));
    }
    if !paging {
        if res.results.is_empty() {
            text.push_str(&format!("no changed code matches \"{}\"\n", res.query));
        }
        super::search::push_hits(&mut text, &res.results, &res.query, snippet_lines);
    }
    if !res.files.is_empty() {
        text.push_str(if paging { "changed files:\n" } else { "most changed files:\n" });
    }
    for f in &res.files {
        text.push_str(&format!(
            "  {} {}{}\n",
            status_letter(f.status),
            crate::present::path(&f.path),
            f.old_path.as_ref().map(|o| format!(" (from {})", crate::present::quote_path(o))).unwrap_or_default()
        ));
    }
    if let Some(cur) = &res.files_cursor {
        let shown = if paging { "" } else { " (of the list above)" };
        text.push_str(&format!("more changed files{shown}: cursor {cur}\n"));
    }
    text
}

fn status_letter(s: &str) -> &'static str {
    match s {
        "added" => "A",
        "deleted" => "D",
        "renamed" => "R",
        _ => "M",
    }
}

// ------------------------------------------------------------------ impact over a range

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChangedDef {
    pub name: String,
    pub kind: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// changed | added | deleted
    pub change: &'static str,
    /// The snapshot the callers come from: "after", or "before" for deleted definitions.
    pub snapshot: &'static str,
    pub public: bool,
    pub callers: Vec<Link>,
    pub truncated: bool,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RangeImpact {
    pub range: String,
    pub before: ViewId,
    pub after: ViewId,
    pub files: Vec<FileChange>,
    pub definitions: Vec<ChangedDef>,
    pub tests: Vec<TestRef>,
    pub by_file: BTreeMap<String, FileSummary>,
    pub totals: Totals,
    /// The `fail_on` checks that tripped (the CLI exits 3 on them).
    pub failed_checks: Vec<String>,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct FileSummary {
    pub changed_definitions: usize,
    pub callers: usize,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Totals {
    pub changed: usize,
    pub added: usize,
    pub deleted: usize,
    pub transitive_callers: usize,
    /// Callers reached through precise, extracted or resolved edges only (what `--fail-on callers>N`
    /// counts: a guessed edge must not trip a gate).
    pub confident_callers: usize,
    /// Tests to re-run (what `--fail-on tests>N` counts): reached through confident edges, by
    /// naming convention or in the same file.
    pub tests: usize,
    /// Tests that reach a change only through a name-only match (listed, not counted).
    pub guessed_tests: usize,
    /// Definitions one hop past the depth limit that no walk reached (0: every walk was complete).
    pub cut: usize,
    pub public_api_changes: usize,
}

/// Each definition's content: a hash of its code lines, comments and blank lines left out, so
/// a comment edit or a shift in line numbers is not a change.
fn def_contents(
    g: &CodeGraph,
    data: &ViewData,
    files: &HashSet<&str>,
) -> Result<HashMap<(String, String), Vec<[u8; 16]>>> {
    let mut by_file: HashMap<&str, Vec<u32>> = HashMap::new();
    for o in data.table.live() {
        let c = data.table.chunk(o);
        if files.contains(c.path) {
            by_file.entry(c.path).or_default().push(o);
        }
    }
    let mut out = HashMap::new();
    for d in &g.defs {
        let file = &g.files[d.file as usize];
        let Some(ords) = by_file.get(file.path.as_str()) else { continue };
        // Line number → text, from whichever chunk holds the line (windows overlap).
        let mut lines: BTreeMap<u32, &str> = BTreeMap::new();
        for &o in ords {
            let c = data.table.chunk(o);
            if c.start_line > d.end_line || c.end_line < d.start_line {
                continue;
            }
            for (i, l) in c.text()?.lines().enumerate() {
                let n = c.start_line + i as u32;
                if (d.start_line..=d.end_line).contains(&n) {
                    lines.entry(n).or_insert(l);
                }
            }
        }
        let mut h = blake3::Hasher::new();
        for l in lines.values() {
            let t = l.trim();
            if t.is_empty() || is_comment(file.lang, t) {
                continue;
            }
            h.update(l.trim_end().as_bytes());
            h.update(b"\n");
        }
        let mut key = [0u8; 16];
        key.copy_from_slice(&h.finalize().as_bytes()[..16]);
        out.insert((file.path.clone(), d.qualified.clone()), vec![key]);
    }
    Ok(out)
}

/// A whole-line comment in `lang` (attributes and preprocessor lines are code).
fn is_comment(lang: crate::lang::Lang, line: &str) -> bool {
    use crate::lang::Lang::*;
    match lang {
        Python | Ruby | Bash => line.starts_with('#'),
        Lua | Sql => line.starts_with("--"),
        _ => {
            line.starts_with("//")
                || line.starts_with("/*")
                || line.starts_with("* ")
                || line == "*"
                || line.starts_with("*/")
        }
    }
}

/// Public API by the language's own convention, read from the definition's first line.
fn is_public(data: &ViewData, g: &CodeGraph, d: u32) -> Result<bool> {
    let def = &g.defs[d as usize];
    let path = g.def_path(d);
    let lang = g.files[def.file as usize].lang;
    let head = match data
        .file_chunks(path)
        .map(|o| data.table.chunk(o))
        .find(|c| c.start_line <= def.start_line && def.start_line <= c.end_line)
    {
        Some(c) => c.text()?.lines().nth((def.start_line - c.start_line) as usize).unwrap_or_default(),
        None => "",
    };
    let sig = head.trim_start();
    use crate::lang::Lang::*;
    Ok(match lang {
        Rust => sig.starts_with("pub ") || sig.starts_with("pub("),
        Go => def.name.chars().next().is_some_and(char::is_uppercase),
        Python | Ruby => !def.name.starts_with('_'),
        JavaScript | TypeScript | Tsx => sig.starts_with("export ") || head.contains("module.exports"),
        Java | CSharp | Kotlin | Swift | Scala | Php | Cpp => {
            !sig.contains("private ") && !sig.contains("protected ") && !sig.contains("internal ")
        }
        _ => true,
    })
}

/// How an impact report over a range is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImpactFormat {
    Text,
    Markdown,
    Json,
    /// One line, nothing when no definition changed.
    Summary,
}

/// The impact of a range, rendered as `format` (text, markdown, json, summary), with the
/// `fail_on` checks (`callers>N`, `tests>N`, `deleted`, `public-api`) evaluated: the ones that
/// tripped are listed in `failed_checks` (the CLI exits 3 on them) and said in the text.
pub fn impact_range(
    engine: &Engine,
    a: &ImpactRangeArgs,
    max_depth: usize,
    format: ImpactFormat,
    fail_on: &[String],
) -> Result<Answer> {
    let mut r = compute_range(engine, &a.range, max_depth)?;
    r.failed_checks = failed_checks(&r, fail_on)?;
    let failed = &r.failed_checks;
    let mut text = match format {
        ImpactFormat::Json => serde_json::to_string_pretty(&r)? + "\n",
        ImpactFormat::Summary => render_summary(&r),
        ImpactFormat::Text => render_range(&r, false),
        ImpactFormat::Markdown => render_range(&r, true),
    };
    if !failed.is_empty() && format == ImpactFormat::Markdown {
        text.push_str("\n**Checks failed:**\n\n");
        for f in failed {
            text.push_str(&format!("- {f}\n"));
        }
    } else {
        for f in failed {
            text.push_str(&format!("check failed: {f}\n"));
        }
    }
    let failed = !r.failed_checks.is_empty();
    let answer = Answer::new("impact", Some(r.after.clone()), &r, text);
    Ok(if failed { answer.with_exit(EXIT_CHECK_FAILED) } else { answer })
}

pub fn compute_range(engine: &Engine, range: &Range, max_depth: usize) -> Result<RangeImpact> {
    let d = diff(engine, range)?;
    let gb = engine.graph(&d.before.view, &d.before.data)?;
    let ga = engine.graph(&d.after.view, &d.after.data)?;
    let changed_paths: HashSet<&str> =
        d.files.iter().flat_map(|f| std::iter::once(f.path.as_str()).chain(f.old_path.as_deref())).collect();
    let cb = def_contents(&gb, &d.before.data, &changed_paths)?;
    let ca = def_contents(&ga, &d.after.data, &changed_paths)?;
    let mut defs = Vec::new();
    let mut test_set: Vec<TestRef> = Vec::new();
    let mut totals = Totals::default();
    let mut by_file: BTreeMap<String, FileSummary> = BTreeMap::new();
    let mut confident: HashSet<(String, String)> = HashSet::new();
    let mut cut = 0;
    // Callers through confident edges to `max_depth`, then the direct ones a name-only match
    // suggests; tests through the first count, through the second are listed as guessed.
    let mut callers_of = |g: &CodeGraph, d: u32, path: &str, test_set: &mut Vec<TestRef>| {
        let reach = query::reach(g, &[Node::Def(d)], &super::nav::CALLER_RELS, max_depth.max(1));
        for l in &reach.confident {
            confident.insert((l.node.path.clone().unwrap_or_default(), l.node.name.clone()));
        }
        super::nav::add_tests(g, &reach, &[path], test_set);
        cut += reach.cut;
        let truncated = reach.truncated;
        let mut callers = reach.confident;
        callers.extend(reach.possible);
        (callers, truncated)
    };
    // After snapshot: changed and added definitions.
    for (i, def) in ga.defs.iter().enumerate() {
        let path = ga.files[def.file as usize].path.as_str();
        if !changed_paths.contains(path) {
            continue;
        }
        let key = (path.to_string(), def.qualified.clone());
        // A renamed file's definitions compare with the old path.
        let old_path = d.files.iter().find(|f| f.path == path).and_then(|f| f.old_path.clone());
        let before_key = old_path.map(|o| (o, def.qualified.clone())).unwrap_or_else(|| key.clone());
        let change = match cb.get(&before_key) {
            None => "added",
            Some(h) if Some(h) != ca.get(&key) => "changed",
            _ => continue,
        };
        // Containers change whenever a member does: report the members instead.
        if change == "changed" && ga.defs.iter().any(|m| m.parent == Some(i as u32)) {
            continue;
        }
        let (callers, truncated) = callers_of(&ga, i as u32, path, &mut test_set);
        let public = is_public(&d.after.data, &ga, i as u32)?;
        if change == "changed" {
            totals.changed += 1;
        } else {
            totals.added += 1;
        }
        totals.public_api_changes += usize::from(public && change == "changed");
        let fs = by_file.entry(path.to_string()).or_default();
        fs.changed_definitions += 1;
        fs.callers += callers.len();
        defs.push(ChangedDef {
            name: def.qualified.clone(),
            kind: def.kind.clone(),
            path: path.into(),
            start_line: def.start_line,
            end_line: def.end_line,
            change,
            snapshot: "after",
            public,
            callers,
            truncated,
        });
    }
    // Before snapshot: deleted (or renamed away) definitions and who used them.
    let after_keys: HashSet<(String, String)> = ca.keys().cloned().collect();
    let renamed: HashMap<&str, &str> =
        d.files.iter().filter_map(|f| f.old_path.as_deref().map(|o| (o, f.path.as_str()))).collect();
    for (i, def) in gb.defs.iter().enumerate() {
        let path = gb.files[def.file as usize].path.as_str();
        if !changed_paths.contains(path) {
            continue;
        }
        let now_path = renamed.get(path).copied().unwrap_or(path);
        if after_keys.contains(&(now_path.to_string(), def.qualified.clone())) {
            continue;
        }
        let (callers, truncated) = callers_of(&gb, i as u32, path, &mut test_set);
        let public = is_public(&d.before.data, &gb, i as u32)?;
        totals.deleted += 1;
        totals.public_api_changes += usize::from(public);
        let fs = by_file.entry(path.to_string()).or_default();
        fs.changed_definitions += 1;
        fs.callers += callers.len();
        defs.push(ChangedDef {
            name: def.qualified.clone(),
            kind: def.kind.clone(),
            path: path.into(),
            start_line: def.start_line,
            end_line: def.end_line,
            change: "deleted",
            snapshot: "before",
            public,
            callers,
            truncated,
        });
    }
    let mut callers_all: HashSet<(String, String)> = HashSet::new();
    for d in &defs {
        for l in &d.callers {
            callers_all.insert((l.node.path.clone().unwrap_or_default(), l.node.name.clone()));
        }
    }
    totals.transitive_callers = callers_all.len();
    totals.confident_callers = confident.len();
    totals.tests = super::nav::to_rerun(&test_set);
    totals.guessed_tests = test_set.len() - totals.tests;
    totals.cut = cut;
    Ok(RangeImpact {
        range: range.label(),
        before: d.before.data.id.clone(),
        after: d.after.data.id.clone(),
        files: d.files,
        definitions: defs,
        tests: test_set,
        by_file,
        totals,
        failed_checks: Vec::new(),
    })
}

/// Callers through confident edges, and how many more a name-only match suggests.
fn callers_phrase(t: &Totals, one: &str, many: &str) -> String {
    let possible = t.transitive_callers.saturating_sub(t.confident_callers);
    let base = crate::present::count(t.confident_callers, one, many);
    if possible > 0 { format!("{base} (+{possible} possible, matched by name only)") } else { base }
}

/// Says that depth-limited walks stopped, and where; None when every walk was complete.
fn cut_note(t: &Totals, r: &RangeImpact) -> Option<String> {
    let truncated = r.definitions.iter().any(|d| d.truncated);
    if t.cut == 0 && !truncated {
        return None;
    }
    let mut parts = Vec::new();
    if t.cut > 0 {
        parts.push(format!(
            "walks stopped at the depth limit with {} one hop further (raise --max-depth)",
            crate::present::count(t.cut, "definition", "definitions")
        ));
    }
    if truncated {
        parts.push(format!("some walks stopped at {} definitions", crate::graph::query::MAX_NODES));
    }
    Some(format!("note: {}", parts.join("; ")))
}

/// Renders a range impact as text or Markdown (for PR comments).
/// One line for hooks: what changed and what it reaches, or nothing when no definition changed
/// (a comment or whitespace edit).
pub fn render_summary(r: &RangeImpact) -> String {
    let t = &r.totals;
    if t.changed + t.added + t.deleted == 0 {
        return String::new();
    }
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    let mut parts = vec![format!(
        "{} ({} changed, {} added, {} deleted)",
        n(t.changed + t.added + t.deleted, "definition", "definitions"),
        t.changed,
        t.added,
        t.deleted
    )];
    parts.push(callers_phrase(t, "caller", "callers"));
    parts.push(format!("{} to re-run", n(t.tests, "test", "tests")));
    if t.public_api_changes > 0 {
        parts.push(n(t.public_api_changes, "public API change", "public API changes"));
    }
    let again = match r.range.as_str() {
        "staged changes" => " --staged".to_string(),
        "uncommitted changes" => String::new(),
        other => match other.strip_suffix(" vs working tree") {
            Some(rev) => format!(" --since {rev}"),
            None => format!(" {other}"),
        },
    };
    format!("lynx: {} · details: git lynx impact{again}\n", parts.join(", "))
}

pub fn render_range(r: &RangeImpact, md: bool) -> String {
    let mut out = String::new();
    let t = &r.totals;
    // The same totals in both forms: what changed (bold in Markdown), then what it reaches.
    let changed = format!(
        "{} changed, {} added, {} deleted {}",
        t.changed,
        t.added,
        t.deleted,
        if t.changed + t.added + t.deleted == 1 { "definition" } else { "definitions" }
    );
    let reach = [
        callers_phrase(t, "transitive caller", "transitive callers"),
        format!("{} to re-run", crate::present::count(t.tests, "test", "tests")),
        crate::present::count(t.public_api_changes, "public API change", "public API changes"),
    ];
    let note = cut_note(t, r);
    if md {
        out.push_str(&format!("### Lynx impact report: {}\n\n", r.range));
        out.push_str(&format!("**{changed}** · {}\n\n", reach.join(" · ")));
        if let Some(note) = note {
            out.push_str(&format!("_{note}_\n\n"));
        }
    } else {
        out.push_str(&format!("impact of {} (before {}, after {})\n", r.range, r.before.label, r.after.label));
        out.push_str(&format!("{changed}; {}\n", reach.join("; ")));
        if let Some(note) = note {
            out.push_str(&format!("{note}\n"));
        }
    }
    if r.files.is_empty() {
        out.push_str("no changes\n");
        return out;
    }
    if md {
        out.push_str("| file | changed definitions | callers |\n|---|---|---|\n");
        for (p, s) in &r.by_file {
            out.push_str(&format!("| `{p}` | {} | {} |\n", s.changed_definitions, s.callers));
        }
        out.push('\n');
    } else {
        out.push_str("files:\n");
        for f in &r.files {
            out.push_str(&format!(
                "  {} {}{}\n",
                status_letter(f.status),
                crate::present::path(&f.path),
                f.old_path.as_ref().map(|o| format!(" (from {o})")).unwrap_or_default()
            ));
        }
    }
    for d in &r.definitions {
        let tail = format!(
            "{} — {} caller{}{}",
            if d.public { " (public)" } else { "" },
            d.callers.len(),
            if d.callers.len() == 1 { "" } else { "s" },
            if d.snapshot == "before" { " in the before snapshot" } else { "" }
        );
        if md {
            out.push_str(&format!(
                "- {} {} {} `{}:{}-{}`{tail}\n",
                d.change,
                d.kind,
                d.name,
                crate::present::quote_path(&d.path),
                d.start_line,
                d.end_line
            ));
        } else {
            let at = crate::present::loc(&d.path, d.start_line);
            out.push_str(&format!("{at} {} {} {} ({}-{}){tail}\n", d.change, d.kind, d.name, d.start_line, d.end_line));
        }
        for l in d.callers.iter().take(15) {
            let line = super::nav::link_line(l, !md);
            if md {
                out.push_str(&format!("  - {line}\n"));
            } else {
                out.push_str(&format!("    {line}\n"));
            }
        }
        if d.callers.len() > 15 {
            out.push_str(&format!("    … {} more\n", d.callers.len() - 15));
        }
    }
    if md {
        out.push_str("\n**Tests to re-run:**\n");
        for t in &r.tests {
            let guessed = if t.origin == "guessed" { " _(guessed: a name-only match)_" } else { "" };
            out.push_str(&format!(
                "- `{}`{}{guessed}\n",
                crate::present::quote_path(&t.path),
                t.symbol.as_ref().map(|s| format!(" {s}")).unwrap_or_default()
            ));
        }
        if r.tests.is_empty() {
            out.push_str("- (none found)\n");
        }
    } else {
        let guessed = r.totals.guessed_tests;
        out.push_str(&format!(
            "tests to re-run ({}){}:\n",
            r.totals.tests,
            if guessed > 0 { format!(", and {guessed} through a name-only match [guessed]") } else { String::new() }
        ));
        for t in &r.tests {
            let at = match t.start_line {
                Some(l) => crate::present::loc(&t.path, l),
                None => crate::present::path(&t.path),
            };
            let guessed = if t.origin == "guessed" { " [guessed]" } else { "" };
            out.push_str(&format!(
                "  {at}{}{guessed}\n",
                t.symbol.as_ref().map(|s| format!(" {s}")).unwrap_or_default()
            ));
        }
    }
    out
}

/// A `--fail-on` check: `callers>N`, `deleted`, `public-api`, `tests>N`.
pub fn failed_checks(r: &RangeImpact, checks: &[String]) -> Result<Vec<String>> {
    let mut failed = Vec::new();
    for c in checks {
        let c = c.trim();
        let (name, limit) = match c.split_once('>') {
            Some((n, v)) => (
                n.trim(),
                Some(
                    v.trim()
                        .parse::<usize>()
                        .map_err(|_| ChangesError::NotANumber { check: c.to_string(), value: v.to_string() })?,
                ),
            ),
            None => (c, None),
        };
        let hit = match (name, limit) {
            ("callers", Some(n)) => (r.totals.confident_callers > n).then(|| {
                format!(
                    "{} transitive callers through precise, extracted or resolved edges > {n}",
                    r.totals.confident_callers
                )
            }),
            ("tests", Some(n)) => (r.totals.tests > n).then(|| format!("{} tests to re-run > {n}", r.totals.tests)),
            ("deleted", None) => {
                let used: Vec<&str> = r
                    .definitions
                    .iter()
                    .filter(|d| d.change == "deleted" && !d.callers.is_empty())
                    .map(|d| d.name.as_str())
                    .collect();
                (!used.is_empty()).then(|| format!("deleted definitions still called: {}", used.join(", ")))
            }
            ("public-api" | "public_api", None) => {
                (r.totals.public_api_changes > 0).then(|| format!("{} public API changes", r.totals.public_api_changes))
            }
            _ => {
                return Err(ChangesError::UnknownCheck { check: c.to_string() }.into());
            }
        };
        failed.extend(hit);
    }
    Ok(failed)
}

/// Exit code when a `--fail-on` check trips.
pub use crate::error::EXIT_CHECK_FAILED;

results!(RangeImpact => "definitions", SearchDiffResult => "results");
