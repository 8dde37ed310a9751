//! When a long-running process gives freed memory back to the system. The binary chooses the
//! allocator and installs what it can do here; the library says when.
//!
//! By default the allocator returns freed pages about a second after they are freed, lazily:
//! whichever thread allocates next does the returning, then faults the pages in again as it
//! reuses them. In a server that is the first question after any pause — at an already-read
//! revision of prometheus, 5–10 ms instead of ~1 ms, most of it that work. A server therefore
//! holds what it frees while questions come, and gives it back on its own thread once none
//! has come for a while ([`crate::engine::Activity::release_memory_when_idle`]).

use std::sync::OnceLock;
use std::time::Duration;

/// What the process's allocator offers.
#[derive(Clone, Copy)]
pub struct Allocator {
    /// Keeps freed memory for reuse for at least this long before it may be returned.
    pub hold: fn(Duration),
    /// Returns every freed page the allocator holds to the system now.
    pub release: fn(),
}

/// How long a server without questions holds the memory it freed before giving it back:
/// longer than the pause between an agent's questions, short enough that an idle server
/// returns what a burst of work took.
pub const SERVER_IDLE: Duration = Duration::from_secs(30);

static ALLOCATOR: OnceLock<Allocator> = OnceLock::new();

/// Installs the allocator's operations (once, at the start of `main`).
pub fn install(allocator: Allocator) {
    let _ = ALLOCATOR.set(allocator);
}

/// Holds freed memory for `at_least` (nothing without an installed allocator).
pub fn hold(at_least: Duration) {
    if let Some(a) = ALLOCATOR.get() {
        (a.hold)(at_least)
    }
}

/// Returns held memory to the system; false when no allocator is installed.
pub fn release() -> bool {
    match ALLOCATOR.get() {
        Some(a) => {
            (a.release)();
            true
        }
        None => false,
    }
}

/// This process's resident memory in bytes (Linux: `/proc/self/status`), if it can tell.
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
