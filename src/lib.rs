//! Lynx: a git-native code-context engine. See docs/ARCHITECTURE.md for the map of modules.
//!
//! This crate holds the surfaces (command line, MCP server, web UI, hooks, watcher); the
//! operations they render are `lynx-ops` (`crates/ops`) and the store, views, retrieval and
//! graph `lynx-core` (`crates/core`), both re-exported here under their own names so that
//! `lynx::engine`, `lynx::ops` and `crate::ops` read as before.

pub use lynx_core::{
    analyze, chunk, config, docsource, embed, encoding, engine, env, error, fsutil, graph, index, lang, layer, present,
    progress, repo, search, shard, sources, store, view, workspace,
};

pub use lynx_ops::{gc, ops};

pub mod cli;
pub mod hooks;
pub mod integrate;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "ui")]
pub mod ui;
pub mod watch;
