//! `index`: make the objects of one or more views complete, and report what it took.

use super::Answer;
use crate::engine::Engine;
use crate::index::{self, IndexReport};
use crate::view::{View, ViewSpec};
use anyhow::Result;

pub fn run(engine: &Engine, revs: &[String]) -> Result<Answer> {
    let specs: Vec<ViewSpec> =
        if revs.is_empty() { vec![ViewSpec::Worktree] } else { revs.iter().map(|r| ViewSpec::from_option(Some(r))).collect() };
    let mut total = IndexReport::default();
    let mut per_view = Vec::new();
    for spec in &specs {
        let view = View::open(&engine.ws, spec)?;
        let report = index::index_view(&engine.ws, &view, &engine.progress)?;
        total.add(&report);
        per_view.push(report);
    }
    if total.dense.is_empty() {
        total.dense = "off".into();
        total.dense_reason = Some("no embedding model is configured in this build".into());
    }
    let text = render(&per_view, &total);
    let mut answer = Answer::new("index", total.view.clone(), &total, text);
    if per_view.len() > 1 {
        answer.data.insert("views".into(), serde_json::to_value(&per_view)?);
    }
    Ok(answer)
}

fn render(per_view: &[IndexReport], total: &IndexReport) -> String {
    let mut out = String::new();
    for r in per_view {
        let label = r.view.as_ref().map(|v| v.label.clone()).unwrap_or_default();
        out.push_str(&format!(
            "indexed {label}: {} files ({} indexed), {} new blobs, {} reused, {} chunks written, {} segments, {:.2}s\n",
            r.files_seen,
            r.files_indexed,
            r.blobs_new,
            r.blobs_reused,
            r.chunks_written,
            r.segments_written,
            r.seconds.get("total").copied().unwrap_or(0.0)
        ));
    }
    if !total.skipped.is_empty() {
        let parts: Vec<String> = total.skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
        out.push_str(&format!("skipped: {}\n", parts.join(", ")));
    }
    out.push_str(&format!("dense: {}", total.dense));
    if let Some(r) = &total.dense_reason {
        out.push_str(&format!(" ({r})"));
    }
    out.push('\n');
    out
}
