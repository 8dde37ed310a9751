//! The code-aware lexical analyser shared by indexing and querying.
//!
//! Identifiers are kept whole and also split into their camelCase / PascalCase / snake_case
//! parts, all lowercased, with no stemming: `IDamageable` → `idamageable`, `i`, `damageable`;
//! `parse_http_request` → `parse_http_request`, `parse`, `http`, `request`. Numbers are kept.
//! Changing anything here changes the lexical layer's fingerprint ([`ANALYZER_VERSION`]).

/// Bump when the token stream for a given text changes.
pub const ANALYZER_VERSION: u32 = 1;

/// Longest identifier kept; longer runs are hashes, base64 or minified data.
const MAX_WORD: usize = 64;

/// Calls `emit` for every token of `text`, in order. Parts of an identifier follow the whole.
pub fn tokenize(text: &str, mut emit: impl FnMut(&str)) {
    let mut buf = String::with_capacity(MAX_WORD);
    for word in words(text) {
        if word.len() > MAX_WORD {
            continue;
        }
        lower_into(word, &mut buf);
        emit(&buf);
        split_parts(word, |part| {
            if part.len() != word.len() {
                lower_into(part, &mut buf);
                emit(&buf);
            }
        });
    }
}

/// Lowercases `s` into `buf` (ASCII, nearly all code, without per-character case tables).
fn lower_into(s: &str, buf: &mut String) {
    buf.clear();
    if s.is_ascii() {
        buf.push_str(s);
        buf.make_ascii_lowercase();
    } else {
        for c in s.chars() {
            buf.extend(c.to_lowercase());
        }
    }
}

/// Tokens of `text` as owned strings (convenience for queries and tests).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokenize(text, |t| out.push(t.to_string()));
    out
}

/// Maximal runs of identifier characters (letters, digits, `_`) holding a letter or digit.
fn words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        loop {
            // Skip separators.
            while at < bytes.len() {
                let (word_char, len) = char_at(text, at);
                if word_char {
                    break;
                }
                at += len;
            }
            if at >= bytes.len() {
                return None;
            }
            let start = at;
            let mut any_alnum = false;
            while at < bytes.len() {
                let b = bytes[at];
                if b < 0x80 {
                    if b.is_ascii_alphanumeric() {
                        any_alnum = true;
                    } else if b != b'_' {
                        break;
                    }
                    at += 1;
                } else {
                    let (word_char, len) = char_at(text, at);
                    if !word_char {
                        break;
                    }
                    any_alnum = true;
                    at += len;
                }
            }
            if any_alnum {
                return Some(&text[start..at]);
            }
        }
    })
}

/// Whether the character starting at byte `at` belongs to a word, and its length in bytes.
#[inline]
fn char_at(text: &str, at: usize) -> (bool, usize) {
    let b = text.as_bytes()[at];
    if b < 0x80 {
        return (b.is_ascii_alphanumeric() || b == b'_', 1);
    }
    let c = text[at..].chars().next().expect("at is a char boundary");
    (c.is_alphanumeric(), c.len_utf8())
}

#[derive(PartialEq, Clone, Copy)]
enum Class {
    Lower,
    Upper,
    Digit,
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii_digit() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_alphabetic() {
        Class::Lower
    } else {
        Class::Other
    }
}

/// Splits an identifier at `_`, lower→Upper, letter↔digit and `HTTPRequest`-style boundaries.
/// Calls `emit` with each part; a word with one part emits it once (the caller skips it).
fn split_parts(word: &str, mut emit: impl FnMut(&str)) {
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let mut chars = piece.char_indices().peekable();
        let Some((_, first)) = chars.next() else { continue };
        let mut prev = class(first);
        let mut start = 0usize;
        while let Some((pos, c)) = chars.next() {
            let cur = class(c);
            let next = chars.peek().map(|&(_, n)| class(n));
            let boundary = match (prev, cur) {
                (Class::Lower, Class::Upper) => true,
                (Class::Digit, Class::Upper | Class::Lower) | (Class::Upper | Class::Lower, Class::Digit) => true,
                // "HTTPRequest": split before the last capital of a run followed by lowercase.
                (Class::Upper, Class::Upper) => next == Some(Class::Lower),
                _ => false,
            };
            if boundary {
                emit(&piece[start..pos]);
                start = pos;
            }
            prev = cur;
        }
        emit(&piece[start..]);
    }
}

/// English function words dropped from natural-language queries (never from indexed text, so
/// a query made only of them still matches).
/// Whether `w` (lowercase) is an English function word.
pub fn is_stop_word(w: &str) -> bool {
    STOP_WORDS.contains(&w)
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "does", "do", "for", "from", "how", "i", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "was", "what", "when", "where", "which", "who", "why",
    "with",
];

/// Query terms: analysed like indexed text, de-duplicated (order kept), stop words dropped
/// unless nothing else is left.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut all = tokens(query);
    let mut seen = std::collections::HashSet::new();
    all.retain(|t| seen.insert(t.clone()));
    let content: Vec<String> = all.iter().filter(|t| !STOP_WORDS.contains(&t.as_str())).cloned().collect();
    if content.is_empty() { all } else { content }
}

/// Words a question is phrased with that say nothing about the code it asks for (kept when a
/// query is not phrased as a question, where they may be identifiers).
const QUESTION_WORDS: &[&str] = &[
    "happens",
    "happen",
    "implemented",
    "implementation",
    "defined",
    "responsible",
    "logic",
    "code",
    "place",
    "located",
    "decided",
    "determined",
    "work",
    "works",
    "there",
    "any",
    "some",
    "can",
    "should",
    "would",
    "will",
    "way",
];

/// The query without English function words and question phrasing, words kept as written
/// (for embedding: a static model averages every token, so `how does the` dilutes the rest).
pub fn content_words(query: &str) -> String {
    let question = is_question(query);
    let kept: Vec<&str> = query
        .split(|c: char| c.is_whitespace() || c == '?' || c == ',')
        .filter(|w| !w.is_empty())
        .filter(|w| {
            let l = w.to_ascii_lowercase();
            !(STOP_WORDS.contains(&l.as_str()) || question && QUESTION_WORDS.contains(&l.as_str()))
        })
        .collect();
    if kept.is_empty() { query.to_string() } else { kept.join(" ") }
}

/// The words of a query worth marking in a result: its content words (function words and, in
/// a question, question words left out, as the query loses them before ranking), split at
/// anything but letters, digits and `_`, lowercased, longer than two characters, each once.
pub fn highlight_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in content_words(query).split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let w = w.to_lowercase();
        if w.chars().count() > 2 && !STOP_WORDS.contains(&w.as_str()) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// Whether a query is phrased as a question (a question word first, or a question mark).
pub fn is_question(query: &str) -> bool {
    let first = query.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    query.trim_end().ends_with('?')
        || matches!(
            first.as_str(),
            "how" | "where" | "what" | "which" | "when" | "why" | "who" | "does" | "is" | "are" | "can"
        )
}

/// Query terms with weights: the analysed terms (1.0; question phrasing dropped when
/// `question_words`), then, when `variant_weight` > 0, English inflections of each term
/// (`retries` → `retry`, `configured` → `configure`) at that weight. The caller keeps only the
/// variants its index holds.
pub fn weighted_query_terms(query: &str, question_words: bool, variant_weight: f32) -> Vec<(String, f32)> {
    let mut terms = query_terms(query);
    if question_words && is_question(query) {
        let kept: Vec<String> = terms.iter().filter(|t| !QUESTION_WORDS.contains(&t.as_str())).cloned().collect();
        if !kept.is_empty() {
            terms = kept;
        }
    }
    let mut out: Vec<(String, f32)> = terms.iter().map(|t| (t.clone(), 1.0)).collect();
    if variant_weight > 0.0 {
        for t in &terms {
            for v in variants(t) {
                if !out.iter().any(|(o, _)| *o == v) {
                    out.push((v, variant_weight));
                }
            }
        }
    }
    out
}

/// Plausible other inflections of an English word (plural, past, gerund), without a stemmer's
/// over-reach: only whole-word forms that code also uses.
pub fn variants(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    if t.len() < 4 || !t.bytes().all(|b| b.is_ascii_lowercase()) {
        return out;
    }
    let mut push = |s: String| {
        if s.len() >= 3 && s != t && !out.contains(&s) {
            out.push(s);
        }
    };
    if let Some(s) = t.strip_suffix("ies") {
        push(format!("{s}y"));
    } else if let Some(s) =
        t.strip_suffix("es").filter(|s| s.ends_with('s') || s.ends_with('x') || s.ends_with("ch") || s.ends_with("sh"))
    {
        push(s.to_string());
    } else if let Some(s) = t.strip_suffix('s').filter(|s| !s.ends_with('s')) {
        push(s.to_string());
    } else if let Some(s) = t.strip_suffix("ed") {
        push(s.to_string());
        push(format!("{s}e"));
    } else if let Some(s) = t.strip_suffix("ing") {
        push(s.to_string());
        push(format!("{s}e"));
    } else {
        // A base form: its plural.
        push(if t.ends_with('y') && !t.ends_with("ey") {
            format!("{}ies", &t[..t.len() - 1])
        } else {
            format!("{t}s")
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlighted_words_leave_function_and_question_words_out() {
        assert_eq!(highlight_terms("How does the retry backoff work?"), vec!["retry", "backoff"]);
        assert_eq!(
            highlight_terms("retry backoff work"),
            vec!["retry", "backoff", "work"],
            "not a question: `work` may be a name"
        );
        assert_eq!(highlight_terms("parse_http_request in the `Router`"), vec!["parse_http_request", "router"]);
        assert_eq!(highlight_terms("a an of"), Vec::<String>::new());
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(tokens("IDamageable"), ["idamageable", "i", "damageable"]);
        assert_eq!(tokens("parse_http_request"), ["parse_http_request", "parse", "http", "request"]);
        assert_eq!(tokens("parseHTTPRequest"), ["parsehttprequest", "parse", "http", "request"]);
        assert_eq!(tokens("sha256sum x"), ["sha256sum", "sha", "256", "sum", "x"]);
        assert_eq!(tokens("fn a(b: u32) -> 42"), ["fn", "a", "b", "u32", "u", "32", "42"]);
        assert_eq!(tokens("__init__"), ["__init__", "init"]);
        assert_eq!(tokens("a+__+b"), ["a", "b"]);
        assert_eq!(
            tokens("ÄrgerFällt größe_Straße"),
            ["ärgerfällt", "ärger", "fällt", "größe_straße", "größe", "straße"]
        );
        assert_eq!(tokens("x—y €5 日本語テキスト"), ["x", "y", "5", "日本語テキスト"]);
    }

    #[test]
    fn drops_long_words_and_stop_words() {
        let long = "a".repeat(80);
        assert!(tokens(&long).is_empty());
        assert_eq!(query_terms("how does the Parser handle errors"), ["parser", "handle", "errors"]);
        assert_eq!(query_terms("the"), ["the"]);
    }

    #[test]
    fn content_words_keep_what_the_question_is_about() {
        assert_eq!(content_words("Where is the retry logic implemented?"), "retry");
        assert_eq!(content_words("how does JsonReader peek work"), "JsonReader peek");
        // Not a question: `logic` may be what is searched for.
        assert_eq!(content_words("retry logic"), "retry logic");
        assert_eq!(content_words("the"), "the");
    }
}
