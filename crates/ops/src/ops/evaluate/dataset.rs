//! Evaluation questions: JSON (an array, or `{"questions": [...]}`) or JSONL, one question
//! each: `id`, `query`, optional `filters`, `expected` files (and optional symbols), optional
//! `rev` (the revision to ask at; default the working tree).

use super::EvalError;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QFilters {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_contains: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    pub files: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub id: String,
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<QFilters>,
    pub expected: Expected,
    /// What kind of question (for annotated sets: semantic, architectural, symbol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `dev` (ranking work may look at it) or `test` (held out: reported, never tuned on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
    /// Free-form provenance (the mined commit, the variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<serde_json::Value>,
}

/// Reads a question file, naming the line or field at fault.
pub fn load(path: &Path) -> Result<Vec<Question>> {
    let shown = || path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| EvalError::Unreadable { what: format!("questions file {}", shown()), why: e.to_string() })?;
    let trimmed = text.trim_start();
    let questions: Vec<Question> = if trimmed.starts_with('[') || trimmed.starts_with('{') && !looks_like_jsonl(&text) {
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| EvalError::NotJson { path: shown(), why: e.to_string() })?;
        let arr = match &v {
            serde_json::Value::Array(_) => v.clone(),
            serde_json::Value::Object(o) => o
                .get("questions")
                .cloned()
                .ok_or_else(|| EvalError::Shape { path: shown(), want: "an array or an object with `questions`" })?,
            _ => return Err(EvalError::Shape { path: shown(), want: "an array of questions" }.into()),
        };
        let arr = arr.as_array().cloned().unwrap_or_default();
        arr.into_iter()
            .enumerate()
            .map(|(i, q)| {
                serde_json::from_value(q).map_err(|e| {
                    EvalError::Question { at: format!("{}: question #{}", shown(), i + 1), why: e.to_string() }.into()
                })
            })
            .collect::<Result<_>>()?
    } else {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| {
                    EvalError::Question { at: format!("{}:{}", shown(), i + 1), why: e.to_string() }.into()
                })
            })
            .collect::<Result<_>>()?
    };
    if questions.is_empty() {
        return Err(EvalError::NoQuestions { path: shown() }.into());
    }
    for q in &questions {
        if q.query.trim().is_empty() || q.expected.files.is_empty() {
            return Err(EvalError::Incomplete { path: shown(), id: q.id.clone() }.into());
        }
    }
    Ok(questions)
}

fn looks_like_jsonl(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    matches!((lines.next(), lines.next()), (Some(a), Some(_)) if a.trim_end().ends_with('}'))
}
