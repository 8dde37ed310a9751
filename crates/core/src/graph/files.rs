//! What building a view's graph reads: each file of the view with its per-blob facts, and the
//! precise facts an imported SCIP index gives it. Resolution (`resolve.rs`), precise edges
//! (`precise.rs`) and data access (`data.rs`) all read this, so it sits below them.

use crate::chunk::facts::Facts;
use crate::lang::Lang;

/// One file of the view with its facts.
pub struct FileFacts<'a> {
    pub path: &'a str,
    pub lang: Lang,
    pub facts: &'a Facts,
    /// What an imported SCIP index says about the file; its edges replace the heuristic ones.
    pub precise: Option<&'a crate::layer::scip::PreciseFacts>,
}
