//! Taking snapshots of documentation sources: a crawl of a documentation site (`crawl`, pages
//! turned into Markdown by `html`) or the pages of PDF files (`pdf`), stored through the core's
//! snapshot store (`docsource`), which is what views read. The core modules it uses are
//! imported (not re-exported) under their own names, so `crate::config` reads here as in the
//! core; what others may use is `refresh` and `check_settings`.

use lynx_core::{config, docsource, encoding, env, error, fsutil, progress};

pub mod crawl;
pub mod html;
pub mod pdf;
pub mod pdf_stream;

use crate::config::{SourceConfig, SourceType};
use crate::docsource::{Snapshot, TextStore};
use anyhow::Result;
use lynx_core::workspace::Workspace;
use std::path::Path;

/// A new snapshot of a documentation source: a crawl, or the PDFs read.
fn take(
    ws: &Workspace,
    sc: &SourceConfig,
    base: &Path,
    previous: Option<&Snapshot>,
    texts: &TextStore,
    progress: &crate::progress::Progress,
) -> Result<Snapshot> {
    match sc.kind {
        SourceType::Webdoc => crawl::run(&crawl::Options::from_config(sc)?, previous, texts, progress),
        SourceType::Pdf => {
            let o = pdf::Options::from_config(sc, base, pdf::Limits::from_config(&ws.config)?);
            pdf::run(&o, previous, texts, progress)
        }
        SourceType::Folder => anyhow::bail!("source `{}` is a folder: nothing to crawl or extract", sc.name),
    }
}

/// Checks a source's settings when it is added (a crawl's URL and limits), not at its first
/// snapshot.
pub fn check_settings(sc: &SourceConfig) -> Result<()> {
    match sc.kind {
        SourceType::Webdoc => crawl::Options::from_config(sc).map(|_| ()),
        SourceType::Folder | SourceType::Pdf => Ok(()),
    }
}

/// Crawls or extracts `sc` again and makes the result the source's current snapshot. `base`
/// resolves a relative PDF path.
pub fn refresh(
    ws: &Workspace,
    sc: &SourceConfig,
    base: &Path,
    progress: &crate::progress::Progress,
) -> Result<Snapshot> {
    let previous = docsource::load(ws, &sc.name, None).ok().flatten();
    let texts = TextStore::open(ws);
    let t = std::time::Instant::now();
    let created = crate::fsutil::now_secs();
    let mut snap = take(ws, sc, base, previous.as_ref(), &texts, progress)?;
    if snap.pages.is_empty() && previous.as_ref().is_some_and(|p| !p.pages.is_empty()) {
        let why = snap
            .failures
            .first()
            .map(|f| format!("{}: {}", f.target, f.reason))
            .unwrap_or_else(|| "nothing was fetched".into());
        anyhow::bail!("the new snapshot of `{}` would hold no pages ({why}); the current snapshot stays", sc.name);
    }
    snap.source = sc.name.clone();
    snap.kind = sc.kind;
    snap.created = created;
    snap.millis = t.elapsed().as_secs_f64() * 1000.0;
    snap.id = docsource::new_id(created, &snap.pages);
    docsource::save(ws, &snap)?;
    Ok(snap)
}
