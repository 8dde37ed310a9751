//! Path filters (glob, extensions, substring), applied to the candidate set before ranking.

use super::Allowed;
use crate::view::table::ChunkTable;
use anyhow::Result;
use std::sync::Arc;

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Filters {
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub globs: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub extensions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path_contains: Option<String>,
}

impl Filters {
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty() && self.extensions.is_empty() && self.path_contains.as_deref().is_none_or(str::is_empty)
    }

    /// A path predicate, or a usage error naming the bad glob.
    pub fn matcher(&self) -> Result<PathMatcher> {
        let globs = if self.globs.is_empty() {
            None
        } else {
            let mut b = globset::GlobSetBuilder::new();
            for g in &self.globs {
                let glob = globset::GlobBuilder::new(g).literal_separator(false).build().map_err(|e| {
                    crate::error::usage(format!("invalid --glob `{g}`: {e}"))
                })?;
                b.add(glob);
                // `*.rs` should match at any depth, like most tools.
                if !g.contains('/') {
                    b.add(globset::Glob::new(&format!("**/{g}"))?);
                }
            }
            Some(b.build()?)
        };
        let exts: Vec<String> = self
            .extensions
            .iter()
            .map(|e| {
                let e = e.trim().to_ascii_lowercase();
                if e.starts_with('.') { e } else { format!(".{e}") }
            })
            .collect();
        Ok(PathMatcher { globs, exts, contains: self.path_contains.clone().filter(|s| !s.is_empty()) })
    }

    /// Allowed chunk ordinals of a view (None when nothing is filtered).
    pub fn allowed(&self, table: &ChunkTable) -> Result<Option<Arc<Allowed>>> {
        if self.is_empty() {
            return Ok(None);
        }
        let m = self.matcher()?;
        let mut set = Allowed::new(table.len());
        for f in table.live_files() {
            if m.matches(table.file_path(f)) {
                for o in table.file_ords(f) {
                    set.insert(o);
                }
            }
        }
        Ok(Some(Arc::new(set)))
    }
}

pub struct PathMatcher {
    globs: Option<globset::GlobSet>,
    exts: Vec<String>,
    contains: Option<String>,
}

impl PathMatcher {
    pub fn matches(&self, path: &str) -> bool {
        if let Some(g) = &self.globs {
            if !g.is_match(path) {
                return false;
            }
        }
        if !self.exts.is_empty() {
            let lower = path.to_ascii_lowercase();
            if !self.exts.iter().any(|e| lower.ends_with(e.as_str())) {
                return false;
            }
        }
        if let Some(c) = &self.contains {
            if !path.contains(c.as_str()) {
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
        let f = Filters { globs: vec!["*.rs".into()], extensions: vec![], path_contains: Some("src/".into()) };
        let m = f.matcher().unwrap();
        assert!(m.matches("src/a/b.rs"));
        assert!(!m.matches("tests/b.rs"));
        assert!(!m.matches("src/b.py"));
        let f = Filters { globs: vec![], extensions: vec!["py".into(), ".TS".into()], path_contains: None };
        let m = f.matcher().unwrap();
        assert!(m.matches("a/b.py") && m.matches("x.ts") && !m.matches("x.rs"));
        let bad = Filters { globs: vec!["a[".into()], ..Default::default() };
        assert!(bad.matcher().is_err());
    }
}
