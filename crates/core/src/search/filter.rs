//! Path filters (glob, extensions, substring), applied to the candidate set before ranking.

use super::Allowed;
use crate::view::table::ChunkTable;
use anyhow::Result;
use std::sync::Arc;

crate::error::errors! {
    /// A pathspec git would refuse, or one Lynx does not support.
    pub enum PathspecError: Usage {
        Unclosed { spec: String } => "pathspec `{spec}`: the magic is not closed with `)`",
        Magic { spec: String, magic: String } =>
            "pathspec `{spec}`: magic `{magic}` is not supported (exclude, top, literal, glob are)",
        Outside { spec: String } => "pathspec `{spec}` is outside the repository",
        Invalid { pattern: String, why: String } => "invalid pathspec `{pattern}`: {why}",
    }
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Filters {
    /// Globs a path must match (any of them); `!glob` excludes instead.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub globs: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub extensions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path_contains: Option<String>,
    /// git pathspecs, already relative to the repository root (`Pathspec::resolve`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub pathspecs: Vec<Pathspec>,
    /// Languages a file must be in (any of them), by name or alias (`py`, `c#`, `ts`…).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub languages: Vec<String>,
}

impl Filters {
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty()
            && self.extensions.is_empty()
            && self.path_contains.as_deref().is_none_or(str::is_empty)
            && self.pathspecs.is_empty()
            && self.languages.is_empty()
    }

    /// A path predicate, or a usage error naming the bad glob.
    pub fn matcher(&self) -> Result<PathMatcher> {
        let (excluded, included): (Vec<&String>, Vec<&String>) = self.globs.iter().partition(|g| g.starts_with('!'));
        let globs = crate::repo::path_globs(included.iter().map(|g| g.as_str()), "--glob")?;
        let not_globs = crate::repo::path_globs(excluded.iter().map(|g| &g[1..]), "--glob")?;
        let exts: Vec<String> = self
            .extensions
            .iter()
            .map(|e| {
                let e = e.trim().to_ascii_lowercase();
                if e.starts_with('.') { e } else { format!(".{e}") }
            })
            .collect();
        let specs = self.pathspecs.iter().map(|p| p.compile()).collect::<Result<Vec<_>>>()?;
        let mut langs = Vec::new();
        for l in &self.languages {
            langs.extend(crate::lang::Lang::matching(l)?);
        }
        Ok(PathMatcher {
            globs,
            not_globs,
            exts,
            contains: self.path_contains.clone().filter(|s| !s.is_empty()),
            specs,
            langs,
        })
    }

    /// Allowed chunk ordinals of a view (None when nothing is filtered).
    pub fn allowed(&self, table: &ChunkTable) -> Result<Option<Arc<Allowed>>> {
        if self.is_empty() {
            return Ok(None);
        }
        let m = self.matcher()?;
        let mut set = Allowed::new(table.len());
        for f in table.live_files() {
            if m.matches(table.file_path(f)) && m.matches_lang(table.file_lang(f)) {
                for o in table.file_ords(f) {
                    set.insert(o);
                }
            }
        }
        Ok(Some(Arc::new(set)))
    }
}

/// One git pathspec (`src/`, `*.py`, `:(exclude)tests`, `:!docs`, `:/README.md`), resolved
/// against the directory the command ran in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Pathspec {
    /// Repository-relative pattern ("" is the whole tree).
    pub pattern: String,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub exclude: bool,
    /// Match the pattern as a glob (`*` also crosses `/`, as in git); otherwise as a file or
    /// directory prefix.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub glob: bool,
}

impl Pathspec {
    /// Parses `spec` as git does, relative to `prefix` (the current directory inside the
    /// worktree, `""` or ending in `/`). Supported magic: `exclude` (`!`, `^`), `top` (`/`),
    /// `literal`, `glob`.
    pub fn resolve(spec: &str, prefix: &str) -> Result<Pathspec> {
        let (mut exclude, mut top, mut literal, mut globbing) = (false, false, false, false);
        let mut rest = spec;
        if let Some(magic) = spec.strip_prefix(":(") {
            let (words, tail) =
                magic.split_once(')').ok_or_else(|| PathspecError::Unclosed { spec: spec.to_string() })?;
            for w in words.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                match w {
                    "exclude" => exclude = true,
                    "top" => top = true,
                    "literal" => literal = true,
                    "glob" => globbing = true,
                    other => {
                        return Err(PathspecError::Magic { spec: spec.to_string(), magic: other.to_string() }.into());
                    }
                }
            }
            rest = tail;
        } else if let Some(short) = spec.strip_prefix(':') {
            let mut chars = short.char_indices();
            rest = "";
            for (i, c) in chars.by_ref() {
                match c {
                    '!' | '^' => exclude = true,
                    '/' => top = true,
                    ':' => {
                        rest = &short[i + 1..];
                        break;
                    }
                    _ => {
                        rest = &short[i..];
                        break;
                    }
                }
            }
        }
        let joined = if top { rest.to_string() } else { format!("{prefix}{rest}") };
        let mut parts: Vec<&str> = Vec::new();
        for part in joined.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(PathspecError::Outside { spec: spec.to_string() }.into());
                    }
                }
                p => parts.push(p),
            }
        }
        let pattern = parts.join("/");
        let glob = !literal && (globbing || pattern.contains(['*', '?', '[']));
        Ok(Pathspec { pattern, exclude, glob })
    }

    fn compile(&self) -> Result<CompiledSpec> {
        let glob = if self.glob {
            let g = globset::GlobBuilder::new(&self.pattern)
                .literal_separator(false)
                .build()
                .map_err(|e| PathspecError::Invalid { pattern: self.pattern.clone(), why: e.to_string() })?;
            Some(g.compile_matcher())
        } else {
            None
        };
        Ok(CompiledSpec { spec: self.clone(), glob })
    }
}

struct CompiledSpec {
    spec: Pathspec,
    glob: Option<globset::GlobMatcher>,
}

impl CompiledSpec {
    fn matches(&self, path: &str) -> bool {
        match &self.glob {
            Some(g) => g.is_match(path),
            None => {
                let p = &self.spec.pattern;
                p.is_empty() || path == p || path.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('/'))
            }
        }
    }
}

pub struct PathMatcher {
    globs: Option<globset::GlobSet>,
    not_globs: Option<globset::GlobSet>,
    exts: Vec<String>,
    contains: Option<String>,
    specs: Vec<CompiledSpec>,
    langs: Vec<crate::lang::Lang>,
}

impl PathMatcher {
    /// Whether a file in `lang` passes the language filter (always, without one).
    pub fn matches_lang(&self, lang: crate::lang::Lang) -> bool {
        self.langs.is_empty() || self.langs.contains(&lang)
    }

    pub fn filters_languages(&self) -> bool {
        !self.langs.is_empty()
    }

    pub fn matches(&self, path: &str) -> bool {
        if let Some(g) = &self.globs
            && !g.is_match(path)
        {
            return false;
        }
        if let Some(g) = &self.not_globs
            && g.is_match(path)
        {
            return false;
        }
        if !self.exts.is_empty() {
            let lower = path.to_ascii_lowercase();
            if !self.exts.iter().any(|e| lower.ends_with(e.as_str())) {
                return false;
            }
        }
        if let Some(c) = &self.contains
            && !path.contains(c.as_str())
        {
            return false;
        }
        if !self.specs.is_empty() {
            // As git: a path is in when an including spec matches (or there are only exclusions)
            // and no excluding spec does.
            let mut includes = self.specs.iter().filter(|s| !s.spec.exclude).peekable();
            let included = includes.peek().is_none() || includes.any(|s| s.matches(path));
            if !included || self.specs.iter().any(|s| s.spec.exclude && s.matches(path)) {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_combine() {
        let f = Filters {
            globs: vec!["*.rs".into()],
            extensions: vec![],
            path_contains: Some("src/".into()),
            pathspecs: vec![],
            languages: vec![],
        };
        let m = f.matcher().unwrap();
        assert!(m.matches("src/a/b.rs"));
        assert!(!m.matches("tests/b.rs"));
        assert!(!m.matches("src/b.py"));
        let f = Filters {
            globs: vec![],
            extensions: vec!["py".into(), ".TS".into()],
            path_contains: None,
            pathspecs: vec![],
            languages: vec![],
        };
        let m = f.matcher().unwrap();
        assert!(m.matches("a/b.py") && m.matches("x.ts") && !m.matches("x.rs"));
        let bad = Filters { globs: vec!["a[".into()], ..Default::default() };
        assert!(bad.matcher().is_err());
    }

    #[test]
    fn negated_globs_exclude() {
        let f = Filters { globs: vec!["!tests/**".into()], ..Default::default() };
        let m = f.matcher().unwrap();
        assert!(m.matches("src/a.py") && !m.matches("tests/test_a.py"));
        let f = Filters { globs: vec!["*.py".into(), "!test_*".into()], ..Default::default() };
        let m = f.matcher().unwrap();
        assert!(m.matches("src/a.py") && !m.matches("tests/test_a.py") && !m.matches("src/a.rs"));
    }

    #[test]
    fn pathspecs_as_git_reads_them() {
        let r = |s: &str, p: &str| Pathspec::resolve(s, p).unwrap();
        assert_eq!(r("models.py", "src/requests/").pattern, "src/requests/models.py");
        assert_eq!(r("../tests", "src/").pattern, "tests");
        assert_eq!(r(":/README.md", "src/").pattern, "README.md");
        assert_eq!(r(".", "src/").pattern, "src");
        let ex = r(":(exclude)tests", "");
        assert!(ex.exclude && ex.pattern == "tests" && !ex.glob);
        assert!(r(":!docs", "").exclude && r(":^docs", "").exclude);
        assert!(r("*.py", "").glob && !r(":(literal)a*b", "").glob);
        assert!(Pathspec::resolve("../../x", "src/").is_err());
        assert!(Pathspec::resolve(":(icase)x", "").is_err());

        let f = Filters { pathspecs: vec![r("src", ""), r(":!src/vendor", "")], ..Default::default() };
        let m = f.matcher().unwrap();
        assert!(
            m.matches("src/a.py")
                && !m.matches("src/vendor/b.py")
                && !m.matches("srcx/a.py")
                && !m.matches("README.md")
        );
        // Only exclusions: everything else stays.
        let f = Filters { pathspecs: vec![r(":(exclude)*.md", "")], ..Default::default() };
        let m = f.matcher().unwrap();
        assert!(m.matches("src/a.py") && !m.matches("docs/x.md"));
    }
}
