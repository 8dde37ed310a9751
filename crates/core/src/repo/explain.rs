//! Why a path is or is not part of the working-tree view: ignore rules (with the rule and its
//! file), attributes (with their file and line), submodules, symlinks.

use super::Repo;
use anyhow::Result;
use gix::bstr::ByteSlice;
use serde::Serialize;

#[derive(Debug, Serialize, Default)]
pub struct PathFacts {
    pub exists: bool,
    pub tracked: bool,
    pub symlink: bool,
    pub submodule: bool,
    pub size: Option<u64>,
    /// `pattern` from `source:line` when an ignore rule matches (`!negations` included).
    pub ignore_rule: Option<String>,
    pub ignored: bool,
    /// Attributes that leave a file out: (`linguist-generated`, `.gitattributes:3 gen/**`).
    pub attributes: Vec<(String, String)>,
}

impl Repo {
    pub fn explain_path(&self, rel: &str) -> Result<PathFacts> {
        let repo = self.local();
        let mut f = PathFacts::default();
        if let Some(w) = &self.workdir
            && let Ok(md) = std::fs::symlink_metadata(w.join(rel))
        {
            f.exists = true;
            f.symlink = md.file_type().is_symlink();
            f.size = md.is_file().then_some(md.len());
        }
        let index = repo.index_or_empty()?;
        if let Some(e) = index.entry_by_path(rel.as_bytes().as_bstr()) {
            f.tracked = true;
            f.submodule = e.mode.contains(gix::index::entry::Mode::COMMIT);
            f.symlink |= e.mode.contains(gix::index::entry::Mode::SYMLINK);
        }
        let mut excludes = repo.excludes(&index, None, gix::worktree::stack::state::ignore::Source::default())?;
        let platform = excludes.at_entry(rel, None)?;
        if let Some(m) = platform.matching_exclude_pattern() {
            let src = m.source.map(|p| p.display().to_string()).unwrap_or_else(|| "(built-in)".into());
            f.ignore_rule = Some(format!("{} (from {}:{})", m.pattern, src, m.sequence_number));
        }
        f.ignored = platform.is_excluded();
        let state = gix::worktree::IndexPersistedOrInMemory::Persisted(index);
        let mut attrs =
            repo.attributes_only(&state, gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping)?;
        let mut out = attrs.selected_attribute_matches(["linguist-generated", "linguist-vendored", "diff"]);
        attrs.at_entry(rel, None)?.matching_attributes(&mut out);
        let mut generated_said = false;
        for m in out.iter_selected() {
            let (name, state) = (m.assignment.name.as_str(), m.assignment.state);
            generated_said |= name == "linguist-generated" && state != gix::attrs::StateRef::Unspecified;
            let leaves_out = match (name, state) {
                ("diff", gix::attrs::StateRef::Unset) => true,
                ("diff", _) => false,
                (_, gix::attrs::StateRef::Set) => true,
                (_, gix::attrs::StateRef::Value(v)) => v.as_bstr() != "false",
                _ => false,
            };
            if leaves_out {
                let src = m.location.source.map(|p| p.display().to_string()).unwrap_or_else(|| "(config)".into());
                let label = if name == "diff" { "-diff".to_string() } else { name.to_string() };
                f.attributes.push((label, format!("{}:{} {}", src, m.location.sequence_number, m.pattern)));
            }
        }
        if !generated_said && super::generated_by_name(rel) {
            f.attributes.push((
                "generated".into(),
                "its name (a minified file, source map or lockfile; `-linguist-generated` in .gitattributes keeps it)"
                    .into(),
            ));
        }
        Ok(f)
    }
}
