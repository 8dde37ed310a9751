//! The code graph: per-blob facts (`facts.rs`), resolution over a view (`resolve.rs`), the
//! petgraph model (`model.rs`) and its queries (`query.rs`).

pub mod facts;
pub mod load;
pub mod model;
pub mod query;
pub mod resolve;
