//! Crash-safe file writes: everything the store keeps is written to a temp file in the same
//! directory tree, fsynced, then renamed into place, so a reader or a crash sees whole files
//! or nothing.

use anyhow::{Context, Result};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Suffix of in-progress writes; `gc` removes stale ones left by a crash.
pub const TMP_SUFFIX: &str = ".lynx-tmp";

/// A unique temp path next to `target`.
pub fn temp_path_for(target: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let name = target.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!(".{name}.{}.{n}{TMP_SUFFIX}", std::process::id()))
}

/// Writes `bytes` to `path` atomically (temp file, fsync, rename, fsync of the directory).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("path has no parent directory")?;
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = temp_path_for(path);
    let result = (|| -> Result<()> {
        let mut f = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(bytes).with_context(|| format!("writing {}", tmp.display()))?;
        f.sync_all().with_context(|| format!("syncing {}", tmp.display()))?;
        drop(f);
        fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
        sync_dir(dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Reads a file of at most `limit` bytes; a larger one is an error naming both sizes, before
/// anything is read (a sparse or hostile file cannot make the reader allocate its size).
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = f.metadata().with_context(|| format!("reading {}", path.display()))?.len();
    if len > limit {
        anyhow::bail!("{} is {len} bytes, over the limit of {limit}", path.display());
    }
    let mut out = Vec::with_capacity(len as usize);
    f.take(limit + 1).read_to_end(&mut out).with_context(|| format!("reading {}", path.display()))?;
    if out.len() as u64 > limit {
        anyhow::bail!("{} grew past the limit of {limit} bytes while it was read", path.display());
    }
    Ok(out)
}

/// Best effort: makes a rename durable.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Total size in bytes and number of files under `dir` (0 when missing).
pub fn dir_size(dir: &Path) -> (u64, u64) {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .fold((0, 0), |(bytes, files), e| (bytes + e.metadata().map(|m| m.len()).unwrap_or(0), files + 1))
}

/// Nanoseconds since the Unix epoch (unique-enough stamps).
pub fn now_nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Short lowercase hex of the blake3 hash of `parts` (fingerprints and cache keys).
pub fn short_hash(parts: &[&[u8]]) -> String {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().to_hex()[..16].to_string()
}
