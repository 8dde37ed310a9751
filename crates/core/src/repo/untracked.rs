//! The untracked, not ignored files of a working tree, kept between runs. Finding them walks
//! every directory git does not ignore (reading each, matching each entry against the ignore
//! rules), which was most of a warm search's own time. The list is kept beside the store with
//! what it was computed from — the index's checksum, the global ignore files, and the stat data
//! of every directory the walk entered and of its `.gitignore` — and reused while all of that
//! still holds: creating, removing or renaming an entry changes its directory's mtime, and an
//! edited ignore file changes its own. Directories modified within `stamp::RACY` of a walk are not
//! trusted to show a later change (timestamps are coarse), so such a walk is not kept.

use super::stamp::{Key, Stamp};
use anyhow::Result;
use gix::bstr::{BStr, BString, ByteSlice};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

const MAGIC: &[u8; 8] = b"LYNXUNT2";
/// The store's own directory: never content, never entered.
const STORE_DIR: &str = ".lynx";

/// Untracked, not ignored files of `repo`'s working tree (relative paths, sorted), reusing the
/// list kept under `cache` when nothing it depends on changed.
pub(super) fn untracked(
    repo: &gix::Repository,
    index: &gix::worktree::Index,
    workdir: &Path,
    cache: Option<&Path>,
) -> Result<Vec<String>> {
    let started = std::time::Instant::now();
    let opts = repo
        .dirwalk_options()?
        .emit_untracked(gix::dir::walk::EmissionMode::Matching)
        .emit_ignored(None)
        .emit_tracked(false)
        .recurse_repositories(false)
        .emit_empty_directories(false);
    let file = cache.map(|c| {
        c.join("untracked")
            .join(format!("{}.bin", crate::fsutil::short_hash(&[workdir.as_os_str().as_encoded_bytes()])))
    });
    let key = inputs_key(repo, index, workdir, &format!("{opts:?}"));
    if let Some(kept) = file.as_deref().and_then(|f| Kept::read(f, &key))
        && kept.holds(workdir)
    {
        tracing::debug!(
            "untracked files: {} kept, {} directories unchanged, in {:.1} ms",
            kept.files.len(),
            kept.dirs.len(),
            started.elapsed().as_secs_f64() * 1e3
        );
        return Ok(kept.files);
    }

    let walk_start = SystemTime::now();
    let mut walk = Walk::default();
    let none: [&BStr; 0] = [];
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    repo.dirwalk(index, none, &interrupt, opts, &mut walk)?;
    let mut files = Vec::new();
    for (entry, _) in walk.collect.into_entries_by_path() {
        if entry.status == gix::dir::entry::Status::Untracked
            && matches!(entry.disk_kind, Some(gix::dir::entry::Kind::File | gix::dir::entry::Kind::Symlink))
        {
            let p = entry.rela_path.to_str_lossy().into_owned();
            if !p.starts_with(".lynx/") {
                files.push(p);
            }
        }
    }
    tracing::debug!(
        "untracked files: {} found walking {} directories in {:.1} ms",
        files.len(),
        walk.dirs.len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    if let Some(file) = &file {
        let dirs: Vec<String> = walk.dirs.iter().map(|d| d.to_str_lossy().into_owned()).collect();
        match Kept::stamp(workdir, dirs, walk_start) {
            Some(dirs) => {
                let kept = Kept { dirs, files };
                // A cache: a failed write only costs the next run a walk.
                if let Err(e) = kept.write(file, &key) {
                    tracing::debug!("not keeping the untracked-file list: {e:#}");
                }
                return Ok(kept.files);
            }
            None => tracing::debug!("untracked files: a directory changed during the walk; not kept"),
        }
    }
    Ok(files)
}

/// The list of files Lynx itself wrote into the working tree, under the store.
const OUTPUTS: &str = "outputs";

impl super::Repo {
    /// Records that Lynx wrote `path` (an exported graph at an `out` the user chose, a mined
    /// question file): Lynx's answers are not the project's code, and an export names every
    /// symbol it draws, so views leave such files out while they are untracked. A path outside
    /// the working tree, or inside the store (never listed anyway), is not recorded.
    pub fn note_output(&self, path: &Path) -> Result<()> {
        let Some(workdir) = &self.workdir else { return Ok(()) };
        let (Ok(root), Some(parent), Some(name)) = (workdir.canonicalize(), path.parent(), path.file_name()) else {
            return Ok(());
        };
        let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
        let Ok(dir) = parent.canonicalize() else { return Ok(()) };
        let Ok(rel) = dir.join(name).strip_prefix(&root).map(Path::to_path_buf) else { return Ok(()) };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel.is_empty() || rel == STORE_DIR || rel.starts_with(&format!("{STORE_DIR}/")) {
            return Ok(());
        }
        if self.lynx_dir.canonicalize().is_ok_and(|store| dir.join(name).starts_with(store)) {
            return Ok(());
        }
        let mut outputs = self.outputs();
        if outputs.insert(rel) {
            let mut list: Vec<&String> = outputs.iter().collect();
            list.sort();
            let text: String = list.iter().map(|p| format!("{p}\n")).collect();
            std::fs::create_dir_all(&self.lynx_dir)?;
            crate::fsutil::write_atomic(&self.lynx_dir.join(OUTPUTS), text.as_bytes())?;
        }
        Ok(())
    }

    /// The working-tree files Lynx wrote (repository-relative), that views leave out.
    pub fn outputs(&self) -> HashSet<String> {
        std::fs::read_to_string(self.lynx_dir.join(OUTPUTS))
            .map(|t| t.lines().filter(|l| !l.is_empty() && plain_relative(l)).map(String::from).collect())
            .unwrap_or_default()
    }
}

/// Collects what the walk emits and every directory it enters.
#[derive(Default)]
struct Walk {
    collect: gix::dir::walk::delegate::Collect,
    dirs: Vec<BString>,
}

impl gix::dir::walk::Delegate for Walk {
    fn emit(
        &mut self,
        entry: gix::dir::EntryRef<'_>,
        collapsed: Option<gix::dir::entry::Status>,
    ) -> gix::dir::walk::Action {
        self.collect.emit(entry, collapsed)
    }

    fn can_recurse(
        &mut self,
        entry: gix::dir::EntryRef<'_>,
        for_deletion: Option<gix::dir::walk::ForDeletionMode>,
        worktree_root_is_repository: bool,
    ) -> bool {
        if entry.rela_path.as_ref() == STORE_DIR.as_bytes().as_bstr() {
            return false;
        }
        let recurse =
            entry.status.can_recurse(entry.disk_kind, entry.pathspec_match, for_deletion, worktree_root_is_repository);
        if recurse {
            self.dirs.push(entry.rela_path.clone().into_owned());
        }
        recurse
    }
}

/// Everything outside the walked directories that decides what is untracked: the tracked set
/// (the index), the repository-wide and user-wide ignore files, the configuration, and the
/// walk's options. Any change makes a different key.
fn inputs_key(repo: &gix::Repository, index: &gix::worktree::Index, workdir: &Path, options: &str) -> [u8; 32] {
    let mut k = Key::new(MAGIC);
    k.part(workdir.as_os_str().as_encoded_bytes());
    k.part(options.as_bytes());
    match index.checksum().filter(|c| !c.is_null()) {
        Some(sum) => k.part(sum.as_bytes()),
        None => k.stamp_of(index.path()),
    }
    let common = repo.common_dir();
    for p in [common.join("info").join("exclude"), common.join("config"), repo.git_dir().join("config.worktree")] {
        k.stamp_of(&p);
    }
    let global = global_excludes(repo);
    k.part(global.as_os_str().as_encoded_bytes());
    k.stamp_of(&global);
    k.finish()
}

/// The user-wide ignore file git reads: `core.excludesFile`, else `$XDG_CONFIG_HOME/git/ignore`
/// (`~/.config/git/ignore`).
fn global_excludes(repo: &gix::Repository) -> PathBuf {
    let configured = repo.config_snapshot().trusted_path("core.excludesFile").ok().flatten();
    if let Some(p) = configured {
        return p;
    }
    crate::env::path(crate::env::XDG_CONFIG_HOME)
        .filter(|p| p.is_absolute())
        .or_else(|| crate::env::home().map(|h| h.join(".config")))
        .map(|c| c.join("git").join("ignore"))
        .unwrap_or_default()
}

/// A directory the walk entered: its stamp, and its `.gitignore`'s when it has one.
#[derive(Debug, PartialEq)]
struct Dir {
    path: String,
    stamp: Stamp,
    ignore: Option<Stamp>,
}

#[derive(Debug, PartialEq)]
struct Kept {
    dirs: Vec<Dir>,
    files: Vec<String>,
}

impl Kept {
    /// Stamps the walked directories, or None when one of them (or its ignore file) changed
    /// too recently to be trusted.
    fn stamp(workdir: &Path, dirs: Vec<String>, walk_start: SystemTime) -> Option<Vec<Dir>> {
        let mut out = Vec::with_capacity(dirs.len());
        for path in dirs {
            let abs = workdir.join(&path);
            let (stamp, kind) = Stamp::at(&abs)?;
            if !kind.is_dir() || stamp.is_racy(Stamp::racy_from(walk_start)) {
                return None;
            }
            let ignore = match Stamp::at(&abs.join(".gitignore")) {
                Some((s, _)) if s.is_racy(Stamp::racy_from(walk_start)) => return None,
                Some((s, _)) => Some(s),
                None => None,
            };
            out.push(Dir { path, stamp, ignore });
        }
        Some(out)
    }

    /// Whether every walked directory and ignore file is as it was.
    fn holds(&self, workdir: &Path) -> bool {
        use rayon::prelude::*;
        self.dirs.par_iter().with_min_len(64).all(|d| {
            let abs = workdir.join(&d.path);
            let dir_holds = matches!(Stamp::at(&abs), Some((s, kind)) if kind.is_dir() && s == d.stamp);
            dir_holds
                && match d.ignore {
                    Some(s) => matches!(Stamp::at(&abs.join(".gitignore")), Some((now, _)) if now == s),
                    // A new ignore file would have changed the directory's mtime.
                    None => true,
                }
        })
    }

    fn encode(&self, key: &[u8; 32]) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(64 + self.dirs.len() * 96 + self.files.iter().map(|f| f.len() + 4).sum::<usize>());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(key);
        out.extend_from_slice(&(self.dirs.len() as u32).to_le_bytes());
        for d in &self.dirs {
            put_str(&mut out, &d.path);
            d.stamp.put(&mut out);
            match d.ignore {
                Some(s) => {
                    out.push(1);
                    s.put(&mut out);
                }
                None => out.push(0),
            }
        }
        out.extend_from_slice(&(self.files.len() as u32).to_le_bytes());
        for f in &self.files {
            put_str(&mut out, f);
        }
        let sum = blake3::hash(&out);
        out.extend_from_slice(sum.as_bytes());
        out
    }

    fn write(&self, file: &Path, key: &[u8; 32]) -> Result<()> {
        // Not fsynced: the checksum refuses a torn record, and losing it costs one walk.
        let dir = file.parent().expect("a cache file has a directory");
        std::fs::create_dir_all(dir)?;
        let tmp = crate::fsutil::temp_path_for(file);
        std::fs::write(&tmp, self.encode(key))?;
        std::fs::rename(&tmp, file).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })?;
        Ok(())
    }

    fn read(file: &Path, key: &[u8; 32]) -> Option<Kept> {
        let bytes = std::fs::read(file).ok()?;
        let kept = Kept::decode(&bytes, key);
        if kept.is_none() {
            tracing::debug!("{} is not a current untracked-file list; walking", file.display());
        }
        kept
    }

    /// The record, when it is whole, was made from the same inputs, and names only paths the
    /// walk could have produced: relative, inside directories it entered (which `holds` checks
    /// are real directories, not links), never into `.git` or the store.
    fn decode(bytes: &[u8], key: &[u8; 32]) -> Option<Kept> {
        let body = bytes.len().checked_sub(32).map(|n| &bytes[..n])?;
        if blake3::hash(body).as_bytes() != &bytes[body.len()..] || !body.starts_with(MAGIC) {
            return None;
        }
        let mut at = MAGIC.len();
        if body.get(at..at + 32)? != key {
            return None;
        }
        at += 32;
        let ndirs = get_u32(body, &mut at)? as usize;
        if ndirs > body.len() / (4 + Stamp::LEN + 1) {
            return None;
        }
        let mut dirs = Vec::with_capacity(ndirs);
        let mut entered = HashSet::with_capacity(ndirs);
        for _ in 0..ndirs {
            let path = get_str(body, &mut at)?;
            let stamp = Stamp::get(body.get(at..)?)?;
            at += Stamp::LEN;
            let ignore = match *body.get(at)? {
                0 => None,
                1 => Some(Stamp::get(body.get(at + 1..)?)?),
                _ => return None,
            };
            at += 1 + if ignore.is_some() { Stamp::LEN } else { 0 };
            let parent_entered = path.is_empty() || entered.contains(parent_of(&path));
            if !parent_entered || !plain_relative(&path) {
                return None;
            }
            entered.insert(path.clone());
            dirs.push(Dir { path, stamp, ignore });
        }
        let nfiles = get_u32(body, &mut at)? as usize;
        if nfiles > body.len() / 4 {
            return None;
        }
        let mut files = Vec::with_capacity(nfiles);
        for _ in 0..nfiles {
            let f = get_str(body, &mut at)?;
            if f.is_empty() || !plain_relative(&f) || !entered.contains(parent_of(&f)) {
                return None;
            }
            files.push(f);
        }
        (at == body.len()).then_some(Kept { dirs, files })
    }
}

fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

/// A path of plain names: no empty, `.`, `..`, `.git` or store component, no absolute start.
fn plain_relative(path: &str) -> bool {
    path.is_empty()
        || path.split('/').enumerate().all(|(i, c)| {
            !c.is_empty() && c != "." && c != ".." && c != ".git" && !c.contains('\\') && !(i == 0 && c == STORE_DIR)
        })
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn get_u32(b: &[u8], at: &mut usize) -> Option<u32> {
    let v = u32::from_le_bytes(b.get(*at..*at + 4)?.try_into().ok()?);
    *at += 4;
    Some(v)
}

fn get_str(b: &[u8], at: &mut usize) -> Option<String> {
    let len = get_u32(b, at)? as usize;
    let s = std::str::from_utf8(b.get(*at..at.checked_add(len)?)?).ok()?.to_owned();
    *at += len;
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Kept {
        let stamp =
            Stamp { mtime_ns: 1_700_000_000_123_456_789, ctime_ns: 1_700_000_001_000_000_000, size: 4096, ino: 42 };
        Kept {
            dirs: vec![
                Dir { path: String::new(), stamp, ignore: Some(Stamp { size: 12, ..stamp }) },
                Dir { path: "src".into(), stamp, ignore: None },
                Dir { path: "src/deep".into(), stamp, ignore: None },
            ],
            files: vec!["notes.md".into(), "src/deep/new.rs".into()],
        }
    }

    #[test]
    fn a_record_reads_back_only_whole_and_with_its_key() {
        let key = [7u8; 32];
        let bytes = sample().encode(&key);
        assert_eq!(Kept::decode(&bytes, &key), Some(sample()));
        assert_eq!(Kept::decode(&bytes, &[8u8; 32]), None, "another key is another state");
        for i in [0, 9, bytes.len() / 2, bytes.len() - 1] {
            let mut flipped = bytes.clone();
            flipped[i] ^= 1;
            assert_eq!(Kept::decode(&flipped, &key), None, "byte {i} flipped");
        }
        assert_eq!(Kept::decode(&bytes[..bytes.len() - 5], &key), None);
    }

    #[test]
    fn a_record_naming_paths_the_walk_cannot_produce_is_refused() {
        let key = [7u8; 32];
        for bad in
            ["../outside", "src/../../etc/passwd", "/etc/passwd", ".git/config", "missing/dir.rs", ".lynx/x", "src//a"]
        {
            let mut k = sample();
            k.files.push(bad.into());
            assert_eq!(Kept::decode(&k.encode(&key), &key), None, "{bad}");
        }
        let mut k = sample();
        k.dirs.push(Dir { path: "orphan/child".into(), stamp: k.dirs[0].stamp, ignore: None });
        assert_eq!(Kept::decode(&k.encode(&key), &key), None, "a directory whose parent was not entered");
    }
}
