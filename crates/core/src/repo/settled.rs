//! Tracked files whose index entry cannot vouch for them, found unchanged and kept so. Git
//! trusts an entry's stat data only when the file was last modified before the index was
//! written; in a fresh clone or checkout every file was written in the same second as the index
//! ("racily clean"), and a file touched since differs in stat data only. Git refreshes its index
//! on the next `git status`; Lynx does not write the index, so until then it would read and hash
//! every such file on every run (27 of a search's 35 ms on an 800-file clone). Instead, when a
//! file hashed to its index entry's blob, its path, the index entry's blob and the file's stat
//! data (mtime, ctime, size, inode) are kept under the store's cache, and the next listing takes
//! the blob from there when all four still match.
//!
//! Trusted only when both timestamps lie `stamp::RACY` before the listing began: a file changed
//! right after it was hashed could otherwise keep timestamps that coarse clocks do not tell
//! apart. ctime cannot be set back by `touch`, so an edit that restores size and mtime still
//! shows. The kept list is keyed by what turns a file into a blob (the to-git filters'
//! settings and every attributes file); repositories with filter drivers are not kept at all.

use super::stamp::{Key, Stamp};
use anyhow::Result;
use gix::ObjectId;
use gix::bstr::ByteSlice;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

const MAGIC: &[u8; 8] = b"LYNXSTL1";
/// More entries than this are not kept (a listing that hashes this many reads much more).
const MAX_ENTRIES: usize = 1 << 20;

/// The kept entries of one working tree, and what this listing found.
pub(super) struct Settled {
    file: PathBuf,
    key: [u8; 32],
    /// Nanoseconds since the epoch, `stamp::RACY` before the listing began: entries whose timestamps
    /// are older can be kept.
    before_ns: i128,
    kept: HashMap<String, (Stamp, ObjectId)>,
    found: std::sync::Mutex<Vec<(String, Stamp, ObjectId)>>,
}

impl Settled {
    /// The kept entries of `workdir`'s listing, when the store has a cache and the repository no
    /// filter driver (whose output Lynx cannot vouch for).
    pub(super) fn open(
        repo: &gix::Repository,
        index: &gix::worktree::Index,
        workdir: &Path,
        cache: Option<&Path>,
    ) -> Option<Settled> {
        let cache = cache?;
        let snapshot = repo.config_snapshot();
        if snapshot.plumbing().sections_by_name("filter").is_some_and(|mut s| s.next().is_some()) {
            return None;
        }
        let file = cache
            .join("settled")
            .join(format!("{}.bin", crate::fsutil::short_hash(&[workdir.as_os_str().as_encoded_bytes()])));
        let key = inputs_key(repo, index, workdir);
        let kept = read(&file, &key).unwrap_or_default();
        Some(Settled { file, key, before_ns: Stamp::racy_from(SystemTime::now()), kept, found: Default::default() })
    }

    /// The blob of `path` if it was found to be the index's `blob` with this very stat data,
    /// long enough after its last change (recorded again for the next listing).
    pub(super) fn blob(&self, path: &str, stat: Stamp, blob: ObjectId) -> Option<ObjectId> {
        let &(s, b) = self.kept.get(path)?;
        (s == stat && b == blob).then(|| {
            self.note(path, stat, blob);
            blob
        })
    }

    /// `path` hashed to its index entry's `blob`: kept when its timestamps are settled.
    pub(super) fn note(&self, path: &str, stat: Stamp, blob: ObjectId) {
        if stat.settled_before(self.before_ns) {
            self.found.lock().unwrap_or_else(|e| e.into_inner()).push((path.to_string(), stat, blob));
        }
    }

    /// Writes what this listing found, in place of what was kept, when it differs.
    pub(super) fn save(self) -> Result<()> {
        let mut found = self.found.into_inner().unwrap_or_else(|e| e.into_inner());
        let same = found.len() == self.kept.len()
            && found.iter().all(|(p, s, b)| self.kept.get(p).is_some_and(|(ks, kb)| ks == s && kb == b));
        if same || (found.is_empty() && !self.file.exists()) || found.len() > MAX_ENTRIES {
            return Ok(());
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = Vec::with_capacity(48 + found.len() * 96);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.key);
        out.extend_from_slice(&(found.len() as u32).to_le_bytes());
        for (path, stat, blob) in &found {
            out.extend_from_slice(&(path.len() as u32).to_le_bytes());
            out.extend_from_slice(path.as_bytes());
            stat.put(&mut out);
            out.push(blob.as_bytes().len() as u8);
            out.extend_from_slice(blob.as_bytes());
        }
        crate::fsutil::write_atomic(&self.file, &out)
    }
}

/// The kept entries, when the file is whole and was written for these inputs.
fn read(file: &Path, key: &[u8; 32]) -> Option<HashMap<String, (Stamp, ObjectId)>> {
    let b = std::fs::read(file).ok()?;
    if b.get(..8)? != MAGIC || b.get(8..40)? != key {
        return None;
    }
    let n = u32::from_le_bytes(b.get(40..44)?.try_into().ok()?) as usize;
    let mut at = 44;
    let mut out = HashMap::with_capacity(n.min(MAX_ENTRIES));
    for _ in 0..n {
        let len = u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize;
        let path = std::str::from_utf8(b.get(at + 4..at + 4 + len)?).ok()?.to_string();
        at += 4 + len;
        let stat = Stamp::get(b.get(at..)?)?;
        at += Stamp::LEN;
        let id_len = *b.get(at)? as usize;
        let blob = ObjectId::try_from(b.get(at + 1..at + 1 + id_len)?).ok()?;
        at += 1 + id_len;
        out.insert(path, (stat, blob));
    }
    (at == b.len()).then_some(out)
}

/// What turns a file's bytes into its blob: the repository's configuration files (autocrlf,
/// eol), the effective settings (which may come from the user's files), and every attributes
/// file git reads.
fn inputs_key(repo: &gix::Repository, index: &gix::worktree::Index, workdir: &Path) -> [u8; 32] {
    let mut k = Key::new(MAGIC);
    k.part(workdir.as_os_str().as_encoded_bytes());
    k.part(format!("{:?}", repo.object_hash()).as_bytes());
    let snapshot = repo.config_snapshot();
    for key in ["core.autocrlf", "core.eol", "core.attributesFile"] {
        k.part(snapshot.string(key).map(|v| v.to_string()).unwrap_or_default().as_bytes());
    }
    let common = repo.common_dir();
    let mut files = vec![common.join("config"), repo.git_dir().join("config.worktree"), common.join("info/attributes")];
    if let Some(p) = snapshot.trusted_path("core.attributesFile").ok().flatten() {
        files.push(p);
    }
    if let Some(config) = crate::env::path(crate::env::XDG_CONFIG_HOME)
        .filter(|p| p.is_absolute())
        .or_else(|| crate::env::home().map(|h| h.join(".config")))
    {
        files.push(config.join("git").join("attributes"));
    }
    for e in index.entries() {
        let path = e.path(index);
        if path == ".gitattributes" || path.ends_with(b"/.gitattributes") {
            files.push(workdir.join(&*path.to_str_lossy()));
        }
    }
    for f in &files {
        k.part(f.as_os_str().as_encoded_bytes());
        k.stamp_of(f);
    }
    k.finish()
}

#[cfg(test)]
mod tests {
    use crate::repo::Repo;
    use std::path::Path;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn backdate(path: &Path) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options().write(true).open(path).unwrap().set_modified(old).unwrap();
    }

    #[test]
    fn a_file_the_index_cannot_vouch_for_is_hashed_once_and_an_edit_still_shows() {
        let d = tempfile::tempdir().unwrap();
        git(d.path(), &["init", "-q"]);
        std::fs::write(d.path().join("a.txt"), "one\n").unwrap();
        std::fs::write(d.path().join("b.txt"), "two\n").unwrap();
        git(d.path(), &["add", "."]);
        git(d.path(), &["commit", "-q", "-m", "c"]);
        std::fs::create_dir(d.path().join(".lynx")).unwrap();
        // Touched: the stat data no longer matches the index, the content does. Then old enough
        // (past the racy margin) to be kept.
        backdate(&d.path().join("a.txt"));
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        let repo = Repo::discover(d.path()).unwrap();
        let a = |list: &crate::repo::FileList| list.files.iter().find(|f| f.path == "a.txt").cloned().unwrap();
        let first = a(&repo.worktree_files(u64::MAX).unwrap());
        assert_eq!(first.blob.to_string(), git(d.path(), &["rev-parse", "HEAD:a.txt"]));
        assert!(first.content.is_some(), "read and hashed");
        let second = a(&repo.worktree_files(u64::MAX).unwrap());
        assert_eq!(second.blob, first.blob);
        assert!(second.content.is_none(), "taken from the kept entry, not read");
        // An edit of the same size with the old mtime put back: the change time still shows it.
        std::fs::write(d.path().join("a.txt"), "ONE\n").unwrap();
        backdate(&d.path().join("a.txt"));
        let third = a(&repo.worktree_files(u64::MAX).unwrap());
        assert_eq!(third.blob.to_string(), git(d.path(), &["hash-object", "a.txt"]));
        assert_ne!(third.blob, first.blob);
        // Without a store there is nothing to keep it in: the file is read every time.
        std::fs::remove_dir_all(d.path().join(".lynx")).unwrap();
        let repo = Repo::discover(d.path()).unwrap();
        assert!(a(&repo.worktree_files(u64::MAX).unwrap()).content.is_some());
    }
}
