//! Error kinds that decide the exit code: usage errors (bad arguments or input: exit 2),
//! lock time-outs (exit 75), everything else (exit 1). "Found nothing" is not an error.

use std::fmt;

/// A problem with what the user asked for, with the fix in the message.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

// Every exit code of the program, in one place (README.md lists them for users).
/// An answer (including "found nothing" and a doctor report with warnings only).
pub const EXIT_OK: i32 = 0;
/// A failure, or a doctor check that failed (`--strict`: a warning too).
pub const EXIT_FAILURE: i32 = 1;
/// Bad arguments, an unknown revision, not a repository, invalid configuration.
pub const EXIT_USAGE: i32 = 2;
/// An `impact --fail-on` check tripped.
pub const EXIT_CHECK_FAILED: i32 = 3;
/// An `evaluate` gate failed.
pub const EXIT_GATE_FAILED: i32 = 4;
/// The store's write lock was not released in time.
pub const EXIT_LOCKED: i32 = 75;

/// The exit code for an error.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.downcast_ref::<UsageError>().is_some()) {
        EXIT_USAGE
    } else if e.chain().any(|c| c.downcast_ref::<LockTimeout>().is_some()) {
        EXIT_LOCKED
    } else {
        EXIT_FAILURE
    }
}

/// A writer waited longer than the store's lock timeout (exit code 75).
#[derive(Debug)]
pub struct LockTimeout {
    pub holder: String,
    pub waited: std::time::Duration,
    pub name: String,
}

impl std::fmt::Display for LockTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the Lynx store is locked for writing ({}) by {}; gave up after {:.1}s. Wait for it to finish, or raise LYNX_LOCK_TIMEOUT (seconds)",
            self.name,
            self.holder,
            self.waited.as_secs_f64()
        )
    }
}

impl std::error::Error for LockTimeout {}
