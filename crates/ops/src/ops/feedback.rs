//! `feedback`: an agent's report of what it tried and what failed, appended to a local JSONL
//! file (`.lynx/feedback.jsonl`); `git lynx feedback` summarises it.

use super::Answer;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

crate::error::errors! {
    /// Feedback that cannot be recorded.
    pub enum FeedbackError: Usage {
        Outcome { known: String } => "outcome must be one of {known}",
    }
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Entry {
    pub time: u64,
    pub tool: String,
    pub query: String,
    pub outcome: String,
    pub comment: String,
}

/// Where the store keeps agents' feedback.
pub fn path(ws: &crate::workspace::Workspace) -> std::path::PathBuf {
    ws.store.root.join("feedback.jsonl")
}

pub const OUTCOMES: &[&str] = &["helpful", "partial", "unhelpful", "error"];

/// `feedback`'s arguments on every surface (the command line without `--outcome` summarises
/// instead; MCP and the web page always record).
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct FeedbackArgs {
    /// helpful | partial | unhelpful | error (records an entry; omit to print the summary).
    #[arg(long)]
    #[schemars(required, schema_with = "outcomes", description = "")]
    pub outcome: Option<String>,
    /// The command or tool the feedback is about (search, find_usages…).
    #[arg(long, default_value = "")]
    #[serde(default)]
    #[schemars(with = "Option<String>", description = "")]
    pub tool: String,
    /// The question that was asked.
    #[arg(long, default_value = "")]
    #[serde(default)]
    #[schemars(with = "Option<String>", description = "")]
    pub query: String,
    /// What was right or wrong.
    #[arg(long, default_value = "")]
    #[serde(default)]
    #[schemars(with = "Option<String>", description = "")]
    pub comment: String,
}

fn outcomes(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    super::args::one_of(OUTCOMES)
}

/// Records `a` (its outcome is required here).
pub fn record_args(path: &Path, a: &FeedbackArgs) -> Result<Answer> {
    let outcome = super::args::required(a.outcome.as_deref().unwrap_or(""), "outcome")?;
    record(path, &a.tool, &a.query, &outcome, &a.comment)
}

pub fn record(path: &Path, tool: &str, query: &str, outcome: &str, comment: &str) -> Result<Answer> {
    if !OUTCOMES.contains(&outcome) {
        return Err(FeedbackError::Outcome { known: OUTCOMES.join(", ") }.into());
    }
    let e = Entry {
        time: crate::fsutil::now_secs(),
        tool: tool.into(),
        query: query.into(),
        outcome: outcome.into(),
        comment: comment.into(),
    };
    // The store must still be there: a deleted repository is not re-created by a feedback.
    if let Some(dir) = path.parent()
        && !dir.is_dir()
    {
        return Err(anyhow::anyhow!(
            "the Lynx store {} is gone (was the repository moved or deleted?); feedback not recorded",
            dir.display()
        ));
    }
    // One short line per write with O_APPEND: concurrent writers do not interleave.
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    let mut line = serde_json::to_string(&e)?;
    line.push('\n');
    f.write_all(line.as_bytes())?;
    Ok(Answer::new(
        "feedback",
        None,
        Recorded { recorded: true, path: path.display().to_string() },
        "feedback recorded, thank you\n".into(),
    ))
}

/// A feedback entry stored.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Recorded {
    pub recorded: bool,
    /// The file it was appended to.
    pub path: String,
}

pub fn summary(path: &Path) -> Result<Answer> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let entries: Vec<Entry> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let mut by_tool: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for e in &entries {
        *by_tool
            .entry(if e.tool.is_empty() { "(unspecified)".into() } else { e.tool.clone() })
            .or_default()
            .entry(e.outcome.clone())
            .or_default() += 1;
    }
    let mut out = format!("{} feedback entries in {}\n", entries.len(), path.display());
    for (tool, outcomes) in &by_tool {
        let parts: Vec<String> = outcomes.iter().map(|(o, n)| format!("{o} {n}")).collect();
        out.push_str(&format!("  {tool}: {}\n", parts.join(", ")));
    }
    let problems: Vec<&Entry> = entries.iter().rev().filter(|e| e.outcome != "helpful").take(10).collect();
    if !problems.is_empty() {
        out.push_str("recent problems:\n");
        for e in &problems {
            out.push_str(&format!("  [{}] {} \"{}\": {}\n", e.outcome, e.tool, e.query, e.comment));
        }
    }
    Ok(Answer::new(
        "feedback",
        None,
        FeedbackSummary { entries: entries.len(), by_tool, recent_problems: problems },
        out,
    ))
}

/// What agents reported: entries counted per tool and outcome, and the latest problems.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FeedbackSummary<'a> {
    pub entries: usize,
    pub by_tool: std::collections::BTreeMap<String, std::collections::BTreeMap<String, usize>>,
    pub recent_problems: Vec<&'a Entry>,
}

results!(Recorded, FeedbackSummary<'_>);
