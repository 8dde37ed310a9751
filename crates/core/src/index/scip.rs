//! Importing a SCIP index: each document is matched to the file of the view at its path, checked
//! against that file's content (an index made from other content is refused for that file),
//! reduced to the occurrences the graph needs and stored in the precise-graph layer under the
//! file's blob key. The index file is untrusted input: paths leaving the repository are
//! refused and sizes are bounded.

use crate::layer::scip::{self as layer, BlobRows, Occ, PreciseFacts, Row};
use crate::view::{View, ViewFile};
use crate::workspace::Workspace;
use anyhow::{Context, Result, bail};
use protobuf::Message;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// An index larger than this is refused rather than decoded into memory.
const MAX_INDEX_BYTES: u64 = 2 << 30;

#[derive(Debug, Serialize)]
pub struct SkippedDoc {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Serialize, Default)]
pub struct ImportReport {
    pub index: String,
    pub tool: String,
    pub view: String,
    pub documents: usize,
    pub imported: usize,
    pub skipped: Vec<SkippedDoc>,
    pub definitions: usize,
    pub calls: usize,
    pub imports: usize,
    pub implements: usize,
}

pub fn import(ws: &Workspace, view: &View, index_path: &Path) -> Result<ImportReport> {
    let size = std::fs::metadata(index_path)
        .with_context(|| format!("cannot read the SCIP index {}", index_path.display()))?
        .len();
    if size > MAX_INDEX_BYTES {
        bail!("{} is {} bytes; SCIP indexes above {} bytes are refused", index_path.display(), size, MAX_INDEX_BYTES);
    }
    let bytes = std::fs::read(index_path).with_context(|| format!("reading {}", index_path.display()))?;
    let index = scip::types::Index::parse_from_bytes(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{} is not a SCIP index ({e}); make one with a SCIP indexer, e.g. `scip-python index . --output index.scip`",
            index_path.display()
        )
    })?;
    let mut report =
        ImportReport { index: index_path.display().to_string(), view: view.id.label.clone(), ..Default::default() };
    if let Some(meta) = index.metadata.as_ref()
        && let Some(tool) = meta.tool_info.as_ref()
    {
        report.tool = format!("{} {}", tool.name, tool.version).trim().to_string();
    }
    let prefix = project_prefix(ws, index.metadata.as_ref().map(|m| m.project_root.as_str()).unwrap_or(""));
    let by_path: HashMap<&str, &ViewFile> = view.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let local = ws.repo.local();
    let mut blobs: Vec<BlobRows> = Vec::new();
    let mut done: HashSet<crate::store::Key> = HashSet::new();
    report.documents = index.documents.len();
    for doc in &index.documents {
        let path = match repo_path(&prefix, &doc.relative_path) {
            Some(p) => p,
            None => {
                report
                    .skipped
                    .push(SkippedDoc { path: doc.relative_path.clone(), reason: "path leaves the repository".into() });
                continue;
            }
        };
        let Some(file) = by_path.get(path.as_str()) else {
            report
                .skipped
                .push(SkippedDoc { path, reason: "not a file of this view (untracked, excluded or deleted)".into() });
            continue;
        };
        let content = match &file.content {
            Some(c) => c.as_ref().clone(),
            None => crate::repo::Repo::read_blob(&local, file.blob)?,
        };
        let text = String::from_utf8_lossy(&content);
        match document_rows(doc, &text) {
            Ok(facts) => {
                // Rows are per blob: a second file with the same content (two empty
                // `__init__.py`) shares the first one's rows, whose module symbol names the first.
                if !done.insert(file.key) {
                    report.imported += 1;
                    continue;
                }
                for r in &facts.rows {
                    match r.occ {
                        Occ::Def => report.definitions += 1,
                        Occ::Call => report.calls += 1,
                        Occ::Import => report.imports += 1,
                        Occ::Implements => report.implements += 1,
                        Occ::Empty => {}
                    }
                }
                report.imported += 1;
                blobs.push(BlobRows { key: file.key, facts });
            }
            Err(reason) => report.skipped.push(SkippedDoc { path, reason }),
        }
    }
    if !blobs.is_empty() {
        blobs.sort_by_key(|a| a.key);
        let fp = layer::fingerprint();
        let (batch, keys) = layer::to_batch(&blobs)?;
        let name = ws.store.write_segment(layer::SCIP, &fp, &batch)?;
        ws.store.commit_replacing(layer::SCIP, &fp, &[(name, keys)])?;
    }
    Ok(report)
}

/// Where the indexed project sits inside the repository (`--target-only pkg` indexes a
/// subfolder): the project root's path relative to the working tree, or none when the index
/// was made elsewhere (another checkout, CI) and its paths are taken as repository paths.
fn project_prefix(ws: &Workspace, root: &str) -> String {
    let Some(root) = root.strip_prefix("file://") else { return String::new() };
    let (Ok(workdir), Ok(root)) =
        (ws.repo.workdir().and_then(|w| Ok(w.canonicalize()?)), Path::new(root).canonicalize())
    else {
        return String::new();
    };
    match root.strip_prefix(&workdir) {
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => String::new(),
    }
}

/// The repository path of a document, or none when it would leave the repository.
fn repo_path(prefix: &str, relative: &str) -> Option<String> {
    let rel = relative.replace('\\', "/");
    if rel.starts_with('/') || rel.contains(':') || rel.is_empty() {
        return None;
    }
    let mut parts: Vec<&str> = prefix.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => return None,
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// (start line, start column, end line, end column), 0-based, from either range encoding.
fn range_of(o: &scip::types::Occurrence) -> Option<(u32, u32, u32, u32)> {
    use scip::types::occurrence::Typed_range;
    match &o.typed_range {
        Some(Typed_range::SingleLineRange(r)) => {
            return Some((r.line as u32, r.start_character as u32, r.line as u32, r.end_character as u32));
        }
        Some(Typed_range::MultiLineRange(r)) => {
            return Some((r.start_line as u32, r.start_character as u32, r.end_line as u32, r.end_character as u32));
        }
        _ => {}
    }
    match *o.range.as_slice() {
        [l, s, e] => Some((l as u32, s as u32, l as u32, e as u32)),
        [l, s, el, e] => Some((l as u32, s as u32, el as u32, e as u32)),
        _ => None,
    }
}

fn enclosing_end(o: &scip::types::Occurrence) -> Option<u32> {
    use scip::types::occurrence::Typed_enclosing_range;
    match &o.typed_enclosing_range {
        Some(Typed_enclosing_range::SingleLineEnclosingRange(r)) => return Some(r.line as u32),
        Some(Typed_enclosing_range::MultiLineEnclosingRange(r)) => return Some(r.end_line as u32),
        _ => {}
    }
    match *o.enclosing_range.as_slice() {
        [l, _, _] => Some(l as u32),
        [_, _, el, _] => Some(el as u32),
        _ => None,
    }
}

/// Byte offset of a column counted in UTF-16 code units (SCIP's default encoding).
fn utf16_to_byte(line: &str, col: u32) -> usize {
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= col {
            return i;
        }
        units += c.len_utf16() as u32;
    }
    line.len()
}

/// The name a symbol's last descriptor gives (`Store#get().` → `get`), if it is a global symbol.
pub fn symbol_name(symbol: &str) -> Option<String> {
    if symbol.starts_with("local ") {
        return None;
    }
    let parsed = scip::symbol::parse_symbol(symbol).ok()?;
    let d = parsed.descriptors.last()?;
    Some(d.name.clone())
}

/// The name a definition's range must show, for the symbols whose descriptor is the source
/// name itself (types, terms, methods with plain identifier names; not the `x0:` metas,
/// `<constructor>` or parameters some indexers invent).
fn checkable_name(symbol: &str) -> Option<String> {
    use scip::types::descriptor::Suffix;
    let parsed = scip::symbol::parse_symbol(symbol).ok()?;
    let d = parsed.descriptors.last()?;
    let plain = d.name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && d.name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    (plain && matches!(d.suffix.enum_value(), Ok(Suffix::Type | Suffix::Term | Suffix::Method))).then(|| d.name.clone())
}

const IMPORT_STARTS: &[&str] = &["import ", "from ", "use ", "using ", "#include", "require ", "require(", "export "];

/// The rows of one document, or why it does not match `text`.
pub fn document_rows(doc: &scip::types::Document, text: &str) -> Result<PreciseFacts, String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut rows: Vec<Row> = Vec::new();
    let (mut checked, mut wrong) = (0usize, 0usize);
    let mut def_line: HashMap<&str, u32> = HashMap::new();
    // Type definitions by line, with where their name ends: a type named after it on the same
    // line is a base (`class Group(Command):`, `class A extends B implements C {`), which some
    // indexers leave out of their relationships.
    let mut type_defs: HashMap<u32, (&str, u32)> = HashMap::new();
    for o in &doc.occurrences {
        if o.symbol_roles & 1 != 0
            && o.symbol.ends_with('#')
            && !o.symbol.starts_with("local ")
            && let Some((l, _, el, e)) = range_of(o)
            && el == l
        {
            type_defs.entry(l).or_insert((o.symbol.as_str(), e));
        }
    }
    for o in &doc.occurrences {
        if o.symbol.is_empty() || o.symbol.starts_with("local ") {
            continue;
        }
        let Some((l, s, el, e)) = range_of(o) else { continue };
        let Some(line) = lines.get(l as usize) else {
            wrong += 1;
            checked += 1;
            continue;
        };
        let (bs, be) = (utf16_to_byte(line, s), if el == l { utf16_to_byte(line, e) } else { line.len() });
        let at = line.get(bs..be.max(bs)).unwrap_or("");
        let is_def = o.symbol_roles & 1 != 0;
        if is_def {
            // A definition's range names it: checking that catches an index of other content.
            if !at.is_empty()
                && let Some(name) = checkable_name(&o.symbol)
            {
                checked += 1;
                if at != name {
                    wrong += 1;
                }
            }
            let end = enclosing_end(o).map_or(l, |x| x.max(l));
            def_line.insert(&o.symbol, l + 1);
            rows.push(Row {
                occ: Occ::Def,
                symbol: o.symbol.clone(),
                other: String::new(),
                line: l + 1,
                end_line: end + 1,
            });
            continue;
        }
        if let Some(&(child, name_end)) = type_defs.get(&l) {
            let between = line.get(utf16_to_byte(line, name_end)..bs).unwrap_or("");
            let nested = between.matches(['<', '[']).count() > between.matches(['>', ']']).count();
            if s >= name_end && !nested && o.symbol.ends_with('#') && o.symbol != child {
                rows.push(Row {
                    occ: Occ::Implements,
                    symbol: child.to_string(),
                    other: o.symbol.clone(),
                    line: l + 1,
                    end_line: l + 1,
                });
                continue;
            }
        }
        let trimmed = line.trim_start();
        let occ = if o.symbol_roles & 2 != 0 || IMPORT_STARTS.iter().any(|p| trimmed.starts_with(p)) {
            Occ::Import
        } else if line[be.min(line.len())..].trim_start().starts_with('(') {
            Occ::Call
        } else {
            continue;
        };
        rows.push(Row { occ, symbol: o.symbol.clone(), other: String::new(), line: l + 1, end_line: l + 1 });
    }
    if wrong > 0 && wrong * 5 > checked {
        return Err(format!(
            "the index does not match this file's content ({wrong} of {checked} definitions are elsewhere); the file changed since it was indexed: re-run the indexer"
        ));
    }
    for si in &doc.symbols {
        if si.symbol.starts_with("local ") {
            continue;
        }
        let line = def_line.get(si.symbol.as_str()).copied().unwrap_or(0);
        for r in &si.relationships {
            if r.is_implementation && !r.symbol.is_empty() {
                rows.push(Row {
                    occ: Occ::Implements,
                    symbol: si.symbol.clone(),
                    other: r.symbol.clone(),
                    line,
                    end_line: line,
                });
            }
        }
    }
    let mut seen = HashSet::new();
    rows.retain(|r| seen.insert((r.occ as u8, r.symbol.clone(), r.other.clone(), r.line)));
    Ok(PreciseFacts { rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_repository() {
        assert_eq!(repo_path("", "pkg/a.py").as_deref(), Some("pkg/a.py"));
        assert_eq!(repo_path("src", "./a.py").as_deref(), Some("src/a.py"));
        for bad in ["../a.py", "/etc/passwd", "a/../../b", "C:/x.py", ""] {
            assert_eq!(repo_path("", bad), None, "{bad}");
        }
    }

    #[test]
    fn utf16_columns_map_to_bytes() {
        let line = "s = 'é😀'; go()";
        // `go` starts after 11 UTF-16 units: "s = 'é" is 6, the emoji 2, "'; " 3.
        assert_eq!(&line[utf16_to_byte(line, 11)..utf16_to_byte(line, 13)], "go");
    }

    #[test]
    fn symbol_names_come_from_the_last_descriptor() {
        assert_eq!(symbol_name("scip-python python demo 1 `pkg.store`/Store#get().").as_deref(), Some("get"));
        assert_eq!(symbol_name("scip-python python demo 1 `pkg.store`/Store#").as_deref(), Some("Store"));
        assert_eq!(symbol_name("local 3"), None);
    }
}
