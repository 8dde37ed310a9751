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
    let mut buf = String::with_capacity(64);
    for word in words(text) {
        if word.len() > MAX_WORD {
            continue;
        }
        buf.clear();
        for c in word.chars() {
            buf.extend(c.to_lowercase());
        }
        emit(&buf);
        split_parts(word, |part| {
            if part.len() != word.len() {
                buf.clear();
                for c in part.chars() {
                    buf.extend(c.to_lowercase());
                }
                emit(&buf);
            }
        });
    }
}

/// Tokens of `text` as owned strings (convenience for queries and tests).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokenize(text, |t| out.push(t.to_string()));
    out
}

/// Maximal runs of identifier characters (letters, digits, `_`).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty() && w.chars().any(|c| c.is_alphanumeric()))
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
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0usize;
        for i in 1..chars.len() {
            let (pos, c) = chars[i];
            let prev = class(chars[i - 1].1);
            let cur = class(c);
            let next = chars.get(i + 1).map(|&(_, n)| class(n));
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
        }
        emit(&piece[start..]);
    }
}

/// English function words dropped from natural-language queries (never from indexed text, so
/// a query made only of them still matches).
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "does", "do", "for", "from", "how", "i", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "was", "what", "when", "where", "which", "who", "why", "with",
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

/// Splits a path into analysable text: directories, stem and extension become words.
pub fn path_text(path: &str) -> String {
    path.replace(['/', '.', '-', '\\'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_identifiers() {
        assert_eq!(tokens("IDamageable"), ["idamageable", "i", "damageable"]);
        assert_eq!(tokens("parse_http_request"), ["parse_http_request", "parse", "http", "request"]);
        assert_eq!(tokens("parseHTTPRequest"), ["parsehttprequest", "parse", "http", "request"]);
        assert_eq!(tokens("sha256sum x"), ["sha256sum", "sha", "256", "sum", "x"]);
        assert_eq!(tokens("fn a(b: u32) -> 42"), ["fn", "a", "b", "u32", "u", "32", "42"]);
        assert_eq!(tokens("__init__"), ["__init__", "init"]);
    }

    #[test]
    fn drops_long_words_and_stop_words() {
        let long = "a".repeat(80);
        assert!(tokens(&long).is_empty());
        assert_eq!(query_terms("how does the Parser handle errors"), ["parser", "handle", "errors"]);
        assert_eq!(query_terms("the"), ["the"]);
    }
}
