//! `source add | remove`: the named folders, repositories, documentation sites and PDFs searched
//! beside this one, kept in
//! the local configuration (`.lynx/config.toml`), never in the committed team file.

use super::Answer;
use crate::config::{SourceConfig, SourceType};
use crate::sources::SourceError;
use crate::workspace::Workspace;
use anyhow::Result;

/// `source add`'s arguments.
#[derive(clap::Args, Debug)]
pub struct AddArgs {
    /// A name for the source (letters, digits, `-`, `_`).
    pub name: String,
    /// The folder or repository; for webdoc the start URL; for pdf a PDF file or folder.
    pub path: String,
    /// What the source is.
    #[arg(long = "type", value_enum, default_value = "folder")]
    pub kind: crate::config::SourceType,
    /// webdoc: stay under this path (default: the start URL's folder).
    #[arg(long, value_name = "PATH")]
    pub url_prefix: Option<String>,
    /// webdoc: pages fetched at most (default 500).
    #[arg(long)]
    pub max_pages: Option<usize>,
    /// webdoc: links followed from the start at most (default 3).
    #[arg(long)]
    pub max_depth: Option<usize>,
    /// webdoc: only URLs containing one of these (repeatable).
    #[arg(long = "include-url", value_name = "TEXT")]
    pub include_url_patterns: Vec<String>,
    /// webdoc: skip URLs containing any of these (repeatable).
    #[arg(long = "exclude-url", value_name = "TEXT")]
    pub exclude_url_patterns: Vec<String>,
    /// webdoc: seconds between requests (default 0.5; robots.txt may ask for more).
    #[arg(long, value_name = "SECONDS")]
    pub delay: Option<f64>,
    /// webdoc: seconds a request may take (default 20).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// webdoc: render pages in headless Chromium first (sites built by JavaScript).
    #[arg(long)]
    pub render_js: bool,
    /// Only record the source; crawl or extract later with `update-source-index NAME`.
    #[arg(long)]
    pub no_fetch: bool,
    /// Only these extensions (repeatable).
    #[arg(long = "ext")]
    pub extensions: Vec<String>,
    /// Glob patterns to leave out (repeatable).
    #[arg(long)]
    pub ignore: Vec<String>,
    /// No code graph for this source.
    #[arg(long)]
    pub no_graph: bool,
    /// What the source holds, shown to agents in list_sources.
    #[arg(long, default_value = "")]
    pub description: String,
}

impl AddArgs {
    /// The source's configuration entry (a site's start URL is its `url`, a folder's or PDF's
    /// location its `path`; only folders have a code graph).
    pub fn config(&self) -> SourceConfig {
        let web = self.kind == SourceType::Webdoc;
        SourceConfig {
            name: self.name.clone(),
            kind: self.kind,
            path: if web { String::new() } else { self.path.clone() },
            url: if web { vec![self.path.clone()] } else { Vec::new() },
            extensions: self.extensions.clone(),
            ignore: self.ignore.clone(),
            graph: !self.no_graph && self.kind == SourceType::Folder,
            description: self.description.clone(),
            committed: false,
            url_prefix: self.url_prefix.clone(),
            max_pages: self.max_pages,
            max_depth: self.max_depth,
            include_url_patterns: self.include_url_patterns.clone(),
            exclude_url_patterns: self.exclude_url_patterns.clone(),
            request_delay_seconds: self.delay,
            request_timeout_seconds: self.timeout,
            render_js: self.render_js,
            ..Default::default()
        }
    }
}

/// Checks a source's settings when it is added (a crawl's URL and limits), not at its first
/// snapshot.
#[cfg(feature = "docs")]
fn check_settings(sc: &SourceConfig) -> Result<()> {
    lynx_docs::check_settings(sc)
}

#[cfg(not(feature = "docs"))]
fn check_settings(sc: &SourceConfig) -> Result<()> {
    match sc.kind {
        SourceType::Folder => Ok(()),
        SourceType::Webdoc | SourceType::Pdf => Err(crate::error::without("docs", "documentation sources")),
    }
}

/// Records a source in the local configuration. A documentation source is then crawled or
/// extracted and indexed at once when `fetch` can open the sources (the first snapshot).
pub fn add(
    ws: &Workspace,
    sc: SourceConfig,
    fetch: Option<impl FnOnce() -> Result<crate::sources::Sources>>,
) -> Result<Answer> {
    crate::config::check_source_name(&sc.name)?;
    check_settings(&sc)?;
    let shown = match sc.kind {
        SourceType::Webdoc => sc.url.join(" "),
        _ => {
            let exists = std::path::Path::new(&sc.path).exists()
                || ws.repo.workdir.as_ref().is_some_and(|w| w.join(&sc.path).exists());
            if !exists {
                return Err(SourceError::NoPath { path: sc.path.clone() }.into());
            }
            sc.path.clone()
        }
    };
    let (name, kind) = (sc.name.clone(), sc.kind);
    crate::sources::edit_local_config(&ws.store.root, |list| {
        if list.iter().any(|s| s.name == sc.name) {
            return Err(SourceError::Exists { name: sc.name.clone() }.into());
        }
        list.push(sc);
        Ok(())
    })?;
    let mut text = format!("added {} source `{name}` ({shown})\n", kind.name());
    let mut data = SourceAdded { added: name.clone(), kind: kind.name(), fetched: None };
    if let (Some(open), true) = (fetch, kind != SourceType::Folder) {
        let fetched = super::status::update_source(&open()?, Some(&name), false)?;
        text.push_str(&fetched.text);
        data.fetched = Some(fetched.json());
    }
    Ok(Answer::new("source", None, data, text))
}

pub fn remove(ws: &Workspace, name: &str) -> Result<Answer> {
    crate::sources::edit_local_config(&ws.store.root, |list| {
        let before = list.len();
        list.retain(|s| s.name != name);
        if list.len() == before {
            return Err(SourceError::NotConfigured { name: name.to_string() }.into());
        }
        Ok(())
    })?;
    Ok(Answer::new("source", None, SourceRemoved { removed: name.to_string() }, format!("removed source `{name}`\n")))
}

/// A source added to the configuration, with its first snapshot when one was taken.
#[derive(Debug, serde::Serialize)]
pub struct SourceAdded {
    pub added: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched: Option<serde_json::Value>,
}

/// A source taken out of the configuration.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct SourceRemoved {
    pub removed: String,
}

results!(SourceAdded, SourceRemoved);
