//! The code graph: per-blob facts (`facts.rs`), resolution over a view (`resolve.rs`), the
//! petgraph model (`model.rs`) and its queries (`query.rs`).

/// Facts are extracted per blob, with chunking (`chunk::facts`).
pub use crate::chunk::facts;
pub mod data;
pub mod files;
pub mod load;
pub mod model;
pub mod precise;
pub mod query;
pub mod resolve;
