//! `git lynx evaluate`: retrieval quality and latency on questions mined from a repository's
//! own history (`mine.rs`), run against any mode or model (`run.rs`), with standard metrics
//! (`metrics.rs`) over a simple question format (`dataset.rs`).

pub mod data;
pub mod dataset;
pub mod graph;
pub mod metrics;
pub mod mine;
pub mod run;

/// Reads a hand-checked truth file (`what` names its kind in the error).
pub fn load_truth<T: serde::de::DeserializeOwned>(path: &std::path::Path, what: &str) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::error::usage(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| crate::error::usage(format!("{} is not a {what} truth file: {e}", path.display())))
}
