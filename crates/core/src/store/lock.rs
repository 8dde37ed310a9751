//! The store's write lock: an OS file lock on `.lynx/lock` (released by the OS when a writer
//! dies), waited for up to `LYNX_LOCK_TIMEOUT` seconds, with the holder named in the error.

use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const TIMEOUT_ENV: &str = crate::env::LYNX_LOCK_TIMEOUT;
const DEFAULT_TIMEOUT_SECS: f64 = 120.0;

/// Exit code of a command that gave up waiting for a lock.
pub use crate::error::EXIT_LOCKED;

crate::error::errors! {
    /// Why the store's lock cannot be taken, other than another writer holding it.
    pub enum LockError: Usage {
        StoreGone { root: String } => "the Lynx store {root} is gone (was the repository moved or deleted?)",
    }
}

pub struct StoreLock {
    file: File,
    holder_path: PathBuf,
}

pub use crate::error::LockTimeout;

pub fn timeout() -> Duration {
    let secs = crate::env::number::<f64>(TIMEOUT_ENV).unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::from_secs_f64(secs.max(0.0))
}

impl StoreLock {
    /// Waits for the lock named `name` under `root` (`lock` → `.lynx/lock`).
    pub fn acquire(root: &Path, purpose: &str) -> Result<StoreLock> {
        Self::acquire_named(root, "lock", purpose, timeout())
    }

    pub fn acquire_named(root: &Path, name: &str, purpose: &str, wait: Duration) -> Result<StoreLock> {
        if !root.is_dir() {
            return Err(LockError::StoreGone { root: root.display().to_string() }.into());
        }
        let path = root.join(name);
        let holder_path = root.join(format!("{name}.holder"));
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {} (is the store writable?)", path.display()))?;
        let start = Instant::now();
        let mut sleep = Duration::from_millis(5);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    if start.elapsed() >= wait {
                        let holder = std::fs::read_to_string(&holder_path).unwrap_or_default();
                        let holder = if holder.trim().is_empty() {
                            "another process".to_string()
                        } else {
                            holder.trim().to_string()
                        };
                        return Err(LockTimeout { holder, waited: start.elapsed(), name: name.to_string() }.into());
                    }
                    std::thread::sleep(sleep.min(wait.saturating_sub(start.elapsed()).max(Duration::from_millis(1))));
                    sleep = (sleep * 2).min(Duration::from_millis(100));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(anyhow::Error::from(e).context(format!("locking {}", path.display())));
                }
            }
        }
        let info = format!("pid {} ({}) since {}", std::process::id(), purpose, crate::fsutil::now_secs());
        if let Ok(mut h) = File::create(&holder_path) {
            let _ = h.write_all(info.as_bytes());
        }
        Ok(StoreLock { file, holder_path })
    }

    /// Non-blocking attempt.
    pub fn try_acquire(root: &Path, name: &str, purpose: &str) -> Result<Option<StoreLock>> {
        match Self::acquire_named(root, name, purpose, Duration::ZERO) {
            Ok(l) => Ok(Some(l)),
            Err(e) if e.downcast_ref::<LockTimeout>().is_some() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Who holds the lock `name` right now (None when free).
    pub fn holder(root: &Path, name: &str) -> Option<String> {
        let path = root.join(name);
        let file = OpenOptions::new().read(true).write(true).open(&path).ok()?;
        match file.try_lock() {
            Ok(()) => {
                let _ = file.unlock();
                None
            }
            Err(_) => Some(
                std::fs::read_to_string(root.join(format!("{name}.holder")))
                    .unwrap_or_else(|_| "another process".into())
                    .trim()
                    .to_string(),
            ),
        }
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.holder_path, b"");
        let _ = self.file.unlock();
    }
}
