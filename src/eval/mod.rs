//! `git lynx evaluate`: retrieval quality and latency on questions mined from a repository's
//! own history (`mine.rs`), run against any mode or model (`run.rs`), with standard metrics
//! (`metrics.rs`) over a simple question format (`dataset.rs`).

pub mod data;
pub mod dataset;
pub mod graph;
pub mod metrics;
pub mod mine;
pub mod run;
