//! Operations: each is one function returning a typed result plus a text renderer; the CLI
//! (text and `--json`) and the MCP server render the same `Answer`.

/// Declares result types: `results!(T => "field")` for one whose `field` is its list,
/// `results!(T)` for one without.
macro_rules! results {
    ($($ty:ty $(=> $list:literal)?),+ $(,)?) => {
        $(impl $crate::ops::Results for $ty {
            $(fn list(&self) -> Option<&'static str> {
                Some($list)
            })?
        })+
    };
}

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
pub mod workspace;

use crate::view::ViewId;
use serde::Serialize;
use serde_json::{Map, Value};

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
    /// The field of `data` that is its list of results (`Results::list`).
    pub list: Option<&'static str>,
}

/// What an answer's data is: its JSON, and which of its fields, if any, is its list of results
/// — the list `--jsonl` writes one line per element of, declared by the result type rather than
/// guessed from the JSON.
pub trait Results: Serialize {
    /// The field that is this result's list, if it has one.
    fn list(&self) -> Option<&'static str> {
        None
    }
}

impl<T: Results + ?Sized> Results for &T {
    fn list(&self) -> Option<&'static str> {
        (**self).list()
    }
}

/// Answers whose data is assembled as JSON (small confirmations, fan-outs) have no list.
impl Results for Value {}

impl Answer {
    pub fn new<T: Results>(operation: &'static str, view: Option<ViewId>, data: T, text: String) -> Answer {
        let list = data.list();
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
        Answer { operation, view, data, text, exit: crate::error::EXIT_OK, list }
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

/// `--jsonl`: each element of the answer's result list as one line (`"type": "result"`, with
/// the operation and view), then one `"type": "summary"` line with the rest of the envelope.
pub fn json_lines(answer: &Answer) -> Vec<String> {
    let mut env = answer.json();
    let Value::Object(m) = &mut env else { return vec![env.to_string()] };
    let key = answer.list.filter(|k| m.get(*k).is_some_and(Value::is_array));
    let mut lines = Vec::new();
    if let Some(key) = key {
        let items = m.remove(key).unwrap_or_default();
        for item in items.as_array().into_iter().flatten() {
            let mut line = Map::new();
            line.insert("type".into(), Value::from("result"));
            line.insert("operation".into(), Value::from(answer.operation));
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
        m.insert("list".into(), Value::from(key));
    }
    let mut summary = Map::new();
    summary.insert("type".into(), Value::from("summary"));
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

/// `{"ok": false, "operation": …, "error": …, "kind": "usage" | "locked" | "damaged" | "failure"}`
pub fn failure_json(operation: &str, err: &anyhow::Error) -> Value {
    serde_json::to_value(Failure {
        ok: false,
        operation,
        error: format!("{err:#}"),
        kind: crate::error::Kind::of(err).name(),
    })
    .unwrap_or(Value::Null)
}

/// The answer of a question that failed: what went wrong and its kind (`error::Kind`).
#[derive(Debug, Serialize)]
pub struct Failure<'a> {
    pub ok: bool,
    pub operation: &'a str,
    pub error: String,
    pub kind: &'static str,
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
    let defines = |a: &Answer| a.data.get("matched") != Some(&Value::Bool(false));
    // A source that does not define the subject but names it (a repository calling a shared
    // library's function) answers too, after those that define it, and says so.
    let names = |a: &Answer| a.data.get("results").and_then(Value::as_array).is_some_and(|r| !r.is_empty());
    let matched: Vec<usize> = (0..answers.len()).filter(|&i| defines(&answers[i].1)).collect();
    let keep: Vec<usize> = if matched.is_empty() {
        (0..answers.len()).collect()
    } else {
        let mut keep = matched.clone();
        keep.extend((0..answers.len()).filter(|&i| !defines(&answers[i].1) && names(&answers[i].1)));
        keep
    };
    let definers: Vec<&str> = matched.iter().map(|&i| answers[i].0.as_str()).collect();
    let operation = answers[0].1.operation;
    let view = answers[keep[0]].1.view.clone();
    let mut text = String::new();
    let mut parts = Vec::new();
    for &i in &keep {
        let (name, a) = &answers[i];
        if defines(a) || definers.is_empty() {
            text.push_str(&format!("source `{name}`:\n{}", a.text));
        } else {
            let from = definers.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>().join(", ");
            text.push_str(&format!("source `{name}` (uses it; defined in {from}):\n{}", a.text));
        }
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
    Ok(Answer::new(operation, view, OverSources { sources: parts, skipped }, text))
}

/// One answer per source, each with its source's name and view, and the sources that could not
/// answer with why.
#[derive(Debug, Serialize)]
pub struct OverSources {
    pub sources: Vec<Value>,
    pub skipped: Vec<String>,
}

results!(Unmatched => "results", OverSources => "sources");

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize)]
    struct Found {
        results: Vec<u32>,
        files: Vec<&'static str>,
    }
    results!(Found => "results");

    fn lines(a: &Answer) -> Vec<Value> {
        json_lines(a).iter().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn json_lines_follow_the_list_the_result_type_declares() {
        // One line per declared element, then the summary with the rest of the envelope.
        let a = Answer::new("search", None, Found { results: vec![7, 8], files: vec!["a.rs"] }, String::new());
        let got = lines(&a);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!((got[0]["type"].as_str(), got[0]["value"].as_u64()), (Some("result"), Some(7)));
        assert_eq!((got[2]["type"].as_str(), got[2]["list"].as_str()), (Some("summary"), Some("results")));
        assert_eq!(got[2]["files"], json!(["a.rs"]), "other lists stay in the summary");
        // An empty declared list is still the list: the files beside it are not taken instead.
        let none = Answer::new("search", None, Found { results: vec![], files: vec!["a.rs"] }, String::new());
        let got = lines(&none);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0]["list"], "results");
        // Data assembled as JSON has no list: the whole answer is its summary.
        let plain = Answer::new("status", None, json!({"results": [1, 2]}), String::new());
        let got = lines(&plain);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["results"], json!([1, 2]));
    }
}
