//! Operations: each is one function returning a typed result plus a text renderer; the CLI
//! (text and `--json`) and the MCP server render the same `Answer`.

pub mod args;
pub mod changes;
pub mod context;
pub mod data_access;
pub mod debug;
pub mod deep_search;
pub mod doctor;
pub mod evaluate;
pub mod export;
pub mod feedback;
pub mod graph;
pub mod grep;
pub mod impact;
pub mod index;
pub mod model;
pub mod nav;
pub mod objects;
pub mod overview;
pub mod page;
pub mod registry;
pub mod remote;
pub mod search;
pub mod setup;
pub mod similar;
pub mod source;
pub mod status;
pub mod upkeep;

use crate::view::ViewId;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The result of an operation in both renderings.
pub struct Answer {
    pub operation: &'static str,
    pub view: Option<ViewId>,
    /// Operation-specific fields, merged into the JSON envelope.
    pub data: Map<String, Value>,
    pub text: String,
    /// The exit code of an answer that still fails something (a doctor check, an impact
    /// `--fail-on` check, an evaluation gate); `error::EXIT_OK` otherwise.
    pub exit: i32,
}

impl Answer {
    pub fn new(operation: &'static str, view: Option<ViewId>, data: impl Serialize, text: String) -> Answer {
        let data = match serde_json::to_value(data) {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                let mut m = Map::new();
                m.insert("result".into(), other);
                m
            }
            Err(e) => {
                let mut m = Map::new();
                m.insert("serialization_error".into(), Value::String(e.to_string()));
                m
            }
        };
        Answer { operation, view, data, text, exit: crate::error::EXIT_OK }
    }

    /// The same answer with a non-zero exit code.
    pub fn with_exit(mut self, code: i32) -> Answer {
        self.exit = code;
        self
    }

    /// `{"ok": true, "operation": …, "view": …, …}`
    pub fn json(&self) -> Value {
        let mut m = Map::new();
        m.insert("ok".into(), Value::Bool(true));
        m.insert("operation".into(), Value::String(self.operation.into()));
        if let Some(v) = &self.view {
            m.insert("view".into(), serde_json::to_value(v).unwrap_or(Value::Null));
        }
        for (k, v) in &self.data {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }
}

/// The keys that hold an answer's list of results, in the order they are looked for.
const LIST_KEYS: &[&str] = &["results", "matches", "files", "usages", "tests", "callers", "definitions", "questions"];

/// `--jsonl`: each element of the answer's result list as one line (`"type": "result"`, with
/// the operation and view), then one `"type": "summary"` line with the rest of the envelope.
pub fn json_lines(answer: &Answer) -> Vec<String> {
    let mut env = answer.json();
    let Value::Object(m) = &mut env else { return vec![env.to_string()] };
    let key = LIST_KEYS.iter().find(|k| m.get(**k).is_some_and(|v| v.as_array().is_some_and(|a| !a.is_empty())));
    let mut lines = Vec::new();
    if let Some(key) = key {
        let items = m.remove(*key).unwrap_or_default();
        for item in items.as_array().into_iter().flatten() {
            let mut line = Map::new();
            line.insert("type".into(), json!("result"));
            line.insert("operation".into(), json!(answer.operation));
            if let Some(v) = m.get("view") {
                line.insert("view".into(), v.clone());
            }
            match item {
                Value::Object(o) => line.extend(o.clone()),
                other => {
                    line.insert("value".into(), other.clone());
                }
            }
            lines.push(Value::Object(line).to_string());
        }
        m.insert("list".into(), json!(key));
    }
    let mut summary = Map::new();
    summary.insert("type".into(), json!("summary"));
    summary.extend(m.clone());
    lines.push(Value::Object(summary).to_string());
    lines
}

/// The answer of a question whose subject (a symbol, a table, a file) names nothing in the view.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Unmatched {
    pub symbol: String,
    /// Always false.
    pub matched: bool,
    /// Names of the view near the one asked for.
    pub suggestions: Vec<String>,
    /// Always empty.
    pub results: Vec<Value>,
}

impl Unmatched {
    pub fn new(symbol: &str, suggestions: Vec<String>) -> Unmatched {
        Unmatched { symbol: symbol.to_string(), matched: false, suggestions, results: Vec::new() }
    }
}

/// `{"ok": false, "operation": …, "error": …}`
pub fn failure_json(operation: &str, err: &anyhow::Error) -> Value {
    json!({ "ok": false, "operation": operation, "error": format!("{err:#}") })
}

/// The one-line view citation every answer starts with.
pub fn view_line(view: &ViewId) -> String {
    match (view.kind, &view.commit) {
        ("worktree", Some(c)) => format!("view: worktree (HEAD {})", &c[..12.min(c.len())]),
        ("worktree", None) => "view: worktree (no commits yet)".into(),
        ("staged", Some(c)) => format!("view: staged changes (HEAD {})", &c[..12.min(c.len())]),
        ("folder", _) => format!("view: folder {}", view.label),
        ("snapshot", _) => format!("view: snapshot {}", view.label),
        (_, Some(c)) => format!("view: commit {}", &c[..12.min(c.len())]),
        _ => format!("view: {}", view.label),
    }
}

/// Asks every source in `selected` the same question: one source answers as itself; with
/// several, each source that knows the subject (`matched` is not false; all of them when none
/// does) answers in turn under its name, and sources the question does not apply to (a folder
/// without a code graph) are skipped with a note.
pub fn over_sources(
    selected: &[&crate::sources::Source],
    f: impl Fn(&crate::engine::Engine) -> anyhow::Result<Answer>,
) -> anyhow::Result<Answer> {
    if let [one] = selected {
        return f(&one.engine);
    }
    let mut answers = Vec::new();
    let mut skipped = Vec::new();
    let mut first_err = None;
    for s in selected {
        match f(&s.engine) {
            Ok(a) => answers.push((s.name.clone(), a)),
            Err(e) => {
                skipped.push(format!("{}: {e:#}", s.name));
                first_err.get_or_insert(e);
            }
        }
    }
    if answers.is_empty() {
        return Err(first_err.unwrap_or_else(|| anyhow::anyhow!("no source to ask")));
    }
    let matched: Vec<usize> =
        (0..answers.len()).filter(|&i| answers[i].1.data.get("matched") != Some(&Value::Bool(false))).collect();
    let keep: Vec<usize> = if matched.is_empty() { (0..answers.len()).collect() } else { matched };
    let operation = answers[0].1.operation;
    let view = answers[keep[0]].1.view.clone();
    let mut text = String::new();
    let mut parts = Vec::new();
    for &i in &keep {
        let (name, a) = &answers[i];
        text.push_str(&format!("source `{name}`:\n{}", a.text));
        let mut part = Map::new();
        part.insert("source".into(), Value::String(name.clone()));
        if let Some(v) = &a.view {
            part.insert("view".into(), serde_json::to_value(v).unwrap_or(Value::Null));
        }
        part.extend(a.data.clone());
        parts.push(Value::Object(part));
    }
    for s in &skipped {
        text.push_str(&format!("note: skipped {s}\n"));
    }
    Ok(Answer::new(operation, view, json!({"sources": parts, "skipped": skipped}), text))
}
