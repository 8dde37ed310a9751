//! `index`: make the objects of one or more views complete, and report what it took.

use super::Answer;
use crate::engine::Engine;
use crate::index::{self, IndexReport};
use crate::view::{View, ViewSpec};
use anyhow::Result;

/// What `index` did: the total, and each view's part when there were several.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Indexed {
    #[serde(flatten)]
    pub total: IndexReport,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub views: Vec<IndexReport>,
}

pub fn run(engine: &Engine, revs: &[String]) -> Result<Answer> {
    let (r, text) = index_views(engine, revs)?;
    Ok(Answer::new("index", r.total.view.clone(), &r, text))
}

/// What `index` did across a workspace's repositories: the total and each repository's.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct IndexedWorkspace {
    #[serde(flatten)]
    pub total: IndexReport,
    pub repositories: Vec<RepositoryIndexed>,
    /// Listed repositories that could not be opened (name, why).
    pub missing: Vec<(String, String)>,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct RepositoryIndexed {
    pub repo: String,
    #[serde(flatten)]
    pub indexed: Indexed,
}

/// Indexes every repository of a workspace (each at its own revision, or `revs`), one after
/// the other (each one's indexing already uses every core).
pub fn run_workspace(sources: &crate::sources::Sources, revs: &[String]) -> Result<Answer> {
    let mut total = IndexReport::default();
    let mut repositories = Vec::new();
    let mut text = String::new();
    for s in sources.list.iter().filter(|s| s.kind == "repository") {
        s.engine.progress.set_stage(&format!("repository {}", s.name));
        let (r, t) = index_views(&s.engine, revs)?;
        total.add(&r.total);
        text.push_str(&format!("repository `{}`: {t}", s.name));
        repositories.push(RepositoryIndexed { repo: s.name.clone(), indexed: r });
    }
    for (name, why) in &sources.missing {
        text.push_str(&format!("skipped `{name}`: {why}\n"));
    }
    let r = IndexedWorkspace { total, repositories, missing: sources.missing.clone() };
    Ok(Answer::new("index", None, &r, text))
}

/// Indexes the views of `revs` (the working tree when empty), with the text of the report.
pub fn index_views(engine: &Engine, revs: &[String]) -> Result<(Indexed, String)> {
    let specs: Vec<ViewSpec> =
        if revs.is_empty() { vec![engine.spec(None)] } else { revs.iter().map(|r| engine.spec(Some(r))).collect() };
    let mut total = IndexReport::default();
    let mut per_view = Vec::new();
    // The blobs of every view are processed as one job; what each view needs besides (vectors,
    // history facts, its kept record) follows, view by view.
    let views: Vec<View> = specs.iter().map(|spec| View::open(&engine.ws, spec)).collect::<Result<_>>()?;
    if views.len() > 1 {
        engine.progress.set_stage(&format!("{} revisions", views.len()));
    }
    // What the shared object store's manifests give for these commits, first: then the blobs,
    // vectors and history facts below find them here.
    let vectors = engine.embedder().ok().map(|m| m.fingerprint().to_string());
    let prefetched: Vec<Option<crate::store::remote::Fetched>> =
        views.iter().map(|view| index::prefetch(&engine.ws, view, vectors.as_deref())).collect();
    // The history facts depend on commits only: they are computed on whichever core the
    // blobs leave free.
    let (reports, histories) = rayon::join(
        || index::index_views(&engine.ws, &views, &engine.progress),
        || views.iter().map(|view| history(engine, view)).collect::<Vec<_>>(),
    );
    for (i, ((view, mut report), history)) in views.iter().zip(reports?).zip(histories).enumerate() {
        if views.len() > 1 {
            engine.progress.set_stage(&format!("revision {} of {}", i + 1, views.len()));
        }
        if let Some(got) = &prefetched[i] {
            report.blobs_fetched += got.hits;
            match report.remote.as_mut() {
                Some(r) => r.add(got),
                None => report.remote = Some(got.clone()),
            }
        }
        embed(engine, view, &mut report);
        if let Some((computed, seconds)) = history {
            report.commits_new += computed;
            report.seconds.insert("history".into(), seconds);
        }
        keep(engine, view, &mut report);
        total.add(&report);
        per_view.push(report);
    }
    engine.progress.set_stage("");
    let text = render(&per_view, &total);
    let views = if per_view.len() > 1 { per_view } else { Vec::new() };
    Ok((Indexed { total, views }, text))
}

/// The commit facts the view's history field draws on, computed now for commits the store has
/// not seen, so that no question at this revision diffs trees: how many were computed, in how
/// many seconds (None when the view has no history field). Never fails the run.
fn history(engine: &Engine, view: &View) -> Option<(usize, f64)> {
    let s = &engine.ws.config.search;
    let commit = view.id.commit.as_deref()?;
    if (s.history <= 0.0 && s.recency <= 0.0) || s.history_commits == 0 {
        return None;
    }
    let t = std::time::Instant::now();
    let computed = match index::history::recent_counted(&engine.ws, commit, s.history_commits) {
        Ok((_, computed)) => computed,
        Err(e) => {
            tracing::warn!("the history field of {} could not be prepared: {e:#}", view.id.label);
            0
        }
    };
    Some((computed, t.elapsed().as_secs_f64()))
}

/// Keeps the assembled view of a revision for the first question there (`view::kept`),
/// again only when this run added blobs to it. Never fails the run.
fn keep(engine: &Engine, view: &View, report: &mut IndexReport) {
    let Some(commit) = view.id.commit.as_deref() else { return };
    if view.id.kind != "commit" || (report.blobs_new == 0 && crate::view::kept::exists(&engine.ws, commit)) {
        return;
    }
    let t = std::time::Instant::now();
    if let Err(e) = engine.keep_view(view) {
        tracing::warn!("the view of {} could not be kept: {e:#}", view.id.label);
    }
    report.seconds.insert("view".into(), t.elapsed().as_secs_f64());
    if let Some(total) = report.seconds.get_mut("total") {
        *total += t.elapsed().as_secs_f64();
    }
}

/// The dense phase: never fails the run; a model problem turns dense off with its reason.
fn embed(engine: &Engine, view: &View, report: &mut IndexReport) {
    let t = std::time::Instant::now();
    let model = match engine.embedder() {
        Ok(m) => {
            tracing::debug!("embedding: model {} ready in {:.1?}", m.name(), t.elapsed());
            m
        }
        Err(reason) => {
            report.dense = "off".into();
            report.dense_reason = Some(reason.to_string());
            return;
        }
    };
    match index::embed::embed_view(&engine.ws.store, view, model.as_ref(), &engine.progress) {
        Ok(d) => {
            // A model chosen on the command line stays the store's model.
            if let (true, Some(name)) = (engine.model.from_flag, engine.model.name.as_deref())
                && let Err(e) = crate::engine::ModelChoice::record(&engine.ws.store.root, name)
            {
                tracing::warn!("could not record the model for this store: {e:#}");
            }
            report.chunks_embedded = d.embedded;
            // The vectors' round with the store counts with the blobs' round.
            if let Some(f) = &d.fetched {
                match report.remote.as_mut() {
                    Some(r) => r.add(f),
                    None => report.remote = Some(f.clone()),
                }
            }
            report.segments_written += d.segments;
            report.dense = if d.covered == d.total { "ready".into() } else { "partial".into() };
            report.dense_model = Some(model.name().to_string());
            report.dense_builtin_because = engine.builtin_because().map(str::to_string);
            report.dense_coverage = Some(if d.total == 0 { 1.0 } else { d.covered as f64 / d.total as f64 });
        }
        Err(e) => {
            report.dense = "off".into();
            report.dense_reason = Some(format!("embedding with `{}` failed: {e:#}", model.name()));
        }
    }
    report.seconds.insert("embed".into(), t.elapsed().as_secs_f64());
    if let Some(total) = report.seconds.get_mut("total") {
        *total += t.elapsed().as_secs_f64();
    }
}

fn render(per_view: &[IndexReport], total: &IndexReport) -> String {
    let mut out = String::new();
    let several = per_view.len() > 1;
    for r in per_view {
        let label = r.view.as_ref().map(|v| v.label.clone()).unwrap_or_default();
        // Several revisions share the run's segments: they are counted once, in all.
        let counts = counts(r, true, !several);
        out.push_str(&format!("indexed {label}: {} files ({} indexed), {counts}\n", r.files_seen, r.files_indexed));
    }
    if several {
        out.push_str(&format!("in all: {}\n", counts(total, false, true)));
    }
    if !total.skipped.is_empty() {
        let parts: Vec<String> = total.skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
        out.push_str(&format!("skipped: {}\n", parts.join(", ")));
    }
    out.push_str(&format!("dense: {}", total.dense));
    if let Some(c) = total.dense_coverage {
        out.push_str(&format!(" ({:.0}% of chunks)", c * 100.0));
    }
    if let (Some(model), Some(why)) = (&total.dense_model, &total.dense_builtin_because) {
        out.push_str(&format!(" with the built-in model {model} ({})", crate::error::brief(why)));
    }
    if let Some(r) = &total.dense_reason {
        // One short line; `doctor` and `status` give the whole reason.
        out.push_str(&format!(" ({})", crate::error::brief(r)));
    }
    out.push('\n');
    out
}

/// What a run (or one view of it) added, in the order both kinds of line give it.
fn counts(r: &IndexReport, reused: bool, segments: bool) -> String {
    let reused = if reused { format!(", {} reused", r.blobs_reused) } else { String::new() };
    let segments = if segments { format!(", {} segments", r.segments_written) } else { String::new() };
    format!(
        "{} new blobs{reused}, {} chunks written, {} embedded{segments}, {:.2}s",
        r.blobs_new,
        r.chunks_written,
        r.chunks_embedded,
        r.seconds.get("total").copied().unwrap_or(0.0)
    )
}

results!(Indexed);
results!(IndexedWorkspace => "repositories");
