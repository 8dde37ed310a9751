//! What identifies a file's state without reading it, for the caches that skip reading the
//! working tree (`untracked`, `settled`): modification and change times, size, inode. The change
//! time cannot be set back (`touch` sets it to now), so an edit that restores size and mtime
//! still shows. Timestamps are coarse on some file systems: a stamp within [`RACY`] of the moment
//! its cache was computed proves nothing and is not kept.

use std::path::Path;
use std::time::{Duration, SystemTime};

pub(super) const RACY: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Stamp {
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub size: u64,
    pub ino: u64,
}

/// Nanoseconds since the epoch (negative before it).
fn ns(t: SystemTime) -> i128 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

impl Stamp {
    pub const LEN: usize = 16 + 16 + 8 + 8;

    pub fn of(md: &std::fs::Metadata) -> Stamp {
        let mtime_ns = md.modified().map_or(0, ns);
        #[cfg(unix)]
        let (ctime_ns, ino) = {
            use std::os::unix::fs::MetadataExt;
            (md.ctime() as i128 * 1_000_000_000 + md.ctime_nsec() as i128, md.ino())
        };
        // No change time to see an edit by: never settled (`settled_before`).
        #[cfg(not(unix))]
        let (ctime_ns, ino) = (i128::MAX, 0);
        Stamp { mtime_ns, ctime_ns, size: md.len(), ino }
    }

    /// The stamp of what gix stat'ed for the index (its `created` is the change time on Unix).
    pub fn of_index(md: &gix::index::fs::Metadata) -> Stamp {
        let ctime_ns = if cfg!(unix) { md.created().map_or(i128::MAX, ns) } else { i128::MAX };
        Stamp { mtime_ns: md.modified().map_or(0, ns), ctime_ns, size: md.len(), ino: md.ino() }
    }

    /// The stamp of `path` (not following a symlink), or None when it does not exist.
    pub fn at(path: &Path) -> Option<(Stamp, std::fs::FileType)> {
        std::fs::symlink_metadata(path).ok().map(|md| (Stamp::of(&md), md.file_type()))
    }

    /// The moment [`RACY`] before `start`, as stamps count time.
    pub fn racy_from(start: SystemTime) -> i128 {
        ns(start) - RACY.as_nanos() as i128
    }

    /// Modified at or after `racy_from` (a later change might not show in the mtime).
    pub fn is_racy(self, racy_from: i128) -> bool {
        self.mtime_ns >= racy_from
    }

    /// Neither modified nor changed at or after `racy_from`.
    pub fn settled_before(self, racy_from: i128) -> bool {
        self.mtime_ns < racy_from && self.ctime_ns < racy_from
    }

    pub fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.mtime_ns.to_le_bytes());
        out.extend_from_slice(&self.ctime_ns.to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&self.ino.to_le_bytes());
    }

    pub fn get(b: &[u8]) -> Option<Stamp> {
        let b = b.get(..Stamp::LEN)?;
        Some(Stamp {
            mtime_ns: i128::from_le_bytes(b[..16].try_into().ok()?),
            ctime_ns: i128::from_le_bytes(b[16..32].try_into().ok()?),
            size: u64::from_le_bytes(b[32..40].try_into().ok()?),
            ino: u64::from_le_bytes(b[40..48].try_into().ok()?),
        })
    }
}

/// The key a cache is kept under: length-prefixed parts (so no two lists of parts hash alike)
/// and files by their stamps.
pub(super) struct Key(blake3::Hasher);

impl Key {
    pub fn new(magic: &[u8]) -> Key {
        let mut k = Key(blake3::Hasher::new());
        k.part(magic);
        k
    }

    pub fn part(&mut self, bytes: &[u8]) {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    /// `path`'s stamp, or that it does not exist.
    pub fn stamp_of(&mut self, path: &Path) {
        let mut out = Vec::with_capacity(Stamp::LEN + 1);
        match Stamp::at(path) {
            Some((s, _)) => {
                out.push(1);
                s.put(&mut out);
            }
            None => out.push(0),
        }
        self.part(&out);
    }

    pub fn finish(self) -> [u8; 32] {
        *self.0.finalize().as_bytes()
    }
}
