//! Cursors for list answers: an agent asks for the next page instead of a bigger `k`. A cursor
//! names the question (operation, arguments) and the view's content, plus how many items were
//! already given; at one view, lists are computed deterministically, so paging through returns
//! every item once. A cursor from another question or another state of the view is refused.

use anyhow::Result;
use serde::Serialize;

crate::error::errors! {
    /// A cursor that does not continue this list.
    pub enum CursorError: Usage {
        NotACursor { cursor: String } => "`{cursor}` is not a cursor (cursors come from `next_cursor` of a list answer)",
        Stale { cursor: String } =>
            "cursor `{cursor}` belongs to another question or another state of the view (the files changed since); ask again without a cursor",
    }
}

/// Where a page starts, for one question at one view.
pub struct Pager {
    fingerprint: String,
    pub offset: usize,
}

impl Pager {
    /// `question` holds every argument that shapes the list except the page size and the
    /// cursor itself; `view_key` is the view's content hash.
    pub fn new(operation: &str, view_key: &str, question: &impl Serialize, cursor: Option<&str>) -> Result<Pager> {
        let q = serde_json::to_vec(question)?;
        let fingerprint = crate::fsutil::short_hash(&[operation.as_bytes(), view_key.as_bytes(), &q])[..12].to_string();
        let offset = match cursor.map(str::trim).filter(|c| !c.is_empty()) {
            None => 0,
            Some(c) => {
                let (offset, fp) = c
                    .strip_prefix('p')
                    .and_then(|r| r.split_once('-'))
                    .and_then(|(n, fp)| Some((n.parse::<usize>().ok()?, fp)))
                    .ok_or_else(|| CursorError::NotACursor { cursor: c.to_string() })?;
                if fp != fingerprint {
                    return Err(CursorError::Stale { cursor: c.to_string() }.into());
                }
                offset
            }
        };
        Ok(Pager { fingerprint, offset })
    }

    /// How many items, from the start of the list, to compute for this page (one more than
    /// shown, to know whether another page follows).
    pub fn want(&self, limit: usize) -> usize {
        self.offset.saturating_add(limit).saturating_add(1)
    }

    /// Keeps this page of `items` (the list from its start) and returns the next page's cursor,
    /// if there is one.
    pub fn page<T>(&self, items: &mut Vec<T>, limit: usize) -> Option<String> {
        let more = items.len() > self.offset.saturating_add(limit);
        items.drain(..self.offset.min(items.len()));
        items.truncate(limit);
        more.then(|| self.cursor(self.offset + limit))
    }

    /// The cursor of the page that starts at `offset`.
    pub fn cursor_at(&self, offset: usize) -> String {
        self.cursor(offset)
    }

    fn cursor(&self, offset: usize) -> String {
        format!("p{offset}-{}", self.fingerprint)
    }
}

const MORE_CLI: &str = "more: --cursor ";
const MORE_MCP: &str = "more: cursor ";

/// The text line that tells how to get the next page, naming the command line's flag (an MCP
/// answer names its argument instead: `for_mcp`).
pub fn more_line(next: Option<&str>) -> String {
    match next {
        Some(c) => format!("{MORE_CLI}{c}\n"),
        None => String::new(),
    }
}

/// Least room the structured part of an MCP answer gets, whatever its text's length: the
/// envelope and the first item of each list.
pub const STRUCTURED_FLOOR: usize = 1_000;

/// Room for the structured part of an MCP answer whose text has `text_len` characters: three
/// times the text (its key names make the same items two to three times as long), so it holds
/// the items the text shows, never a second, larger answer.
pub fn structured_budget(text_len: usize) -> usize {
    (3 * text_len).max(STRUCTURED_FLOOR)
}
/// The field of a structured part that names the lists cut to fit its budget: a JSON pointer
/// to each, with the number of items the whole answer has (the text and `--json` have them all).
pub const CUT_FIELD: &str = "structured_cut";
/// Longest string the structured part keeps whole when an answer is over its budget.
const STRUCTURED_STRING: usize = 240;
/// Fewest items a list keeps when the structured part is cut to fit.
const STRUCTURED_ITEMS: usize = 5;
/// An object with more keys than this is a map (path → counts), cut like a list.
const MAP_KEYS: usize = 40;
/// Fields that hold code or prose the text part already shows: the structured part leaves them
/// empty (a program has the path and lines to read them), so the model does not read them twice.
const BODY_FIELDS: &[&str] = &["text", "code", "snippet", "preview"];
/// Fields that name a definition by its head: the structured part keeps the first line.
const HEAD_FIELDS: &[&str] = &["signature"];
/// Ranking diagnostics the text does not show (`--json` and `explain` have them).
const DIAGNOSTIC_FIELDS: &[&str] = &["sparse_rank", "dense_rank"];
/// The list of a fanned-out answer's parts, one per source.
const FANNED_OUT: &str = "sources";
/// Characters of a commit id the structured part keeps, as the text shows it.
const COMMIT_CHARS: usize = 12;

/// The structured part of an MCP answer: the fields a program needs, without what the text
/// already shows — code bodies left empty, signatures cut to their first line, ranking
/// diagnostics dropped, scores to four decimals, the view's commit abbreviated — and within
/// `budget` characters of JSON: then long strings are shortened, then the longest lists
/// cut from the end (what the text shows first stays). The shape, and so the tool's output
/// schema, is kept. The CLI's `--json` is the whole answer.
pub fn fit_structured(mut v: serde_json::Value, budget: usize) -> serde_json::Value {
    use serde_json::Value;
    fn len(v: &Value) -> usize {
        serde_json::to_string(v).map_or(0, |s| s.len())
    }
    fn cut(s: &mut String, at: usize) {
        if s.len() > at {
            let mut end = at;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
            s.push('…');
        }
    }
    fn project(v: &mut Value) {
        match v {
            Value::Number(n) if n.is_f64() => {
                if let Some(x) = n.as_f64()
                    && let Some(r) = serde_json::Number::from_f64((x * 10_000.0).round() / 10_000.0)
                {
                    *n = r;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(project),
            Value::Object(m) => {
                m.retain(|k, _| !DIAGNOSTIC_FIELDS.contains(&k.as_str()));
                if let Some(Value::String(c)) = m.get_mut("view").and_then(|w| w.get_mut("commit"))
                    && c.len() > COMMIT_CHARS
                    && c.is_ascii()
                {
                    c.truncate(COMMIT_CHARS);
                }
                for (k, x) in m.iter_mut() {
                    match x {
                        Value::String(s) if BODY_FIELDS.contains(&k.as_str()) => s.clear(),
                        Value::String(s) if HEAD_FIELDS.contains(&k.as_str()) => {
                            let first = s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
                            let more = first.len() < s.trim().len();
                            let mut line = first.to_string();
                            cut(&mut line, 160);
                            if more && !line.ends_with('…') {
                                line.push('…');
                            }
                            *s = line;
                        }
                        _ => project(x),
                    }
                }
            }
            _ => {}
        }
    }
    project(&mut v);
    if len(&v) <= budget {
        return v;
    }
    fn shorten(v: &mut Value) {
        match v {
            Value::String(s) => cut(s, STRUCTURED_STRING),
            Value::Array(a) => a.iter_mut().for_each(shorten),
            Value::Object(m) => m.values_mut().for_each(shorten),
            _ => {}
        }
    }
    shorten(&mut v);
    // The longest list anywhere — an array, or a map (an object of more keys than any record
    // type has: `by_file`) — halved until the whole fits or every list is at its floor; each
    // list cut is named with its whole length, so a program never takes a cut list for all.
    enum List<'a> {
        Array(&'a mut Vec<Value>),
        Map(&'a mut serde_json::Map<String, Value>),
    }
    impl List<'_> {
        fn len(&self) -> usize {
            match self {
                List::Array(a) => a.len(),
                List::Map(m) => m.len(),
            }
        }
    }
    fn longest<'a>(v: &'a mut Value, floor: usize, key: &str, at: String) -> Option<(String, List<'a>)> {
        // A map's keys are paths or names (`src/a.rs`, `pkg.mod`); a record's are field names.
        let is_map = |m: &serde_json::Map<String, Value>| {
            m.len() > MAP_KEYS || (!m.is_empty() && m.keys().all(|k| k.contains('/') || k.contains('.')))
        };
        // The answers of several sources are each cut, never dropped: the text has them all.
        let is_list = key != FANNED_OUT
            && (matches!(v, Value::Array(a) if a.len() > floor)
                || matches!(v, Value::Object(m) if m.len() > floor && is_map(m)));
        if is_list {
            return match v {
                Value::Array(a) => Some((at, List::Array(a))),
                Value::Object(m) => Some((at, List::Map(m))),
                _ => None,
            };
        }
        let pointer = |k: &str| format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
        let children: Vec<(String, &str, &mut Value)> = match v {
            Value::Array(a) => a.iter_mut().enumerate().map(|(i, x)| (format!("{at}/{i}"), "", x)).collect(),
            Value::Object(m) => m.iter_mut().map(|(k, x)| (pointer(k), k.as_str(), x)).collect(),
            _ => return None,
        };
        children.into_iter().filter_map(|(p, k, c)| longest(c, floor, k, p)).max_by_key(|(_, l)| l.len())
    }
    let mut cut_lists: Vec<(String, usize)> = Vec::new();
    // A few items of every list first; one of each when that is still too much.
    for floor in [STRUCTURED_ITEMS, 1] {
        while len(&v) > budget {
            let Some((at, list)) = longest(&mut v, floor, "", String::new()) else { break };
            let whole = list.len();
            match list {
                List::Array(a) => {
                    let keep = (a.len() / 2).max(floor);
                    a.truncate(keep);
                }
                List::Map(m) => {
                    let keep = (m.len() / 2).max(floor);
                    let drop: Vec<String> = m.keys().skip(keep).cloned().collect();
                    for k in drop {
                        m.remove(&k);
                    }
                }
            }
            if !cut_lists.iter().any(|(p, _)| *p == at) {
                cut_lists.push((at, whole));
            }
        }
    }
    if !cut_lists.is_empty()
        && let Value::Object(m) = &mut v
    {
        let cut: serde_json::Map<String, Value> = cut_lists.into_iter().map(|(p, n)| (p, Value::from(n))).collect();
        m.insert(CUT_FIELD.into(), Value::Object(cut));
    }
    v
}

/// An answer's text as an MCP client reads it: the next page is asked with the `cursor`
/// argument, not the `--cursor` flag.
pub fn for_mcp(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(MORE_CLI) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match line.strip_prefix(MORE_CLI) {
            Some(rest) => {
                out.push_str(MORE_MCP);
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    #[test]
    fn structured_answers_fit_their_budget_keeping_the_first_items() {
        let results: Vec<serde_json::Value> = (0..5000)
            .map(|i| serde_json::json!({"path": format!("src/f{i}.rs"), "text": "fn f() {\n    body();\n}\n", "score": 0.123456789, "note": "y".repeat(2000)}))
            .collect();
        let by_file: serde_json::Map<String, serde_json::Value> =
            (0..5000).map(|i| (format!("src/f{i:04}.rs"), serde_json::json!({"callers": i}))).collect();
        let v = serde_json::json!({"ok": true, "results": results, "total": 5000, "by_file": by_file});
        let fitted = super::fit_structured(v, 8_000);
        let s = serde_json::to_string(&fitted).unwrap();
        assert!(s.len() <= 8_000, "{}", s.len());
        assert_eq!(fitted["total"], 5000);
        // The cut lists are named with their whole length.
        assert_eq!(fitted["structured_cut"]["/results"], 5000);
        assert_eq!(fitted["structured_cut"]["/by_file"], 5000);
        assert!(fitted["results"].as_array().unwrap().len() < 5000);
        assert_eq!(fitted["results"][0]["path"], "src/f0.rs");
        // Code bodies are left to the text; scores four decimals; other long strings are cut.
        assert_eq!(fitted["results"][0]["text"], "");
        assert_eq!(fitted["results"][0]["score"], 0.1235);
        assert!(fitted["results"][0]["note"].as_str().unwrap().len() < 300);
        let small = serde_json::json!({"ok": true, "results": [1, 2], "signature": "fn f()"});
        assert_eq!(super::fit_structured(small.clone(), 8_000), small);
        let view =
            serde_json::json!({"view": {"commit": "0123456789abcdef0123456789abcdef01234567"}, "sparse_rank": 3});
        assert_eq!(super::fit_structured(view, 8_000), serde_json::json!({"view": {"commit": "0123456789ab"}}));
    }

    use super::*;

    #[test]
    fn mcp_text_names_the_cursor_argument() {
        let text = format!("a: 1\n{}", more_line(Some("p10-ab")));
        assert_eq!(for_mcp(&text), "a: 1\nmore: cursor p10-ab\n");
        // Only the line this module writes: a hit quoting the flag stays as it is.
        assert_eq!(for_mcp("  x = \"more: --cursor 1\"\n"), "  x = \"more: --cursor 1\"\n");
    }

    #[test]
    fn pages_cover_a_list_once_and_refuse_foreign_cursors() {
        let all: Vec<u32> = (0..23).collect();
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let p = Pager::new("search", "view-a", &("q", 1), cursor.as_deref()).unwrap();
            let mut items: Vec<u32> = all.iter().copied().take(p.want(10)).collect();
            let next = p.page(&mut items, 10);
            seen.extend(items);
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, all);
        let c = Pager::new("search", "view-a", &("q", 1), None).unwrap().cursor(10);
        assert!(Pager::new("search", "view-b", &("q", 1), Some(&c)).is_err(), "another view");
        assert!(Pager::new("search", "view-a", &("q", 2), Some(&c)).is_err(), "another question");
        assert!(Pager::new("search", "view-a", &("q", 1), Some("garbage")).is_err());
        assert_eq!(Pager::new("search", "view-a", &("q", 1), Some(&c)).unwrap().offset, 10);
    }
}
