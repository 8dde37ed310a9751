//! The engine: a workspace plus the views (and, later, models) opened from it, kept warm for
//! the life of the process. The CLI makes one per command; the MCP server keeps one.

use crate::index::{self, IndexReport};
use crate::progress::Progress;
use crate::view::cache::{self, ViewData};
use crate::view::{View, ViewSpec};
use crate::workspace::Workspace;
use anyhow::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct Engine {
    pub ws: Workspace,
    pub progress: Progress,
    views: Mutex<HashMap<String, Arc<ViewData>>>,
}

/// A view ready to query, with what opening it took.
pub struct Opened {
    pub data: Arc<ViewData>,
    /// Set when objects had to be indexed first.
    pub indexed: Option<IndexReport>,
}

impl Engine {
    pub fn new(ws: Workspace, progress: Progress) -> Engine {
        Engine { ws, progress, views: Mutex::new(HashMap::new()) }
    }

    /// Opens a view, indexing whatever it lacks first.
    pub fn open_view(&self, spec: &ViewSpec) -> Result<Opened> {
        let view = View::open(&self.ws, spec)?;
        self.open_listed(&view)
    }

    /// Opens an already listed view.
    pub fn open_listed(&self, view: &View) -> Result<Opened> {
        let key = cache::cache_key(view, self.ws.config.index.max_file_size);
        if let Some(v) = self.views.lock().unwrap().get(&key) {
            return Ok(Opened { data: v.clone(), indexed: None });
        }
        let cached = cache::views_dir(&self.ws.store).join(&key).join("complete").exists();
        let indexed = if cached { None } else { Some(index::index_view(&self.ws, view, &self.progress)?) };
        let data = Arc::new(cache::open(&self.ws, view, &self.progress)?);
        let mut views = self.views.lock().unwrap();
        if views.len() > 8 {
            views.clear();
        }
        views.insert(key, data.clone());
        Ok(Opened { data, indexed })
    }
}
