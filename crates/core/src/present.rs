//! How text answers look where a person reads them: colour, and paths relative to the directory
//! the command was started in (as `git grep` prints them). Set once by the CLI; MCP answers and
//! `--json` never go through it, so they keep repository-relative, uncoloured paths.

use std::io::IsTerminal;
use std::sync::OnceLock;

/// `--color`: when to colour text output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set or `TERM=dumb`.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether a stream that is (or is not) a terminal gets colour.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_terminal
                    && crate::env::get_os(crate::env::NO_COLOR).is_none()
                    && crate::env::get(crate::env::TERM).is_none_or(|t| t != "dumb")
            }
        }
    }

    pub fn stdout(self) -> bool {
        self.enabled(std::io::stdout().is_terminal())
    }

    pub fn stderr(self) -> bool {
        self.enabled(std::io::stderr().is_terminal())
    }
}

#[derive(Default)]
struct Style {
    color: bool,
    /// Where the command started, relative to the worktree root (`src/app/`), when inside it.
    prefix: OnceLock<Option<String>>,
}

static STYLE: OnceLock<Style> = OnceLock::new();

/// Chooses colour for this process's text output (the CLI calls it once, before any answer).
pub fn init(color: bool) {
    let _ = STYLE.set(Style { color, prefix: OnceLock::new() });
}

/// Records the worktree the answers' paths are relative to; paths print relative to the
/// current directory when it lies inside.
pub fn set_worktree(root: Option<&std::path::Path>) {
    let Some(style) = STYLE.get() else { return };
    style.prefix.get_or_init(|| prefix_of(root?));
}

/// The current directory relative to `root`, ending in `/` (None at the root or outside it).
pub fn prefix_of(root: &std::path::Path) -> Option<String> {
    let cwd = std::env::current_dir().ok()?.canonicalize().ok()?;
    let rel = cwd.strip_prefix(root.canonicalize().ok()?).ok()?;
    let rel = rel.to_str()?.replace('\\', "/");
    (!rel.is_empty()).then(|| format!("{rel}/"))
}

fn style() -> Option<&'static Style> {
    STYLE.get()
}

fn paint(code: &str, s: &str) -> String {
    if style().is_some_and(|st| st.color) { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() }
}

/// A repository-relative path as the reader should see it: relative to the current directory,
/// coloured like ripgrep's (magenta). Paths tagged with a source (`[docs] a.md`) belong to
/// another root and are left as they are.
pub fn path(p: &str) -> String {
    let p = quote_path(p);
    let shown = match style().and_then(|s| s.prefix.get()).and_then(|p| p.as_deref()) {
        Some(prefix) if !p.starts_with('[') => relative(&p, prefix),
        _ => p.into_owned(),
    };
    paint("35", &shown)
}

/// Characters a file name may hold that must not reach a reader raw: control characters (a
/// newline forges a `path:line:` line, ESC starts a terminal sequence), DEL, C1 controls and
/// the bidirectional overrides that reorder what is shown.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}')
}

/// A path as git quotes it (`core.quotePath`): unchanged when it holds no unsafe character,
/// else in double quotes with C escapes (`"a\nb"`, `"\033]0;x"`, `"\u{202e}"`).
pub fn quote_path(p: &str) -> std::borrow::Cow<'_, str> {
    if !p.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(p);
    }
    let mut out = String::with_capacity(p.len() + 8);
    out.push('"');
    for c in p.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x100 && unsafe_char(c) => out.push_str(&format!("\\{:03o}", c as u32)),
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    std::borrow::Cow::Owned(out)
}

/// Text for a terminal: what the repository's content or names could smuggle in is made
/// visible — every escape sequence but colour (SGR, which Lynx itself writes), other control
/// characters except newline and tab (a carriage return only before a newline), and the
/// bidirectional overrides. Everything else is left as it is.
pub fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    let needs = text.chars().any(|c| unsafe_char(c) && c != '\n' && c != '\t');
    if !needs {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if text[i + 1..].starts_with('\n') => out.push(c),
            '\x1b' => {
                // `ESC [ digits/semicolons m` is colour; anything else is shown, not obeyed.
                let rest = &text[i + 1..];
                let sgr = rest.strip_prefix('[').and_then(|r| {
                    let n = r.bytes().take_while(|b| b.is_ascii_digit() || *b == b';').count();
                    (r.as_bytes().get(n) == Some(&b'm')).then_some(n + 2)
                });
                match sgr {
                    Some(len) => {
                        out.push_str(&text[i..i + 1 + len]);
                        for _ in 0..len {
                            chars.next();
                        }
                    }
                    None => out.push_str("\\033"),
                }
            }
            c if unsafe_char(c) && (c as u32) < 0x100 => out.push_str(&format!("\\{:03o}", c as u32)),
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `1 test`, `2 tests`: a count with its noun.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `; did you mean: a, b?` (empty without suggestions).
pub fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() { String::new() } else { format!("; did you mean: {}?", suggestions.join(", ")) }
}

/// `path:line:` — the location prefix editors and terminals turn into links.
pub fn loc(p: &str, line: u32) -> String {
    format!("{}:{}:", path(p), paint("32", &line.to_string()))
}

/// A matched span inside a line of code.
pub fn matched(s: &str) -> String {
    paint("1;31", s)
}

/// A heading or the first line of an answer.
pub fn bold(s: &str) -> String {
    paint("1", s)
}

/// `path` (relative to the repository root) seen from `prefix` (a directory, ending in `/`).
pub fn relative(path: &str, prefix: &str) -> String {
    if let Some(rest) = path.strip_prefix(prefix) {
        return rest.to_string();
    }
    let mut up = prefix.trim_end_matches('/').split('/').collect::<Vec<_>>();
    let mut down: &str = path;
    // Drop the directories both share, then climb out of the rest.
    let mut common = 0;
    for (i, part) in prefix.trim_end_matches('/').split('/').enumerate() {
        match down.split_once('/') {
            Some((head, tail)) if head == part => {
                down = tail;
                common = i + 1;
            }
            _ => break,
        }
    }
    up.drain(..common);
    format!("{}{down}", "../".repeat(up.len()))
}

#[cfg(test)]
mod tests {
    use super::{for_terminal, quote_path, relative};

    #[test]
    fn unsafe_names_are_quoted_and_sequences_shown() {
        assert_eq!(quote_path("src/a.py"), "src/a.py");
        assert_eq!(quote_path("a\nsrc/x.py:1:"), "\"a\\nsrc/x.py:1:\"");
        assert_eq!(quote_path("t\x1b]0;owned\x07.py"), "\"t\\033]0;owned\\007.py\"");
        assert_eq!(quote_path("gpj.\u{202e}exe"), "\"gpj.\\u{202e}exe\"");
        assert_eq!(for_terminal("\x1b[35mx\x1b[0m\n"), "\x1b[35mx\x1b[0m\n");
        assert_eq!(for_terminal("a\x1b]0;t\x07b\r\n"), "a\\033]0;t\\007b\r\n");
        assert_eq!(for_terminal("x\ry"), "x\\015y");
    }

    #[test]
    fn paths_relative_to_a_subdirectory() {
        assert_eq!(relative("src/app/x.py", "src/app/"), "x.py");
        assert_eq!(relative("src/other.py", "src/app/"), "../other.py");
        assert_eq!(relative("README.md", "src/app/"), "../../README.md");
        assert_eq!(relative("srcx/a.py", "src/"), "../srcx/a.py");
        assert_eq!(relative("src/app2/y.py", "src/app/"), "../app2/y.py");
    }
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM UTC`.
pub fn when(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

#[cfg(test)]
mod when_tests {
    #[test]
    fn dates() {
        assert_eq!(super::when(0), "1970-01-01 00:00 UTC");
        assert_eq!(super::when(951_782_400 + 3_661), "2000-02-29 01:01 UTC");
        assert_eq!(super::when(1_796_083_200), "2026-12-01 00:00 UTC");
    }
}
