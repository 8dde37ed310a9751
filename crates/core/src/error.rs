//! Error kinds that decide the exit code and tell a caller what to do next (`Kind`): usage
//! errors (bad arguments or input: exit 2), lock time-outs (exit 75), damaged caches (exit 1,
//! the same call again answers), everything else (exit 1). "Found nothing" is not an error.
//!
//! Each area (revisions, configuration, pathspecs, sources, each operation's arguments…) declares
//! its own error enum with `errors!`: a variant per problem, its message with the fix, and the
//! area's kind. Area errors are deliberately not `std::error::Error`: the one way into an
//! `anyhow::Error` is the conversion `errors!` writes, which wraps the value in `Typed` so its
//! kind survives any `context` added above it (anyhow's blanket conversion would lose it).

use std::fmt;

/// An area's typed error: what went wrong (the enum's variant) and what kind of failure it is.
pub trait Classify: fmt::Display + fmt::Debug + Send + Sync + std::any::Any {
    fn kind(&self) -> Kind;
}

/// An area error inside an `anyhow::Error` chain: it keeps the value, so a caller can match the
/// variant (`find`), and its kind, which decides the exit code.
pub struct Typed(Box<dyn Classify>);

impl Typed {
    pub fn new(e: impl Classify) -> Typed {
        Typed(Box::new(e))
    }

    pub fn kind(&self) -> Kind {
        self.0.kind()
    }

    /// The area error, if it is a `T`.
    pub fn get<T: Classify>(&self) -> Option<&T> {
        let any: &dyn std::any::Any = &*self.0;
        any.downcast_ref()
    }
}

impl fmt::Debug for Typed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Typed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Typed {}

/// The area error of type `T` along `e`'s chain of causes, if there is one.
pub fn find<T: Classify>(e: &anyhow::Error) -> Option<&T> {
    e.chain().filter_map(|c| c.downcast_ref::<Typed>()).find_map(Typed::get)
}

/// Declares an area's error enum: its kind after the name, then each variant with its fields
/// and its message (fields named in it as in `format!`; every field is used). Writes the enum,
/// its `Display`, its `Classify` and its conversion into `anyhow::Error`.
///
/// ```ignore
/// errors! {
///     /// Why a revision names no commit.
///     pub enum RevisionError: Usage {
///         Unknown { rev: String } => "unknown revision `{rev}`",
///     }
/// }
/// ```
#[macro_export]
macro_rules! errors {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident: $kind:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident { $($field:ident: $fty:ty),* $(,)? } => $msg:literal
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant { $($field: $fty),* } ),*
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self {
                    $( Self::$variant { $($field),* } => write!(f, $msg) ),*
                }
            }
        }

        impl $crate::error::Classify for $name {
            fn kind(&self) -> $crate::error::Kind {
                $crate::error::Kind::$kind
            }
        }

        impl ::std::convert::From<$name> for ::anyhow::Error {
            fn from(e: $name) -> Self {
                ::anyhow::Error::new($crate::error::Typed::new(e))
            }
        }
    };
}

pub use super::errors;

errors! {
    /// A feature this build was compiled without.
    pub enum BuildError: Failure {
        Without { what: &'static str, feature: &'static str } =>
            "this git-lynx was built without {what} (cargo feature `{feature}`); install a build with default features",
    }
}

/// The error of a feature this build was compiled without.
pub fn without(feature: &'static str, what: &'static str) -> anyhow::Error {
    BuildError::Without { what, feature }.into()
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

/// What kind of failure an error is: its exit code, and (as `kind` in a failed answer's JSON)
/// what a caller should do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Fix the arguments, the input or the configuration: the same call fails again.
    Usage,
    /// The store's write lock was held too long: try again when the writer is done.
    Locked,
    /// A cache file was damaged and has been removed: the same call again answers.
    Damaged,
    /// Anything else.
    Failure,
}

impl Kind {
    /// Every kind, in the order a failed answer's schema lists their names.
    pub const ALL: [Kind; 4] = [Kind::Usage, Kind::Locked, Kind::Damaged, Kind::Failure];

    /// The kind of `e`: the first typed error found along its chain of causes.
    pub fn of(e: &anyhow::Error) -> Kind {
        for c in e.chain() {
            if let Some(t) = c.downcast_ref::<Typed>() {
                return t.kind();
            }
            if c.is::<LockTimeout>() {
                return Kind::Locked;
            }
            if c.is::<Damaged>() {
                return Kind::Damaged;
            }
        }
        Kind::Failure
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Usage => "usage",
            Kind::Locked => "locked",
            Kind::Damaged => "damaged",
            Kind::Failure => "failure",
        }
    }

    /// The one table of exit codes by kind.
    pub fn exit_code(self) -> i32 {
        match self {
            Kind::Usage => EXIT_USAGE,
            Kind::Locked => EXIT_LOCKED,
            Kind::Damaged | Kind::Failure => EXIT_FAILURE,
        }
    }
}

/// The exit code for an error.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    Kind::of(e).exit_code()
}

/// A chunk text that failed its check: the value a read of it gives instead of the text, so the
/// answer that read it fails with this error (the cache file holding it is already removed and
/// is rebuilt from its segment on the next call). Only the answers that read a damaged text see
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damaged {
    /// The cache file.
    pub shard: String,
}

impl fmt::Display for Damaged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a cache file was damaged and has been removed ({}); it is rebuilt from its segment on the next call: run it again",
            self.shard
        )
    }
}

impl std::error::Error for Damaged {}

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

/// Why an engine answers without a model-backed part (the embedding model, a view's dense side,
/// a cross-encoder): a choice, said every time as a note, or a failure, with its fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// Off on purpose: no model configured, `--no-dense`, `LYNX_MODEL=none` (the reason says which).
    Off(String),
    /// The model could not be loaded: missing files, a name a committed file gives that Lynx will
    /// not download, ONNX Runtime absent, a build without the feature (the message has the fix).
    Model(String),
    /// The model loaded, but a view's dense side could not be assembled.
    Failed(String),
}

impl Unavailable {
    /// Whether it is a choice rather than a problem.
    pub fn is_off(&self) -> bool {
        matches!(self, Unavailable::Off(_))
    }

    /// The reason in one short line, for a note beside an answer; `doctor` and the status
    /// commands give the whole of it.
    pub fn brief(&self) -> String {
        brief(&self.to_string())
    }
}

/// The first clause of a long reason (no advice, no retry timer), at most about 160 characters.
pub fn brief(reason: &str) -> String {
    let mut r = reason.trim();
    for cut in [". ", "; not trying again", "; to work offline"] {
        if let Some(i) = r.find(cut) {
            r = &r[..i];
        }
    }
    let r = r.trim_end_matches('.');
    if r.chars().count() <= 160 {
        return r.to_string();
    }
    let mut end = 160;
    while !r.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &r[..end])
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::Off(why) | Unavailable::Model(why) => f.write_str(why),
            Unavailable::Failed(why) => write!(f, "dense retrieval failed: {why}"),
        }
    }
}

impl std::error::Error for Unavailable {}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_brief_reason_keeps_the_first_clause_without_advice_or_timer() {
        let long = "model `m/x` unavailable: the model host was not reachable 12 s ago (no DNS); not trying again for 288 s. to work offline, import a model you have";
        assert_eq!(brief(long), "model `m/x` unavailable: the model host was not reachable 12 s ago (no DNS)");
        assert_eq!(brief("no model configured"), "no model configured");
        assert!(brief(&"x".repeat(400)).chars().count() <= 161);
    }

    errors! {
        /// An area of this test's own.
        enum Asked: Usage {
            /// A count below the least.
            TooFew { what: String, least: usize } => "{what} must be at least {least}",
            Empty {} => "the query is empty",
        }
    }

    #[test]
    fn each_kind_is_found_through_context_and_has_its_exit_code() {
        let usage = Err::<(), anyhow::Error>(Asked::TooFew { what: "-k".into(), least: 1 }.into())
            .context("searching")
            .unwrap_err();
        let locked = anyhow::Error::new(LockTimeout {
            holder: "pid 1".into(),
            waited: std::time::Duration::from_secs(1),
            name: "index".into(),
        });
        let damaged =
            Err::<(), _>(Damaged { shard: "x.chunks".into() }).context("reading a hit").context("search").unwrap_err();
        let other = anyhow::anyhow!("disk full");
        let got: Vec<(Kind, i32)> =
            [&usage, &locked, &damaged, &other].iter().map(|e| (Kind::of(e), exit_code(e))).collect();
        assert_eq!(
            got,
            [
                (Kind::Usage, EXIT_USAGE),
                (Kind::Locked, EXIT_LOCKED),
                (Kind::Damaged, EXIT_FAILURE),
                (Kind::Failure, EXIT_FAILURE)
            ]
        );
        assert_eq!(Kind::of(&damaged).name(), "damaged");
        // The area error is kept as a value under the context, and says its message.
        assert_eq!(find::<Asked>(&usage), Some(&Asked::TooFew { what: "-k".into(), least: 1 }));
        assert_eq!(format!("{usage:#}"), "searching: -k must be at least 1");
        let empty = anyhow::Error::from(Asked::Empty {});
        assert_eq!((Kind::of(&empty), empty.to_string().as_str()), (Kind::Usage, "the query is empty"));
        let built = without("ui", "the web UI");
        assert_eq!(Kind::of(&built), Kind::Failure);
        assert!(find::<BuildError>(&built).is_some() && find::<Asked>(&built).is_none());
        assert!(format!("{damaged:#}").contains("x.chunks") && format!("{damaged:#}").contains("run it again"));
    }
}
